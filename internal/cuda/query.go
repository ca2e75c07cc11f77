package cuda

// The queries every build answers; without the cuda tag there is no GPU to
// ask, and they say so.

// Available reports whether this build can drive GPUs: it has the "cuda"
// tag and the driver reports at least one device.
func Available() bool { return available() }

// FreeMemory returns the bytes of GPU ordinal's memory free now
// (cuMemGetInfo), or ErrNoCUDA in a build without the cuda tag.
func FreeMemory(ordinal int) (int64, error) { return freeMemory(ordinal) }

// DeviceName returns GPU ordinal's product name, or ErrNoCUDA in a build
// without the cuda tag.
func DeviceName(ordinal int) (string, error) { return deviceName(ordinal) }
