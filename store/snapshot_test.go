package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twochoice/twochoice/bucket"

	bolt "go.etcd.io/bbolt"

	"github.com/twochoice/twochoice/internal/snapshot"
	"github.com/twochoice/twochoice/internal/testutil"
)

// saveOpen saves s to a fresh file and opens it again.
func saveOpen[K comparable, V any](t *testing.T, s kv[K, V], opts *Options) (kv[K, V], string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.snap")
	if err := s.Save(path); err != nil {
		t.Fatalf("Save: %v", err)
	}
	r, err := Open[K, V](path, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := r.checkInvariants(); err != nil {
			t.Errorf("restored store: %v", err)
		}
	})
	return r, path
}

// sameReport compares two load reports, leaving out the delete count
// (a restored store has seen none).
func sameReport(t *testing.T, a, b *Report) {
	t.Helper()
	a2, b2 := *a, *b
	a2.Deletes, b2.Deletes = 0, 0
	if !reflect.DeepEqual(&a2, &b2) {
		t.Fatalf("load reports differ:\nsaved:\n%v\nrestored:\n%v", a, b)
	}
}

// sameContents checks that two stores hold the same entries.
func sameContents[K comparable, V any](t *testing.T, a, b kv[K, V]) {
	t.Helper()
	if a.Len() != b.Len() {
		t.Fatalf("Len %d, restored %d", a.Len(), b.Len())
	}
	for k, v := range a.All() {
		got, ok := b.Get(k)
		if !ok || !reflect.DeepEqual(got, v) {
			t.Fatalf("key %v: restored %v, %v; saved %v", k, got, ok, v)
		}
	}
}

// Every rule and hash family, with stashed keys among them: the restored
// store holds the same entries, in the same buckets (its load report
// equals the saved one, histogram, parts and stash included).
func TestSaveOpenSameLoad(t *testing.T) {
	seed := seedFor(t)
	configs := everyConfig()
	// Small buckets under one choice overflow into the stash.
	configs = append(configs, Options{Choices: 1, BucketSize: 1, Seed: 7}, Options{Placement: bucket.Halves, Choices: 2, BucketSize: 2, Seed: 8})
	stashed := 0
	for _, o := range configs {
		t.Run(name(o), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, uint64(o.Placement)))
			s := newTestStore[string, []byte](t, o)
			n := 500 + rng.IntN(3000)
			if testing.Short() {
				n = 200 + rng.IntN(800)
			}
			for i := range n {
				s.Set(fmt.Sprintf("key-%d-%d", i, rng.Uint64()), []byte(fmt.Sprint(i)))
				if i%7 == 0 {
					s.Delete(fmt.Sprintf("key-%d", i/2)) // mostly misses
				}
			}
			r, _ := saveOpen(t, s, nil)
			sameReport(t, s.Report(), r.Report())
			var calls, last, total uint64
			if err := s.SaveProgress(filepath.Join(t.TempDir(), "p.snap"), func(d, n uint64) { calls, last, total = calls+1, d, n }); err != nil {
				t.Fatal(err)
			}
			if calls == 0 || last != total || total != uint64(s.Report().Buckets) {
				t.Fatalf("progress: %d calls, last %d of %d", calls, last, total)
			}
			sameContents(t, s, r)
			stashed += s.Report().Stash
			if r.options() != s.options() {
				t.Fatalf("options %+v, restored %+v", s.options(), r.options())
			}
			// The restored store keeps working, and grows.
			for i := range 2 * n {
				r.Set(fmt.Sprint("new", i), nil)
			}
			if r.Len() != s.Len()+2*n {
				t.Fatalf("Len after more Sets: %d", r.Len())
			}
		})
	}
	if stashed == 0 {
		t.Fatal("no configuration had stashed keys: the stash was not tested")
	}
}

