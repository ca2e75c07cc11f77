//go:build ibverbs

package rdma

func hardware() (Provider, error) {
	v, err := NewVerbs()
	if err != nil {
		return nil, err
	}
	return v, nil
}
