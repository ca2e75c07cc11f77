//go:build !amd64

package mem

// HasStream reports whether StreamCopy has non-temporal stores here.
const HasStream = false

// StreamCopy is copy where no non-temporal stores are wired up.
func StreamCopy(dst, src []byte) { copy(dst, src) }
