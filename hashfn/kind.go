package hashfn

import (
	"errors"
	"fmt"
)

// Kind names a hash family.
type Kind uint8

const (
	// XXHash is xxHash64 with a 64-bit seed.
	XXHash Kind = iota
	// Tabulation is simple tabulation over the 8 bytes of a 64-bit key.
	Tabulation
	// SipHash is SipHash-2-4 keyed from the seed: slower, but no one who
	// does not know the seed can build keys that collide ([Sip]).
	SipHash
)

// ErrUnknownKind is returned when a name or value is not a hash family.
var ErrUnknownKind = errors.New("hashfn: unknown hash family")

var kindNames = [...]string{XXHash: "xxhash", Tabulation: "tabulation", SipHash: "siphash"}

// Kinds lists every family, in order.
func Kinds() []Kind { return []Kind{XXHash, Tabulation, SipHash} }

// String returns "xxhash", "tabulation" or "siphash".
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Valid reports whether k is one of the families.
func (k Kind) Valid() bool { return int(k) < len(kindNames) }

// ParseKind parses "xxhash", "tabulation" or "siphash".
func ParseKind(s string) (Kind, error) {
	for k, name := range kindNames {
		if s == name {
			return Kind(k), nil
		}
	}
	return 0, fmt.Errorf("%w: %q (want xxhash, tabulation or siphash)", ErrUnknownKind, s)
}

// MarshalText implements encoding.TextMarshaler.
func (k Kind) MarshalText() ([]byte, error) {
	if !k.Valid() {
		return nil, fmt.Errorf("%w: %d", ErrUnknownKind, uint8(k))
	}
	return []byte(k.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (k *Kind) UnmarshalText(b []byte) error {
	v, err := ParseKind(string(b))
	if err != nil {
		return err
	}
	*k = v
	return nil
}

// Set implements flag.Value so a Kind can be a command-line flag.
func (k *Kind) Set(s string) error { return k.UnmarshalText([]byte(s)) }
