package worker

import (
	"math/bits"
	"sync"
)

// Request bodies read by the gateway (those hertz hands over as a stream:
// larger than its first read) go into buffers from size-classed pools and
// are given back when the response starts — for a stream, seconds or
// minutes before its end. Without the pools each 100 KB prompt was fresh
// garbage: the heap, and the RSS, of a worker with many open streams grew
// with the prompts the collector had not reclaimed yet (docs/benchmarks.md,
// scenario c and the prompt-size sweep).

const (
	minBodyClass = 14 // 16 KiB
	maxBodyClass = 24 // 16 MiB; larger bodies are allocated and left to the GC
)

var bodyPools [maxBodyClass - minBodyClass + 1]sync.Pool

// bodyClass returns the pool index for n bytes, or -1 when n is not pooled.
func bodyClass(n int) int {
	if n <= 0 || n > 1<<maxBodyClass {
		return -1
	}
	c := bits.Len(uint(n - 1)) // smallest c with 1<<c >= n
	return max(c, minBodyClass) - minBodyClass
}

// getBody returns a buffer of length n, and the pooled slice to give back
// with putBody (nil when n is not pooled).
func getBody(n int) ([]byte, *[]byte) {
	c := bodyClass(n)
	if c < 0 {
		return make([]byte, n), nil
	}
	if p, _ := bodyPools[c].Get().(*[]byte); p != nil {
		return (*p)[:n], p
	}
	b := make([]byte, 1<<(c+minBodyClass))
	return b[:n], &b
}

// putBody gives a buffer back; nothing may use it afterwards.
func putBody(p *[]byte) {
	if p == nil {
		return
	}
	bodyPools[bodyClass(cap(*p))].Put(p)
}
