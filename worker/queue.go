package worker

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sluice-gw/sluice/shm"
)

// Backend slots and the queue.
//
// A backend's slots are counted in its shared cell, across all workers: a
// request takes one before it is sent and gives it back when its response
// ends or fails. When every candidate backend is full the request waits in
// the model's queue, which is one queue across workers: its depth is the
// queue cell's gauge, every waiter has a ticket from the cell's shared
// counter, and each worker publishes the ticket of its oldest waiter as its
// mark. Only the worker holding the oldest ticket of all may hand a freed
// slot to a waiter, so waiters are served in arrival order whichever worker
// they are in. A worker that frees a slot while requests wait wakes the
// worker holding the oldest ticket: itself through a channel, another
// through that worker's wake pipe (the runtime's poller reads it); a worker
// woken with no waiter left passes the wake-up on to the next oldest's.

// queues is this worker's side of the shared queues.
type queues struct {
	col    int
	region *shm.Region
	wakeW  []int         // every worker's wake pipe (write end), by column
	kick   chan struct{} // wakes this worker's dispatcher

	mu     sync.Mutex
	byName map[string]*localQueue
}

func newQueues(col int, region *shm.Region, wakeW []int) *queues {
	return &queues{col: col, region: region, wakeW: wakeW, kick: make(chan struct{}, 1), byName: map[string]*localQueue{}}
}

// localQueue is one model's waiters in this worker, in ticket order.
type localQueue struct {
	q       *queues
	cell    *shm.Cell
	mu      sync.Mutex
	waiters []*waiter
	// pinned are the waiters that need one backend and no other (a stored
	// response's holder): outside the arrival order, so that one waiting
	// for its busy holder does not hold back the waiters behind it that
	// other backends could serve now. They count in the queue's depth and
	// take a slot of their backend as soon as the dispatcher finds one
	// free — this worker's at once (releaseSlot kicks it), another's at
	// its next safety tick.
	pinned  []*waiter
	pinnedN atomic.Int32 // len(pinned), read without the lock
}

// waiter is a request waiting for a slot.
type waiter struct {
	ticket  int64
	cands   []*backendRoute
	got     chan *backendRoute // buffered: the dispatcher never blocks on it
	handoff time.Duration      // from the slot's release to its hand-over
}

// forModel returns the local queue of a model, the same one across route
// tables so a reload keeps the waiters.
func (q *queues) forModel(name string, cell *shm.Cell) *localQueue {
	q.mu.Lock()
	defer q.mu.Unlock()
	lq := q.byName[name]
	if lq == nil || !lq.cell.Same(cell) {
		lq = &localQueue{q: q, cell: cell}
		q.byName[name] = lq
	}
	return lq
}

// prune drops the local queues of models a reload removed, once nobody
// waits in them (a waiter keeps its queue until it leaves).
func (q *queues) prune(rt *routeTable) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for name, lq := range q.byName {
		if m := rt.models[name]; m != nil && m.queue == lq {
			continue
		}
		lq.mu.Lock()
		idle := len(lq.waiters) == 0 && len(lq.pinned) == 0
		lq.mu.Unlock()
		if idle {
			delete(q.byName, name)
		}
	}
}

// wake tells the worker of column col that a slot may be free for its
// oldest waiter. A full pipe already holds a wake-up: nothing is lost.
func (q *queues) wake(col int) {
	if col == q.col {
		select {
		case q.kick <- struct{}{}:
		default:
		}
		return
	}
	if col >= 0 && col < len(q.wakeW) && q.wakeW[col] >= 0 {
		unix.Write(q.wakeW[col], []byte{1}) //nolint:errcheck // EAGAIN: a wake-up is pending
	}
}

// listen reads this worker's wake pipe and kicks the dispatcher.
func (q *queues) listen(f *os.File) {
	buf := make([]byte, 64)
	for {
		if _, err := f.Read(buf); err != nil {
			return
		}
		q.wake(q.col)
	}
}

// safetyTick re-runs the dispatcher now and then, so a wake-up lost to a
// worker killed between freeing a slot and waking the next worker delays
// a waiter by at most this much.
const safetyTick = 50 * time.Millisecond

// run hands freed slots to waiters until ctx ends.
func (q *queues) run(ctx context.Context) {
	tick := time.NewTicker(safetyTick)
	defer tick.Stop()
	for {
		select {
		case <-q.kick:
		case <-tick.C:
		case <-ctx.Done():
			return
		}
		q.mu.Lock()
		list := make([]*localQueue, 0, len(q.byName))
		for _, lq := range q.byName {
			list = append(list, lq)
		}
		q.mu.Unlock()
		for _, lq := range list {
			lq.dispatch()
		}
	}
}

