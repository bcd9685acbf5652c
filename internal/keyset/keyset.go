// Package keyset supplies key sets to tests and benchmarks, without
// shipping a data file: real keys (the Go distribution's file paths),
// realistic ones (ids, URLs and object names of mixed length), and keys
// built to collide under seeded xxHash64 whatever the seed (flood.go).
package keyset

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// GoSourcePaths returns the paths, relative to GOROOT, of the files of the
// Go distribution that runs the test: tens of thousands of real,
// distinct, heavily prefix-sharing strings such as
// "src/net/http/server.go". It returns nil when no GOROOT can be found.
func GoSourcePaths() []string {
	root := goroot()
	if root == "" {
		return nil
	}
	var keys []string
	_ = filepath.WalkDir(filepath.Join(root, "src"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			keys = append(keys, filepath.ToSlash(rel))
		}
		return nil
	})
	return keys
}

func goroot() string {
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		if r := strings.TrimSpace(string(out)); r != "" {
			return r
		}
	}
	return os.Getenv("GOROOT")
}

// Synthetic returns n distinct keys shaped like the keys of real caches:
// user and session ids, URLs with paths and query strings, and object
// names, of 4 to 60 bytes. The same seed gives the same keys.
func Synthetic(n int, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, 0x7477))
	hosts := []string{"api.example.com", "cdn.shop.io", "img.news.net", "static.app.dev"}
	words := []string{"user", "cart", "item", "photo", "order", "profile", "search", "feed", "video", "blog"}
	keys := make([]string, n)
	for i := range keys {
		switch i % 4 {
		case 0:
			keys[i] = fmt.Sprintf("user:%d:session:%x", i, r.Uint32())
		case 1:
			keys[i] = fmt.Sprintf("https://%s/%s/%d?ref=%s", hosts[r.IntN(len(hosts))],
				words[r.IntN(len(words))], i, words[r.IntN(len(words))])
		case 2:
			keys[i] = fmt.Sprintf("%s/%s-%08d.jpg", words[r.IntN(len(words))], words[r.IntN(len(words))], i)
		default:
			keys[i] = fmt.Sprintf("obj%d", i)
		}
	}
	return keys
}
