// Package sat is saturating arithmetic on non-negative int64s: token
// counts, service and times that a client or a backend may push to any
// size (max_tokens is read saturated at MaxInt64), where a sum that
// wrapped would go negative and pass every limit.
package sat

import (
	"math"
	"sync/atomic"
)

// Add is a+b for non-negative a and b, at most math.MaxInt64.
func Add(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// Mul is a×b for non-negative a and b, at most math.MaxInt64.
func Mul(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}

// AddAtomic adds d ≥ 0 to *p, at most math.MaxInt64, and returns the old
// value.
func AddAtomic(p *int64, d int64) int64 {
	for {
		old := atomic.LoadInt64(p)
		if atomic.CompareAndSwapInt64(p, old, Add(old, d)) {
			return old
		}
	}
}
