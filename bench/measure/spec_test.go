package measure

import (
	"errors"
	"strconv"
	"testing"

	"github.com/twochoice/twochoice/bench/workload"
)

func TestParseSpec(t *testing.T) {
	good := []struct {
		in   string
		want Spec
	}{
		{"zipf", Spec{Kind: Zipf, S: 0.9, Keys: 100}},
		{"uniform", Spec{Kind: Uniform, S: 0.9, Keys: 100}},
		{"scan", Spec{Kind: Scan, S: 0.9, Keys: 100}},
		{"trace:a/OLTP.lis.zst", Spec{Kind: Trace, Path: "a/OLTP.lis.zst", S: 0.9, Keys: 100}},
		{"keys:C:\\keys.txt", Spec{Kind: Keys, Path: "C:\\keys.txt", S: 0.9, Keys: 100}},
		{"weighted:w.tsv", Spec{Kind: Weighted, Path: "w.tsv", S: 0.9, Keys: 100}},
	}
	for _, g := range good {
		got, err := ParseSpec(g.in, 0.9, 100)
		if err != nil || got != g.want {
			t.Errorf("ParseSpec(%q) = %+v, %v; want %+v", g.in, got, err, g.want)
		}
	}
	if s, _ := ParseSpec("keys:k", 1, 1); !s.StringKeys() {
		t.Error("keys: has string keys")
	}
	if s, _ := ParseSpec("trace:t", 1, 1); s.StringKeys() {
		t.Error("trace: has integer keys")
	}
	for _, bad := range []string{"", "zipfian", "trace", "trace:", "zipf:x", "keys", "lirs:x"} {
		if _, err := ParseSpec(bad, 1, 100); !errors.Is(err, ErrWorkload) {
			t.Errorf("ParseSpec(%q) error %v; want ErrWorkload", bad, err)
		}
	}
	if _, err := ParseSpec("zipf", 0, 100); !errors.Is(err, ErrWorkload) {
		t.Errorf("s = 0: %v", err)
	}
	if _, err := ParseSpec("uniform", 1, 0); !errors.Is(err, ErrWorkload) {
		t.Errorf("0 keys: %v", err)
	}
	// The generators' bounds are the spec's: the command tells a bad
	// --keys from a failed run by ErrWorkload from ParseSpec.
	if _, err := ParseSpec("zipf", 1, workload.MaxZipfKeys+1); !errors.Is(err, ErrWorkload) {
		t.Errorf("zipf over 2^53+1 keys: %v", err)
	}
	if _, err := ParseSpec("zipf", 1, workload.MaxZipfKeys); err != nil {
		t.Errorf("zipf over 2^53 keys: %v", err)
	}
	if _, err := ParseSpec("scan", 1, maxScanKeys+1); !errors.Is(err, ErrWorkload) {
		t.Errorf("scan over 2^31 keys: %v", err)
	}
	if s := (Spec{Kind: Zipf, S: 1.1, Keys: 5}).String(); s != "zipf(s=1.1,keys=5)" {
		t.Errorf("String = %q", s)
	}
}

func TestParseCapacity(t *testing.T) {
	var cs []Capacity
	for _, f := range []string{"1000", " 1%", "0.5%", "100%"} {
		c, err := ParseCapacity(f)
		if err != nil {
			t.Fatalf("ParseCapacity(%q): %v", f, err)
		}
		cs = append(cs, c)
	}
	want := []int{1000, 1869, 934, 186880}
	for i, c := range cs {
		if got := c.Resolve(186_880); got != want[i] {
			t.Errorf("%v of 186880 keys = %d, want %d", c, got, want[i])
		}
	}
	if s := cs[1].String() + " " + cs[0].String(); s != "1% 1000" {
		t.Errorf("String: %q", s)
	}
	if got := (Capacity{Share: 0.01}).Resolve(10); got != 1 {
		t.Errorf("1%% of 10 keys = %d, want at least 1", got)
	}
	if _, err := ParseCapacity(strconv.Itoa(MaxCapacity)); err != nil {
		t.Errorf("%d entries: %v", MaxCapacity, err)
	}
	for _, bad := range []string{"", "0", "-5", "x", "0%", "101%", "1e3", "5,6", strconv.Itoa(MaxCapacity + 1)} {
		if _, err := ParseCapacity(bad); !errors.Is(err, ErrConfig) {
			t.Errorf("ParseCapacity(%q) error %v; want ErrConfig", bad, err)
		}
	}
}
