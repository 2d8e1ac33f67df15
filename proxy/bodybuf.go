package proxy

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

// Classes: 16 KiB, then four per power of two (2^k × 1¼, 1½, 1¾, 2) up to
// 16 MiB, so a held body wastes at most a quarter of its size, not up to
// all of it: a 100 KB prompt takes 112 KiB, not 128 (at 1,000 open streams of
// the rig's scenario c, ~150 uploads are held at any moment).
const (
	minBodyShift = 14 // 16 KiB, the smallest class
	maxBodyShift = 24 // 16 MiB, the largest; larger bodies are allocated and left to the GC
	bodyClasses  = 1 + (maxBodyShift-minBodyShift)*4
)

var bodyPools [bodyClasses]sync.Pool

// bodyClass returns the pool index for n bytes and the size of its buffers,
// or -1 when n is not pooled.
func bodyClass(n int) (class, size int) {
	if n <= 0 || n > 1<<maxBodyShift {
		return -1, 0
	}
	if n <= 1<<minBodyShift {
		return 0, 1 << minBodyShift
	}
	k := bits.Len(uint(n-1)) - 1 // 2^k < n <= 2^(k+1)
	quarter := 1 << (k - 2)
	step := (n - 1<<k + quarter - 1) / quarter // 1..4
	return 1 + (k-minBodyShift)*4 + step - 1, 1<<k + step*quarter
}

// getBody returns a buffer of length n, and the pooled slice to give back
// with putBody (nil when n is not pooled).
func getBody(n int) ([]byte, *[]byte) {
	c, size := bodyClass(n)
	if c < 0 {
		return make([]byte, n), nil
	}
	if p, _ := bodyPools[c].Get().(*[]byte); p != nil {
		return (*p)[:n], p
	}
	b := make([]byte, size)
	return b[:n], &b
}

// putBody gives a buffer back; nothing may use it afterwards.
func putBody(p *[]byte) {
	if p == nil {
		return
	}
	c, _ := bodyClass(cap(*p))
	bodyPools[c].Put(p)
}
