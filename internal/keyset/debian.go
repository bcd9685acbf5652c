package keyset

import (
	"bytes"
	"compress/gzip"
	_ "embed" // the Debian key list
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
)

// debianGz is the list of real keys Debian returns: 101,453 distinct
// strings of 2 to 206 bytes (median 23), one per line, gzip-compressed
// (673 KiB): the names of the packages of Debian 12 (bookworm, amd64, main)
// such as "libghc-assert-failure-dev", the upstream home pages they name
// such as "https://www.freedesktop.org/wiki/Software/fprint/fprintd", and
// a quarter of their pool file names such as
// "pool/main/k/konqueror/konqueror_22.12.3-1_amd64.deb". They come from
// the archive's Packages index (the Package, Homepage and Filename
// fields), which is published for anyone to use.
//
//go:embed debian.txt.gz
var debianGz []byte

var debianKeys = sync.OnceValue(func() []string {
	zr, err := gzip.NewReader(bytes.NewReader(debianGz))
	if err != nil {
		panic("keyset: the embedded Debian list is damaged: " + err.Error())
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		panic("keyset: the embedded Debian list is damaged: " + err.Error())
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
})

// DebianCount is the number of keys in the Debian list.
const DebianCount = 101_453

// Debian returns n distinct real keys in an order the seed shuffles: the
// keys of the Debian list (package names, home page URLs and pool file
// names) and, past its 101,453, the list again with a suffix "/1", "/2" …
// on every key, the way the entries of one name are often keyed in a key
// value store ("user/1234"). The same n and seed give the same keys.
func Debian(n int, seed uint64) []string {
	base := debianKeys()
	keys := make([]string, n)
	for i := range keys {
		k := base[i%len(base)]
		if v := i / len(base); v > 0 {
			k += "/" + strconv.Itoa(v)
		}
		keys[i] = k
	}
	r := rand.New(rand.NewPCG(seed, 0xdeb1))
	r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	return keys
}
