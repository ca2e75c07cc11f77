package rdma

// Hardware returns the provider of this machine's RDMA devices: the verbs
// one in a build with the ibverbs tag; without it, an error wrapping
// errs.ErrNotSupported (ringo.ErrNotSupported).
func Hardware() (Provider, error) { return hardware() }
