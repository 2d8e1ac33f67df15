package sat

import (
	"math"
	"testing"
)

func TestSaturating(t *testing.T) {
	if Add(math.MaxInt64, 1) != math.MaxInt64 || Add(2, 3) != 5 || Add(math.MaxInt64-1, 1) != math.MaxInt64 {
		t.Error("Add")
	}
	if Mul(math.MaxInt64/2, 3) != math.MaxInt64 || Mul(0, math.MaxInt64) != 0 || Mul(4, 5) != 20 {
		t.Error("Mul")
	}
	v := int64(math.MaxInt64 - 1)
	if old := AddAtomic(&v, 5); old != math.MaxInt64-1 || v != math.MaxInt64 {
		t.Errorf("AddAtomic: old %d, now %d", old, v)
	}
}
