package queue

import (
	"context"
	"math"
	"sync/atomic"
	"testing"
	"time"

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
func fairRig(t *testing.T, slots int64, keys ...string) (*queueRig, map[string]Key) {
	t.Helper()
	r := newQueueRig(t, slots)
	out := map[string]Key{}
	for _, k := range keys {
		c, err := r.region.Alloc(shm.KeyCell(k))
		if err != nil {
			t.Fatal(err)
		}
		out[k] = Key{Name: k, Cell: c, Weight: 1}
	}
	return r, out
}

// queueAs is queueIn for a request of key charged tokens.
func (r *queueRig) queueAs(col int, key Key, tokens int64) (<-chan taken, func()) {
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
	atomic.StoreInt64(heavy.Cell.Scalar(shm.KeyServedScalar), units(5000))
	if c, _ := r.takeAs(0, heavy, 1000); (<-c).b == nil { // the one slot: heavy at 6000
		t.Fatal("no slot while nobody waits")
	}
	h1, _ := r.queueAs(0, heavy, 1000)
	h2, _ := r.queueAs(0, heavy, 1000)
	l1, _ := r.queueAs(1, light, 1000) // younger than heavy's, in the other worker
	if got := light.served(); got != units(6000) {
		t.Fatalf("light's finish tag is %d units, want %d: its request starts at the virtual time (heavy's start, 5000) and costs 1000",
			got, units(6000))
	}
	r.woken(0)
	r.woken(1)

	// light's request starts at 5000, heavy's waiters at 6000 and 7000:
	// light goes first.
	r.release(0, r.be[0])
	if !r.woken(1) || r.woken(0) {
		t.Fatal("the freed slot did not wake (only) the worker of the least served key")
	}
	r.lq[0].dispatch() // its best waiter is heavy's: it hands over
	if r.bcell.Total() != 0 {
		t.Fatal("worker 0 gave the slot to heavy's waiter while light, served less, waits in worker 1")
	}
	r.lq[1].dispatch()
	r.served(l1, "light, the least served key")
	notYet(t, h1, "heavy's first waiter")

	// heavy's first waiter (6000) next.
	r.release(1, r.be[1])
	r.lq[1].dispatch()
	r.lq[0].dispatch()
	r.served(h1, "heavy's first waiter")

	// light waits again, younger than heavy's second: it starts at 6000
	// (its finish tag, and the virtual time), heavy's second at 7000.
	l2, _ := r.queueAs(1, light, 1000)
	r.release(0, r.be[0])
	r.lq[0].dispatch()
	r.lq[1].dispatch()
	r.served(l2, "light's second request")
	notYet(t, h2, "heavy's second waiter")
	r.release(1, r.be[1])
	r.lq[1].dispatch()
	r.lq[0].dispatch()
	r.served(h2, "heavy's second waiter")
	if got := heavy.served(); got != units(8000) {
		t.Errorf("heavy's finish tag is %d units after 3 requests of 1000 from 5000, want %d", got, units(8000))
	}
}

// A waiting request of a higher tier goes before every waiter of a lower
// one, however little those keys were served.
func TestFairQueuePriorityFirst(t *testing.T) {
	r, k := fairRig(t, 1, "low", "high")
	low, high := k["low"], k["high"]
	high.Priority = 1
	atomic.StoreInt64(high.Cell.Scalar(shm.KeyServedScalar), serviceUnits(1e9, 1)) // served far more
	r.slotNow(0)
	l1, _ := r.queueAs(0, low, 10)
	l2, _ := r.queueAs(1, low, 10)
	h1, _ := r.queueAs(1, high, 10)
	r.woken(0)
	r.woken(1)
	r.release(0, r.be[0])
	if !r.woken(1) || r.woken(0) {
		t.Fatal("the freed slot did not wake (only) the worker of the higher tier's waiter")
	}
	r.lq[0].dispatch()
	r.lq[1].dispatch()
	r.served(h1, "the priority-1 request")
	notYet(t, l1, "the older priority-0 request")
	notYet(t, l2, "priority-0 request")
}

// A key that starts waiting brings no credit: its request starts at the
// model's virtual time, so a key idle while another was served does not
// take every slot until it catches up; its next request starts where its
// last ends.
func TestFairQueueLiftsAnIdleKey(t *testing.T) {
	r, k := fairRig(t, 1, "busy", "idle")
	busy, idle := k["busy"], k["idle"]
	units := func(tokens int64) int64 { return serviceUnits(tokens, 1) }
	for range 5 { // busy is served alone: 5 × 100 tokens, then one more
		c, _ := r.takeAs(0, busy, 100)
		if got := <-c; got.b == nil {
			t.Fatal("no slot while nobody waits")
		}
		r.release(0, r.be[0])
	}
	if c, _ := r.takeAs(0, busy, 100); (<-c).b == nil {
		t.Fatal("no slot while nobody waits")
	}
	i1, _ := r.queueAs(1, idle, 100)
	if got := idle.served(); got != units(600) {
		t.Fatalf("the idle key's finish tag is %d on waiting, want %d: a start at the virtual time (500) and a cost of 100", got, units(600))
	}
	i2, _ := r.queueAs(1, idle, 100)
	if got := idle.served(); got != units(700) {
		t.Fatalf("the idle key's second request moved its finish tag to %d, want %d", got, units(700))
	}
	if n := idle.Cell.MarkCount(); n != 2 {
		t.Fatalf("the key's waiting count is %d, want 2", n)
	}
	r.release(0, r.be[0])
	r.lq[1].dispatch()
	r.served(i1, "the first waiter")
	r.release(0, r.be[0])
	r.lq[1].dispatch()
	r.served(i2, "the second waiter")
	if n := idle.Cell.MarkCount(); n != 0 {
		t.Fatalf("the key's waiting count is %d with nobody waiting", n)
	}
	// A request that leaves before its slot gives its cost back (the slot
	// is i2's still).
	_, leave := r.queueAs(1, idle, 100)
	leave()
	r.await("the request to leave", func() bool { return r.qcell.Total() == 0 }, nil)
	r.running.Wait()
	if got := idle.served(); got != units(700) {
		t.Errorf("after a request left the queue the finish tag is %d, want %d (its cost refunded)", got, units(700))
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
	k := Key{Name: "k", Cell: c, Weight: 2}
	k.Claim(100, 0)
	k.Settle(100, 100, 300)
	if got, want := k.served(), serviceUnits(300, 2); got != want {
		t.Errorf("after settling 300 used against 100 charged: %d, want %d", got, want)
	}
	if got := k.ExpectedRest(); got != 200 {
		t.Errorf("the key's usual rest after one request that used 200 past its prompt: %d, want 200", got)
	}
	k.Settle(10, 100, 20)
	if got, want := k.served(), serviceUnits(300, 2)-serviceUnits(80, 2); got != want {
		t.Errorf("after a refund: %d, want %d", got, want)
	}
	for range 100 {
		k.learnRest(400)
	}
	if got := k.ExpectedRest(); got < 390 || got > 400 {
		t.Errorf("the usual rest after 100 requests that used 400 past their prompt: %d", got)
	}
	k.Refund(1e12)
	if k.served() != 0 {
		t.Errorf("a refund took the counter below 0: %d", k.served())
	}
}

// With every slot full, a slot freed on a backend goes to a waiter close
// behind the fair order's head that would have chosen that backend (its
// prefix is cached there), not to the head, whose own backend is full; a
// waiter past the locality window does not jump the head.
func TestQueuePrefersWaiterOfTheFreedBackend(t *testing.T) {
	r, a, c, take := localityRig(t)
	r.lim.Max = 100
	queue := func(cands []*testBackend) <-chan *testBackend {
		n := r.qcell.Total()
		ch := take(cands)
		r.await("a request to queue", func() bool { return r.qcell.Total() == n+1 }, nil)
		return ch
	}
	for _, b := range []*testBackend{a, c} { // both slots taken
		if got := <-take([]*testBackend{b}); got != b {
			t.Fatal("no slot while nobody waits")
		}
	}
	wantA := queue([]*testBackend{a, c}) // the head: would rather have a
	wantC := queue([]*testBackend{c, a}) // right behind it: would rather have c
	r.release(0, c)
	r.lq[0].dispatch()
	select {
	case got := <-wantC:
		if got != c {
			t.Fatalf("the waiter that prefers c got %v", got)
		}
	case got := <-wantA:
		t.Fatalf("the head got %s, its second choice, while a waiter that prefers it waits", got.url)
	case <-time.After(30 * time.Second):
		t.Fatal("nobody got the freed slot")
	}
	r.release(0, a)
	r.lq[0].dispatch()
	if got := <-wantA; got != a {
		t.Fatalf("the head got %v, want a", got)
	}

	// Now the waiter that prefers c is past the window, behind 17 others:
	// the head takes c.
	head := queue([]*testBackend{a, c})
	for range localityWindow + 1 {
		queue([]*testBackend{a})
	}
	far := queue([]*testBackend{c, a})
	r.release(0, c) // the slot wantC took
	r.lq[0].dispatch()
	select {
	case got := <-head:
		if got != c {
			t.Fatalf("the head got %v, want c", got)
		}
	case <-far:
		t.Fatal("a waiter past the locality window jumped the head")
	case <-time.After(30 * time.Second):
		t.Fatal("nobody got the freed slot")
	}
}

// A pinned waiter (a stored response's holder) keeps its key's tier and
// start tag: it is served no earlier than the fair order would serve it,
// whichever worker the others wait in (issue 30, item 1: a priority-0
// key's follow-ups were served before a priority-3 key that had queued
// first). It is served in its turn, so its grant moves the virtual time
// to its start tag as any other's does.
func TestPinnedWaiterKeepsItsTurn(t *testing.T) {
	r, k := fairRig(t, 1, "low", "high", "heavy", "light")
	low, high, heavy, light := k["low"], k["high"], k["heavy"], k["light"]
	high.Priority = 3
	atomic.StoreInt64(high.Cell.Scalar(shm.KeyServedScalar), serviceUnits(1e6, 1)) // served far more: the tier decides
	pinnedAs := func(col int, key Key, tokens int64) <-chan taken {
		out := make(chan taken, 1)
		depth := r.qcell.Total()
		r.running.Add(1)
		ctx, cancel := context.WithCancel(context.Background())
		r.leaves = append(r.leaves, cancel)
		go func() {
			defer r.running.Done()
			b, e := r.takeSlot(col, ctx, []*testBackend{r.be[col]}, true, key, tokens)
			out <- taken{b, e}
		}()
		r.await("the pinned request to wait", func() bool { return r.qcell.Total() == depth+1 }, out)
		return out
	}
	release := func(col int) {
		r.release(col, r.be[col])
		r.lq[0].dispatch()
		r.lq[1].dispatch()
	}

	// Tiers: the priority-3 key queued first, in the other worker; the
	// priority-0 key's follow-up arrives later and finds the slot free.
	r.slotNow(0)
	h1, _ := r.queueAs(1, high, 10)
	p1 := pinnedAs(0, low, 10)
	release(0) // the slot's one release
	r.served(h1, "the priority-3 request, queued first")
	notYet(t, p1, "the priority-0 follow-up")
	release(1)
	r.served(p1, "the priority-0 follow-up, after it")

	// Within a tier: a key served more waits pinned behind one served less
	// that queued later; the follow-up's grant moves the virtual time on.
	units := func(tokens int64) int64 { return serviceUnits(tokens, 1) }
	virtual := atomic.LoadInt64(r.qcell.Scalar(shm.QueueVirtualScalar))
	heavyStart := virtual + units(1e5)
	atomic.StoreInt64(heavy.Cell.Scalar(shm.KeyServedScalar), heavyStart)
	p2 := pinnedAs(0, heavy, 100) // starts at heavy's finish tag, 1e5 tokens past the virtual time
	l1, _ := r.queueAs(1, light, 100)
	release(0)
	r.served(l1, "the less served key's request")
	notYet(t, p2, "the more served key's follow-up")
	release(1)
	r.served(p2, "the more served key's follow-up")
	if v := atomic.LoadInt64(r.qcell.Scalar(shm.QueueVirtualScalar)); v != heavyStart {
		t.Errorf("virtual time %d after the follow-up's grant, want its start tag %d", v, heavyStart)
	}
	r.release(0, r.be[0])
	if d := r.qcell.Total(); d != 0 {
		t.Fatalf("queue depth %d after everyone was served", d)
	}
}

// A head whose own backend is out of rotation is not passed over for
// locality: it takes the free slot.
func TestLocalityNotForAHeadWhoseBackendIsDown(t *testing.T) {
	r, a, c, take := localityRig(t)
	if got := <-take([]*testBackend{c}); got != c { // c's one slot taken
		t.Fatal("no slot while nobody waits")
	}
	a.up.Store(false) // the head's first choice is out of rotation
	head := take([]*testBackend{a, c})
	r.await("the head to wait", func() bool { return r.qcell.Total() == 1 }, nil)
	other := take([]*testBackend{c, a})
	r.await("the other to wait", func() bool { return r.qcell.Total() == 2 }, nil)
	r.release(0, c)
	r.lq[0].dispatch()
	select {
	case got := <-head:
		if got != c {
			t.Fatalf("the head got %v", got)
		}
	case <-other:
		t.Fatal("the head was passed over for locality while its own backend is out of rotation")
	case <-time.After(30 * time.Second):
		t.Fatal("nobody got the freed slot")
	}
}

// localityRig is a fairRig of one key, "k", whose model has two backends
// of one slot, a (the rig's) and c, and take, which asks worker 0 for a
// slot on cands for a request of k costing 10 tokens and delivers what it
// got.
func localityRig(t *testing.T) (r *queueRig, a, c *testBackend, take func(cands []*testBackend) <-chan *testBackend) {
	t.Helper()
	r, keys := fairRig(t, 1, "k")
	ccell, err := r.region.Alloc(shm.BackendCell("m", "http://c"))
	if err != nil {
		t.Fatal(err)
	}
	a, c = r.be[0], &testBackend{url: "http://c", cell: ccell, slots: 1}
	c.up.Store(true)
	take = func(cands []*testBackend) <-chan *testBackend {
		out := make(chan *testBackend, 1)
		r.running.Add(1)
		ctx, cancel := context.WithCancel(context.Background())
		r.leaves = append(r.leaves, cancel)
		go func() {
			defer r.running.Done()
			b, _ := r.takeSlot(0, ctx, cands, false, keys["k"], 10)
			out <- b
		}()
		return out
	}
	return r, a, c, take
}
