package main

import (
	"flag"
	"fmt"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/hashfn"
	"github.com/twochoice/twochoice/store"
)

// storeFlags are the flags that choose a store's options, shared by the
// commands that build a store (load, serve).
type storeFlags struct {
	placement  bucket.Placement
	hash       hashfn.Kind
	choices    *int
	bucketSize *int
	seed       *uint64
}

// storeFlagNames are the names addStoreFlags defines.
var storeFlagNames = []string{"placement", "choices", "bucket-size", "hash", "seed"}

// addStoreFlags defines the store option flags on fs; the seed's default
// and help differ between commands.
func addStoreFlags(fs *flag.FlagSet, seed uint64, seedUsage string) *storeFlags {
	f := &storeFlags{placement: store.DefaultPlacement, hash: hashfn.XXHash}
	fs.Var(&f.placement, "placement", "placement rule: one, dchoice, halves, goleft or double")
	fs.Var(&f.hash, "hash", "hash family: xxhash, tabulation or siphash")
	f.choices = fs.Int("choices", store.DefaultChoices, "d, candidate buckets per key (one choice takes 1)")
	f.bucketSize = fs.Int("bucket-size", store.DefaultBucketSize, "slots per bucket, 1 to 8")
	f.seed = fs.Uint64("seed", seed, seedUsage)
	return f
}

// options returns the map options the flags ask for.
func (f *storeFlags) options() store.MapOptions {
	return store.MapOptions{Placement: f.placement, Choices: *f.choices, BucketSize: *f.bucketSize, Hash: f.hash, Seed: *f.seed}
}

// check refuses flag values the store would quietly replace: a 0 for
// --choices or --bucket-size means "the default" to store.MapOptions, but
// on the command line it is a mistake. The upper bounds are the store's.
func (f *storeFlags) check(fs *flag.FlagSet) error {
	set := flagsGiven(fs)
	if *f.choices < 1 {
		return fmt.Errorf("%w: --choices %d: want 1 to 8", errUsage, *f.choices)
	}
	if *f.bucketSize < 1 {
		return fmt.Errorf("%w: --bucket-size %d: want 1 to 8", errUsage, *f.bucketSize)
	}
	if f.placement == bucket.OneChoice && set["choices"] && *f.choices != 1 {
		return fmt.Errorf("%w: --placement one takes --choices 1, not %d", errUsage, *f.choices)
	}
	return nil
}
