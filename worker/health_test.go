package worker

import (
	"testing"
	"time"
)

// An ejected backend is out for 1 s, doubling per further failure up to
// 30 s, and back when that time is up: on time alone, no active check
// needed.
func TestEjectionDoublesAndReturnsOnTime(t *testing.T) {
	b := &backendRoute{}
	b.up.Store(true)
	now := time.Unix(1000, 0)
	for _, want := range []time.Duration{1, 2, 4, 8, 16, 30, 30} {
		want *= time.Second
		if d := b.eject(now); d != want {
			t.Fatalf("ejected for %v, want %v", d, want)
		}
		if b.healthy(now.Add(want - time.Nanosecond)) {
			t.Fatalf("in rotation before its %v were up", want)
		}
		now = now.Add(want)
		if !b.healthy(now) {
			t.Fatalf("still out when its %v were up", want)
		}
	}
}
