// Package cachestoretest runs rueidis's CacheStore contract (its
// cache_test.go, restated with exported calls) against a store of any
// client of rueidis's family: rueidis and valkey-go, a fork of it with the
// same contract under its own type names. Each tier package runs it
// against its Tier's stores, and against its client's own
// NewSimpleCacheAdapter, which shows that the restated contract is the one
// the client holds its stores to.
package cachestoretest

import (
	"context"
	"encoding/binary"
	"errors"
	"testing"
	"time"
)

// Message is what the contract needs of the client's message type M.
type Message[M any] interface {
	*M
	CacheUnmarshalView(buf []byte) error
	CachePXAT() int64
	IsCacheHit() bool
	ToString() (string, error)
}

// Entry is the client's CacheEntry: a flight to wait for.
type Entry[M any] interface {
	Wait(ctx context.Context) (M, error)
}

// Store is the client's CacheStore, whose Flight returns its CacheEntry
// type E.
type Store[M any, E Entry[M]] interface {
	Flight(key, cmd string, ttl time.Duration, now time.Time) (M, E)
	Update(key, cmd string, val M) int64
	Cancel(key, cmd string, err error)
	Delete(keys []M)
	Close(err error)
}

// message builds a reply through CacheUnmarshalView, the only exported way to
// make a message without a server: a simple string s expiring at pxat
// (Unix milliseconds, 0 for none).
func message[M any, P Message[M]](t testing.TB, s string, pxat int64) M {
	t.Helper()
	buf := make([]byte, 0, 7+1+8+len(s))
	for i := range 7 {
		buf = append(buf, byte(pxat>>(8*i)))
	}
	buf = append(buf, '+')
	buf = binary.BigEndian.AppendUint64(buf, uint64(len(s)))
	buf = append(buf, s...)
	var m M
	if err := P(&m).CacheUnmarshalView(buf); err != nil {
		t.Fatalf("building a message: %v", err)
	}
	return m
}

// text returns the string m carries.
func text[M any, P Message[M]](m M) string {
	s, _ := P(&m).ToString()
	return s
}

// empty reports whether m is the zero message, the client's "no reply".
func empty[M comparable](m M) bool {
	var z M
	return m == z
}

