package store

// visited is a table as the code that visits it a bucket at a time sees
// it: snapshots (cow.go, save.go), iteration (iter.go) and the load report
// (report.go). A map's table and a cache's both implement it; none of its
// methods is on a Get's or a Set's path.
type visited[K comparable, V any] interface {
	geom() *geometry
	// bucket returns bucket i.
	bucket(i uint64) bref[K, V]
	// load returns the number of entries in bucket i.
	load(i uint64) uint32
	// entriesOf copies bucket i's entries into dst, and their expiries
	// into exps (a map's entries never expire: it leaves exps alone), and
	// returns how many it copied: a consistent view of the bucket.
	entriesOf(i uint64, dst *[slotsPerBucket]slot[K, V], exps *[slotsPerBucket]int64) int
	// expiryOf returns the expiry of slot j of bucket i (0: never); the
	// caller keeps writers off the bucket.
	expiryOf(i uint64, j int) int64
	// stashed copies the stash's entries (a cache has none).
	stashed() []slot[K, V]
	stashLen() int
}

func (g *geometry) geom() *geometry { return g }

func (t *table[K, V]) entriesOf(i uint64, dst *[slotsPerBucket]slot[K, V], _ *[slotsPerBucket]int64) int {
	return t.bucket(i).snapshot(dst, t.lay)
}

func (t *table[K, V]) expiryOf(uint64, int) int64 { return 0 }
func (t *table[K, V]) stashed() []slot[K, V]      { return t.stash.entries() }
func (t *table[K, V]) stashLen() int              { return t.stash.len() }

func (t *cacheTable[K, V]) expiryOf(i uint64, j int) int64 { return t.meta[i].exp[j].Load() }
func (t *cacheTable[K, V]) stashed() []slot[K, V]          { return nil }
func (t *cacheTable[K, V]) stashLen() int                  { return 0 }

var (
	_ visited[int, int] = (*table[int, int])(nil)
	_ visited[int, int] = (*cacheTable[int, int])(nil)
)
