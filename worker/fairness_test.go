package worker

import (
	"math"
	"sync/atomic"
	"testing"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/shm"
)

func TestQueueMarkOrder(t *testing.T) {
	const bucket = servedBucket
	cases := []struct {
		name   string
		first  int64
		second int64
	}{
		{"a higher tier goes first, however much served", queueMark(1, 1e15, 900), queueMark(0, 0, 1)},
		{"the top tier before the next", queueMark(3, 0, 5), queueMark(2, 0, 1)},
		{"within a tier, the less served key", queueMark(0, 10*bucket, 900), queueMark(0, 11*bucket, 1)},
		{"within a counter's bucket, arrival", queueMark(0, 10*bucket, 7), queueMark(0, 10*bucket+bucket-1, 8)},
		{"a priority past the top is the top", queueMark(9, 0, 2), queueMark(2, 0, 1)},
		{"a negative priority is 0", queueMark(0, 0, 1), queueMark(-4, 0, 2)},
	}
	for _, c := range cases {
		if c.first >= c.second {
			t.Errorf("%s: %#x is not before %#x", c.name, c.first, c.second)
		}
	}
	// Every mark is below NoMark (a worker without waiters), even the
	// largest counter, the lowest tier and a ticket of all ones.
	if m := queueMark(0, math.MaxInt64, 1<<markTicketBits-1); m >= shm.NoMark || m < 0 {
		t.Errorf("the largest mark %#x is not a mark below NoMark", m)
	}
	// Tickets past the field wrap, and only the ticket's field moves.
	if queueMark(0, 5*bucket, 1<<markTicketBits+3) != queueMark(0, 5*bucket, 3) {
		t.Error("a ticket past its field spilled into the counter's")
	}
	if queueMark(config.MaxKeyPriority, 0, 0) != 0 {
		t.Error("the top tier, unserved, first ticket is not mark 0")
	}
}

func TestServiceUnits(t *testing.T) {
	if u := serviceUnits(100, 1); u != 100*unitsPerToken {
		t.Errorf("100 tokens at weight 1: %d units", u)
	}
	if u, v := serviceUnits(100, 2), serviceUnits(100, 1); 2*u != v {
		t.Errorf("weight 2 is not charged half: %d vs %d", u, v)
	}
	if serviceUnits(100, 0) != serviceUnits(100, config.DefaultKeyWeight) {
		t.Error("weight 0 is not the default")
	}
	if serviceUnits(1, config.MaxKeyWeight) == 0 {
		t.Error("a token of a key of the largest weight is charged nothing")
	}
	if serviceUnits(math.MaxInt64, config.MinKeyWeight) != math.MaxInt64 {
		t.Error("a huge charge did not saturate")
	}
	if serviceUnits(-5, 1) != 0 {
		t.Error("a negative count was charged")
	}
}

// fairRig is a queueRig with key cells.
func fairRig(t *testing.T, slots int64, keys ...string) (*queueRig, map[string]fairKey) {
	t.Helper()
	r := newQueueRig(t, slots)
	out := map[string]fairKey{}
	for _, k := range keys {
		c, err := r.region.Alloc(shm.KeyCell(k))
		if err != nil {
			t.Fatal(err)
		}
		out[k] = fairKey{name: k, cell: c, weight: 1}
	}
	return r, out
}

// queueAs is queueIn for a request of key charged tokens.
func (r *queueRig) queueAs(col int, key fairKey, tokens int64) (<-chan taken, func()) {
	r.t.Helper()
	depth := r.qcell.Total()
	c, leave := r.takeAs(col, key, tokens)
	r.await("the request to enter the queue", func() bool {
		return r.qcell.Total() == depth+1 && r.localWaiters(col) == int(r.qcell.Held(col))
	}, c)
	return c, leave
}

// notYet checks that request c has not been served.
func notYet(t *testing.T, c <-chan taken, what string) {
	t.Helper()
	select {
	case got := <-c:
		t.Fatalf("%s was served out of order (slot %v, error %v)", what, got.b != nil, got.err)
	default:
	}
}

// The next slot goes to the waiting key served least, whatever the
// arrival order and whichever worker it waits in; within a key, arrival.
func TestFairQueueLeastServedFirst(t *testing.T) {
	r, k := fairRig(t, 1, "heavy", "light")
	heavy, light := k["heavy"], k["light"]
	units := func(tokens int64) int64 { return serviceUnits(tokens, 1) }
	atomic.StoreInt64(heavy.cell.Scalar(shm.KeyServedScalar), units(5000))
	if c, _ := r.takeAs(0, heavy, 1000); (<-c).b == nil { // the one slot: heavy at 6000
		t.Fatal("no slot while nobody waits")
	}
	h1, _ := r.queueAs(0, heavy, 1000)
	h2, _ := r.queueAs(0, heavy, 1000)
	l1, _ := r.queueAs(1, light, 1000) // younger than heavy's, in the other worker
	if got := light.served(); got != units(5000) {
		t.Fatalf("light, starting to wait, was lifted to %d units, want the virtual time %d (heavy's counter when it took the slot)", got, units(5000))
	}
	r.woken(0)
	r.woken(1)

	// light (5000) is served less than heavy (6000): it goes first.
	r.gw[0].queues.releaseSlot(r.model[0], r.be[0])
	if !r.woken(1) || r.woken(0) {
		t.Fatal("the freed slot did not wake (only) the worker of the least served key")
	}
	r.model[0].queue.dispatch() // its best waiter is heavy's: it hands over
	if r.bcell.Total() != 0 {
		t.Fatal("worker 0 gave the slot to heavy's waiter while light, served less, waits in worker 1")
	}
	r.model[1].queue.dispatch()
	r.served(l1, "light, the least served key")
	notYet(t, h1, "heavy's first waiter")

	// Both at 6000: arrival decides, heavy's first waiter goes (heavy: 7000).
	r.gw[1].queues.releaseSlot(r.model[1], r.be[1])
	r.model[1].queue.dispatch()
	r.model[0].queue.dispatch()
	r.served(h1, "heavy's first waiter")

	// light waits again, younger than heavy's second: light (6000) first.
	l2, _ := r.queueAs(1, light, 1000)
	r.gw[0].queues.releaseSlot(r.model[0], r.be[0])
	r.model[0].queue.dispatch()
	r.model[1].queue.dispatch()
	r.served(l2, "light's second request")
	notYet(t, h2, "heavy's second waiter")
	r.gw[1].queues.releaseSlot(r.model[1], r.be[1])
	r.model[1].queue.dispatch()
	r.model[0].queue.dispatch()
	r.served(h2, "heavy's second waiter")
	if got := heavy.served(); got != units(8000) {
		t.Errorf("heavy served %d units after 3 slots of 1000 from 5000, want %d", got, units(8000))
	}
}

