package main

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/hashfn"
)

func init() {
	register(command{"hash", "print the hash and candidate buckets of keys", runHash})
}

// runHash prints, for each key on the command line (or each line of stdin),
// its hash and its candidates: the quickest way to see what a rule does.
func runHash(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("hash", "hash [flags] [KEY ...]   (no KEY: one key per line on stdin)", stderr)
	var (
		kind  = hashfn.XXHash
		rule  = bucket.GoLeft
		seed  = fs.Uint64("seed", 1, "hash seed")
		d     = fs.Int("d", 2, "number of choices")
		bins  = fs.Uint64("bins", 1<<20, "number of buckets")
		asInt = fs.Bool("uint64", false, "parse keys as unsigned integers and hash their 8 bytes")
	)
	fs.Var(&kind, "hash", "hash family: xxhash or tabulation")
	fs.Var(&rule, "rule", "placement rule: one, dchoice, halves, goleft or double")
	if err := parseFlags(fs, args); err != nil {
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
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	fmt.Fprintf(out, "%-24s %-18s %s\n", "key", "hash", "candidates")
	cand := make([]uint64, *d)
	show := func(key string) error {
		var h uint64
		if *asInt {
			var v uint64
			if _, err := fmt.Sscan(key, &v); err != nil {
				return fmt.Errorf("%w: key %q is not an unsigned integer", errUsage, key)
			}
			h = f.Uint64(v)
		} else {
			h = f.String(key)
		}
		gen.Fill(h, cand)
		_, err := fmt.Fprintf(out, "%-24s %#016x %v\n", key, h, cand)
		return err
	}
	if fs.NArg() > 0 {
		for _, k := range fs.Args() {
			if err := show(k); err != nil {
				return err
			}
		}
		return nil
	}
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		if err := show(sc.Text()); err != nil {
			return err
		}
	}
	return sc.Err()
}
