package queue

import (
	"math"
	"sync/atomic"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/proxy/sat"
	"github.com/sluice-gw/sluice/shm"
)

// Fair queuing between keys: who gets a model's next free slot.
//
// While a model's slots are full its waiters are ordered first by tier —
// the key's priority, higher first — then, within a tier, by how much the
// key has been served, counted in tokens divided by the key's weight, as
// VTC counts it (the virtual token counter of Sheng et al., "Fairness in
// Serving Large Language Models", OSDI 2024): the least served key goes
// first, a key's own requests in arrival order.
//
// The counting is start-time fair queuing's (Goyal et al., SIGCOMM 1996)
// over VTC's tokens. Each key has a finish tag in its shared cell
// (KeyServedScalar): the service, in weighted tokens, of every request it
// has had a slot for or is waiting for. A request takes a start tag when
// it asks for a slot — its key's finish tag, or the model's virtual time
// if that is later — and moves the key's finish tag on by its cost: its
// prompt's estimate and its key's usual answer (expectedRest), divided by
// the key's weight. The waiter with the smallest start tag goes first; the
// model's virtual time (QueueVirtualScalar) is the start tag of the last
// request given a slot. The cost is settled against the usage the backend
// reports when the request ends, and refunded when it never got a slot.
//
//   - A key with 200 requests waiting has its finish tag 200 requests
//     ahead of the virtual time; another key's one request starts at the
//     virtual time and goes next.
//   - Two keys that both keep the queue full take slots in proportion to
//     their weights, by tokens: a key whose answers are 4× longer gets a
//     quarter of the requests.
//   - A key that was idle brings no credit: its finish tag is behind the
//     virtual time and its next request starts at the virtual time (VTC's
//     lift of a newly active key to the least served active one).
//
// A start tag is fixed when its request asks for a slot, so the order
// never goes stale: each worker publishes its best waiter's mark in the
// model's queue cell — the tier in the top bits, then the start tag, then
// the ticket (its arrival across workers) — and the smallest mark of all
// goes first, as the oldest ticket did before keys were told apart. (VTC
// proper compares the keys' counters as they are at each pick; counters
// that other workers keep charging would make every published mark stale
// at once, and comparing a mark recomputed now with the others' older ones
// made two workers pass each wake-up back and forth: hand-off p99 2.5–14
// ms with 2 workers, bench/fairqueue.)

// Mark layout: 2 bits of tier, markServedBits of the key's counter (in
// buckets of servedBucket units), markTicketBits of the ticket.
const (
	markTicketBits = 20
	markServedBits = 41
	markTierShift  = markTicketBits + markServedBits // 61: tiers 0–3 fit below the sign bit
	// servedBucket is how finely marks tell start tags apart: 256 units,
	// a quarter of a token of a key of weight 1 (4 tokens made a
	// one-line request and the next of another key fall in one bucket,
	// ordered by arrival).
	servedBucket = unitsPerToken / 4
	// maxServedBucket is the largest bucket a mark holds: a start tag past
	// it (2^41 buckets from the queue's epoch: 550 billion tokens at
	// weight 1, 5.5 billion at weight 0.01) orders as equal. One below the
	// field's top, so no mark equals shm.NoMark.
	maxServedBucket = 1<<markServedBits - 2
)

// unitsPerToken is what one token adds to the counter of a key of weight 1.
const unitsPerToken = shm.ServedUnitsPerToken

// queueMark is the mark of a waiter of a key of the given priority with
// the start tag served, holding ticket: smaller goes first.
func queueMark(priority int, served, ticket int64) int64 {
	// served is a start tag counted from the queue's epoch: below it (a
	// request that took its tag just before a rebase) is 0.
	tier := int64(config.MaxKeyPriority - min(max(priority, 0), config.MaxKeyPriority))
	bucket := min(max(served, 0)/servedBucket, maxServedBucket)
	return tier<<markTierShift | bucket<<markTicketBits | ticket&(1<<markTicketBits-1)
}

// The ticket's low bits order waiters whose start tags share a bucket (a
// quarter token): past 2^20 tickets they wrap, and for one comparison
// between two such waiters a younger one may go first. Tickets are per
// model; at a thousand queued requests a second that is once in 17
// minutes, and only between two waiters a quarter token apart.

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

// ServedTokens is a counter's value in tokens of a key of weight 1, for
// logs and metrics.
func ServedTokens(units int64) int64 { return units / unitsPerToken }

// Key is a waiting or served request's key as the fair queue sees it;
// the zero value (no key: unit tests) has priority 0, weight 1 and no
// finish tag (every start tag is the virtual time).
type Key struct {
	Name     string    // the key's configured name: its line in each worker's queue
	Cell     *shm.Cell // the key's cell: its finish tag, its waiting counts
	Weight   float64   // its share of service against other keys (0: config.DefaultKeyWeight)
	Priority int       // its tier: higher goes first
}

