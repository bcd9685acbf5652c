package serve

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twochoice/twochoice/bench/workload"
)

// Workload configures the synthetic requests run against the store.
type Workload struct {
	// Kind is "zipf", "uniform" or "none".
	Kind string
	// ZipfS is the Zipf exponent s > 0: line r of the key file is asked
	// for with probability proportional to 1/(r+1)^s.
	ZipfS float64
	// Writes, Deletes and Inserts are the shares of the requests that Set
	// a key of the file, Delete one, and Set a key never seen before; the
	// rest are Gets. Each is 0 to 1, and they add up to at most 1.
	Writes, Deletes, Inserts float64
	// Threads is the number of goroutines sending requests, 1 or more.
	Threads int
	// Rate is the requests per second over all threads; 0 means as many
	// as the threads can send.
	Rate float64
	// Seed picks the streams: the same seed, the same requests.
	Seed uint64
}

func (w *Workload) check() error {
	switch w.Kind {
	case "none":
		return nil
	case "zipf":
		if !(w.ZipfS > 0) {
			return fmt.Errorf("%w: Zipf exponent %v (want > 0)", ErrConfig, w.ZipfS)
		}
	case "uniform":
	default:
		return fmt.Errorf("%w: workload %q (want zipf, uniform or none)", ErrConfig, w.Kind)
	}
	for _, s := range []float64{w.Writes, w.Deletes, w.Inserts} {
		if !(s >= 0 && s <= 1) {
			return fmt.Errorf("%w: share %v (want 0 to 1)", ErrConfig, s)
		}
	}
	if w.Writes+w.Deletes+w.Inserts > 1 {
		return fmt.Errorf("%w: writes %v + deletes %v + inserts %v add up to more than 1", ErrConfig, w.Writes, w.Deletes, w.Inserts)
	}
	if w.Threads < 1 || w.Threads > MaxThreads {
		return fmt.Errorf("%w: %d threads (want at least 1 and at most %d)", ErrConfig, w.Threads, MaxThreads)
	}
	// An infinite rate is not "as fast as they go" (that is 0): it would
	// pace each thread to batches of one request.
	if !(w.Rate >= 0) || math.IsInf(w.Rate, 1) {
		return fmt.Errorf("%w: rate %v (want a finite number ≥ 0; 0: as fast as the threads go)", ErrConfig, w.Rate)
	}
	return nil
}

// MaxThreads bounds Workload.Threads: each thread holds a batch of
// requests and spins on the store, and 10^5 of them took gigabytes and
// kept the server from starting. 1024 oversubscribes 256 cores four
// times, as bench's bound does.
const MaxThreads = 1024

// driver runs a Workload against a store until stopped.
type driver struct {
	w    Workload
	s    Store
	keys []string

	ops     atomic.Uint64 // requests sent
	stop    chan struct{}
	stopped sync.Once
	wg      sync.WaitGroup
}

func startWorkload(w Workload, s Store, keys []string) (*driver, error) {
	d := &driver{w: w, s: s, keys: keys, stop: make(chan struct{})}
	if w.Kind == "none" {
		return d, nil
	}
	gens := make([]workload.Workload[uint64], w.Threads)
	for t := range gens {
		var err error
		seed := w.Seed + uint64(t)
		if w.Kind == "zipf" {
			gens[t], err = workload.NewZipf(w.ZipfS, uint64(len(keys)), seed)
		} else {
			gens[t], err = workload.NewUniform(uint64(len(keys)), seed)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
	}
	for t, g := range gens {
		d.wg.Add(1)
		go d.run(t, g)
	}
	return d, nil
}

// run is one thread: batches of requests, paced to its share of the rate.
func (d *driver) run(thread int, gen workload.Workload[uint64]) {
	defer d.wg.Done()
	rng := rand.New(rand.NewPCG(d.w.Seed, uint64(thread)))
	perThread := d.w.Rate / float64(d.w.Threads)
	reqs := make([]workload.Request[uint64], batchFor(perThread))
	del, set, ins := d.w.Deletes, d.w.Deletes+d.w.Writes, d.w.Deletes+d.w.Writes+d.w.Inserts
	prefix := "new:" + strconv.Itoa(thread) + ":"
	fresh := 0
	start := time.Now()
	sent := 0
	for {
		select {
		case <-d.stop:
			return
		default:
		}
		n, err := gen.Read(reqs)
		if err != nil {
			return // generators never end; nothing to report if one did
		}
		for _, r := range reqs[:n] {
			k := d.keys[r.Key]
			switch p := rng.Float64(); {
			case p < del:
				d.s.Delete(k)
			case p < set:
				d.s.Set(k, r.Key)
			case p < ins:
				d.s.Set(prefix+strconv.Itoa(fresh), uint64(fresh))
				fresh++
			default:
				d.s.Get(k)
			}
		}
		sent += n
		d.ops.Add(uint64(n))
		if perThread > 0 {
			ahead := time.Duration(float64(sent)/perThread*float64(time.Second)) - time.Since(start)
			if ahead > 0 {
				select {
				case <-d.stop:
					return
				case <-time.After(ahead):
				}
			}
		}
	}
}

// batchFor returns the batch size of a thread paced at perThread requests
// a second (0: unpaced): about a hundred batches a second, so the rate is
// smooth, and at most workload.BatchSize. Clamped as a float before the
// conversion: a rate past the int range (--rate 1e300) would otherwise
// convert to an arbitrary int and leave batches of one request.
func batchFor(perThread float64) int {
	if perThread <= 0 {
		return workload.BatchSize
	}
	return int(min(max(perThread/100, 1), workload.BatchSize))
}

// close stops the threads and waits for them; it may be called again.
func (d *driver) close() {
	d.stopped.Do(func() { close(d.stop) })
	d.wg.Wait()
}
