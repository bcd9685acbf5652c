package store_test

import (
	"context"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/twochoice/twochoice/store"
)

// ExpireAfterAccess: an entry lives as long as it is read within its TTL
// of the last read, as a session does.
func ExampleCacheOptions_expireAfterAccess() {
	clock := &fixedClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c, err := store.NewCache(store.CacheOptions[string, string]{
		MaxEntries: 100, Clock: clock, ExpireAfterAccess: 10 * time.Minute,
	})
	if err != nil {
		log.Fatal(err)
	}
	c.Set("session:alice", "cart")
	c.Set("session:bob", "cart")
	for range 6 { // an hour, alice reading every 5 minutes
		clock.t = clock.t.Add(5 * time.Minute)
		c.Get("session:alice")
	}
	_, alice := c.Get("session:alice")
	_, bob := c.Get("session:bob")
	fmt.Println(alice, bob)
	// Output: true false
}

// sessionExpiry gives sessions of administrators a shorter life, keeps an
// entry's expiry when its value changes, and slides it on reads.
type sessionExpiry struct{}

func (sessionExpiry) ExpireAfterCreate(k, _ string) time.Duration {
	if strings.HasPrefix(k, "admin:") {
		return time.Minute
	}
	return time.Hour
}

func (sessionExpiry) ExpireAfterUpdate(_, _ string, remaining time.Duration) time.Duration {
	return remaining
}

func (e sessionExpiry) ExpireAfterRead(k, v string, _ time.Duration) time.Duration {
	return e.ExpireAfterCreate(k, v)
}

// An ExpiryCalculator gives each entry its own time to live.
func ExampleExpiryCalculator() {
	clock := &fixedClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c, err := store.NewCache(store.CacheOptions[string, string]{
		MaxEntries: 100, Clock: clock, ExpiryCalculator: sessionExpiry{},
	})
	if err != nil {
		log.Fatal(err)
	}
	c.Set("admin:root", "token")
	c.Set("user:alice", "token")
	c.SetWithTTL("user:guest", "token", time.Second) // SetWithTTL wins
	clock.t = clock.t.Add(2 * time.Minute)
	_, admin := c.Get("admin:root")
	_, user := c.Get("user:alice")
	_, guest := c.Get("user:guest")
	fmt.Println(admin, user, guest)
	// Output: false true false
}

// Len counts expired entries until they are removed; RemoveExpired
// removes them all.
func ExampleCache_RemoveExpired() {
	clock := &fixedClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c, err := store.NewCache(store.CacheOptions[int, int]{MaxEntries: 100, Clock: clock})
	if err != nil {
		log.Fatal(err)
	}
	for i := range 10 {
		c.SetWithTTL(i, i, time.Duration(i+1)*time.Minute)
	}
	clock.t = clock.t.Add(5 * time.Minute)
	fmt.Println(c.Len())
	fmt.Println(c.RemoveExpired(), c.Len())
	// Output:
	// 10
	// 5 5
}

// RefreshAfter reloads an entry in the background once it is older than
// that, through the loader GetOrLoad was given, while readers keep getting
// the old value.
func ExampleCacheOptions_refreshAfter() {
	clock := &fixedClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c, err := store.NewCache(store.CacheOptions[string, string]{
		MaxEntries: 100, Clock: clock, RefreshAfter: time.Minute,
	})
	if err != nil {
		log.Fatal(err)
	}
	version := 0
	reloaded := make(chan struct{}, 1)
	load := func(ctx context.Context, k string) (string, error) {
		version++
		if version > 1 {
			defer func() { reloaded <- struct{}{} }()
		}
		return fmt.Sprintf("%s v%d", k, version), nil
	}
	ctx := context.Background()
	v, _ := c.GetOrLoad(ctx, "config", load) // a miss: loads v1
	fmt.Println(v)
	clock.t = clock.t.Add(2 * time.Minute)
	v, _ = c.GetOrLoad(ctx, "config", load) // old: v1 now, v2 reloading
	fmt.Println(v)
	<-reloaded
	for v == "config v1" { // the refresh stores v2 once its loader returns
		time.Sleep(time.Millisecond)
		v, _ = c.Get("config")
	}
	fmt.Println(v, c.Stats().Refreshes)
	// Output:
	// config v1
	// config v1
	// config v2 1
}
