package reduce

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestOpKindString(t *testing.T) {
	want := []string{"sum", "prod", "max", "min", "avg", "premulsum"}
	for k, name := range want {
		if got := OpKind(k).String(); got != name {
			t.Errorf("OpKind(%d).String() = %q, want %q", k, got, name)
		}
	}
	if got := OpKind(9).String(); got != "OpKind(9)" {
		t.Errorf("OpKind(9).String() = %q", got)
	}
	// ncclRedOp_t values.
	if Sum != 0 || Prod != 1 || Max != 2 || Min != 3 || Avg != 4 {
		t.Error("OpKind values differ from ncclRedOp_t")
	}
}

func TestOpOf(t *testing.T) {
	named := []Op{OpSum, OpProd, OpMax, OpMin, OpAvg}
	for k := range PreMulSum {
		op, err := OpOf(k)
		if err != nil || op.Kind() != k || op != named[k] || op.String() != k.String() {
			t.Errorf("OpOf(%v) = %v, %v; want %v", k, op, err, named[k])
		}
	}
	if (Op{}) != OpSum {
		t.Error("zero Op is not OpSum")
	}
	for _, k := range []OpKind{PreMulSum, 6, 200} {
		if _, err := OpOf(k); !errors.Is(err, ErrInvalid) {
			t.Errorf("OpOf(%d) error %v does not wrap ErrInvalid", k, err)
		}
	}
	if _, err := OpOf(PreMulSum); !strings.Contains(err.Error(), "PreMul") {
		t.Errorf("OpOf(PreMulSum) error %q should point to PreMul", err)
	}
}

func TestParseOp(t *testing.T) {
	for _, s := range []string{"sum", "PROD", "Max", "min", "avg"} {
		op, err := ParseOp(s)
		if err != nil || op.String() != strings.ToLower(s) {
			t.Errorf("ParseOp(%q) = %v, %v", s, op, err)
		}
	}
	for _, s := range []string{"mulsum", "premulsum", "PreMulSum"} {
		_, err := ParseOp(s)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "needs a scalar") {
			t.Errorf("ParseOp(%q) error %v, want an ErrInvalid saying it needs a scalar", s, err)
		}
	}
	for _, s := range []string{"", "add", "sum "} {
		_, err := ParseOp(s)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `"`+s+`"`) {
			t.Errorf("ParseOp(%q) error %v, want an ErrInvalid naming the string", s, err)
		}
	}
}

func TestPreMul(t *testing.T) {
	tests := []struct {
		op   Op
		t    DataType
		bits uint64
		str  string
	}{
		{PreMul(int8(-1)), Int8, 0xff, "premulsum(int8 -1)"},
		{PreMul(uint8(200)), Uint8, 200, "premulsum(uint8 200)"},
		{PreMul(int32(-2)), Int32, 0xfffffffe, "premulsum(int32 -2)"},
		{PreMul(uint32(7)), Uint32, 7, "premulsum(uint32 7)"},
		{PreMul(int64(-3)), Int64, 0xfffffffffffffffd, "premulsum(int64 -3)"},
		{PreMul(uint64(1 << 63)), Uint64, 1 << 63, "premulsum(uint64 9223372036854775808)"},
		{PreMul(Float16From(0.5)), Half, 0x3800, "premulsum(half 0.5)"},
		{PreMul(float32(0.1)), Float32, uint64(math.Float32bits(0.1)), "premulsum(float 0.1)"},
		{PreMul(0.1), Float64, math.Float64bits(0.1), "premulsum(double 0.1)"},
		{PreMul(BFloat16From(-2)), BF16, 0xc000, "premulsum(bfloat16 -2)"},
		{PreMul(Float8E4M3From(448)), F8E4M3, 0x7e, "premulsum(f8e4m3 448)"},
		{PreMul(Float8E5M2From(0.25)), F8E5M2, 0x34, "premulsum(f8e5m2 0.25)"},
	}
	for _, tt := range tests {
		if tt.op.Kind() != PreMulSum || tt.op.scalarType != tt.t || tt.op.scalar != tt.bits || tt.op.String() != tt.str {
			t.Errorf("%v: kind %v type %v bits %#x, want premulsum %v %#x %q",
				tt.op, tt.op.Kind(), tt.op.scalarType, tt.op.scalar, tt.t, tt.bits, tt.str)
		}
		// The C ABI reads 8 bytes behind the scalar pointer: the bytes past the
		// element are garbage and must not make the op differ.
		garbage := uint64(0xa5a5a5a5a5a5a5a5) << (8 * tt.t.Size() % 64)
		if tt.t.Size() == 8 {
			garbage = 0
		}
		op, err := PreMulBits(tt.t, tt.bits|garbage)
		if err != nil || op != tt.op {
			t.Errorf("PreMulBits(%v, %#x) = %v (bits %#x), %v; want %v", tt.t, tt.bits|garbage, op, op.scalar, err, tt.op)
		}
	}
	if PreMul(Float16(0x3c00)) == PreMul(BFloat16(0x3c00)) {
		t.Error("premul ops of different types compare equal")
	}
	_, err := PreMulBits(NumTypes, 1)
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "DataType(12)") {
		t.Errorf("PreMulBits(NumTypes) error %v, want an ErrInvalid naming the type", err)
	}
}
