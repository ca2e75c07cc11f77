package mem

// Pause tells the core that it is in a spin-wait loop (PAUSE): it waits a
// few dozen cycles (~20 ns on the development VM's Zen 5), and leaves the
// loop without the misspeculation that a tight loop of loads pays when the
// line it polls changes.
func Pause()
