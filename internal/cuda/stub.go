//go:build !cuda

package cuda

func available() bool                { return false }
func freeMemory(int) (int64, error)  { return 0, ErrNoCUDA }
func deviceName(int) (string, error) { return "", ErrNoCUDA }
