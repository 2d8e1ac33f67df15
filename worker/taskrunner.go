package worker

import (
	"context"
	"log"
	"runtime/debug"
	"sync/atomic"
	"time"
)

// taskRunner runs netpoll's connection tasks (a new connection's first
// request, then each burst of input: hertz's serving loop) on goroutines
// that, once done, wait a while for the next task instead of exiting.
//
// netpoll's default pool (bytedance gopool) ends a goroutine as soon as no
// task is queued, so with short connections every connection got a new
// goroutine, whose 2 KiB stack then grew, copied frame by frame, on its
// way down hertz's serving loop to the handler: about 70,000 of the
// worker's ~139,000 user-space instructions per connection (connect,
// GET /v1/models, close; docs/accept-path.md). A goroutine kept waiting
// keeps its grown stack (until a GC finds it mostly unused and halves it).
//
// At most maxIdle goroutines wait, each for idleFor, so a burst's
// goroutines are gone a second after it (the worker's goroutine count,
// sluice_worker_goroutines, is a leak signal). A task never waits for a
// goroutine: with none idle, it gets a new one. A panic is recovered and
// logged, as netpoll's pool did, and the goroutine goes on.
type taskRunner struct {
	tasks   chan func() // unbuffered: a send succeeds only into an idle goroutine
	idle    atomic.Int32
	running atomic.Int32 // goroutines, idle or not
	maxIdle int32
	idleFor time.Duration
}

func newTaskRunner(maxIdle int, idleFor time.Duration) *taskRunner {
	return &taskRunner{tasks: make(chan func()), maxIdle: int32(maxIdle), idleFor: idleFor}
}

// run is netpoll's Config.Runner.
func (r *taskRunner) run(_ context.Context, f func()) {
	select {
	case r.tasks <- f:
	default:
		go r.loop(f)
	}
}

func (r *taskRunner) loop(f func()) {
	r.running.Add(1)
	defer r.running.Add(-1)
	var idle *time.Timer
	for {
		r.runOne(f)
		if r.idle.Add(1) > r.maxIdle {
			r.idle.Add(-1)
			return
		}
		if idle == nil {
			idle = time.NewTimer(r.idleFor)
		} else {
			idle.Reset(r.idleFor)
		}
		select {
		case f = <-r.tasks:
			r.idle.Add(-1)
			idle.Stop()
		case <-idle.C:
			// tasks is unbuffered: a task is handed only to a goroutine
			// waiting in this select, so leaving drops none.
			r.idle.Add(-1)
			return
		}
	}
}

func (r *taskRunner) runOne(f func()) {
	defer func() {
		if p := recover(); p != nil {
			log.Printf("panic in a connection task: %v: %s", p, debug.Stack())
		}
	}()
	f()
}