// served is the key's finish tag now.
func (k Key) served() int64 {
	if k.Cell == nil {
		return 0
	}
	return atomic.LoadInt64(k.Cell.Scalar(shm.KeyServedScalar))
}

// Claim gives a request of the key that costs tokens its start tag — the
// key's finish tag, or virtual if that is later — and moves the key's
// finish tag on by the cost.
func (k Key) Claim(tokens, virtual int64) (start int64) {
	if k.Cell == nil {
		return virtual
	}
	u := serviceUnits(tokens, k.Weight)
	p := k.Cell.Scalar(shm.KeyServedScalar)
	for {
		old := atomic.LoadInt64(p)
		start = max(old, virtual)
		if atomic.CompareAndSwapInt64(p, old, sat.Add(start, u)) {
			return start
		}
	}
}

// charge moves the key's finish tag on by tokens (a request that used more
// than it was charged).
func (k Key) charge(tokens int64) {
	if k.Cell != nil {
		sat.AddAtomic(k.Cell.Scalar(shm.KeyServedScalar), serviceUnits(tokens, k.Weight))
	}
}

// Refund takes tokens back from the key's finish tag (a request that used
// fewer than it was charged, or never got its slot), never below zero.
func (k Key) Refund(tokens int64) {
	if k.Cell == nil {
		return
	}
	u := serviceUnits(tokens, k.Weight)
	p := k.Cell.Scalar(shm.KeyServedScalar)
	for {
		old := atomic.LoadInt64(p)
		if atomic.CompareAndSwapInt64(p, old, max(old-u, 0)) {
			return
		}
	}
}

// rebaseEpoch moves a model's queue epoch — what marks count start tags
// from — up to its virtual time, called while nobody waits (no mark is
// published against the old epoch). Marks hold markServedBits of start
// tag in buckets of servedBucket units: 2^49 units, 550 billion tokens at
// weight 1 but 5.5 billion at weight 0.01, which a batch key could pass
// in days; counted from an epoch that follows the virtual time they
// never saturate while the queue drains now and then. (One that stays
// full for the whole of that without ever emptying falls back to arrival
// order within a tier until it does.)
func rebaseEpoch(queue *shm.Cell) {
	v := atomic.LoadInt64(queue.Scalar(shm.QueueVirtualScalar))
	p := queue.Scalar(shm.QueueEpochScalar)
	if atomic.LoadInt64(p) < v {
		atomic.StoreInt64(p, v)
	}
}

// advanceVirtual moves a model's virtual time on to start, the start tag
// of a request given a slot; never back (a lower tier's request, or one
// that waited in another worker, may start earlier).
func advanceVirtual(p *int64, start int64) {
	for {
		old := atomic.LoadInt64(p)
		if old >= start || atomic.CompareAndSwapInt64(p, old, start) {
			return
		}
	}
}

// ExpectedRest is what the key's requests use beyond their prompt's
// estimate, on a moving mean (KeyMeanRestScalar): charged with the prompt
// when a request takes its slot. VTC counts an answer's tokens as they
// are generated; a gateway sees them when the usage arrives at the end,
// and a counter that learned of an answer only then would lag by every
// answer in flight — minutes of a key's work, for long generations — and
// the key would take slots it has already used up. Charging the key's
// usual answer at once leaves only its deviation from the mean to settle.
func (k Key) ExpectedRest() int64 {
	if k.Cell == nil {
		return 0
	}
	return max(atomic.LoadInt64(k.Cell.Scalar(shm.KeyMeanRestScalar)), 0)
}

// learnRest moves the key's mean of what its requests use beyond their
// prompt's estimate towards rest: a mean over about the last 4 requests,
// taken whole from the first. Two workers settling at once may lose one's
// step, which a mean can spare.
func (k Key) learnRest(rest int64) {
	if k.Cell == nil {
		return
	}
	p := k.Cell.Scalar(shm.KeyMeanRestScalar)
	rest = max(rest, 0)
	if old := atomic.LoadInt64(p); old == 0 {
		atomic.StoreInt64(p, rest)
	} else {
		atomic.StoreInt64(p, old+(rest-old)/4)
	}
}

// Settle corrects a key's counter once a request's usage is known:
// it was charged charged tokens (its prompt's estimate, prompt, and its
// key's usual rest) when it took its slot, and used used (prompt and
// completion, as the backend reported).
func (k Key) Settle(prompt, charged, used int64) {
	used = max(used, 0)
	k.learnRest(used - prompt)
	switch {
	case used > charged:
		k.charge(used - charged)
	case used < charged:
		k.Refund(charged - used)
	}
}