// Integer and byte-array keys, an empty store, and a store in the middle
// of a growth all round-trip.
func TestSaveOpenKeyTypes(t *testing.T) {
	si := newTestMap[int32, string](t, MapOptions{Seed: 3})
	sb := newTestStore[[16]byte, uint64](t, Options{Placement: bucket.DoubleHash, Choices: 3, Hash: 1, Seed: 4})
	for i := range 5000 {
		si.Set(int32(i*7919), fmt.Sprint(i))
		var k [16]byte
		binary.LittleEndian.PutUint64(k[:], uint64(i)*0x9e3779b97f4a7c15)
		sb.Set(k, uint64(i))
	}
	ri, _ := saveOpen(t, si, nil)
	sameReport(t, si.Report(), ri.Report())
	sameContents(t, si, ri)
	rb, _ := saveOpen(t, sb, nil)
	sameReport(t, sb.Report(), rb.Report())
	sameContents(t, sb, rb)

	empty := newTestMap[string, int](t, MapOptions{Seed: 5})
	re, _ := saveOpen(t, empty, nil)
	if re.Len() != 0 || re.Report().Buckets != empty.Report().Buckets {
		t.Fatalf("empty store: restored %d entries, %d buckets", re.Len(), re.Report().Buckets)
	}

	// Stop in the middle of a growth: Save finishes it first.
	g := newTestMap[int, int](t, MapOptions{Seed: 6})
	for i := 0; !g.Stats().Growing || i < 1000; i++ {
		g.Set(i, i)
	}
	rg, _ := saveOpen(t, g, nil)
	sameContents(t, g, rg)
	sameReport(t, g.Report(), rg.Report())
}

// Options given to Open must agree with the file; zero fields take its.
func TestOpenOptions(t *testing.T) {
	s := newTestMap[string, int](t, MapOptions{Placement: bucket.Halves, Choices: 3, BucketSize: 4, Hash: 1, Seed: 42})
	for i := range 1000 {
		s.Set(fmt.Sprint(i), i)
	}
	_, path := saveOpen(t, s, &Options{Seed: 42, Choices: 3})
	for _, o := range []Options{
		{Seed: 43}, {Choices: 2}, {BucketSize: 8}, {Placement: bucket.GoLeft}, {Choices: 1}, {MaxEntries: 10},
	} {
		_, err := Open[string, int](path, &o)
		if !errors.Is(err, ErrOptionsMismatch) || !strings.Contains(err.Error(), path) {
			t.Errorf("Open with %+v: %v, want ErrOptionsMismatch naming the file", o, err)
		}
	}
}

// The caller's own options for a restored store (DefaultTTL) that cannot
// apply to the file are the caller's mistake, not damage: Open said
// ErrCorrupt for them, and a program that rebuilds a corrupt snapshot (the
// README's example) would have thrown a good file away.
func TestOpenBadTTLIsNotCorrupt(t *testing.T) {
	cache := newTestCache[string, int](t, CacheOptions{Seed: 5, MaxEntries: 100})
	cache.Set("a", 1)
	_, cpath := saveOpen(t, cache, nil)
	for _, tc := range []struct {
		path string
		ttl  time.Duration
		want error
	}{
		{cpath, -time.Hour, ErrOptions},
	} {
		r, err := Open[string, int](tc.path, &Options{DefaultTTL: tc.ttl})
		if r != nil || !errors.Is(err, tc.want) || errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("Open %s with DefaultTTL %v: %v, want %v naming the file and not ErrCorrupt", tc.path, tc.ttl, err, tc.want)
		}
	}
	r, err := Open[string, int](cpath, &Options{DefaultTTL: time.Hour})
	if err != nil {
		t.Fatalf("a cache with a TTL: %v", err)
	}
	if r.options().DefaultTTL != time.Hour {
		t.Errorf("DefaultTTL %v, want 1h", r.options().DefaultTTL)
	}
}

// rewriteMeta changes a snapshot's metadata record in place, as a damaged
// or doctored file would have it.
func rewriteMeta(t *testing.T, path string, change func(m *snapshot.Meta), version uint32) {
	t.Helper()
	testutil.RewriteMeta(t, path, change, version)
}

