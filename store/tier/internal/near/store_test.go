package near

import (
	"context"
	"errors"
	"testing"
	"time"
)

// keyMsg is a stand-in for a client's message type as an invalidation
// carries it: a key, or a reply that is not a string.
type keyMsg struct {
	key   string
	isStr bool
}

func (m *keyMsg) ToString() (string, error) {
	if !m.isStr {
		return "", errors.New("not a string")
	}
	return m.key, nil
}

// waiter is a client's CacheEntry interface.
type waiter interface {
	Wait(context.Context) (keyMsg, error)
}

func newStore(t *testing.T) *Store[keyMsg, *keyMsg, waiter] {
	t.Helper()
	c, err := New(Options{MaxEntries: 1024}, Ops[keyMsg]{
		PXAT:     func(*keyMsg) int64 { return -1 },
		WithPXAT: func(m keyMsg, _ int64) keyMsg { return m },
	})
	if err != nil {
		t.Fatal(err)
	}
	return NewStore(c.NewConn(), func(f *Flight[keyMsg]) waiter { return f })
}

func TestStoreFlight(t *testing.T) {
	s := newStore(t)
	now := time.Now()
	if _, e := s.Flight("k", "GET", time.Hour, now); e != nil {
		t.Fatalf("a read to send returned the entry %#v, want a nil interface", e)
	}
	_, e := s.Flight("k", "GET", time.Hour, now)
	if e == nil {
		t.Fatal("a second read returned no entry to wait for")
	}
	s.Update("k", "GET", keyMsg{key: "v", isStr: true})
	if v, err := e.Wait(context.Background()); err != nil || v.key != "v" {
		t.Fatalf("the waiter got %v, %v", v, err)
	}
	if v, e := s.Flight("k", "GET", time.Hour, now); e != nil || v.key != "v" {
		t.Fatalf("a hit returned %v, %v", v, e)
	}
}

func TestStoreDelete(t *testing.T) {
	str := func(k string) keyMsg { return keyMsg{key: k, isStr: true} }
	for _, tc := range []struct {
		name string
		del  []keyMsg
		left []string // the keys still cached after the delete
	}{
		{"one key", []keyMsg{str("a")}, []string{"b", "c"}},
		{"two keys", []keyMsg{str("a"), str("c")}, []string{"b"}},
		{"nil: all keys", nil, nil},
		{"empty: no key", []keyMsg{}, []string{"a", "b", "c"}},
		{"not a string: all keys", []keyMsg{str("a"), {key: "b"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			now := time.Now()
			for _, k := range []string{"a", "b", "c"} {
				s.Flight(k, "GET", time.Hour, now)
				s.Update(k, "GET", str("value of "+k))
			}
			s.Delete(tc.del)
			left := map[string]bool{}
			for _, k := range tc.left {
				left[k] = true
			}
			for _, k := range []string{"a", "b", "c"} {
				v, _ := s.Flight(k, "GET", time.Hour, now)
				if hit := v.key != ""; hit != left[k] {
					t.Errorf("after Delete(%v), %s cached: %v, want %v", tc.del, k, hit, left[k])
				}
			}
		})
	}
}
