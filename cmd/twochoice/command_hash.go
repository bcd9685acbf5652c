package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/twochoice/twochoice/bench/workload"
	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/hashfn"
	"github.com/twochoice/twochoice/internal/cli"
)

func init() {
	register(command{"hash", "print the hash and candidate buckets of keys", runHash})
}

const hashSynopsis = `hash [flags] [KEY ...]

Prints each key's hash and its candidate buckets under --rule: the
quickest way to see what a rule does. With no KEY, stdin is a key file,
read as load reads one (one key a line, or a TSV's first column;
Zstandard decompressed). After --, every argument is a key.

With --format json each key is an object with "hash" (hex) and
"candidates", and the key as "key", or, if the key is not valid UTF-8
(which a JSON string cannot carry byte for byte), as "key_base64": its
bytes in standard base64, and no "key". Tables and CSV print the key's
bytes as they are.

Examples:
  twochoice hash user:1 user:2
  twochoice hash --rule dchoice --d 3 --bins 1000 --format json < keys.txt`

// runHash prints, for each key on the command line (or each key of
// stdin), its hash and its candidates.
func runHash(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("hash", hashSynopsis)
	var (
		kind   = hashfn.XXHash
		rule   = bucket.GoLeft
		seed   = fs.Uint64("seed", 1, "hash seed")
		d      = fs.Int("d", 2, "number of choices (one choice always has 1)")
		bins   = fs.Uint64("bins", 1<<20, "number of buckets")
		asInt  = fs.Bool("uint64", false, "parse keys as unsigned integers and hash their 8 bytes")
		format = cli.Table
	)
	fs.Var(&format, "format", "output: table, json or csv")
	fs.Var(&kind, "hash", "hash family: xxhash, tabulation or siphash")
	fs.Var(&rule, "rule", "placement rule: one, dchoice, halves, goleft or double")
	keys, err := parseKeysAndFlags(fs, args)
	if err != nil {
		return err
	}
	if rule == bucket.OneChoice {
		*d = 1
	}
	f, err := hashfn.New(kind, *seed)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	gen, err := rule.Generator(*bins, *d)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	var rows []hashRow
	// line is the key's line on stdin, 0 for a key on the command line.
	show := func(key string, line int) error {
		var h uint64
		if *asInt {
			v, err := parseUint64Key(key)
			switch {
			case err != nil && line > 0:
				// A bad line of the input, not of the command line.
				return fmt.Errorf("stdin:%d: %w", line, err)
			case err != nil:
				return fmt.Errorf("%w: %w", errUsage, err)
			}
			h = f.Uint64(v)
		} else {
			h = f.String(key)
		}
		cand := make([]uint64, *d)
		gen.Fill(h, cand)
		rows = append(rows, hashRow{Key: key, Hash: fmt.Sprintf("%#016x", h), Candidates: cand})
		return nil
	}
	if len(keys) > 0 {
		for _, k := range keys {
			if err := show(k, 0); err != nil {
				return err
			}
		}
	} else {
		// Stdin is a key file, read as every command reads one: "hash <
		// keys.txt" shows the keys that "load --keys keys.txt" stores.
		err := workload.ScanKeys("stdin", os.Stdin, func(line int, key []byte) error {
			return show(string(key), line)
		})
		if err != nil {
			return err
		}
	}
	if format == cli.JSON {
		if rows == nil {
			rows = []hashRow{}
		}
		return cli.WriteJSON(stdout, rows)
	}
	table := make([][]string, len(rows))
	for i, r := range rows {
		c := make([]string, len(r.Candidates))
		for j, b := range r.Candidates {
			c[j] = strconv.FormatUint(b, 10)
		}
		table[i] = []string{r.Key, r.Hash, strings.Join(c, " ")}
	}
	header := []string{"key", "hash", "candidates"}
	if format == cli.CSV {
		return cli.WriteCSV(stdout, header, table)
	}
	return cli.WriteTable(stdout, header, table)
}

// hashRow is one key's line. The hash is a hex string, as in the table:
// as a JSON number a 64-bit hash would lose bits in JavaScript and jq.
type hashRow struct {
	Key        string
	Hash       string
	Candidates []uint64
}

// hashRowJSON is a hashRow as JSON: the key in exactly one of Key and
// KeyBase64.
type hashRowJSON struct {
	Key        *string  `json:"key,omitempty"`
	KeyBase64  []byte   `json:"key_base64,omitempty"` // encoding/json writes []byte as base64
	Hash       string   `json:"hash"`
	Candidates []uint64 `json:"candidates"`
}

// MarshalJSON writes a key that is not valid UTF-8 as key_base64:
// encoding/json would write each invalid byte as U+FFFD, so the key shown
// would not be the key hashed, and two keys could look the same.
func (r hashRow) MarshalJSON() ([]byte, error) {
	j := hashRowJSON{Hash: r.Hash, Candidates: r.Candidates}
	if utf8.ValidString(r.Key) {
		j.Key = &r.Key
	} else {
		j.KeyBase64 = []byte(r.Key)
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes, so that a Go program (the
// tests, for one) gets the keys back byte for byte.
func (r *hashRow) UnmarshalJSON(b []byte) error {
	var j hashRowJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*r = hashRow{Hash: j.Hash, Candidates: j.Candidates}
	switch {
	case j.Key != nil && j.KeyBase64 != nil:
		return errors.New("a row with both key and key_base64")
	case j.Key != nil:
		r.Key = *j.Key
	default:
		r.Key = string(j.KeyBase64)
	}
	return nil
}

// parseKeysAndFlags parses args in which flags and keys may come in any
// order ("hash KEY --format json" is a common way to type it; taking
// "--format" and "json" for keys would print a table of the wrong keys
// and succeed). After "--" every argument is a key, for keys that start
// with a dash.
func parseKeysAndFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var keys []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(keys, rest...), nil
		}
		if len(rest) == 0 {
			return keys, nil
		}
		keys = append(keys, rest[0])
		args = rest[1:]
	}
}

// parseUint64Key parses a --uint64 key: decimal, or hexadecimal after 0x.
// The whole key must be the number: fmt.Sscan would hash "1e3" as 1 and
// "12abc" as 12, and read "010" as octal 8, while the output shows the
// key as typed.
func parseUint64Key(key string) (uint64, error) {
	digits, base := key, 10
	if len(key) > 2 && key[0] == '0' && (key[1] == 'x' || key[1] == 'X') {
		digits, base = key[2:], 16
	}
	v, err := strconv.ParseUint(digits, base, 64)
	if err != nil || digits[0] == '+' {
		return 0, fmt.Errorf("key %q is not an unsigned integer (decimal, or hexadecimal after 0x)", key)
	}
	return v, nil
}
