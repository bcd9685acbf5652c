package workload

import "fmt"

// Aging is an endless workload of read requests whose popularity follows
// a key's age: a new key is born every step requests, and a request goes
// to the key r births back from the newest, r drawn from Zipf's law with
// exponent s over n ranks (r = 0, the newest key, the most likely). A key
// is thus most requested when new and less and less as newer keys push it
// down the ranks, as the items of a news site, a feed or a web server's
// latest pages are. The popularity ranking moves all the time, so a cache
// has to follow it: recency and the most recent gaps say more about a
// key's next use than its count of uses, unlike under a fixed Zipf law
// (Zipf), where frequency is the better guide.
//
// Keys start at n−1 (the newest when the stream starts) and grow with the
// births; a request never names a key below 0 or above the newest.
type Aging struct {
	z    *Zipf
	step uint64
	i    uint64 // requests drawn
	last uint64 // the newest key when the stream starts: n − 1
}

// NewAging returns an aging workload over n ranks (1 ≤ n ≤ 2^53) with
// exponent s (a finite s > 0), a birth every step ≥ 1 requests, drawing
// ranks from the given seed.
func NewAging(s float64, n, step, seed uint64) (*Aging, error) {
	if step < 1 {
		return nil, fmt.Errorf("%w: aging with a birth every 0 requests", ErrParam)
	}
	z, err := NewZipf(s, n, seed)
	if err != nil {
		return nil, err
	}
	return &Aging{z: z, step: step, last: n - 1}, nil
}

// Name returns "aging(s=S,n=N,step=STEP,seed=SEED)".
func (a *Aging) Name() string {
	return fmt.Sprintf("aging(s=%g,n=%d,step=%d,seed=%d)", a.z.s, a.z.keys, a.step, a.z.seed)
}

// Next returns the next key.
func (a *Aging) Next() uint64 {
	newest := a.last + a.i/a.step
	a.i++
	return newest - a.z.Next()
}

// Read fills reqs with read requests for the next keys. It never fails.
func (a *Aging) Read(reqs []Request[uint64]) (int, error) {
	for i := range reqs {
		reqs[i] = Request[uint64]{Key: a.Next()}
	}
	return len(reqs), nil
}