// Each kind of bad input gets its sentinel error and a message naming the
// file, and never a store.
func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	s := newTestMap[string, int](t, MapOptions{Seed: 9})
	for i := range 3000 {
		s.Set(fmt.Sprint("k", i), i)
	}
	good := filepath.Join(dir, "good.snap")
	if err := s.Save(good); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	file := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	doctored := func(name string, change func(m *snapshot.Meta), version uint32) string {
		p := file(name, raw)
		rewriteMeta(t, p, change, version)
		return p
	}
	cases := []struct {
		name string
		path string
		want error
	}{
		{"missing", filepath.Join(dir, "nope.snap"), ErrNotFound},
		{"not bbolt", file("text.snap", []byte(strings.Repeat("not a database\n", 500))), ErrNotSnapshot},
		{"empty", file("empty.snap", nil), ErrNotSnapshot},
		{"directory", dir, ErrNotSnapshot},
		{"unreadable (a file in the path)", filepath.Join(good, "x.snap"), ErrRead},
		{"truncated", file("trunc.snap", raw[:len(raw)/2]), ErrCorrupt},
		{"newer version", doctored("newer.snap", func(*snapshot.Meta) {}, snapshot.Version+1), ErrNewerVersion},
		{"other seed", doctored("seed.snap", func(m *snapshot.Meta) { m.Seed++ }, 0), ErrCorrupt},
		{"other table size", doctored("size.snap", func(m *snapshot.Meta) { m.Buckets *= 1000 }, 0), ErrCorrupt},
		{"wrong histogram", doctored("hist.snap", func(m *snapshot.Meta) { m.Histogram[0][1]--; m.Histogram[0][2]++ }, 0), ErrCorrupt},
		{"bad placement", doctored("rule.snap", func(m *snapshot.Meta) { m.Placement = "best" }, 0), ErrCorrupt},
	}
	for _, tc := range cases {
		r, err := Open[string, int](tc.path, nil)
		if r != nil || !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("%s: Open = %v, %v; want %v naming %s", tc.name, r != nil, err, tc.want, tc.path)
		}
	}
	if _, err := Open[string, int](filepath.Join(dir, "nope"), nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file does not match fs.ErrNotExist: %v", err)
	}
	if _, err := Open[int, int](good, nil); !errors.Is(err, ErrTypeMismatch) {
		t.Errorf("wrong key type: %v", err)
	}
	if _, err := Open[string, string](good, nil); !errors.Is(err, ErrTypeMismatch) {
		t.Errorf("wrong value type: %v", err)
	}

	// A file another process holds for writing.
	db, err := bolt.Open(good, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open[string, int](good, nil); !errors.Is(err, ErrLocked) {
		t.Errorf("locked file: %v", err)
	}
	db.Close()

	// Keys hashed through maphash cannot be saved.
	type point struct{ X, Y int }
	sp := newTestMap[point, int](t, MapOptions{Seed: 1})
	sp.Set(point{1, 2}, 3)
	if err := sp.Save(filepath.Join(dir, "p.snap")); !errors.Is(err, ErrKeyType) {
		t.Errorf("struct keys: %v", err)
	}
	// A failed save leaves nothing behind, and the good file still opens.
	if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if _, err := Open[string, int](good, nil); err != nil {
		t.Errorf("the good file: %v", err)
	}
}

// Every bit flip and truncation of a small snapshot fails with a sentinel
// error or opens into a store that passes the invariant checks and holds
// exactly the saved entries (a flip in bbolt's free space changes
// nothing).
func TestOpenDamaged(t *testing.T) {
	dir := t.TempDir()
	s := newTestMap[string, int](t, MapOptions{Seed: 12})
	for i := range 200 {
		s.Set(fmt.Sprint(i), i)
	}
	path := filepath.Join(dir, "s.snap")
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	want := maps.Collect(s.All())
	rng := rand.New(rand.NewPCG(seedFor(t), 1))
	tries := 300
	if testing.Short() {
		tries = 60
	}
	for x := range tries {
		b := bytes.Clone(raw)
		if x%5 == 0 {
			b = b[:rng.IntN(len(b))]
		} else {
			b[rng.IntN(len(b))] ^= 1 << rng.IntN(8)
		}
		checkDamaged(t, filepath.Join(dir, "d.snap"), b, want)
	}
	// A snapshot whose first page was overwritten is damaged, not foreign:
	// bbolt falls back to the second meta page's older state, which holds
	// no snapshot metadata yet.
	b := bytes.Clone(raw)
	clear(b[:4096])
	p := filepath.Join(dir, "zeroed.snap")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open[string, int](p, nil); !errors.Is(err, ErrCorrupt) {
		t.Errorf("first page zeroed: %v, want ErrCorrupt", err)
	}
}

