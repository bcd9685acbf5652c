package cli

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
	"time"
)

func TestFormats(t *testing.T) {
	var f Format
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Var(&f, "format", "")
	if err := fs.Parse([]string{"--format", "csv"}); err != nil || f != CSV {
		t.Fatalf("csv: %v %v", f, err)
	}
	if err := f.Set("xml"); !errors.Is(err, ErrFormat) {
		t.Fatalf("xml: %v", err)
	}
	header := []string{"k", "share"}
	rows := [][]string{{"1", "0.76"}, {"2", "0.2295"}}
	var b bytes.Buffer
	if err := WriteTable(&b, header, rows); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 3 || len(lines[1]) != len(lines[2]) {
		t.Fatalf("table not aligned:\n%s", b.String())
	}
	b.Reset()
	if err := WriteCSV(&b, header, rows); err != nil || b.String() != "k,share\n1,0.76\n2,0.2295\n" {
		t.Fatalf("csv %q %v", b.String(), err)
	}
	b.Reset()
	if err := WriteJSON(&b, map[string]int{"a": 1}); err != nil || b.String() != "{\n  \"a\": 1\n}\n" {
		t.Fatalf("json %q %v", b.String(), err)
	}
}

func TestProgress(t *testing.T) {
	var b bytes.Buffer
	p := NewProgress(&b, "sim", false)
	if p.on {
		t.Fatal("a buffer is not a terminal")
	}
	p.Update(0.5, "1/2 runs")
	p.Done()
	if b.Len() != 0 {
		t.Fatalf("drew on a non-terminal: %q", b.String())
	}
	// Forced on, with a clock under control.
	clock := time.Unix(0, 0)
	p = &Progress{w: &b, on: true, label: "sim", start: clock, now: func() time.Time { return clock }}
	clock = clock.Add(10 * time.Second)
	p.Update(0.25, "1/4 runs")
	if s := b.String(); !strings.Contains(s, "25%") || !strings.Contains(s, "1/4 runs") || !strings.Contains(s, "ETA 30s") {
		t.Fatalf("bar %q", s)
	}
	p.Update(0.26, "x") // within 100 ms: not drawn
	if strings.Contains(b.String(), "x ETA") {
		t.Fatal("redrew too soon")
	}
	p.Done()
	if !strings.HasSuffix(b.String(), "\r") {
		t.Fatalf("not cleared: %q", b.String())
	}
}

// Work that ends within showAfter draws nothing on a terminal, rather than
// a bar drawn at the first update and cleared at once.
func TestProgressQuickWorkDrawsNothing(t *testing.T) {
	var b bytes.Buffer
	clock := time.Unix(0, 0)
	p := &Progress{w: &b, on: true, label: "load", start: clock, now: func() time.Time { return clock }}
	p.Update(0, "0 keys")
	clock = clock.Add(showAfter / 2)
	p.Update(0.5, "500 keys")
	p.Update(1, "1000 keys")
	p.Done()
	if b.Len() != 0 {
		t.Fatalf("drew %q for work of %v", b.String(), showAfter/2)
	}
	clock = clock.Add(showAfter)
	p.Update(0.75, "750 keys")
	if !strings.Contains(b.String(), "750 keys") {
		t.Fatalf("no bar after %v: %q", showAfter*3/2, b.String())
	}
}