// Run runs the CacheStore contract against the stores newStore returns.
func Run[M comparable, P Message[M], E Entry[M]](t *testing.T, newStore func() Store[M, E]) {
	msg, str := message[M, P], text[M, P]
	hit := func(m M) bool { return P(&m).IsCacheHit() }
	pxatOf := func(m M) int64 { return P(&m).CachePXAT() }
	isNil := func(e E) bool { return any(e) == nil }
	t.Run("FlightAndUpdate", func(t *testing.T) {
		now := time.Now()
		s := newStore()
		v, e := s.Flight("key", "cmd", 100*time.Millisecond, now)
		if !empty(v) || !isNil(e) {
			t.Fatal("the first flight should return no reply and no entry")
		}
		v, e = s.Flight("key", "cmd", 100*time.Millisecond, now)
		if !empty(v) || isNil(e) {
			t.Fatal("a flight before Update should return an entry to wait for")
		}
		s.Delete([]M{msg(t, "key", 0)}) // does not touch the pending flight
		v2, e2 := s.Flight("key", "cmd", 100*time.Millisecond, now)
		if !empty(v2) || any(e2) != any(e) {
			t.Fatal("Delete should leave the pending flight alone")
		}
		pxat := s.Update("key", "cmd", msg(t, "val", now.Add(time.Second).UnixMilli()))
		if pxat < now.Add(90*time.Millisecond).UnixMilli() || pxat > now.Add(100*time.Millisecond).UnixMilli() {
			t.Fatalf("Update returned pxat %d, want the client's ttl, about now+100ms", pxat-now.UnixMilli())
		}
		v2, err := e.Wait(context.Background())
		if err != nil || str(v2) != "val" {
			t.Fatalf("the waiter got %v, %v", v2, err)
		}
		if p := pxatOf(v2); p != pxat {
			t.Fatalf("the waiter's reply expires at %d, want %d", p, pxat)
		}
		v2, _ = s.Flight("key", "cmd", 100*time.Millisecond, now)
		if str(v2) != "val" || pxatOf(v2) != pxat || !hit(v2) {
			t.Fatalf("a flight after Update got %v (pxat %d, hit %v)", v2, pxatOf(v2), hit(v2))
		}
		s.Delete([]M{msg(t, "key", 0)})
		v, e = s.Flight("key", "cmd", 100*time.Millisecond, now)
		if !empty(v) || !isNil(e) {
			t.Fatal("a flight after Delete should miss")
		}
	})
	t.Run("ServerTTLFirst", func(t *testing.T) {
		now := time.Now()
		s := newStore()
		s.Flight("key", "cmd", time.Minute, now)
		want := now.Add(time.Second).UnixMilli()
		if pxat := s.Update("key", "cmd", msg(t, "val", want)); pxat != want {
			t.Fatalf("Update returned pxat %d, want the server's %d", pxat, want)
		}
		if v, _ := s.Flight("key", "cmd", time.Minute, now); pxatOf(v) != want {
			t.Fatalf("hit expires at %d, want %d", pxatOf(v), want)
		}
	})
	t.Run("FlightAndCancel", func(t *testing.T) {
		now := time.Now()
		s := newStore()
		s.Flight("key", "cmd", 100*time.Millisecond, now)
		_, e := s.Flight("key", "cmd", 100*time.Millisecond, now)
		if isNil(e) {
			t.Fatal("no entry to wait for")
		}
		s.Delete([]M{msg(t, "key", 0)})
		boom := errors.New("boom")
		s.Cancel("key", "cmd", boom)
		if _, err := e.Wait(context.Background()); !errors.Is(err, boom) {
			t.Fatalf("the waiter got %v, want the Cancel's error", err)
		}
		v, e := s.Flight("key", "cmd", 100*time.Millisecond, now)
		if !empty(v) || !isNil(e) {
			t.Fatal("a flight after Cancel should start a new one")
		}
	})
	t.Run("FlightAndDelete", func(t *testing.T) {
		now := time.Now()
		s := newStore()
		for _, del := range [][]M{{msg(t, "key", 0)}, nil} {
			s.Flight("key", "cmd1", 100*time.Millisecond, now)
			s.Flight("key", "cmd2", 100*time.Millisecond, now)
			s.Update("key", "cmd1", msg(t, "val1", 0))
			s.Update("key", "cmd2", msg(t, "val2", 0))
			if v, _ := s.Flight("key", "cmd1", 100*time.Millisecond, now); str(v) != "val1" {
				t.Fatalf("cmd1 got %q before the delete", str(v))
			}
			if v, _ := s.Flight("key", "cmd2", 100*time.Millisecond, now); str(v) != "val2" {
				t.Fatalf("cmd2 got %q before the delete", str(v))
			}
			s.Delete(del)
			for _, cmd := range []string{"cmd1", "cmd2"} {
				if v, e := s.Flight("key", cmd, 100*time.Millisecond, now); !empty(v) || !isNil(e) {
					t.Fatalf("%s: a flight after Delete(%v) should miss", cmd, del)
				}
				s.Cancel("key", cmd, errors.New("done"))
			}
		}
	})
	t.Run("FlightAndTTL", func(t *testing.T) {
		now := time.Now()
		s := newStore()
		s.Flight("key", "cmd", time.Second, now)
		s.Update("key", "cmd", msg(t, "val", now.Add(time.Millisecond).UnixMilli()))
		if v, e := s.Flight("key", "cmd", time.Second, now.Add(time.Millisecond)); !empty(v) || !isNil(e) {
			t.Fatal("a flight after the TTL should miss")
		}
	})
	t.Run("FlightAndClose", func(t *testing.T) {
		now := time.Now()
		s := newStore()
		s.Flight("key", "other", time.Minute, now)
		s.Update("key", "other", msg(t, "val", 0))
		s.Flight("key", "cmd", 100*time.Millisecond, now)
		_, e := s.Flight("key", "cmd", 100*time.Millisecond, now)
		boom := errors.New("boom")
		s.Close(boom)
		if _, err := e.Wait(context.Background()); !errors.Is(err, boom) {
			t.Fatalf("the waiter got %v, want the Close's error", err)
		}
		if _, e = s.Flight("key", "cmd", 100*time.Millisecond, now); !isNil(e) {
			t.Fatal("a flight after Close should return no entry")
		}
		if v, _ := s.Flight("key", "other", time.Minute, now); !empty(v) {
			t.Fatal("a reply cached before Close survived it")
		}
	})
	t.Run("FlightTimeout", func(t *testing.T) {
		now := time.Now()
		s := newStore()
		s.Flight("key", "cmd", 100*time.Millisecond, now)
		_, e := s.Flight("key", "cmd", 100*time.Millisecond, now)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := e.Wait(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("Wait returned %v, want context.Canceled", err)
		}
	})
}

// Simple is the clients' example SimpleCache, a map, to pass to their
// NewSimpleCacheAdapter.
type Simple[M any] struct {
	m map[string]M
}

// NewSimple returns an empty Simple.
func NewSimple[M any]() *Simple[M] { return &Simple[M]{m: map[string]M{}} }

func (s *Simple[M]) Get(k string) M    { return s.m[k] }
func (s *Simple[M]) Set(k string, v M) { s.m[k] = v }
func (s *Simple[M]) Del(k string)      { delete(s.m, k) }
func (s *Simple[M]) Flush()            { s.m = nil }