// A flipped bit in either of bbolt's meta pages (its page id, magic
// number, version, page size, root, free list, high-water mark,
// transaction id or checksum) makes a damaged snapshot: Open fails with
// ErrCorrupt, or restores exactly the saved entries when the page left
// holds the whole snapshot. It is never ErrNotSnapshot, which is for
// files that are not snapshots at all, even though bbolt, rejecting a
// page whose checksum fails, falls back to the other one's older state,
// which holds no snapshot, as a foreign bbolt file holds none.
func TestOpenDamagedMetaPage(t *testing.T) {
	dir := t.TempDir()
	s := newTestMap[string, int](t, MapOptions{Seed: 12})
	for i := range 200 {
		s.Set(fmt.Sprint(i), i)
	}
	path := filepath.Join(dir, "s.snap")
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	want := maps.Collect(s.All())
	p := filepath.Join(dir, "d.snap")
	corrupt, flips := 0, 0
	// The second page is one page in, as the first page says.
	ps := int(binary.LittleEndian.Uint32(raw[16+8:]))
	for _, page := range []int{0, ps} {
		// A meta page: a 16-byte page header, then 64 bytes of meta.
		for off := page; off < page+16+64; off++ {
			for bit := range 8 {
				if testing.Short() && bit != off%8 {
					continue // one bit a byte, each bit in turn
				}
				flips++
				b := bytes.Clone(raw)
				b[off] ^= 1 << bit
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Fatal(err)
				}
				r, err := Open[string, int](p, nil)
				switch {
				case errors.Is(err, ErrCorrupt):
					corrupt++
				case err != nil:
					t.Fatalf("bit %d of byte %d flipped: %v, want ErrCorrupt", bit, off, err)
				case !maps.Equal(maps.Collect(r.All()), want):
					t.Fatalf("bit %d of byte %d flipped: opened into %d entries, want the %d saved", bit, off, r.Len(), len(want))
				}
			}
		}
	}
	// The audit's three: the root's sequence, the high-water mark and
	// the checksum of the first page, which holds the snapshot's only
	// complete state.
	for _, off := range []int{40, 60, 72} {
		b := bytes.Clone(raw)
		b[off] ^= 1
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Open[string, int](p, nil); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), p) {
			t.Errorf("byte %d flipped: %v, want ErrCorrupt naming the file", off, err)
		}
	}
	t.Logf("%d of %d flips are ErrCorrupt, the others restore the snapshot", corrupt, flips)
}

// checkDamaged writes b, a damaged snapshot, to p and opens it: it must
// fail with one of Open's sentinel errors, or open into a store that
// passes the invariant checks and, if want is not nil (b is a damaged
// copy of a snapshot of want), holds exactly want's entries: a damage
// that Open does not notice must not change what it restores.
func checkDamaged(t *testing.T, p string, b []byte, want map[string]int) {
	t.Helper()
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open[string, int](p, nil)
	if err != nil {
		for _, want := range []error{ErrCorrupt, ErrNotSnapshot, ErrNewerVersion, ErrTypeMismatch} {
			if errors.Is(err, want) {
				return
			}
		}
		t.Fatalf("unexpected error: %v", err)
	}
	if err := r.checkInvariants(); err != nil {
		t.Fatalf("opened a damaged file into a broken store: %v", err)
	}
	if want == nil {
		return
	}
	if got := maps.Collect(r.All()); !maps.Equal(got, want) || r.Len() != len(want) {
		t.Fatalf("opened a damaged file into %d entries (Len %d), want the %d saved", len(got), r.Len(), len(want))
	}
}

