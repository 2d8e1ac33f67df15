// Package queue is a model's queue for backend slots, one queue across
// every worker of the gateway, and its fair order between keys (fair.go).
//
// A backend's slots are counted in its shared cell, across all workers: a
// request takes one before it is sent and gives it back when its response
// ends or fails. When every candidate backend is full the request waits in
// the model's queue, which is one queue across workers: its depth is the
// queue cell's gauge, every waiter has a ticket from the cell's shared
// counter, and each worker publishes the mark of its best waiter — its
// key's tier and service, then its ticket (fair.go) — in its column.
// Only the worker holding the smallest mark of all may hand a freed slot
// to a waiter, so waiters are served in the fair queue's order whichever
// worker they are in. A worker that frees a slot while requests wait
// wakes the worker holding the smallest mark: itself through a channel,
// another through that worker's wake pipe (the runtime's poller reads
// it); a worker woken with no waiter left, or whose best waiter's mark has
// grown past another's since it was published, passes the wake-up on.
package queue

import (
	"context"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sluice-gw/sluice/proxy/sat"
	"github.com/sluice-gw/sluice/shm"
)

// Set is this worker's side of the shared queues: one Queue per model.
type Set[B Backend] struct {
	col   int
	clock Clock
	wakeW []int         // every worker's wake pipe (write end), by column
	kick  chan struct{} // wakes this worker's dispatcher

	mu     sync.Mutex
	byName map[string]*Queue[B]
}

// NewSet is the queues of the worker of column col, with clock the
// region's and wakeW every worker's wake pipe (write end; nil: one worker).
func NewSet[B Backend](col int, clock Clock, wakeW []int) *Set[B] {
	return &Set[B]{col: col, clock: clock, wakeW: wakeW, kick: make(chan struct{}, 1), byName: map[string]*Queue[B]{}}
}

// Queue is one model's waiters in this worker: per key, in ticket
// order.
type Queue[B Backend] struct {
	q     *Set[B]
	cell  *shm.Cell
	mu    sync.Mutex
	lines map[string]*keyLine[B] // by key name: the keys with requests waiting here
	// waiting is the number of waiters in lines.
	waiting int
	// pinned are the waiters that need one backend and no other (a stored
	// response's holder). They keep their key's tier and start tag, and
	// take a slot of their backend only once no waiter of the fair order
	// goes before them (their mark is at most the smallest published):
	// served no earlier than the fair order would serve them. Their marks
	// are not published, so that one waiting for its busy holder does not
	// hold back the waiters behind it that other backends could serve now.
	// They count in the queue's depth; the dispatcher serves them as soon
	// as their turn has come and their backend has a free slot — this
	// worker's at once (releaseSlot kicks it), another's at its next
	// safety tick. (Until issue 30 they went before every waiter: a
	// priority-0 key's follow-ups were served before a priority-3 key that
	// had queued first.)
	pinned  []*waiter[B]
	pinnedN atomic.Int32 // len(pinned), read without the lock
}

// keyLine is one key's waiters in a worker's queue of a model, oldest
// first.
type keyLine[B Backend] struct {
	waiters []*waiter[B]
}

// waiter is a request waiting for a slot.
type waiter[B Backend] struct {
	ticket  int64
	key     Key
	tokens  int64 // what its key was charged (its finish tag moved on by)
	start   int64 // its start tag (fair.go)
	cands   []B
	got     chan B        // buffered: the dispatcher never blocks on it
	handoff time.Duration // from the slot's release to its hand-over
	passed  int           // times a waiter close behind took a slot first (locality)
}

// ForModel returns the local queue of a model, the same one across route
// tables so a reload keeps the waiters.
func (q *Set[B]) ForModel(name string, cell *shm.Cell) *Queue[B] {
	q.mu.Lock()
	defer q.mu.Unlock()
	lq := q.byName[name]
	if lq == nil || !lq.cell.Same(cell) {
		lq = &Queue[B]{q: q, cell: cell, lines: map[string]*keyLine[B]{}}
		q.byName[name] = lq
	}
	return lq
}

// Prune drops the local queues that the current route table no longer
// uses (inUse false: a model a reload removed, or moved to another cell), once nobody
// waits in them (a waiter keeps its queue until it leaves).
func (q *Set[B]) Prune(inUse func(model string, lq *Queue[B]) bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for name, lq := range q.byName {
		if inUse(name, lq) {
			continue
		}
		lq.mu.Lock()
		idle := lq.waiting == 0 && len(lq.pinned) == 0
		lq.mu.Unlock()
		if idle {
			delete(q.byName, name)
		}
	}
}

