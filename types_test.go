package ringo_test

import (
	"testing"

	"github.com/ringo-ccl/ringo"
	"github.com/stretchr/testify/assert"
)

// Each DataType is named after its element type.
func TestTypeNames(t *testing.T) {
	assert.Equal(t, ringo.TypeInt8, ringo.TypeOf[int8]())
	assert.Equal(t, ringo.TypeUint8, ringo.TypeOf[uint8]())
	assert.Equal(t, ringo.TypeInt32, ringo.TypeOf[int32]())
	assert.Equal(t, ringo.TypeUint32, ringo.TypeOf[uint32]())
	assert.Equal(t, ringo.TypeInt64, ringo.TypeOf[int64]())
	assert.Equal(t, ringo.TypeUint64, ringo.TypeOf[uint64]())
	assert.Equal(t, ringo.TypeFloat16, ringo.TypeOf[ringo.Float16]())
	assert.Equal(t, ringo.TypeFloat32, ringo.TypeOf[float32]())
	assert.Equal(t, ringo.TypeFloat64, ringo.TypeOf[float64]())
	assert.Equal(t, ringo.TypeBFloat16, ringo.TypeOf[ringo.BFloat16]())
	assert.Equal(t, ringo.TypeFloat8E4M3, ringo.TypeOf[ringo.Float8E4M3]())
	assert.Equal(t, ringo.TypeFloat8E5M2, ringo.TypeOf[ringo.Float8E5M2]())
}