// FuzzOpen opens damaged snapshots: any bytes, one of them flipped by xor
// at pos. Open must fail with a sentinel error or give a sound store; and
// a damaged copy of one of the seed snapshots (a prefix of it, one byte
// flipped) that opens must hold exactly the entries saved.
//
//	go test -run '^$' -fuzz '^FuzzOpen$' -fuzzminimizetime 200x ./store
func FuzzOpen(f *testing.F) {
	type seed struct {
		raw  []byte
		want map[string]int
	}
	var seeds []seed
	// A store, and a cache where half the entries have expiries (an hour
	// away: none expires while the fuzzer runs) and some are evicted.
	for x, o := range []Options{{Seed: 13, BucketSize: 2}, {Seed: 14, MaxEntries: 64, Placement: bucket.DChoice, Choices: 3}} {
		s, _ := New[string, int](o)
		for i := range 100 {
			if o.MaxEntries > 0 && i%2 == 0 {
				setWithTTL(s, fmt.Sprint(i), i, time.Hour)
			} else {
				s.Set(fmt.Sprint(i), i)
			}
		}
		path := filepath.Join(f.TempDir(), fmt.Sprint(x, ".snap"))
		if err := s.Save(path); err != nil {
			f.Fatal(err)
		}
		raw, _ := os.ReadFile(path)
		seeds = append(seeds, seed{raw, maps.Collect(s.All())})
		f.Add(raw, uint32(0), uint8(0))
		f.Add(raw, uint32(len(raw)/2), uint8(1))
		f.Add(raw, uint32(len(raw)-4096+20), uint8(0x40))
		f.Add(raw[:len(raw)-100], uint32(0), uint8(0))
	}
	f.Fuzz(func(t *testing.T, b []byte, pos uint32, xor uint8) {
		// Other inputs hold who knows what, and need only fail cleanly.
		var want map[string]int
		for _, s := range seeds {
			if len(b) > 0 && bytes.HasPrefix(s.raw, b) {
				want = s.want
			}
		}
		if len(b) > 0 {
			b = bytes.Clone(b)
			b[int(pos)%len(b)] ^= xor
		}
		checkDamaged(t, filepath.Join(t.TempDir(), "f.snap"), b, want)
	})
}

// A snapshot taken while writers insert, update and delete is the store
// at one instant. Each writer inserts its keys w<id>-<seq> in order of
// seq, then sets w<id>-last to seq; a deleter deletes d-<i> in order of
// i. At any instant, each writer's keys present are a prefix 0…p-1 with
// last = p-1 or p-2, and the d- keys present are a suffix. A walk that
// did not copy buckets before they change sees keys inserted after it
// passed some buckets but not others: gaps.
func TestSaveIsPointInTime(t *testing.T) {
	const writers, pre = 2, 4000
	// Each writer inserts up to perWriter keys: while a snapshot runs
	// the table does not grow and new keys pile up in the stash.
	perWriter, saves := 40_000, 8
	if testing.Short() {
		perWriter, saves = 5_000, 3
	}
	// The last is a cache, whose writers lock buckets instead of the
	// store's mutex; large enough that it evicts nothing (checked), since
	// an eviction would leave a gap the check below cannot tell from a
	// torn snapshot.
	for x, o := range []Options{{Seed: 21}, {Placement: bucket.DChoice, Choices: 3, BucketSize: 4, Seed: 22}, {Choices: 1, BucketSize: 2, Seed: 23}, {Seed: 24}, {MaxEntries: 1 << 20, Seed: 25}} {
		t.Run(name(o), func(t *testing.T) {
			if x == 3 {
				// Writers write every bucket they copy to the file.
				defer func(b int) { pendingBound = b }(pendingBound)
				pendingBound = 0
			}
			s := newTestStore[string, int](t, o)
			for i := range pre {
				s.Set(fmt.Sprint("d-", i), i)
			}
			var stop atomic.Bool
			var wg sync.WaitGroup
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for seq := 0; seq < perWriter && !stop.Load(); seq++ {
						s.Set(fmt.Sprintf("w%d-%d", w, seq), seq)
						s.Set(fmt.Sprintf("w%d-last", w), seq)
					}
				}()
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < pre && !stop.Load(); i++ {
					s.Delete(fmt.Sprint("d-", i))
				}
			}()
			wg.Add(1)
			go func() { // readers are not in the way either
				defer wg.Done()
				for i := 0; i < writers*perWriter && !stop.Load(); i++ {
					s.Get(fmt.Sprint("d-", i%pre))
				}
			}()
			dir := t.TempDir()
			var files []string
			for x := range saves {
				p := filepath.Join(dir, fmt.Sprint(x, ".snap"))
				if err := s.Save(p); err != nil {
					t.Error(err)
					break
				}
				files = append(files, p)
			}
			stop.Store(true)
			wg.Wait()
			if ev := s.Stats().Evictions; ev != 0 {
				t.Fatalf("the cache evicted %d entries: make it larger", ev)
			}
			for _, p := range files {
				r, err := Open[string, int](p, nil)
				if err != nil {
					t.Fatal(err)
				}
				if err := r.checkInvariants(); err != nil {
					t.Fatal(err)
				}
				checkInstant(t, r, writers, pre)
			}
		})
	}
}