// dispatch serves this worker's waiters while they hold the oldest tickets
// and a slot is free. With none left here while others wait elsewhere, it
// passes the wake-up on to the worker of the oldest of them: a release
// wakes only one worker, which may have had fewer waiters than slots were
// freed (two releases, one wake-up) or none left (its waiter gave up), and
// a slot must not stay free until a tick while a request waits.
func (lq *localQueue) dispatch() {
	lq.mu.Lock()
	defer lq.mu.Unlock()
	for i := 0; i < len(lq.pinned); {
		p := lq.pinned[i]
		b := lq.q.trySlot(p.cands)
		if b == nil {
			i++
			continue
		}
		p.handoff = time.Duration(lq.q.region.Now() - atomic.LoadInt64(b.cell.Scalar(shm.LastRelease)))
		lq.removePinned(i)
		p.got <- b
	}
	for len(lq.waiters) > 0 {
		head := lq.waiters[0]
		if oldest, at := lq.cell.MinMark(); oldest < head.ticket {
			lq.q.wake(at) // an older waiter in another worker goes first
			return
		}
		b := lq.q.trySlot(head.cands)
		if b == nil {
			return
		}
		head.handoff = time.Duration(lq.q.region.Now() - atomic.LoadInt64(b.cell.Scalar(shm.LastRelease)))
		lq.remove(0)
		head.got <- b
	}
	if _, at := lq.cell.MinMark(); at >= 0 && at != lq.q.col {
		lq.q.wake(at)
	}
}

// remove takes waiter i out (lq.mu held): its queue place is given back and
// the mark follows the new head.
func (lq *localQueue) remove(i int) {
	copy(lq.waiters[i:], lq.waiters[i+1:])
	lq.waiters[len(lq.waiters)-1] = nil
	lq.waiters = lq.waiters[:len(lq.waiters)-1]
	lq.cell.Release(lq.q.col)
	if len(lq.waiters) == 0 {
		lq.cell.SetMark(lq.q.col, shm.NoMark)
	} else {
		lq.cell.SetMark(lq.q.col, lq.waiters[0].ticket)
	}
}

// removePinned takes pinned waiter i out (lq.mu held), giving back its
// queue place.
func (lq *localQueue) removePinned(i int) {
	lq.pinned = append(lq.pinned[:i], lq.pinned[i+1:]...)
	lq.pinnedN.Store(int32(len(lq.pinned)))
	lq.cell.Release(lq.q.col)
}

// enqueue adds a waiter that already holds a queue place: in ticket order,
// or with pinned among the pinned waiters.
func (lq *localQueue) enqueue(cands []*backendRoute, pinned bool) *waiter {
	w := &waiter{cands: cands, got: make(chan *backendRoute, 1)}
	lq.mu.Lock()
	if pinned {
		lq.pinned = append(lq.pinned, w)
		lq.pinnedN.Store(int32(len(lq.pinned)))
		lq.mu.Unlock()
		lq.q.wake(lq.q.col)
		return w
	}
	// The ticket is taken under the lock so local order is ticket order.
	w.ticket = atomic.AddInt64(lq.cell.Scalar(shm.Ticket), 1)
	lq.waiters = append(lq.waiters, w)
	if len(lq.waiters) == 1 {
		lq.cell.SetMark(lq.q.col, w.ticket)
	}
	lq.mu.Unlock()
	lq.q.wake(lq.q.col) // a slot may have freed while the place was taken
	return w
}

// leave takes a waiter out on timeout or cancellation. If the dispatcher
// served it first, the slot it was handed is returned.
func (lq *localQueue) leave(w *waiter) *backendRoute {
	lq.mu.Lock()
	defer lq.mu.Unlock()
	for i, x := range lq.waiters {
		if x == w {
			lq.remove(i)
			return nil
		}
	}
	for i, x := range lq.pinned {
		if x == w {
			lq.removePinned(i)
			return nil
		}
	}
	return <-w.got
}

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

// takeSlot returns a backend from cands whose slot this request now holds:
// at once when nobody waits and one is free, else after waiting in the
// model's queue. pinned: cands is the one backend the request needs (a
// stored response's holder); it waits outside the arrival order (see
// localQueue.pinned). Whoever gets a slot must give it back with
// releaseSlot.
func (g *gateway) takeSlot(ctx context.Context, m *modelRoute, cands []*backendRoute, rec *usageRecord, pinned bool) (*backendRoute, *apiError) {
	lq := m.queue
	// Newcomers do not overtake: while anyone waits, they queue too. A
	// pinned request tries its one backend at once all the same: a slot
	// freed there goes to a waiter that can use it as soon as the
	// dispatcher runs, so one still free is seldom anyone else's.
	if pinned || lq.cell.Total() == 0 {
		if b := g.queues.trySlot(cands); b != nil {
			return b, nil
		}
	}
	if m.queueMax == 0 || !lq.cell.Acquire(g.col, m.queueMax) {
		return nil, &apiError{status: http.StatusTooManyRequests, errType: "server_error", code: "queue_full",
			message:    fmt.Sprintf("Every backend of model `%s` is busy and its queue is full (%d waiting). Retry shortly.", m.name, m.queueMax),
			retryAfter: "1", source: sourceGateway}
	}
	began := time.Now()
	w := lq.enqueue(append([]*backendRoute(nil), cands...), pinned)
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
		aerr = errClientClosed
	case <-timer.C:
		if b = lq.leave(w); b == nil {
			aerr = errServer(http.StatusServiceUnavailable, "queue_timeout",
				fmt.Sprintf("Every backend of model `%s` stayed busy for the queue timeout of %s. Retry shortly.", m.name, m.queueTimeout))
			aerr.retryAfter = "1"
		}
	}
	rec.queued = true
	rec.queueWait += time.Since(began)
	if b != nil {
		rec.handoff = w.handoff
	}
	return b, aerr
}

// errClientClosed marks a request whose client left while it waited.
var errClientClosed = &apiError{status: statusClientClosed, errType: "invalid_request_error", code: "client_closed", message: "client closed the request"}
