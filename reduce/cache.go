package reduce

// Cache keeps the reductions of recent calls so that a steady stream of
// collectives does not allocate. Its methods must not be called
// concurrently.
type Cache struct {
	entries [8]*Func
	next    int
}

// Get returns the reduction of op over n ranks' dt values (New), made
// once while it stays among the recent ones. A Cache serves one rank
// count: every Get passes the same n.
func (fc *Cache) Get(dt DataType, op Op, n int) (*Func, error) {
	for _, f := range fc.entries {
		if f != nil && f.Type() == dt && f.Op() == op {
			return f, nil
		}
	}
	f, err := New(dt, op, n)
	if err != nil {
		return nil, err
	}
	fc.entries[fc.next] = f
	fc.next = (fc.next + 1) % len(fc.entries)
	return f, nil
}
