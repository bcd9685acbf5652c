package near

import (
	"sync/atomic"
	"time"
)

// clock is the time by which the cache expires entries: the latest time a
// read or reply brought, in Unix milliseconds. A Get of an entry with an
// expiry asks its cache for the time, and the system clock costs a
// read of the time source (time.Now, 20 to 80 ns on a virtual machine's
// clock) on every hit, when the client has just read it to call Flight.
// Reads carry their time here instead: a hit writes the shared word only
// when the millisecond has changed, so cores rarely contend for it. The
// cache's time lags the true time by the gap since the last read or reply,
// so an idle cache drops expired entries late; it never serves one, since
// a hit checks the reply's own expiry against the read's time.
type clock struct {
	ms atomic.Int64
}

func newClock() *clock {
	c := &clock{}
	c.ms.Store(time.Now().UnixMilli())
	return c
}

// Now implements the cache's Clock.
func (c *clock) Now() time.Time { return time.UnixMilli(c.ms.Load()) }

// saw moves the clock to ms if that is later.
func (c *clock) saw(ms int64) {
	if ms > c.ms.Load() {
		c.ms.Store(ms)
	}
}
