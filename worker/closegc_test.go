package worker

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// A burst is seen once per one-second window, at its burstCloses-th close.
func TestCloseBurstKicksOncePerWindow(t *testing.T) {
	b := newCloseBurst()
	t0 := time.Now().UnixNano()
	kicked := func() bool {
		select {
		case <-b.kick:
			return true
		default:
			return false
		}
	}
	for i := 1; i < burstCloses; i++ {
		b.closed(t0)
	}
	if kicked() {
		t.Fatalf("kicked after %d closes, want none before %d", burstCloses-1, burstCloses)
	}
	b.closed(t0)
	if !kicked() {
		t.Fatalf("no kick at %d closes", burstCloses)
	}
	for i := 0; i < 3*burstCloses; i++ {
		b.closed(t0 + int64(500*time.Millisecond))
	}
	if kicked() {
		t.Fatal("kicked twice in one window")
	}
	// The next window counts afresh.
	next := t0 + int64(1500*time.Millisecond)
	for i := 0; i < burstCloses; i++ {
		b.closed(next)
	}
	if !kicked() {
		t.Fatal("no kick for a burst in the next window")
	}
}

// A kick makes run collect twice, settle after it, and a second kick waits
// out every since that pair.
func TestCloseBurstCollectsTwiceRateLimited(t *testing.T) {
	b := newCloseBurst()
	b.settle, b.every = 20*time.Millisecond, 300*time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go b.run(ctx)

	awaitPairs := func(n int64) time.Time {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for b.gcs.Load() < n {
			if time.Now().After(deadline) {
				t.Fatalf("%d pairs of collections after 30 s, want %d", b.gcs.Load(), n)
			}
			time.Sleep(5 * time.Millisecond)
		}
		return time.Now()
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	kickedAt := time.Now()
	b.kick <- struct{}{}
	first := awaitPairs(1)
	runtime.ReadMemStats(&after)
	if after.NumGC < before.NumGC+2 {
		t.Fatalf("NumGC %d -> %d, want at least two collections", before.NumGC, after.NumGC)
	}
	if first.Sub(kickedAt) < b.settle {
		t.Fatalf("collected %v after the kick, before the burst could settle (%v)", first.Sub(kickedAt), b.settle)
	}
	// Only lower bounds on times: a loaded machine makes them longer, never
	// shorter. The first pair ended at least settle after the kick, the
	// second at least every after the first.
	b.kick <- struct{}{}
	second := awaitPairs(2)
	if least := b.settle + b.every; second.Sub(kickedAt) < least {
		t.Fatalf("second pair %v after the first kick, want at least %v", second.Sub(kickedAt), least)
	}
}
