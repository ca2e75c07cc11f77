package topo

import "encoding/json"

// The enums are written in JSON by name.

const (
	linkKindName = "link kind"
	pathKindName = "PCIe path kind"
	nicKindName  = "NIC kind"
)

func (k LinkKind) MarshalText() ([]byte, error) { return marshalEnum(k, numLinkKinds, linkKindName) }
func (k PathKind) MarshalText() ([]byte, error) { return marshalEnum(k, numPathKinds, pathKindName) }
func (k NICKind) MarshalText() ([]byte, error)  { return marshalEnum(k, numNICKinds, nicKindName) }

func (k *LinkKind) UnmarshalText(b []byte) error {
	return unmarshalEnum(k, b, numLinkKinds, linkKindName)
}
func (k *PathKind) UnmarshalText(b []byte) error {
	return unmarshalEnum(k, b, numPathKinds, pathKindName)
}
func (k *NICKind) UnmarshalText(b []byte) error { return unmarshalEnum(k, b, numNICKinds, nicKindName) }

type enum interface {
	~uint8
	String() string
}

func marshalEnum[E enum](k, n E, what string) ([]byte, error) {
	if k >= n {
		return nil, invalid("%d is not a %s", uint8(k), what)
	}
	return []byte(k.String()), nil
}

func unmarshalEnum[E enum](k *E, b []byte, n E, what string) error {
	for v := E(0); v < n; v++ {
		if v.String() == string(b) {
			*k = v
			return nil
		}
	}
	names := make([]string, 0, n)
	for v := E(0); v < n; v++ {
		names = append(names, v.String())
	}
	return invalid("%q is not a %s (one of %q)", b, what, names)
}

// Decode reads a topology from its JSON encoding (as encoding/json writes
// a Topology) and validates it. Its errors wrap errs.ErrInvalidArgument.
func Decode(data []byte) (*Topology, error) {
	var t Topology
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, invalid("decoding JSON: %v", err)
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	return &t, nil
}
