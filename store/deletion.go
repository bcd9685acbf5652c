package store

// DeletionCause says why an entry left a cache (CacheOptions.OnDeletion).
type DeletionCause uint8

const (
	// DeletionReplaced: a Set or Compute of the key stored a new value.
	DeletionReplaced DeletionCause = iota + 1
	// DeletionDeleted: Delete or Compute removed the entry.
	DeletionDeleted
	// DeletionEvicted: the entry made room for another (the bound).
	DeletionEvicted
	// DeletionExpired: the entry's time to live had passed. An expired
	// entry that a Set or Compute of its key replaces is reported so,
	// and Stats counts an expiration and a Set of a new key.
	DeletionExpired
)

// String returns the cause's name: replaced, deleted, evicted or expired.
func (c DeletionCause) String() string {
	switch c {
	case DeletionReplaced:
		return "replaced"
	case DeletionDeleted:
		return "deleted"
	case DeletionEvicted:
		return "evicted"
	case DeletionExpired:
		return "expired"
	}
	return "unknown"
}

// DeletionEvent is an entry that left a cache, and why.
type DeletionEvent[K comparable, V any] struct {
	Key   K
	Value V
	Cause DeletionCause
}
