package reduce

import "math"

// The decoding tables, indexed by bit pattern and filled by init: widening a
// Float16 or an 8-bit float to float32 is then a single load.
var (
	halfTable [1 << 16]float32
	e4m3Table [1 << 8]float32
	e5m2Table [1 << 8]float32
)

func init() {
	for h := range halfTable {
		halfTable[h] = math.Float32frombits(float16Bits(Float16(h)))
	}
	for h := range e4m3Table {
		e4m3Table[h] = math.Float32frombits(float8E4M3Bits(Float8E4M3(h)))
	}
	// E5M2 is the top byte of a Float16, with the same exponent bias.
	for h := range e5m2Table {
		e5m2Table[h] = halfTable[h<<8]
	}
}
