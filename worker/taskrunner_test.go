package worker

import (
	"context"
	"sync"
	"testing"
	"time"
)

// A goroutine done with a task takes the next one; a task never waits for
// a busy goroutine; idle goroutines leave after idleFor, and at most
// maxIdle stay; a panicking task does not take the worker down.
func TestTaskRunner(t *testing.T) {
	r := newTaskRunner(2, 50*time.Millisecond)
	ran := make(chan int, 10)
	for i := range 3 {
		r.run(context.Background(), func() { ran <- i })
		<-ran
		waitFor(t, "the goroutine to wait for the next task", func() bool { return r.idle.Load() == 1 })
	}
	if n := r.running.Load(); n != 1 {
		t.Errorf("%d goroutines after three tasks one after another, want 1", n)
	}

	// Three tasks that block together: none waits for another.
	var release sync.WaitGroup
	release.Add(1)
	for i := range 3 {
		r.run(context.Background(), func() { ran <- i; release.Wait() })
	}
	for range 3 {
		select {
		case <-ran:
		case <-time.After(5 * time.Second):
			t.Fatal("a task waited for a busy goroutine")
		}
	}
	release.Done()
	waitFor(t, "two of the three to wait, the third to leave", func() bool {
		return r.idle.Load() == 2 && r.running.Load() == 2
	})

	r.run(context.Background(), func() { panic("task panics") })
	r.run(context.Background(), func() { ran <- 7 })
	if got := <-ran; got != 7 {
		t.Fatalf("ran %d after the panic", got)
	}
	waitFor(t, "the idle goroutines to leave", func() bool {
		return r.idle.Load() == 0 && r.running.Load() == 0
	})
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
