package reduce

import (
	"fmt"
	"strconv"
	"strings"
)

// DataType is an element type. Its values are NCCL's ncclDataType_t values, so
// a DataType crosses the C ABI unchanged.
//
// The four formats that Go lacks are named Half, BF16, F8E4M3 and F8E5M2 here,
// because their full names belong to the Go types of their elements (Float16,
// BFloat16, Float8E4M3, Float8E5M2).
type DataType uint8

// The datatypes, in ncclDataType_t order.
const (
	Int8     DataType = iota // int8
	Uint8                    // uint8
	Int32                    // int32
	Uint32                   // uint32
	Int64                    // int64
	Uint64                   // uint64
	Half                     // IEEE binary16, ncclFloat16; elements are Float16
	Float32                  // IEEE binary32
	Float64                  // IEEE binary64
	BF16                     // bfloat16, ncclBfloat16; elements are BFloat16
	F8E4M3                   // OCP FP8 E4M3, ncclFloat8e4m3; elements are Float8E4M3
	F8E5M2                   // OCP FP8 E5M2, ncclFloat8e5m2; elements are Float8E5M2
	NumTypes                 // the number of datatypes; not a datatype
)

// typeInfo is what the package knows about one datatype.
type typeInfo struct {
	name    string // nccl-tests' name
	size    int    // bytes per element
	isFloat bool
}

var typeInfos = [NumTypes]typeInfo{
	Int8:    {"int8", 1, false},
	Uint8:   {"uint8", 1, false},
	Int32:   {"int32", 4, false},
	Uint32:  {"uint32", 4, false},
	Int64:   {"int64", 8, false},
	Uint64:  {"uint64", 8, false},
	Half:    {"half", 2, true},
	Float32: {"float", 4, true},
	Float64: {"double", 8, true},
	BF16:    {"bfloat16", 2, true},
	F8E4M3:  {"f8e4m3", 1, true},
	F8E5M2:  {"f8e5m2", 1, true},
}

// Valid reports whether t is one of the twelve datatypes.
func (t DataType) Valid() bool { return t < NumTypes }

// Size returns the bytes per element of t, or 0 when t is not Valid.
func (t DataType) Size() int {
	if !t.Valid() {
		return 0
	}
	return typeInfos[t].size
}

// IsFloat reports whether t is a floating-point type (false when t is not
// Valid).
func (t DataType) IsFloat() bool { return t.Valid() && typeInfos[t].isFloat }

// String returns nccl-tests' name of t ("half", "float", "bfloat16", ...), or
// "DataType(N)" when t is not Valid.
func (t DataType) String() string {
	if !t.Valid() {
		return "DataType(" + strconv.Itoa(int(t)) + ")"
	}
	return typeInfos[t].name
}

// typeAliases are the names ParseDataType accepts besides String's.
var typeAliases = map[string]DataType{
	"int":     Int32,
	"uint":    Uint32,
	"float16": Half,
	"fp16":    Half,
	"float32": Float32,
	"float64": Float64,
	"bf16":    BF16,
	"e4m3":    F8E4M3,
	"e5m2":    F8E5M2,
}

// ParseDataType returns the datatype named s, case-insensitively: a name that
// String returns, or one of the aliases int, uint, float16, fp16, float32,
// float64, bf16, e4m3 and e5m2. The error wraps ErrInvalid.
func ParseDataType(s string) (DataType, error) {
	l := strings.ToLower(s)
	for t := range NumTypes {
		if typeInfos[t].name == l {
			return t, nil
		}
	}
	if t, ok := typeAliases[l]; ok {
		return t, nil
	}
	names := make([]string, 0, NumTypes)
	for t := range NumTypes {
		names = append(names, typeInfos[t].name)
	}
	return 0, fmt.Errorf("%w: unknown datatype %q (valid: %s)", ErrInvalid, s, strings.Join(names, ", "))
}
