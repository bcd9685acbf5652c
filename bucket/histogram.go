package bucket

import "slices"

// Histogram counts buckets by load, per part: Parts[j][k] is the number of
// buckets of part j that hold exactly k keys. A table whose rule has no
// parts has one.
type Histogram struct {
	Parts [][]uint64 `json:"parts"`
}

// NewHistogram returns an empty histogram with the given number of parts.
func NewHistogram(parts int) *Histogram {
	return &Histogram{Parts: make([][]uint64, parts)}
}

// Add counts count more buckets of part j with the given load.
func (h *Histogram) Add(j, load int, count uint64) {
	p := h.Parts[j]
	for len(p) <= load {
		p = append(p, 0)
	}
	p[load] += count
	h.Parts[j] = p
}

// Counts returns the number of buckets at each load over all parts.
func (h *Histogram) Counts() []uint64 {
	var c []uint64
	for _, p := range h.Parts {
		for len(c) < len(p) {
			c = append(c, 0)
		}
		for k, v := range p {
			c[k] += v
		}
	}
	return trim(c)
}

// trim drops c's trailing zero counts, all of them: counts of no bucket
// trim to none, as a histogram that counted nothing has.
func trim(c []uint64) []uint64 {
	for len(c) > 0 && c[len(c)-1] == 0 {
		c = c[:len(c)-1]
	}
	return c
}

// Buckets returns the number of buckets counted.
func (h *Histogram) Buckets() uint64 {
	var n uint64
	for _, v := range h.Counts() {
		n += v
	}
	return n
}

// Balls returns the number of keys in the counted buckets.
func (h *Histogram) Balls() uint64 {
	var m uint64
	for k, v := range h.Counts() {
		m += uint64(k) * v
	}
	return m
}

// PartBalls returns the number of keys in each part.
func (h *Histogram) PartBalls() []uint64 {
	m := make([]uint64, len(h.Parts))
	for j, p := range h.Parts {
		for k, v := range p {
			m[j] += uint64(k) * v
		}
	}
	return m
}

// MaxLoad returns the highest load of any counted bucket (0 if none).
func (h *Histogram) MaxLoad() int {
	c := h.Counts()
	for k := len(c) - 1; k > 0; k-- {
		if c[k] > 0 {
			return k
		}
	}
	return 0
}

// ShareAtLeast returns s[k], the fraction of buckets with load ≥ k, for k
// from 0 (always 1 when any bucket was counted) to the maximum load.
func (h *Histogram) ShareAtLeast() []float64 { return shareAtLeast(h.Counts()) }

// PartShareAtLeast returns ShareAtLeast for each part on its own.
func (h *Histogram) PartShareAtLeast() [][]float64 {
	s := make([][]float64, len(h.Parts))
	for j, p := range h.Parts {
		s[j] = shareAtLeast(trim(slices.Clone(p)))
	}
	return s
}

func shareAtLeast(c []uint64) []float64 {
	var total uint64
	for _, v := range c {
		total += v
	}
	s := make([]float64, len(c))
	if total == 0 {
		return s[:min(len(s), 1)]
	}
	var above uint64
	for k := len(c) - 1; k >= 0; k-- {
		above += c[k]
		s[k] = float64(above) / float64(total)
	}
	return s
}

// Merge adds o's counts to h, part by part. Histograms of one rule and d
// have the same number of parts; otherwise h gets as many parts as the
// larger of the two, a part that one of them lacks counting no bucket (so
// Counts, and every share over all parts, is still the sum of both).
func (h *Histogram) Merge(o *Histogram) {
	for len(h.Parts) < len(o.Parts) {
		h.Parts = append(h.Parts, nil)
	}
	for j, p := range o.Parts {
		for k, v := range p {
			if v != 0 {
				h.Add(j, k, v)
			}
		}
	}
}

// Clone returns a deep copy of h.
func (h *Histogram) Clone() *Histogram {
	c := &Histogram{Parts: make([][]uint64, len(h.Parts))}
	for j, p := range h.Parts {
		c.Parts[j] = slices.Clone(p)
	}
	return c
}

// Equal reports whether h and o count the same buckets at the same loads in
// the same parts (trailing zero counts do not matter).
func (h *Histogram) Equal(o *Histogram) bool {
	if len(h.Parts) != len(o.Parts) {
		return false
	}
	for j := range h.Parts {
		if !slices.Equal(trim(h.Parts[j]), trim(o.Parts[j])) {
			return false
		}
	}
	return true
}
