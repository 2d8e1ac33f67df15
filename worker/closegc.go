package worker

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"
)

// When many client connections close at once, the worker runs two garbage
// collections, so that memory netpoll took to read their ends goes back to
// the heap instead of doubling the heap goal.
//
// Why: netpoll reads every readable event into a buffer node as large as the
// largest request the connection ever carried, the end of the stream
// included. After 100 KB prompts each close takes a 128 KiB node (measured:
// 500 closes allocated 65.1 MB, 127 KiB each), and the nodes go back to
// netpoll's pools (sync.Pools), which the collector counts as live until two
// collections have passed. The heap goal is twice the live heap: it went
// from 16 to 129 MB, and the garbage of the next minutes grew the worker's
// RSS up to it (the rig's scenario c: each run on the same process ended
// ~20 KiB per open stream above the first; docs/benchmarks-analysis.md).
// Two collections empty the pools and bring the goal back to the heap's real
// size. They are rate-limited: a worker whose clients open and close
// connections all the time pays at most two collections per burstGCEvery.
const (
	burstCloses  = 64              // closes within a second that count as a burst
	burstSettle  = time.Second     // how long after a burst starts the collections run: when it is over
	burstGCEvery = 5 * time.Second // at most one pair of collections this often
)

// closeBurst counts client connection closes and runs the collections.
type closeBurst struct {
	closes atomic.Int64 // closes in the current one-second window
	window atomic.Int64 // when the window started, unix ns
	kick   chan struct{}
	gcs    atomic.Int64 // pairs of collections run

	settle, every time.Duration // burstSettle and burstGCEvery; shorter in tests
}

func newCloseBurst() *closeBurst {
	return &closeBurst{kick: make(chan struct{}, 1), settle: burstSettle, every: burstGCEvery}
}

// closed counts one close at now (unix ns). The count is approximate where
// closes race a window's turn; a burst is still seen.
func (b *closeBurst) closed(now int64) {
	if start := b.window.Load(); now-start > int64(time.Second) && b.window.CompareAndSwap(start, now) {
		b.closes.Store(0)
	}
	if b.closes.Add(1) == burstCloses {
		select {
		case b.kick <- struct{}{}:
		default: // one is already pending
		}
	}
}

// run collects after each burst until ctx ends: burstSettle after it was
// seen (collecting while connections still close would leave the pools
// refilled), and not sooner than burstGCEvery after the last pair.
func (b *closeBurst) run(ctx context.Context) {
	var last time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.kick:
		}
		wait := max(b.settle, b.every-time.Since(last))
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		runtime.GC() // the pools' contents become their victims
		runtime.GC() // and are freed
		last = time.Now()
		b.gcs.Add(1)
	}
}
