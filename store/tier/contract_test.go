package tier

import (
	"context"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/redis/rueidis"
)

// msg builds a reply through CacheUnmarshalView, the only exported way to
// make a RedisMessage without a server: a simple string s expiring at
// pxat (Unix milliseconds, 0 for none).
func msg(t testing.TB, s string, pxat int64) rueidis.RedisMessage {
	t.Helper()
	buf := make([]byte, 0, 7+1+8+len(s))
	for i := range 7 {
		buf = append(buf, byte(pxat>>(8*i)))
	}
	buf = append(buf, '+')
	buf = binary.BigEndian.AppendUint64(buf, uint64(len(s)))
	buf = append(buf, s...)
	var m rueidis.RedisMessage
	if err := m.CacheUnmarshalView(buf); err != nil {
		t.Fatalf("building a message: %v", err)
	}
	return m
}

func str(m rueidis.RedisMessage) string {
	s, _ := m.ToString()
	return s
}

// empty reports whether m is the zero RedisMessage, rueidis's "no reply".
func empty(m rueidis.RedisMessage) bool {
	var z rueidis.RedisMessage
	return m == z
}

// testContract runs rueidis's CacheStore contract (its cache_test.go,
// restated with exported calls) against the stores newStore returns.
func testContract(t *testing.T, newStore func() rueidis.CacheStore) {
	t.Run("FlightAndUpdate", func(t *testing.T) {
		now := time.Now()
		s := newStore()
		v, e := s.Flight("key", "cmd", 100*time.Millisecond, now)
		if !empty(v) || e != nil {
			t.Fatal("the first flight should return no reply and no entry")
		}
		v, e = s.Flight("key", "cmd", 100*time.Millisecond, now)
		if !empty(v) || e == nil {
			t.Fatal("a flight before Update should return an entry to wait for")
		}
		s.Delete([]rueidis.RedisMessage{msg(t, "key", 0)}) // does not touch the pending flight
		v2, e2 := s.Flight("key", "cmd", 100*time.Millisecond, now)
		if !empty(v2) || e2 != e {
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
		if p := v2.CachePXAT(); p != pxat {
			t.Fatalf("the waiter's reply expires at %d, want %d", p, pxat)
		}
		v2, _ = s.Flight("key", "cmd", 100*time.Millisecond, now)
		if str(v2) != "val" || v2.CachePXAT() != pxat || !v2.IsCacheHit() {
			t.Fatalf("a flight after Update got %v (pxat %d, hit %v)", v2, v2.CachePXAT(), v2.IsCacheHit())
		}
		s.Delete([]rueidis.RedisMessage{msg(t, "key", 0)})
		v, e = s.Flight("key", "cmd", 100*time.Millisecond, now)
		if !empty(v) || e != nil {
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
		if v, _ := s.Flight("key", "cmd", time.Minute, now); v.CachePXAT() != want {
			t.Fatalf("hit expires at %d, want %d", v.CachePXAT(), want)
		}
	})
	t.Run("FlightAndCancel", func(t *testing.T) {
		now := time.Now()
		s := newStore()
		s.Flight("key", "cmd", 100*time.Millisecond, now)
		_, e := s.Flight("key", "cmd", 100*time.Millisecond, now)
		if e == nil {
			t.Fatal("no entry to wait for")
		}
		s.Delete([]rueidis.RedisMessage{msg(t, "key", 0)})
		boom := errors.New("boom")
		s.Cancel("key", "cmd", boom)
		if _, err := e.Wait(context.Background()); !errors.Is(err, boom) {
			t.Fatalf("the waiter got %v, want the Cancel's error", err)
		}
		v, e := s.Flight("key", "cmd", 100*time.Millisecond, now)
		if !empty(v) || e != nil {
			t.Fatal("a flight after Cancel should start a new one")
		}
	})
	t.Run("FlightAndDelete", func(t *testing.T) {
		now := time.Now()
		s := newStore()
		for _, del := range [][]rueidis.RedisMessage{{msg(t, "key", 0)}, nil} {
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
				if v, e := s.Flight("key", cmd, 100*time.Millisecond, now); !empty(v) || e != nil {
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
		if v, e := s.Flight("key", "cmd", time.Second, now.Add(time.Millisecond)); !empty(v) || e != nil {
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
		if _, e = s.Flight("key", "cmd", 100*time.Millisecond, now); e != nil {
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

// simple is rueidis's example SimpleCache: a map.
type simple struct {
	m map[string]rueidis.RedisMessage
}

func (s *simple) Get(k string) rueidis.RedisMessage    { return s.m[k] }
func (s *simple) Set(k string, v rueidis.RedisMessage) { s.m[k] = v }
func (s *simple) Del(k string)                         { delete(s.m, k) }
func (s *simple) Flush()                               { s.m = nil }

func TestCacheStoreContract(t *testing.T) {
	// rueidis's own adapter first: it shows the restated contract is the
	// one rueidis holds its stores to.
	t.Run("rueidis-simple-adapter", func(t *testing.T) {
		testContract(t, func() rueidis.CacheStore {
			return rueidis.NewSimpleCacheAdapter(&simple{m: map[string]rueidis.RedisMessage{}})
		})
	})
	t.Run("tier", func(t *testing.T) {
		tr, err := New(Options{MaxEntries: 1024})
		if err != nil {
			t.Fatal(err)
		}
		testContract(t, func() rueidis.CacheStore { return tr.NewCacheStore(rueidis.CacheStoreOption{}) })
	})
}
