package queue

// Backend slots: taken before a request is sent, given back when its
// answer ends; a request that finds none waits in its model's queue for
// the dispatcher to hand it one.

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/sluice-gw/sluice/shm"
)

// Backend is a backend as the queue hands it out: the pipeline's own type
// (a pointer, compared by identity: the same route, not merely the same
// URL), which the queue never looks into but through these.
type Backend interface {
	comparable
	// Healthy reports whether it may be sent requests at now.
	Healthy(now time.Time) bool
	// Acquire takes one of its slots for the worker of column col if one
	// is free and it is not saturated at regionNow (the region's clock).
	Acquire(col int, regionNow int64) bool
	// Cell is its cell in the shared region: the gauge of its slots
	// (given back by Release) and when one was last released.
	Cell() *shm.Cell
	// SiblingQueues are the queue cells of the other models that list the
	// same server: its load counts their requests, so a slot it frees may
	// be one their waiters can take.
	SiblingQueues() []*shm.Cell
}

// Clock is the region's clock (*shm.Region's Now), in nanoseconds.
type Clock interface{ Now() int64 }

// Limits bound a model's queue.
type Limits struct {
	Max       int64         // places (queue.max); 0: none wait
	MaxPerKey int64         // of them, one key's (queue.max_per_key); 0: no bound of its own
	Timeout   time.Duration // the longest wait (queue.timeout)
}

// The ways Take fails.
var (
	ErrFull    = errors.New("queue full")                // every place is taken (or Max is 0)
	ErrKeyFull = errors.New("queue full for the key")    // the key holds MaxPerKey places; others may still queue
	ErrTimeout = errors.New("queue timeout")             // waited Timeout
	ErrLeft    = errors.New("the client left the queue") // ctx ended while it waited
)

// Wait is what a request's turn in the queue was, for its usage line and
// its key's statistics.
type Wait struct {
	Queued  bool          // it waited (else it took a free slot at once)
	Began   time.Time     // when it began waiting
	Waited  time.Duration // how long it waited
	Handoff time.Duration // from the slot's release to its hand-over to the request
	Start   int64         // its start tag in the fair order, in service units (ServedTokens)
}

// TrySlot takes a slot on the first candidate, in order, that is healthy
// and has one free.
func (q *Set[B]) TrySlot(cands []B) (B, bool) {
	now, regionNow := time.Now(), q.clock.Now()
	for _, b := range cands {
		if b.Healthy(now) && b.Acquire(q.col, regionNow) {
			return b, true
		}
	}
	var none B
	return none, false
}

// Release gives back a slot of backend b taken for a request of lq's
// model and, while requests wait for it or for b's sibling queues, wakes
// the worker holding the oldest of them (else they wait for the tick).
func (q *Set[B]) Release(lq *Queue[B], b B) {
	b.Cell().Release(q.col)
	atomic.StoreInt64(b.Cell().Scalar(shm.LastRelease), q.clock.Now())
	q.wakeOldest(lq.cell)
	if lq.pinnedN.Load() > 0 {
		q.wake(q.col) // this worker's pinned waiters, outside the marks
	}
	for _, qc := range b.SiblingQueues() {
		q.wakeOldest(qc)
	}
}

// wakeOldest wakes the worker holding the oldest waiter of a model's
// queue cell, if anyone waits.
func (q *Set[B]) wakeOldest(qc *shm.Cell) {
	if qc.Total() > 0 {
		if _, at := qc.MinMark(); at >= 0 {
			q.wake(at)
		}
	}
}

// Take returns a backend from cands whose slot this request of key now
// holds: at once when nobody waits and one is free, else after waiting in
// lq, in the fair order between keys (fair.go). The key is charged tokens
// (the request's cost) as it asks, and refunded if it never gets a slot.
// pinned: cands is the one backend the request needs (a stored response's
// holder); it waits in its turn without holding back the others (see
// Queue.pinned). Whoever gets a slot must give it back with Release. The
// error is ErrFull, ErrKeyFull, ErrTimeout or ErrLeft.
func (q *Set[B]) Take(ctx context.Context, lq *Queue[B], cands []B, pinned bool, key Key, tokens int64, lim Limits) (B, Wait, error) {
	var none B
	// Newcomers do not overtake: while anyone waits, they queue too — a
	// pinned request as well, which the dispatcher serves in its turn.
	virtual := lq.cell.Scalar(shm.QueueVirtualScalar)
	if lq.cell.Total() == 0 {
		if b, ok := q.TrySlot(cands); ok {
			start := key.Claim(tokens, atomic.LoadInt64(virtual))
			advanceVirtual(virtual, start)
			rebaseEpoch(lq.cell)
			return b, Wait{Start: start}, nil
		}
	}
	if err := q.takePlace(lq, key, lim); err != nil {
		return none, Wait{}, err
	}
	wait := Wait{Queued: true, Began: time.Now()}
	start := key.Claim(tokens, atomic.LoadInt64(virtual))
	w := lq.enqueue(key, tokens, start, append([]B(nil), cands...), pinned)
	timer := time.NewTimer(lim.Timeout)
	defer timer.Stop()
	var b B
	got := false
	var err error
	select {
	case b = <-w.got:
		got = true
	case <-ctx.Done():
		if b, got = lq.leave(w); got {
			q.Release(lq, b)
			got = false
		}
		key.Refund(tokens) // never served: the client had gone
		err = ErrLeft
	case <-timer.C:
		if b, got = lq.leave(w); !got {
			key.Refund(tokens)
			err = ErrTimeout
		}
	}
	wait.Waited = time.Since(wait.Began)
	if key.Cell != nil {
		atomic.AddInt64(key.Cell.Scalar(shm.KeyQueuedScalar), 1)
		atomic.AddInt64(key.Cell.Scalar(shm.KeyQueueWaitScalar), int64(wait.Waited))
	}
	if !got {
		return none, wait, err
	}
	wait.Handoff, wait.Start = w.handoff, w.start
	return b, wait, nil
}

// takePlace takes a place in lq for a request of key: first one of the
// key's own (lim.MaxPerKey, counted in the key's cell, so exact across
// workers), then one of the queue's (lim.Max). A key at its bound is
// refused while the queue still has room for other keys: one key flooding
// the queue cannot turn every other key's request into a queue_full
// (issue 30, item 3). The key's count is given back by remove or
// removePinned, with the place.
func (q *Set[B]) takePlace(lq *Queue[B], key Key, lim Limits) error {
	if lim.Max == 0 {
		return ErrFull
	}
	counted := key.Cell != nil
	if counted {
		// Count-then-check, as Acquire does: a key seen over its bound gives
		// its count back, so the bound holds across workers.
		key.Cell.AddMarkCount(q.col, 1)
		if n := lim.MaxPerKey; n > 0 && key.Cell.MarkCount() > n {
			key.Cell.AddMarkCount(q.col, -1)
			if lq.cell.Total() >= lim.Max {
				return ErrFull // full for everyone: say so
			}
			return ErrKeyFull
		}
	}
	if !lq.cell.Acquire(q.col, lim.Max) {
		if counted {
			key.Cell.AddMarkCount(q.col, -1)
		}
		return ErrFull
	}
	return nil
}