// A waiting request of a higher tier goes before every waiter of a lower
// one, however little those keys were served.
func TestFairQueuePriorityFirst(t *testing.T) {
	r, k := fairRig(t, 1, "low", "high")
	low, high := k["low"], k["high"]
	high.priority = 1
	atomic.StoreInt64(high.cell.Scalar(shm.KeyServedScalar), serviceUnits(1e9, 1)) // served far more
	r.slotNow(0)
	l1, _ := r.queueAs(0, low, 10)
	l2, _ := r.queueAs(1, low, 10)
	h1, _ := r.queueAs(1, high, 10)
	r.woken(0)
	r.woken(1)
	r.gw[0].queues.releaseSlot(r.model[0], r.be[0])
	if !r.woken(1) || r.woken(0) {
		t.Fatal("the freed slot did not wake (only) the worker of the higher tier's waiter")
	}
	r.model[0].queue.dispatch()
	r.model[1].queue.dispatch()
	r.served(h1, "the priority-1 request")
	notYet(t, l1, "the older priority-0 request")
	notYet(t, l2, "priority-0 request")
}

// A key that starts waiting brings no credit: its counter is lifted to
// the model's virtual time, so a key idle while another was served does
// not take every slot until it catches up.
func TestFairQueueLiftsAnIdleKey(t *testing.T) {
	r, k := fairRig(t, 1, "busy", "idle")
	busy, idle := k["busy"], k["idle"]
	for range 5 { // busy is served alone: 5 × 100 tokens, then one more
		c, _ := r.takeAs(0, busy, 100)
		if got := <-c; got.b == nil {
			t.Fatal("no slot while nobody waits")
		}
		r.gw[0].queues.releaseSlot(r.model[0], r.be[0])
	}
	if c, _ := r.takeAs(0, busy, 100); (<-c).b == nil {
		t.Fatal("no slot while nobody waits")
	}
	i1, _ := r.queueAs(1, idle, 100)
	want := serviceUnits(500, 1) // busy's counter when it took the last slot
	if got := atomic.LoadInt64(idle.cell.Scalar(shm.KeyServedScalar)); got != want {
		t.Fatalf("the idle key's counter is %d on waiting, want the virtual time %d", got, want)
	}
	// A second request of the same key, while its first waits, is not
	// lifted again (the key is waiting: its counter is its own).
	atomic.StoreInt64(idle.cell.Scalar(shm.KeyServedScalar), want-serviceUnits(50, 1))
	i2, _ := r.queueAs(1, idle, 100)
	if got := atomic.LoadInt64(idle.cell.Scalar(shm.KeyServedScalar)); got != want-serviceUnits(50, 1) {
		t.Fatalf("a waiting key's counter was lifted: %d", got)
	}
	if n := idle.cell.MarkCount(); n != 2 {
		t.Fatalf("the key's waiting count is %d, want 2", n)
	}
	r.gw[0].queues.releaseSlot(r.model[0], r.be[0])
	r.model[1].queue.dispatch()
	r.served(i1, "the first waiter")
	r.gw[0].queues.releaseSlot(r.model[0], r.be[0])
	r.model[1].queue.dispatch()
	r.served(i2, "the second waiter")
	if n := idle.cell.MarkCount(); n != 0 {
		t.Fatalf("the key's waiting count is %d with nobody waiting", n)
	}
}

// A request's charge is settled against its usage: the prompt's estimate
// at the slot, corrected up or down when the answer says what was used.
func TestSettleService(t *testing.T) {
	region, err := shm.Create(4, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer region.Close()
	c, _ := region.Alloc(shm.KeyCell("k"))
	k := fairKey{name: "k", cell: c, weight: 2}
	k.charge(100)
	settleService(k, 100, 100, 300)
	if got, want := k.served(), serviceUnits(300, 2); got != want {
		t.Errorf("after settling 300 used against 100 charged: %d, want %d", got, want)
	}
	if got := k.expectedRest(); got != 200/8 {
		t.Errorf("the key's usual rest after one request that used 200 past its prompt: %d, want %d", got, 200/8)
	}
	settleService(k, 10, 100, 20)
	if got, want := k.served(), serviceUnits(300, 2)-serviceUnits(80, 2); got != want {
		t.Errorf("after a refund: %d, want %d", got, want)
	}
	for range 100 {
		k.learnRest(400)
	}
	if got := k.expectedRest(); got < 390 || got > 400 {
		t.Errorf("the usual rest after 100 requests that used 400 past their prompt: %d", got)
	}
	k.refund(1e12)
	if k.served() != 0 {
		t.Errorf("a refund took the counter below 0: %d", k.served())
	}
}
