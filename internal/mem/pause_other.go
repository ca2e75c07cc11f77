//go:build !amd64

package mem

// Pause does nothing where no spin hint is wired up.
func Pause() {}
