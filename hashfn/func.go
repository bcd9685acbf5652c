package hashfn

import "fmt"

// Func is one seeded function of a family. [XXH], [*Tab] and [Sip] implement it.
// Calling through the interface costs an indirect call; hot loops that know
// their family use the concrete type.
type Func interface {
	Kind() Kind
	Seed() uint64
	Uint64(x uint64) uint64
	String(s string) uint64
	Bytes(b []byte) uint64
}

// New returns the function of family k chosen by seed.
func New(k Kind, seed uint64) (Func, error) {
	switch k {
	case XXHash:
		return NewXXH(seed), nil
	case Tabulation:
		return NewTab(seed), nil
	case SipHash:
		return NewSip(seed), nil
	}
	return nil, fmt.Errorf("%w: %d", ErrUnknownKind, uint8(k))
}