// wake tells the worker of column col that a slot may be free for its
// oldest waiter. A full pipe already holds a wake-up: nothing is lost.
func (q *Set[B]) wake(col int) {
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

// Listen reads this worker's wake pipe and kicks the dispatcher.
func (q *Set[B]) Listen(f *os.File) {
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

// Run hands freed slots to waiters until ctx ends.
func (q *Set[B]) Run(ctx context.Context) {
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
		list := make([]*Queue[B], 0, len(q.byName))
		for _, lq := range q.byName {
			list = append(list, lq)
		}
		q.mu.Unlock()
		for _, lq := range list {
			lq.dispatch()
		}
	}
}

// dispatch serves this worker's waiters while they hold the smallest
// marks and a slot is free. With none left here while others wait
// elsewhere, it passes the wake-up on to the worker of the smallest mark:
// a release wakes only one worker, which may have had fewer waiters than
// slots were freed (two releases, one wake-up) or none left (its waiter
// gave up), and a slot must not stay free until a tick while a request
// waits.
func (lq *Queue[B]) dispatch() {
	lq.mu.Lock()
	defer lq.mu.Unlock()
	lq.servePinned()
	defer lq.servePinned() // the fair waiters served may have made their turn
	for {
		// Start tags are fixed when requests ask: the mark published here
		// is the one every other worker compares with.
		line, mark := lq.best()
		lq.cell.SetMark(lq.q.col, mark)
		if line == nil {
			break
		}
		if least, at := lq.cell.MinMark(); least < mark {
			lq.q.wake(at) // a waiter in another worker goes first
			return
		}
		head := line.waiters[0]
		b, ok := lq.q.TrySlot(head.cands)
		if !ok {
			return
		}
		w := head
		if b != head.cands[0] && head.passed < localityWindow && head.cands[0].Healthy(time.Now()) {
			// The head's own backend is full: a waiter close behind it
			// whose first choice is b — where its prefix is cached — takes
			// b instead, and the head waits for the next slot (a head
			// passed over localityWindow times, or whose backend is out
			// of rotation, waits no more).
			if alt := lq.preferring(b, head); alt != nil {
				w = alt
				head.passed++
			}
		}
		lq.remove(w)
		lq.grant(w, b)
	}
	if _, at := lq.cell.MinMark(); at >= 0 && at != lq.q.col {
		lq.q.wake(at)
	}
}

// servePinned gives the pinned waiters whose turn has come — no waiter of
// the fair order, here or in another worker, has a smaller mark — a slot
// of their backend when it has one free (lq.mu held).
func (lq *Queue[B]) servePinned() {
	if len(lq.pinned) == 0 {
		return
	}
	least, _ := lq.cell.MinMark()
	for i := 0; i < len(lq.pinned); {
		p := lq.pinned[i]
		if lq.mark(p) > least {
			i++ // a waiter of the fair order goes first
			continue
		}
		b, ok := lq.q.TrySlot(p.cands)
		if !ok {
			i++
			continue
		}
		lq.removePinned(i)
		lq.grant(p, b)
	}
}

// localityWindow is how far behind the fair order's head a waiter may be
// and still take first a slot freed on the backend it would have chosen
// (its candidates' first: the one its key ranks first, or that holds its
// prefix): up to this many requests of the head's cost later in start
// tag, and this deep in its key's line. With every slot full, a slot freed
// on backend X went to the oldest waiter, whichever backend it preferred,
// and two requests in three found their prefix cold there (3 backends);
// a waiter that prefers X is almost always among the next 16. The head
// is passed over only for such a waiter, of its own tier, and at most
// while the virtual time is within the window of its start: the fair
// order bends by a few requests, no slot stays free, nobody starves.
const localityWindow = 16

// preferring returns the waiter, of head's tier and within the locality
// window behind it, whose first choice is backend b; nil if none (lq.mu
// held). Of several, the earliest in the fair order.
func (lq *Queue[B]) preferring(b B, head *waiter[B]) *waiter[B] {
	cost := max(serviceUnits(head.tokens, head.key.Weight), servedBucket)
	limit := sat.Add(max(head.start, 0), sat.Mul(localityWindow, cost))
	var best *waiter[B]
	bestMark := int64(shm.NoMark)
	for _, l := range lq.lines {
		if l.waiters[0].key.Priority != head.key.Priority {
			continue
		}
		for i, w := range l.waiters {
			if i >= localityWindow || w.start > limit {
				break // a line is in start-tag order
			}
			// The same route, not merely the same URL: a waiter of another
			// configuration generation keeps its own table's backends.
			if w != head && len(w.cands) > 0 && w.cands[0] == b {
				if m := lq.mark(w); m < bestMark {
					best, bestMark = w, m
				}
				break
			}
		}
	}
	return best
}

// publish recomputes this worker's mark from its best waiter now (lq.mu
// held).
func (lq *Queue[B]) publish() {
	_, mark := lq.best()
	lq.cell.SetMark(lq.q.col, mark)
}

// best returns the line whose head goes first here, and its mark (nil and
// shm.NoMark when nobody waits).
func (lq *Queue[B]) best() (*keyLine[B], int64) {
	var line *keyLine[B]
	mark := int64(shm.NoMark)
	for _, l := range lq.lines {
		h := l.waiters[0]
		if m := lq.mark(h); m < mark {
			line, mark = l, m
		}
	}
	return line, mark
}

// grant hands slot b to waiter w, out of the queue already (lq.mu held),
// and moves the model's virtual time on to its start tag. (A pinned
// waiter is served in its turn too, so its start tag is the fair order's
// as well.)
func (lq *Queue[B]) grant(w *waiter[B], b B) {
	released := atomic.LoadInt64(b.Cell().Scalar(shm.LastRelease)) // before the clock: never a negative hand-off
	w.handoff = time.Duration(max(lq.q.clock.Now()-released, 0))
	advanceVirtual(lq.cell.Scalar(shm.QueueVirtualScalar), w.start)
	w.got <- b
}

// mark is waiter w's mark: its start tag counted from the queue's epoch
// (see queueEpoch).
func (lq *Queue[B]) mark(w *waiter[B]) int64 {
	return queueMark(w.key.Priority, w.start-atomic.LoadInt64(lq.cell.Scalar(shm.QueueEpochScalar)), w.ticket)
}

// remove takes waiter w out of its key's line (lq.mu held): its queue place
// is given back, and its key's waiting count. The mark is the caller's to
// update.
func (lq *Queue[B]) remove(w *waiter[B]) bool {
	l := lq.lines[w.key.Name]
	if l == nil {
		return false
	}
	i := slices.Index(l.waiters, w)
	if i < 0 {
		return false
	}
	l.waiters = slices.Delete(l.waiters, i, i+1)
	if len(l.waiters) == 0 {
		delete(lq.lines, w.key.Name)
	}
	lq.waiting--
	lq.cell.Release(lq.q.col)
	if w.key.Cell != nil {
		w.key.Cell.AddMarkCount(lq.q.col, -1)
	}
	return true
}

// removePinned takes pinned waiter i out (lq.mu held), giving back its
// queue place and its key's count.
func (lq *Queue[B]) removePinned(i int) {
	w := lq.pinned[i]
	lq.pinned = append(lq.pinned[:i], lq.pinned[i+1:]...)
	lq.pinnedN.Store(int32(len(lq.pinned)))
	lq.cell.Release(lq.q.col)
	if w.key.Cell != nil {
		w.key.Cell.AddMarkCount(lq.q.col, -1)
	}
}

// enqueue adds a waiter of key that already holds a queue place (and its
// key's count of them: takePlace) and took its start tag: in its key's line, or with pinned among the pinned
// waiters.
func (lq *Queue[B]) enqueue(key Key, tokens, start int64, cands []B, pinned bool) *waiter[B] {
	w := &waiter[B]{key: key, tokens: tokens, start: start, cands: cands, got: make(chan B, 1)}
	lq.mu.Lock()
	// The ticket is taken under the lock so a line's order is ticket order.
	w.ticket = atomic.AddInt64(lq.cell.Scalar(shm.Ticket), 1)
	if pinned {
		lq.pinned = append(lq.pinned, w)
		lq.pinnedN.Store(int32(len(lq.pinned)))
		lq.mu.Unlock()
		lq.q.wake(lq.q.col)
		return w
	}
	l := lq.lines[key.Name]
	if l == nil {
		l = &keyLine[B]{}
		lq.lines[key.Name] = l
	}
	l.waiters = append(l.waiters, w)
	lq.waiting++
	lq.publish()
	lq.mu.Unlock()
	lq.q.wake(lq.q.col) // a slot may have freed while the place was taken
	return w
}

// leave takes a waiter out on timeout or cancellation. If the dispatcher
// served it first, the slot it was handed is returned (true).
func (lq *Queue[B]) leave(w *waiter[B]) (B, bool) {
	lq.mu.Lock()
	defer lq.mu.Unlock()
	var none B
	if lq.remove(w) {
		lq.publish()
		return none, false
	}
	for i, x := range lq.pinned {
		if x == w {
			lq.removePinned(i)
			return none, false
		}
	}
	return <-w.got, true
}

// Cell is the queue's cell in the shared region: its depth, its tickets,
// every worker's mark.
func (lq *Queue[B]) Cell() *shm.Cell { return lq.cell }

// TakeWakeUp reports, and takes, a wake-up waiting for this worker's
// dispatcher (what Run would act on next): for a test that runs no
// dispatcher and checks who was told to run one.
func (q *Set[B]) TakeWakeUp() bool {
	select {
	case <-q.kick:
		return true
	default:
		return false
	}
}
