package worker

import (
	"math"
	"sync/atomic"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/shm"
)

// Fair queuing between keys: who gets a model's next free slot.
//
// While a model's slots are full its waiters are ordered first by tier —
// the key's priority, higher first — then, within a tier, by how much the
// key has been served: the virtual token counter of VTC (Sheng et al.,
// "Fairness in Serving Large Language Models", OSDI 2024), the tokens of
// the key's requests (prompt when the request gets its slot, the rest when
// its usage is settled) divided by the key's weight. The least served key
// goes first; a key's own requests go in arrival order. The counter is in
// the key's shared cell (KeyServedScalar), so every worker reads and
// charges the same one and it outlives reloads and worker deaths.
//
// A key that was not waiting must not bring credit with it: a key idle
// for an hour would otherwise take every slot until its counter caught up
// with keys that kept working. When a key's request enqueues while none of
// its requests wait anywhere, its counter is lifted to at least the
// model's virtual time — the counter, when it took its slot, of the last
// request that took one of the model's slots (QueueVirtualScalar). VTC
// lifts to the least counter of the waiting keys; the last one served is
// that key, or was until its charge, and needs no scan of the waiters.
//
// Each worker publishes its best waiter as its mark in the model's queue
// cell, and marks order waiters as the rules above do: the tier in the
// top bits, then the key's counter, then the request's ticket (its arrival
// across workers). The smallest mark of all goes first, exactly as the
// oldest ticket did before keys were told apart. A counter moves as other
// workers charge it, so a published mark can be stale: a worker recomputes
// its mark whenever it dispatches, and hands the wake-up on to the worker
// whose mark is then smaller than its own; the order is VTC's up to a
// charge in flight.

// Mark layout: 2 bits of tier, markServedBits of the key's counter (in
// buckets of servedBucket units), markTicketBits of the ticket.
const (
	markTicketBits = 24
	markServedBits = 37
	markTierShift  = markTicketBits + markServedBits // 61: tiers 0–3 fit below the sign bit
	// servedBucket is how finely marks tell counters apart: 4,096 units,
	// 4 tokens of a key of weight 1 (a slot's prompt is hundreds).
	servedBucket = 4 * unitsPerToken
	// maxServedBucket is the largest bucket a mark holds: a counter past it
	// (2^37 buckets, 550 billion tokens at weight 1) orders as equal. One
	// below the field's top, so no mark equals shm.NoMark.
	maxServedBucket = 1<<markServedBits - 2
)

// unitsPerToken is what one token adds to the counter of a key of weight 1.
const unitsPerToken = shm.ServedUnitsPerToken

// queueMark is the mark of a waiter of a key of the given priority whose
// counter is served, holding ticket: smaller goes first.
func queueMark(priority int, served, ticket int64) int64 {
	tier := int64(config.MaxKeyPriority - min(max(priority, 0), config.MaxKeyPriority))
	bucket := min(max(served, 0)/servedBucket, maxServedBucket)
	return tier<<markTierShift | bucket<<markTicketBits | ticket&(1<<markTicketBits-1)
}

// The ticket's low bits order waiters whose keys' counters share a bucket:
// past 2^24 tickets they wrap, and for one comparison between two such
// waiters a younger one may go first. Tickets are per model; at a thousand
// queued requests a second that is once in four hours.

// serviceUnits is the counter charge of tokens for a key of the given
// weight (0: the default), at most math.MaxInt64.
func serviceUnits(tokens int64, weight float64) int64 {
	if tokens <= 0 {
		return 0
	}
	if weight <= 0 {
		weight = config.DefaultKeyWeight
	}
	u := float64(tokens) * unitsPerToken / weight
	if u >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(u)
}

// servedTokens is a counter's value in tokens of a key of weight 1, for
// logs and metrics.
func servedTokens(units int64) int64 { return units / unitsPerToken }

// fairKey is a waiting or served request's key as the fair queue sees it;
// the zero value (no key: unit tests) has priority 0, weight 1 and no
// counter.
type fairKey struct {
	name     string
	cell     *shm.Cell // the key's cell: its counter, its waiting counts
	weight   float64
	priority int
}

// served is the key's counter now.
func (k fairKey) served() int64 {
	if k.cell == nil {
		return 0
	}
	return atomic.LoadInt64(k.cell.Scalar(shm.KeyServedScalar))
}

// charge adds tokens to the key's counter and returns the counter before.
func (k fairKey) charge(tokens int64) int64 {
	if k.cell == nil {
		return 0
	}
	u := serviceUnits(tokens, k.weight)
	return satAddAtomic(k.cell.Scalar(shm.KeyServedScalar), u)
}

// refund takes tokens back from the key's counter (a settled request that
// used fewer than it was charged), never below zero.
func (k fairKey) refund(tokens int64) {
	if k.cell == nil {
		return
	}
	u := serviceUnits(tokens, k.weight)
	p := k.cell.Scalar(shm.KeyServedScalar)
	for {
		old := atomic.LoadInt64(p)
		if atomic.CompareAndSwapInt64(p, old, max(old-u, 0)) {
			return
		}
	}
}

// lift raises the key's counter to at least v (VTC's lift of a key that
// starts waiting).
func (k fairKey) lift(v int64) {
	if k.cell == nil {
		return
	}
	p := k.cell.Scalar(shm.KeyServedScalar)
	for {
		old := atomic.LoadInt64(p)
		if old >= v || atomic.CompareAndSwapInt64(p, old, v) {
			return
		}
	}
}

// waitingAnywhere reports whether any worker has a request of the key
// waiting (its waiting counts, one per worker column).
func (k fairKey) waitingAnywhere() bool {
	return k.cell != nil && k.cell.MarkCount() > 0
}

// satAddAtomic adds d ≥ 0 to *p, at most math.MaxInt64, and returns the
// value before.
func satAddAtomic(p *int64, d int64) int64 {
	for {
		old := atomic.LoadInt64(p)
		if atomic.CompareAndSwapInt64(p, old, satAdd(old, d)) {
			return old
		}
	}
}

// expectedRest is what the key's requests use beyond their prompt's
// estimate, on a moving mean (KeyMeanRestScalar): charged with the prompt
// when a request takes its slot. VTC counts an answer's tokens as they
// are generated; a gateway sees them when the usage arrives at the end,
// and a counter that learned of an answer only then would lag by every
// answer in flight — minutes of a key's work, for long generations — and
// the key would take slots it has already used up. Charging the key's
// usual answer at once leaves only its deviation from the mean to settle.
func (k fairKey) expectedRest() int64 {
	if k.cell == nil {
		return 0
	}
	return max(atomic.LoadInt64(k.cell.Scalar(shm.KeyMeanRestScalar)), 0)
}

// learnRest moves the key's mean of what its requests use beyond their
// prompt's estimate towards rest: a mean over about the last 8 requests.
// Two workers settling at once may lose one's step, which a mean can spare.
func (k fairKey) learnRest(rest int64) {
	if k.cell == nil {
		return
	}
	p := k.cell.Scalar(shm.KeyMeanRestScalar)
	old := atomic.LoadInt64(p)
	atomic.StoreInt64(p, old+(max(rest, 0)-old)/8)
}

// settleService corrects a key's counter once a request's usage is known:
// it was charged charged tokens (its prompt's estimate, prompt, and its
// key's usual rest) when it took its slot, and used used (prompt and
// completion, as the backend reported).
func settleService(k fairKey, prompt, charged, used int64) {
	used = max(used, 0)
	k.learnRest(used - prompt)
	switch {
	case used > charged:
		k.charge(used - charged)
	case used < charged:
		k.refund(charged - used)
	}
}
