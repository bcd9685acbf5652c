package hitratio

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/twochoice/twochoice/bench/caches"
	"github.com/twochoice/twochoice/bench/workload"
	"github.com/twochoice/twochoice/store"
)

// Result is the outcome of one replay.
type Result struct {
	Cache    string // the cache's name
	Workload string // the workload's name
	Capacity int    // entries; for an unbounded cache, the capacity it was run beside
	Bounded  bool   // false for the unbounded peers, whose ratio is the ceiling
	Reads    int64  // read requests
	Writes   int64  // write requests
	Hits     int64  // reads that found their key
	// WarmupHits counts the reads that found their key among the
	// uncounted first requests. Belady's optimum bounds the hits of a
	// whole stream, not of its end: a cache that does worse early may
	// hold keys that serve the counted part better, so checks against
	// the optimum compare Hits + WarmupHits.
	WarmupHits int64
	// Peak is the most entries a bounded cache held, sampled after each
	// batch of workload.BatchSize requests (Run and RunOne sample; Replay
	// does not, as an unbounded cache may take time to count).
	Peak int
	// Policy is the state of a twochoice cache's eviction policy at the
	// end of a replay by Run or RunOne (caches.Policy), nil for the
	// other caches.
	Policy *store.PolicyState
	// Timeline splits the counted reads into windows of Job.Window reads
	// each (the last one may be shorter), oldest first: how the hit
	// ratio moved along the stream. Nil without Job.Window.
	Timeline []Window
}

// Window is one stretch of a replay's counted reads and the hits among
// them (Result.Timeline).
type Window struct {
	Reads int64 `json:"reads"`
	Hits  int64 `json:"hits"`
}

// HitRatio returns Hits / Reads, or 0 when there were no reads.
func (w Window) HitRatio() float64 {
	if w.Reads == 0 {
		return 0
	}
	return float64(w.Hits) / float64(w.Reads)
}

// HitRatio returns Hits / Reads, or 0 when there were no reads.
func (r Result) HitRatio() float64 {
	if r.Reads == 0 {
		return 0
	}
	return float64(r.Hits) / float64(r.Reads)
}

// Replay feeds w to c until w ends and counts hits, as the package
// documentation describes, except over the first warmup requests, which
// are replayed but not counted. The Result's Capacity and Bounded are left
// for the caller to fill in. On an error from w, Replay returns the counts
// so far and the error.
func Replay[K caches.Key, V any](c caches.Cache[K, V], w workload.Workload[K], warmup int64) (Result, error) {
	return replay(c, w, warmup, false, 0)
}

// replay is Replay, and with peak it samples the cache's entries into
// Result.Peak after each batch; with window > 0 it keeps Result.Timeline
// in windows of that many counted reads.
func replay[K caches.Key, V any](c caches.Cache[K, V], w workload.Workload[K], warmup int64, peak bool, window int64) (Result, error) {
	r := Result{Cache: c.Name(), Workload: w.Name()}
	var zero V
	var seen int64 // requests replayed so far
	buf := make([]workload.Request[K], workload.BatchSize)
	for {
		n, err := w.Read(buf)
		if err == io.EOF {
			return r, nil
		}
		if err != nil {
			return r, err
		}
		for _, q := range buf[:n] {
			hit := false
			if q.Op == workload.Write {
				c.Set(q.Key, zero)
			} else if _, hit = c.Get(q.Key); !hit {
				c.Set(q.Key, zero)
			}
			if seen++; seen <= warmup {
				if hit {
					r.WarmupHits++
				}
				continue
			}
			if q.Op == workload.Write {
				r.Writes++
				continue
			}
			r.Reads++
			if hit {
				r.Hits++
			}
			if window > 0 {
				if (r.Reads-1)%window == 0 {
					r.Timeline = append(r.Timeline, Window{})
				}
				last := &r.Timeline[len(r.Timeline)-1]
				last.Reads++
				if hit {
					last.Hits++
				}
			}
		}
		if peak {
			r.Peak = max(r.Peak, c.Len())
		}
	}
}

