package store

import (
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/hashfn"
)

func TestNewRejectsBadOptions(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want error
	}{
		{Options{MaxEntries: -1}, ErrOptions},
		{Options{MaxEntries: 1}, ErrOptions},           // below the 2 buckets of go-left
		{Options{MaxEntries: math.MaxInt}, ErrOptions}, // past the largest table: no panic
		{Options{MaxEntries: 1 << 40}, ErrOptions},     // nor an out-of-memory crash
		{Options{MaxEntries: 1<<35 + 1}, ErrOptions},   // one past 2^32 buckets of 8 (and MaxCacheEntries)
		{Options{MaxEntries: 1 << 34, BucketSize: 2}, ErrOptions},
		{Options{DefaultTTL: -1, MaxEntries: 10}, ErrOptions},
		{Options{Choices: 9}, ErrOptions},
		{Options{Choices: -1}, ErrOptions},
		{Options{Placement: bucket.Placement(17)}, ErrOptions},
		{Options{Placement: bucket.Halves, Choices: 9}, ErrOptions},
		{Options{BucketSize: 9}, ErrOptions},
		{Options{BucketSize: -2}, ErrOptions},
		{Options{Hash: hashfn.Kind(5)}, ErrOptions},
	} {
		s, err := New[string, int](tc.o)
		if !errors.Is(err, tc.want) || s != nil {
			t.Errorf("New(%+v) = %v, %v; want error %v", tc.o, s, err, tc.want)
		} else {
			t.Logf("%+v: %v", tc.o, err)
		}
	}
}

func TestZeroOptionsMeanDefaults(t *testing.T) {
	s := newTestMap[string, int](t, MapOptions{})
	o := s.options()
	if o.Placement != bucket.GoLeft || o.Choices != 2 || o.BucketSize != 8 || o.Hash != hashfn.XXHash || o.Seed == 0 {
		t.Fatalf("defaults: %+v", o)
	}
	if s.Seed() != o.Seed {
		t.Fatalf("Seed() = %d, options say %d", s.Seed(), o.Seed)
	}
	one := newTestMap[string, int](t, MapOptions{Choices: 1})
	if one.Options().Placement != bucket.OneChoice {
		t.Fatalf("Choices 1 with the zero placement should be one choice, got %v", one.Options().Placement)
	}
}

// A bound above MaxCacheEntries is ErrOptions, found before anything is
// allocated: a bound of 2^35 would otherwise have New allocate the whole
// table (hundreds of GiB) and crash the process out of memory.
func TestMaxCacheEntries(t *testing.T) {
	// resolve first: without the bound, New would start allocating.
	for _, maxE := range []int{MaxCacheEntries + 1, 1 << 30, 1 << 35} {
		if _, err := (Options{MaxEntries: maxE}).resolve(); !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), "MaxCacheEntries") {
			t.Fatalf("MaxEntries %d: %v, want ErrOptions naming MaxCacheEntries", maxE, err)
		}
	}
	if _, err := (Options{MaxEntries: MaxCacheEntries}).resolve(); err != nil {
		t.Fatalf("MaxEntries = MaxCacheEntries: %v", err)
	}
	for _, maxE := range []int{MaxCacheEntries + 1, 1 << 35} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		s, err := NewCache(CacheOptions[uint64, uint64]{MaxEntries: maxE, BucketSize: 8})
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrOptions) || s != nil {
			t.Fatalf("New with MaxEntries %d: %v, %v; want ErrOptions", maxE, s, err)
		}
		if a := after.TotalAlloc - before.TotalAlloc; a > 1<<20 {
			t.Errorf("New with MaxEntries %d allocated %d bytes before failing", maxE, a)
		}
	}
	// The bound does not depend on the bucket size or the rule.
	for _, o := range []Options{{MaxEntries: MaxCacheEntries + 1, BucketSize: 1}, {MaxEntries: MaxCacheEntries + 1, Placement: bucket.DoubleHash, Choices: 3}} {
		if _, err := o.resolve(); !errors.Is(err, ErrOptions) {
			t.Errorf("%+v: %v, want ErrOptions", o, err)
		}
	}
}

// MapOptions.Growth: NewMap takes 0 (the default, 2) and 1.25 to 4, and
// rejects everything else with ErrOptions.
func TestGrowthOptions(t *testing.T) {
	for _, g := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), -2, 1, 1.2, 4.01, 100} {
		if _, err := NewMap[string, int](MapOptions{Growth: g}); !errors.Is(err, ErrOptions) {
			t.Errorf("New with Growth %v: error %v, want ErrOptions", g, err)
		}
	}
	for _, g := range []float64{0, MinGrowth, 1.5, 2, 3, MaxGrowth} {
		s := newTestMap[string, int](t, MapOptions{Growth: g})
		want := g
		if g == 0 {
			want = DefaultGrowth
		}
		if got := s.options().Growth; got != want {
			t.Errorf("New with Growth %v: Options().Growth = %v, want %v", g, got, want)
		}
	}
}

func TestSizeHintOptions(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{SizeHint: -1}, "negative"},
		{Options{SizeHint: MaxSizeHint + 1}, "MaxSizeHint"},
	} {
		s, err := New[string, int](c.o)
		if !errors.Is(err, ErrOptions) || s != nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, %v; want ErrOptions saying %q", c.o, s, err, c.want)
		}
	}
	// The largest hint is accepted by resolve; New would allocate it.
	if _, err := (Options{SizeHint: MaxSizeHint}).resolve(); err != nil {
		t.Errorf("SizeHint MaxSizeHint: %v", err)
	}
}
