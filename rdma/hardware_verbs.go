//go:build ibverbs

package rdma

// Hardware returns the provider of this machine's RDMA devices: the verbs
// one (this build has the ibverbs tag).
func Hardware() (Provider, error) {
	v, err := NewVerbs()
	if err != nil {
		return nil, err
	}
	return v, nil
}