// Job is one replay of Run: a peer at a capacity.
type Job[K caches.Key, V any] struct {
	Peer     caches.Peer[K, V]
	Capacity int
	// Seed is the hash seed of a seeded peer (caches.Options.Seed); 0
	// means the harness's fixed one.
	Seed uint64
	// Ranking pins twochoice's eviction ranking (caches.Options.Ranking).
	Ranking string
	// Window, if above 0, has the replay keep Result.Timeline in windows
	// of that many counted reads.
	Window int64
}

// Jobs returns a job for every peer at every capacity, peer by peer.
func Jobs[K caches.Key, V any](peers []caches.Peer[K, V], capacities []int) []Job[K, V] {
	jobs := make([]Job[K, V], 0, len(peers)*len(capacities))
	for _, p := range peers {
		for _, c := range capacities {
			jobs = append(jobs, Job[K, V]{Peer: p, Capacity: c})
		}
	}
	return jobs
}

// Options configure Run.
type Options struct {
	// Parallel is the most replays run at once; < 1 means GOMAXPROCS.
	Parallel int
	// Warmup is the number of requests each replay makes before it starts
	// counting (see Replay). Zero counts every request, as the ARC paper's
	// tables do.
	Warmup int64
	// Done, if set, is called after each job ends, from the job's
	// goroutine (so it must be safe for concurrent use): a progress hook.
	Done func()
}

// Run replays the workload that open returns against each job's cache,
// built with Sync at the job's capacity (RunOne). open is called once per
// job, from the job's goroutine; a workload that is an io.Closer is closed
// after its replay. Results come in job order. A failed job leaves a
// Result with only its Cache, Capacity and Bounded set, and its error,
// naming the job, is joined into Run's error; the other jobs still run.
func Run[K caches.Key, V any](open func() (workload.Workload[K], error), jobs []Job[K, V], o Options) ([]Result, error) {
	parallel := o.Parallel
	if parallel < 1 {
		parallel = runtime.GOMAXPROCS(0)
	}
	results := make([]Result, len(jobs))
	errs := make([]error, len(jobs))
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i], errs[i] = RunOne(open, j, o.Warmup)
			if o.Done != nil {
				o.Done()
			}
		})
	}
	wg.Wait()
	return results, errors.Join(errs...)
}

// RunOne is one job of Run: it builds the job's cache with Sync at the
// job's capacity, replays the workload that open returns against it,
// counting from request warmup on, and closes the workload if it is an
// io.Closer. For a bounded cache it fills in Result.Peak. A cache with an
// Err method (Belady's optimum, which must be replayed its own sequence)
// fails the job when Err reports an error. On failure the Result has only
// its Cache, Capacity and Bounded set, and the error names the job.
func RunOne[K caches.Key, V any](open func() (workload.Workload[K], error), j Job[K, V], warmup int64) (Result, error) {
	r, err := runJob(open, j, warmup)
	if err != nil {
		return Result{Cache: j.Peer.Name, Capacity: j.Capacity, Bounded: j.Peer.Bounded},
			fmt.Errorf("hitratio: %s at capacity %d: %w", j.Peer.Name, j.Capacity, err)
	}
	return r, nil
}

func runJob[K caches.Key, V any](open func() (workload.Workload[K], error), j Job[K, V], warmup int64) (res Result, err error) {
	c, err := j.Peer.New(caches.Options{Capacity: j.Capacity, Sync: true, Seed: j.Seed, Ranking: j.Ranking})
	if err != nil {
		return res, err
	}
	defer c.Close()
	w, err := open()
	if err != nil {
		return res, err
	}
	if cl, ok := w.(io.Closer); ok {
		defer func() { err = errors.Join(err, cl.Close()) }()
	}
	res, err = replay(c, w, warmup, j.Peer.Bounded, j.Window)
	if err != nil {
		return res, err
	}
	res.Policy = caches.Policy(c)
	if e, ok := c.(interface{ Err() error }); ok && e.Err() != nil {
		return res, e.Err()
	}
	res.Capacity, res.Bounded = j.Capacity, j.Peer.Bounded
	return res, nil
}