func checkInstant(t *testing.T, r kv[string, int], writers, pre int) {
	t.Helper()
	for w := range writers {
		p := 0
		for {
			if _, ok := r.Get(fmt.Sprintf("w%d-%d", w, p)); !ok {
				break
			}
			p++
		}
		n := 0
		for k := range r.Keys() {
			if strings.HasPrefix(k, fmt.Sprintf("w%d-", w)) && !strings.HasSuffix(k, "last") {
				n++
			}
		}
		if n != p {
			t.Fatalf("writer %d: keys 0…%d present, then gaps: %d keys in all", w, p-1, n)
		}
		last, ok := r.Get(fmt.Sprintf("w%d-last", w))
		// Set(w-p) happened, then Set(last, p) may or may not have.
		valid := ok && last == p-1 || ok && last == p-2 || !ok && p <= 1
		if !valid {
			t.Fatalf("writer %d: keys 0…%d present, last = %d, %v", w, p-1, last, ok)
		}
	}
	first := pre
	for i := pre - 1; i >= 0; i-- {
		if _, ok := r.Get(fmt.Sprint("d-", i)); !ok {
			break
		}
		first = i
	}
	for i := range first {
		if _, ok := r.Get(fmt.Sprint("d-", i)); ok {
			t.Fatalf("d-%d present, d-%d…%d present, but some between deleted", i, first, pre-1)
		}
	}
}

