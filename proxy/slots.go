package proxy

// Backend slots: taken before a request is sent, given back when its
// answer ends; a request that finds none waits in its model's queue
// (queue.go) for the dispatcher to hand it one.

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/sluice-gw/sluice/proxy/usage"
	"github.com/sluice-gw/sluice/shm"
)

// trySlot takes a slot on the first candidate, in order, that is healthy
// and has one free.
func (q *queues) trySlot(cands []*backendRoute) *backendRoute {
	now, regionNow := time.Now(), q.region.Now()
	for _, b := range cands {
		if !b.healthy(now) {
			continue
		}
		if _, full := b.load(regionNow); !full && b.cell.Acquire(q.col, b.slots) {
			return b
		}
	}
	return nil
}

// releaseSlot gives back a slot of backend b and, while requests wait for
// the model, wakes the worker holding the oldest of them.
func (q *queues) releaseSlot(m *modelRoute, b *backendRoute) {
	b.cell.Release(q.col)
	atomic.StoreInt64(b.cell.Scalar(shm.LastRelease), q.region.Now())
	q.wakeOldest(m.queue.cell)
	if m.queue.pinnedN.Load() > 0 {
		q.wake(q.col) // this worker's pinned waiters, outside the marks
	}
	// The server's load counts the requests of every model that lists it:
	// their waiters may take this slot too (else they wait for the tick).
	for _, qc := range b.siblingQueues {
		q.wakeOldest(qc)
	}
}

// wakeOldest wakes the worker holding the oldest waiter of a model's
// queue cell, if anyone waits.
func (q *queues) wakeOldest(qc *shm.Cell) {
	if qc.Total() > 0 {
		if _, at := qc.MinMark(); at >= 0 {
			q.wake(at)
		}
	}
}

// takeSlot returns a backend from cands whose slot this request of key
// now holds: at once when nobody waits and one is free, else after waiting
// in the model's queue, in the fair order between keys (fairness.go). The
// key is charged tokens (the request's cost) as it asks, and refunded if
// it never gets a slot.
// pinned: cands is the one backend the request needs (a stored response's
// holder); it waits in its turn without holding back the others (see
// localQueue.pinned).
// Whoever gets a slot must give it back with releaseSlot.
func (g *Gateway) takeSlot(ctx context.Context, m *modelRoute, cands []*backendRoute, rec *usage.Record, pinned bool, key fairKey, tokens int64) (*backendRoute, *apiError) {
	lq := m.queue
	rec.Priority = key.priority
	// Newcomers do not overtake: while anyone waits, they queue too — a
	// pinned request as well, which the dispatcher serves in its turn.
	virtual := lq.cell.Scalar(shm.QueueVirtualScalar)
	if lq.cell.Total() == 0 {
		if b := g.queues.trySlot(cands); b != nil {
			start := key.claim(tokens, atomic.LoadInt64(virtual))
			advanceVirtual(virtual, start)
			rec.Served = servedTokens(start)
			rebaseEpoch(lq.cell)
			return b, nil
		}
	}
	if e := g.takePlace(m, key); e != nil {
		return nil, e
	}
	began := time.Now()
	start := key.claim(tokens, atomic.LoadInt64(virtual))
	w := lq.enqueue(key, tokens, start, append([]*backendRoute(nil), cands...), pinned)
	timer := time.NewTimer(m.queueTimeout)
	defer timer.Stop()
	var b *backendRoute
	var aerr *apiError
	select {
	case b = <-w.got:
	case <-ctx.Done():
		if b = lq.leave(w); b != nil {
			g.queues.releaseSlot(m, b)
			b = nil
		}
		key.refund(tokens) // never served: the client had gone
		aerr = errClientClosed
	case <-timer.C:
		if b = lq.leave(w); b == nil {
			key.refund(tokens)
			aerr = errServer(http.StatusServiceUnavailable, "queue_timeout",
				fmt.Sprintf("Every backend of model `%s` stayed busy for the queue timeout of %s. Retry shortly.", m.name, m.queueTimeout))
			aerr.retryAfter = "1"
		}
	}
	waited := time.Since(began)
	if !rec.Queued {
		rec.QueueBegan = began
	}
	rec.Queued = true
	rec.QueueWait += waited
	if key.cell != nil {
		atomic.AddInt64(key.cell.Scalar(shm.KeyQueuedScalar), 1)
		atomic.AddInt64(key.cell.Scalar(shm.KeyQueueWaitScalar), int64(waited))
	}
	if b != nil {
		rec.Handoff, rec.Served = w.handoff, servedTokens(w.start)
	}
	return b, aerr
}

// takePlace takes a place in the model's queue for a request of key: first
// one of the key's own (queue.max_per_key, counted in the key's cell, so
// exact across workers), then one of the queue's (queue.max). A key at
// its bound is refused while the queue still has room for other keys: one
// key flooding the queue no longer turns every other key's request into a
// queue_full (issue 30, item 3). The key's count is given back by remove
// or removePinned, with the place.
func (g *Gateway) takePlace(m *modelRoute, key fairKey) *apiError {
	lq := m.queue
	if m.queueMax == 0 {
		return errQueueFull(m)
	}
	counted := key.cell != nil
	if counted {
		// Count-then-check, as Acquire does: a key seen over its bound gives
		// its count back, so the bound holds across workers.
		key.cell.AddMarkCount(g.col, 1)
		if n := m.queueMaxPerKey; n > 0 && key.cell.MarkCount() > n {
			key.cell.AddMarkCount(g.col, -1)
			if lq.cell.Total() >= m.queueMax {
				return errQueueFull(m) // full for everyone: say so
			}
			return &apiError{status: http.StatusTooManyRequests, errType: "server_error", code: "queue_key_full",
				message: fmt.Sprintf("Every backend of model `%s` is busy and your key already has %d requests waiting, its share of the queue. Retry when one has finished.",
					m.name, n),
				retryAfter: "1", source: usage.SourceGateway}
		}
	}
	if !lq.cell.Acquire(g.col, m.queueMax) {
		if counted {
			key.cell.AddMarkCount(g.col, -1)
		}
		return errQueueFull(m)
	}
	return nil
}

// errQueueFull is the refusal of a request that finds its model's queue full.
func errQueueFull(m *modelRoute) *apiError {
	return &apiError{status: http.StatusTooManyRequests, errType: "server_error", code: "queue_full",
		message:    fmt.Sprintf("Every backend of model `%s` is busy and its queue is full (%d waiting). Retry shortly.", m.name, m.queueMax),
		retryAfter: "1", source: usage.SourceGateway}
}

// errClientClosed marks a request whose client left while it waited.
var errClientClosed = &apiError{status: statusClientClosed, errType: "invalid_request_error", code: "client_closed", message: "client closed the request"}
