package reduce

import (
	"errors"
	"strings"
	"testing"

	"github.com/ringo-ccl/ringo/internal/mem"
)

func TestDataTypeTable(t *testing.T) {
	tests := []struct {
		t       DataType
		name    string
		size    int
		isFloat bool
	}{
		{Int8, "int8", 1, false},
		{Uint8, "uint8", 1, false},
		{Int32, "int32", 4, false},
		{Uint32, "uint32", 4, false},
		{Int64, "int64", 8, false},
		{Uint64, "uint64", 8, false},
		{Half, "half", 2, true},
		{Float32, "float", 4, true},
		{Float64, "double", 8, true},
		{BF16, "bfloat16", 2, true},
		{F8E4M3, "f8e4m3", 1, true},
		{F8E5M2, "f8e5m2", 1, true},
	}
	if len(tests) != int(NumTypes) {
		t.Fatalf("table has %d types, NumTypes is %d", len(tests), NumTypes)
	}
	for i, tt := range tests {
		if int(tt.t) != i {
			t.Errorf("%s = %d, want ncclDataType_t %d", tt.name, tt.t, i)
		}
		if !tt.t.Valid() || tt.t.String() != tt.name || tt.t.Size() != tt.size || tt.t.IsFloat() != tt.isFloat {
			t.Errorf("%d: Valid %v String %q Size %d IsFloat %v, want true %q %d %v",
				i, tt.t.Valid(), tt.t, tt.t.Size(), tt.t.IsFloat(), tt.name, tt.size, tt.isFloat)
		}
	}
	for _, bad := range []DataType{NumTypes, 42, 255} {
		if bad.Valid() || bad.Size() != 0 || bad.IsFloat() {
			t.Errorf("%d: Valid %v Size %d IsFloat %v, want false 0 false", bad, bad.Valid(), bad.Size(), bad.IsFloat())
		}
	}
	if got := DataType(42).String(); got != "DataType(42)" {
		t.Errorf("DataType(42).String() = %q", got)
	}
}

func TestParseDataType(t *testing.T) {
	for dt := range NumTypes {
		for _, s := range []string{dt.String(), strings.ToUpper(dt.String())} {
			if got, err := ParseDataType(s); err != nil || got != dt {
				t.Errorf("ParseDataType(%q) = %v, %v; want %v", s, got, err, dt)
			}
		}
	}
	aliases := map[string]DataType{
		"float16": Half, "FP16": Half, "float32": Float32, "Float64": Float64, "bf16": BF16,
		"int": Int32, "uint": Uint32, "E4M3": F8E4M3, "e5m2": F8E5M2,
	}
	for s, want := range aliases {
		if got, err := ParseDataType(s); err != nil || got != want {
			t.Errorf("ParseDataType(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "float128", "int16", " half"} {
		_, err := ParseDataType(s)
		if !errors.Is(err, ErrInvalid) {
			t.Fatalf("ParseDataType(%q) error %v does not wrap ErrInvalid", s, err)
		}
		if msg := err.Error(); !strings.Contains(msg, `"`+s+`"`) || !strings.Contains(msg, "bfloat16") {
			t.Errorf("ParseDataType(%q) error %q should name the string and list the valid names", s, msg)
		}
	}
}

// checkTypeOf checks that T maps to want, of T's size.
func checkTypeOf[T Elem](t *testing.T, want DataType) {
	t.Helper()
	got := TypeOf[T]()
	if got != want {
		t.Errorf("TypeOf[%T]() = %v, want %v", *new(T), got, want)
	}
	if size := len(mem.Bytes(make([]T, 1))); got.Size() != size {
		t.Errorf("TypeOf[%T]().Size() = %d, but the Go type has %d bytes", *new(T), got.Size(), size)
	}
}

func TestTypeOf(t *testing.T) {
	checkTypeOf[int8](t, Int8)
	checkTypeOf[uint8](t, Uint8)
	checkTypeOf[int32](t, Int32)
	checkTypeOf[uint32](t, Uint32)
	checkTypeOf[int64](t, Int64)
	checkTypeOf[uint64](t, Uint64)
	checkTypeOf[Float16](t, Half)
	checkTypeOf[float32](t, Float32)
	checkTypeOf[float64](t, Float64)
	checkTypeOf[BFloat16](t, BF16)
	checkTypeOf[Float8E4M3](t, F8E4M3)
	checkTypeOf[Float8E5M2](t, F8E5M2)
}
