package bucket

import (
	"errors"
	"fmt"

	"github.com/twochoice/twochoice/hashfn"
)

// Placement is a rule for choosing a new key's bucket among its candidates.
// Its zero value is Default, so that an options struct left empty asks for
// the default rule by name.
type Placement uint8

const (
	// Default is the zero Placement: the rule the library recommends,
	// GoLeft (with one choice, OneChoice, the only rule that takes one).
	// Resolve says which rule it stands for; the methods below treat it
	// as GoLeft.
	Default Placement = iota
	// OneChoice puts a key in its single uniformly chosen bucket.
	OneChoice
	// DChoice draws d independent uniform candidates; ties by a coin.
	DChoice
	// Halves draws one candidate in each of d equal parts; ties by a coin.
	Halves
	// GoLeft draws one candidate in each of d equal parts; ties go to the
	// leftmost (Vöcking 1999).
	GoLeft
	// DoubleHash draws f + k·g mod n for k = 0 … d-1; ties by a coin.
	DoubleHash
)

// ErrPlacement is returned for an unknown rule or a choice count the rule
// cannot use.
var ErrPlacement = errors.New("bucket: bad placement")

var placementNames = [...]string{
	Default: "default", OneChoice: "one", DChoice: "dchoice", Halves: "halves", GoLeft: "goleft", DoubleHash: "double",
}

// Placements lists every rule, in order (Default, which stands for one of
// them, is not listed).
func Placements() []Placement { return []Placement{OneChoice, DChoice, Halves, GoLeft, DoubleHash} }

// String returns "one", "dchoice", "halves", "goleft" or "double", or
// "default" for Default.
func (p Placement) String() string {
	if p.Valid() {
		return placementNames[p]
	}
	return fmt.Sprintf("Placement(%d)", uint8(p))
}

// Valid reports whether p is one of the rules or Default.
func (p Placement) Valid() bool { return int(p) < len(placementNames) }

// Resolve returns the rule p stands for with d choices: p itself, or for
// Default, GoLeft (OneChoice when d is 1).
func (p Placement) Resolve(d int) Placement {
	switch {
	case p != Default:
		return p
	case d == 1:
		return OneChoice
	}
	return GoLeft
}

// ParsePlacement parses a rule's name.
func ParsePlacement(s string) (Placement, error) {
	for p, name := range placementNames {
		if s == name {
			return Placement(p), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown rule %q (want one, dchoice, halves, goleft, double or default)", ErrPlacement, s)
}

// MarshalText implements encoding.TextMarshaler.
func (p Placement) MarshalText() ([]byte, error) {
	if !p.Valid() {
		return nil, fmt.Errorf("%w: %d", ErrPlacement, uint8(p))
	}
	return []byte(p.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (p *Placement) UnmarshalText(b []byte) error {
	v, err := ParsePlacement(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// Set implements flag.Value.
func (p *Placement) Set(s string) error { return p.UnmarshalText([]byte(s)) }

// Scheme returns how the rule draws candidates from a hash.
func (p Placement) Scheme() hashfn.Scheme {
	switch p {
	case Halves, GoLeft, Default:
		return hashfn.Parts
	case DoubleHash:
		return hashfn.Double
	}
	return hashfn.Independent
}

// Parts returns the number of parts the rule cuts n buckets into for d
// choices: d under Halves and GoLeft, else 1.
func (p Placement) Parts(d int) int {
	if p.Scheme() == hashfn.Parts {
		return d
	}
	return 1
}

// CheckChoices reports whether the rule can use d candidates: OneChoice
// takes exactly 1, the others 1 to hashfn.MaxChoices.
func (p Placement) CheckChoices(d int) error {
	if !p.Valid() {
		return fmt.Errorf("%w: %d", ErrPlacement, uint8(p))
	}
	if p == Default {
		p = p.Resolve(d)
	}
	if p == OneChoice && d != 1 {
		return fmt.Errorf("%w: one takes 1 choice, not %d", ErrPlacement, d)
	}
	if d < 1 || d > hashfn.MaxChoices {
		return fmt.Errorf("%w: %d choices (want 1 to %d)", ErrPlacement, d, hashfn.MaxChoices)
	}
	return nil
}

// Generator returns the candidate generator of the rule for n buckets and d
// choices.
func (p Placement) Generator(n uint64, d int) (hashfn.Generator, error) {
	if err := p.CheckChoices(d); err != nil {
		return hashfn.Generator{}, err
	}
	return hashfn.NewGenerator(p.Scheme(), n, d)
}

// Choose returns the index of the candidate that wins, given the
// candidates' loads in order (loads[k] is candidate k's): the least loaded,
// with ties broken by the rule. Coin rules use the top 32 bits of coin to
// pick uniformly among the tied candidates (the r-th tied one, r = ⌊w·t/2^32⌋
// for t ties and w those bits), so with two candidates the top bit decides.
// GoLeft, OneChoice and Default ignore coin.
func (p Placement) Choose(loads []uint32, coin uint64) int {
	best, ties := 0, 1
	for k := 1; k < len(loads); k++ {
		switch {
		case loads[k] < loads[best]:
			best, ties = k, 1
		case loads[k] == loads[best]:
			ties++
		}
	}
	if ties == 1 || p == GoLeft || p == OneChoice || p == Default {
		return best
	}
	r := int(uint64(uint32(coin>>32)) * uint64(ties) >> 32)
	for k := best; ; k++ {
		if loads[k] == loads[best] {
			if r == 0 {
				return k
			}
			r--
		}
	}
}

// Choose2 is Choose for two candidates with loads a and b, written so the
// compiler inlines it in hot loops. It returns 0 or 1, as Choose would.
//
// It has no data-dependent branch. Which of two random candidates is
// emptier is a coin flip to a branch predictor, and in a simulation loop
// the mispredicts cost more than the rest of the ball. So the tie is found
// and applied with arithmetic, not with an if on a == b, which the compiler
// compiles to a conditional move in some loops and to a branch in others.
// The one if tests the rule, which a loop never changes.
func (p Placement) Choose2(a, b uint32, coin uint64) int {
	if p == GoLeft || p == OneChoice || p == Default {
		coin = 0
	}
	lt := (uint64(b) - uint64(a)) >> 63 // 1 when b < a
	eq := (uint64(a^b) - 1) >> 63       // 1 when a == b (a^b < 2^32)
	return int(lt | coin>>63&eq)
}
