package reduce

// Elem is the set of Go element types that ringo's typed API accepts, one for
// each DataType. The terms are exact types (no ~), so that Float16 and
// BFloat16, both 16-bit patterns, stay distinct.
type Elem interface {
	int8 | uint8 | int32 | uint32 | int64 | uint64 |
		Float16 | float32 | float64 | BFloat16 | Float8E4M3 | Float8E5M2
}

// TypeOf returns the DataType whose elements are T.
func TypeOf[T Elem]() DataType {
	var z T
	switch any(z).(type) {
	case int8:
		return Int8
	case uint8:
		return Uint8
	case int32:
		return Int32
	case uint32:
		return Uint32
	case int64:
		return Int64
	case uint64:
		return Uint64
	case Float16:
		return Half
	case float32:
		return Float32
	case float64:
		return Float64
	case BFloat16:
		return BF16
	case Float8E4M3:
		return F8E4M3
	default: // Float8E5M2, the last type Elem allows
		return F8E5M2
	}
}
