package snapshot

// Slots returns the most entries a bucket of the snapshot's table holds:
// the histogram's loads run from 0 to it. That is BucketSize, except for a
// cache that was given fewer, larger buckets (store's cacheSize), so
// readers that check records against their buckets take it from here.
func (m *Meta) Slots() int { return len(m.Histogram[0]) - 1 }