// Open leaves out entries whose expiry has passed and keeps the others.
// The store has no expiry of its own yet (Save records 0), so the file is
// rewritten with expiries, as a store with TTLs would write it.
func TestOpenSkipsExpired(t *testing.T) {
	s := newTestMap[string, int](t, MapOptions{Seed: 51})
	for i := range 1000 {
		s.Set(fmt.Sprint(i), i)
	}
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src.snap"), filepath.Join(dir, "dst.snap")
	if err := s.Save(src); err != nil {
		t.Fatal(err)
	}
	r, err := snapshot.Open(src, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w, err := snapshot.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	dec, enc := snapshot.NewDecoder[string, int](), snapshot.NewEncoder[string, int]()
	now := time.Now().UnixNano()
	err = r.ForEach(func(rec []byte) error {
		k, v, _, b, err := dec.DecodeRecord(rec)
		if err != nil {
			return err
		}
		exp := now + int64(time.Hour) // odd values: an hour to live
		if v%2 == 0 {
			exp = now - 1 // even: expired
		}
		out, err := enc.EncodeRecord(k, v, exp, b)
		if err != nil {
			return err
		}
		return w.Append(out)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(r.Meta()); err != nil {
		t.Fatal(err)
	}
	got, err := Open[string, int](dst, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := got.checkInvariants(); err != nil {
		t.Fatal(err)
	}
	if got.Len() != 500 {
		t.Fatalf("%d entries restored, want the 500 unexpired", got.Len())
	}
	for i := range 1000 {
		if v, ok := got.Get(fmt.Sprint(i)); ok != (i%2 == 1) || ok && v != i {
			t.Fatalf("key %d: %d, %v", i, v, ok)
		}
	}
}

// Save while another goroutine clears the store and fills it again, key 0
// first: each snapshot is the store at one instant, so it holds keys
// 0 … p-1 for some p, in a store that passes the invariant checks.
func TestSaveDuringClear(t *testing.T) {
	s := newTestMap[int, int](t, MapOptions{Seed: 61})
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			s.Clear()
			for i := range 3000 {
				s.Set(i, i)
			}
		}
	}()
	dir := t.TempDir()
	saves := 20
	if testing.Short() {
		saves = 8
	}
	for x := range saves {
		p := filepath.Join(dir, fmt.Sprint(x, ".snap"))
		if err := s.Save(p); err != nil {
			t.Fatal(err)
		}
		r, err := Open[int, int](p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.checkInvariants(); err != nil {
			t.Fatal(err)
		}
		n := r.Len()
		for i := range n {
			if v, ok := r.Get(i); !ok || v != i {
				t.Fatalf("snapshot %d: %d entries, but key %d = %d, %v", x, n, i, v, ok)
			}
		}
	}
	stop.Store(true)
	<-done
}

// A cache round-trips with its expiries: every key back in its bucket,
// the same load report, entries that had not expired keep their absolute
// expiry (by the store's clock, given to Open), and those that had are
// left out. A full cache that has evicted keeps evicting after Open.
func TestSaveOpenCache(t *testing.T) {
	for _, o := range []Options{{MaxEntries: 5000, Seed: 31}, {MaxEntries: 777, Placement: bucket.DChoice, Choices: 3, BucketSize: 4, Seed: 32, Hash: 1}, {MaxEntries: 3000, Choices: 1, Seed: 33}} {
		t.Run(name(o), func(t *testing.T) {
			clk := newFakeClock()
			o.Clock = clk
			s := newTestStore[string, int](t, o)
			n := 2 * o.MaxEntries // full, and evicting
			for i := range n {
				k := fmt.Sprint("k", i)
				switch i % 3 {
				case 0:
					s.Set(k, i)
				case 1:
					setWithTTL(s, k, i, time.Minute)
				case 2:
					setWithTTL(s, k, i, time.Hour)
				}
			}
			if s.Stats().Evictions == 0 {
				t.Fatal("no evictions: the test wants a full cache")
			}
			r, _ := saveOpen(t, s, &Options{Clock: clk})
			sameReport(t, s.Report(), r.Report())
			sameContents(t, s, r)
			if err := r.checkInvariants(); err != nil {
				t.Fatal(err)
			}
			// The same expiries: after 2 minutes the one-minute keys are
			// gone from both, the others stay.
			clk.advance(2 * time.Minute)
			for i := range n {
				k := fmt.Sprint("k", i)
				v1, ok1 := s.Get(k)
				v2, ok2 := r.Get(k)
				if ok1 != ok2 || v1 != v2 {
					t.Fatalf("%s: saved store %d, %v; restored %d, %v", k, v1, ok1, v2, ok2)
				}
				if ok1 && i%3 == 1 {
					t.Fatalf("%s outlived its TTL", k)
				}
			}
			// Saved now, the expired keys still in their slots are left
			// out of the restored store.
			r2, _ := saveOpen(t, r, &Options{Clock: clk})
			for k := range r2.Keys() {
				if _, ok := r.Get(k); !ok {
					t.Fatalf("%s restored, but expired", k)
				}
			}
			for i := range n {
				r2.Set(fmt.Sprint("more", i), i)
			}
			if r2.Len() > o.MaxEntries {
				t.Fatalf("Len %d over MaxEntries %d after Open", r2.Len(), o.MaxEntries)
			}
			if err := r2.checkInvariants(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A Save that cannot write its file says why with ErrWrite (and the
// system's error), names the file once, and leaves what was there.
func TestSaveErrors(t *testing.T) {
	s, err := NewMap[string, int](MapOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	s.Set("a", 1)
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "x"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		also error
	}{
		{filepath.Join(dir, "missing", "s.snap"), fs.ErrNotExist}, // no such directory
		{sub, nil}, // a directory in the file's place
		{"", nil},
	} {
		err := s.Save(tc.path)
		if !errors.Is(err, ErrWrite) || tc.also != nil && !errors.Is(err, tc.also) {
			t.Errorf("Save(%q) = %v; want ErrWrite", tc.path, err)
			continue
		}
		if tc.path != "" && strings.Count(err.Error(), "snapshot "+tc.path+":") != 1 {
			t.Errorf("Save(%q): %v: want the file named once", tc.path, err)
		}
		t.Logf("Save(%q): %v", tc.path, err)
	}
	if b, err := os.ReadFile(filepath.Join(sub, "x")); err != nil || string(b) != "keep" {
		t.Errorf("the directory's file: %q, %v", b, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*")); len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

type complexField struct {
	N int
	C complex128
}

// A value msgpack cannot write is ErrValueType, and loses nothing: a
// value type it would drop whole (complex numbers, functions, channels:
// Save wrote records without them, Open gave zero values, and inspect
// misread the records as corrupt) is refused before the file is touched,
// and a value it fails to encode (a slice of complex numbers, an any
// holding one) stops the save with the previous snapshot in place.
func TestSaveValueTypes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.snap")
	good := newTestMap[string, int](t, MapOptions{Seed: 3})
	good.Set("kept", 1)
	if err := good.Save(path); err != nil {
		t.Fatal(err)
	}
	c := newTestMap[string, complex128](t, MapOptions{Seed: 3})
	c.Set("a", 1+2i)
	f := newTestMap[string, func()](t, MapOptions{Seed: 3})
	f.Set("a", func() {})
	ch := newTestMap[string, chan int](t, MapOptions{Seed: 3})
	ch.Set("a", make(chan int))
	cs := newTestStore[string, []complex64](t, Options{Seed: 3})
	cs.Set("a", []complex64{1i})
	a := newTestMap[string, any](t, MapOptions{Seed: 3})
	for i := range 100 {
		a.Set(fmt.Sprint(i), i)
	}
	a.Set("c", 3i)
	for name, save := range map[string]func(string) error{
		"complex128": c.Save, "func": f.Save, "chan": ch.Save, "[]complex64": cs.Save, "any holding a complex128": a.Save,
	} {
		err := save(path)
		if !errors.Is(err, ErrValueType) || strings.Count(err.Error(), path) != 1 {
			t.Errorf("%s: %v; want ErrValueType naming the file once", name, err)
		}
		if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*")); len(left) != 0 {
			t.Errorf("%s: temporary files left: %v", name, left)
		}
		r, err := Open[string, int](path, nil)
		if err != nil {
			t.Fatalf("%s: the previous snapshot: %v", name, err)
		}
		if v, ok := r.Get("kept"); !ok || v != 1 {
			t.Fatalf("%s: the previous snapshot holds kept = %v, %v", name, v, ok)
		}
	}
	// A struct's complex fields, like its function and channel fields,
	// are left out, as Save's doc says; the rest of it round-trips.
	sf := newTestMap[string, complexField](t, MapOptions{Seed: 3})
	sf.Set("a", complexField{7, 1i})
	r, _ := saveOpen(t, sf, nil)
	if v, ok := r.Get("a"); !ok || v.N != 7 {
		t.Errorf("struct with a complex field: %+v, %v", v, ok)
	}
}

// SaveContext gives up when its context is done, mid-walk and with
// writers at work: the error names the file and wraps the context's, no
// temporary file is left, the previous snapshot stands, and the store
// (unharmed) saves again afterwards. A context done before the call
// touches nothing.
func TestSaveContextCanceled(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.snap")
	s := newTestMap[string, int](t, MapOptions{Seed: 51})
	s.Set("first", 1)
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	// Enough keys for a walk of 16,384 buckets or more, four times the
	// stretch between two checks of ctx (ctxCheckBuckets): the walk must
	// stop within half of it.
	keys := 200_000
	if testing.Short() {
		keys = 100_000
	}
	for i := range keys {
		s.Set(fmt.Sprint(i), i)
	}
	stopWriters := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stopWriters:
					return
				default:
				}
				s.Set(fmt.Sprint(i%keys), g)
			}
		}()
	}
	ctx, cancel := context.WithCancel(context.Background())
	var last, all uint64
	err := s.SaveContext(ctx, path, func(done, total uint64) {
		last, all = done, total
		if done > 0 {
			cancel() // once the walk is under way
		}
	})
	if all < 4*ctxCheckBuckets {
		t.Fatalf("a walk of %d buckets is too short to tell a stop after the cancel", all)
	}
	if last >= all/2 {
		t.Errorf("the walk went on to bucket %d of %d after the cancel", last, all)
	}
	close(stopWriters)
	wg.Wait()
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), path) {
		t.Fatalf("SaveContext canceled mid-walk: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
	if r, err := Open[string, int](path, nil); err != nil || r.Len() != 1 {
		t.Fatalf("the previous snapshot: %v", err)
	}
	if err := s.checkInvariants(); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveContext(ctx, path, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("SaveContext with a done context: %v", err)
	}
	r, _ := saveOpen(t, s, nil)
	sameContents(t, s, r)
}
