package enduser

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/proxy/admission"
	"github.com/sluice-gw/sluice/quota"
	"github.com/sluice-gw/sluice/shm"
)

// clock is a fixed region clock.
type clock struct{ now int64 }

func (c *clock) Now() int64 { return c.now }

var testSeed [16]byte

// noon is a moment on a UTC calendar, for takeovers' period checks.
func noon() *Clock {
	return &Clock{Cal: quota.Calendar{Loc: time.UTC}, Now: time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)}
}

func testTable(t testing.TB, entries int) (*shm.Region, Table) {
	t.Helper()
	r, err := shm.CreateWith(8, 4, shm.Tables{EndUsers: entries})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	testSeed = r.EndUserSeed()
	return r, NewTable(r)
}

func testKey(name string, max int64, lim Limits) *Key {
	k := NewKey(testSeed, name, new(int64), max, lim)
	return &k
}

// admit is one request of end user id of k at c's time: its entry found
// and admitted on its requests per minute and concurrency.
func admit(tab Table, k *Key, id string, c *clock) (Place, bool) {
	e, place := tab.Find(k, id, c.now, noon())
	if e == nil {
		return place, false
	}
	lim := admission.Limits{RequestsPerMinute: k.Limits.RequestsPerMinute, MaxConcurrent: k.Limits.MaxConcurrent}
	a, no := admission.Admit(admission.NoHeaders{}, admission.Key{Name: k.Name, Cell: e, Limits: lim}, 0, c)
	if no != nil {
		return place, false
	}
	a.Release(0, false)
	return place, true
}

// An end user's entry is found again; another end user's, or the same id
// under another key, is another entry; each is held to its own limit.
func TestFindAndLimit(t *testing.T) {
	_, tab := testTable(t, 64)
	c := &clock{now: int64(time.Hour)}
	a := testKey("a", 10, Limits{RequestsPerMinute: 2})
	b := testKey("b", 10, Limits{RequestsPerMinute: 2})
	for i, want := range []bool{true, true, false} {
		if _, ok := admit(tab, a, "alice", c); ok != want {
			t.Fatalf("alice's request %d: admitted %v", i+1, ok)
		}
	}
	for _, who := range []struct {
		k  *Key
		id string
	}{{a, "bob"}, {b, "alice"}, {a, ""}} {
		if place, ok := admit(tab, who.k, who.id, c); !ok || place != Tracked {
			t.Fatalf("%s of key %s: %v %v", who.id, who.k.Name, place, ok)
		}
	}
	e1, _ := tab.Find(a, "alice", c.now, noon())
	e2, _ := tab.Find(a, "alice", c.now, noon())
	if &e1.w[0] != &e2.w[0] {
		t.Fatal("alice found at two entries")
	}
	if n := atomic.LoadInt64(a.Tracked); n != 3 {
		t.Fatalf("key a counts %d entries, want 3 (alice, bob, the anonymous end user)", n)
	}
	// A minute on, alice is admitted again.
	c.now += int64(time.Minute)
	if _, ok := admit(tab, a, "alice", c); !ok {
		t.Fatal("alice refused a minute later")
	}
}

// A million distinct end users of one key, from four workers at once:
// the key never holds more than its max_tracked entries, the end users it
// cannot track share one overflow entry (its limit for them all), an end
// user tracked before the flood keeps her state through it, and another
// key's end users still have entries of their own.
func TestFloodOfDistinctEndUsers(t *testing.T) {
	const ids, workers = 1_000_000, 4
	_, tab := testTable(t, 16384)
	c := &clock{now: int64(time.Hour)}
	lim := Limits{RequestsPerMinute: 1}
	flood := testKey("flood", 1024, lim)
	other := testKey("other", 1024, lim)
	if _, ok := admit(tab, flood, "alice", c); !ok {
		t.Fatal("alice's first request refused")
	}
	var admitted, overflowAdmitted atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < ids; i += workers {
				place, ok := admit(tab, flood, fmt.Sprintf("user-%d", i), c)
				if ok {
					admitted.Add(1)
					if place == Overflow {
						overflowAdmitted.Add(1)
					}
				}
			}
		}()
	}
	wg.Wait()
	// Each tracked end user is admitted once (one request per minute),
	// and the overflow entry once for all the others.
	if n, max := admitted.Load(), int64(1024-1+1); n > max || overflowAdmitted.Load() > 1 {
		t.Fatalf("%d of a million distinct end users admitted (%d on the overflow entry); at most %d may be",
			n, overflowAdmitted.Load(), max)
	}
	if n := admitted.Load(); n < 1024/2 {
		t.Fatalf("only %d end users admitted: the key's share went unused", n)
	}
	if n := atomic.LoadInt64(flood.Tracked); n > 1024 {
		t.Fatalf("the key holds %d entries, over its 1024", n)
	}
	if _, ok := admit(tab, flood, "alice", c); ok {
		t.Fatal("alice's second request in the minute admitted: her entry was lost to the flood")
	}
	for i := range 100 {
		if place, ok := admit(tab, other, fmt.Sprintf("other-%d", i), c); !ok || place != Tracked {
			t.Fatalf("another key's end user %d: %v %v", i, place, ok)
		}
	}
	// A minute on, every entry has recovered: new end users take them over.
	c.now += int64(time.Minute)
	Sweep(tab.r, map[uint32]*int64{flood.Hash: flood.Tracked, other.Hash: other.Tracked}, c.now, noon())
	if n := atomic.LoadInt64(flood.Tracked); n != 0 {
		t.Fatalf("after a minute the sweep counts %d live entries", n)
	}
	if place, ok := admit(tab, flood, "newcomer", c); !ok || place != Tracked {
		t.Fatalf("a new end user after the flood: %v %v", place, ok)
	}
}

// Requests in flight are exact across workers, and a worker's death
// (a new epoch) forgets every place of the one before without a release
// of then taking one of now.
func TestConcurrencyAndEpoch(t *testing.T) {
	r, tab := testTable(t, 64)
	c := &clock{now: int64(time.Hour)}
	k := testKey("k", 10, Limits{MaxConcurrent: 3})
	var inFlight, peak atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5000 {
				e, _ := tab.Find(k, "u", c.now, noon())
				if e.Acquire(0, 3) {
					n := inFlight.Add(1)
					for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
					}
					inFlight.Add(-1)
					e.Release(0)
				}
			}
		}()
	}
	wg.Wait()
	if peak.Load() > 3 {
		t.Fatalf("%d in flight at once, limit 3", peak.Load())
	}
	held := make([]*Entry, 3)
	for i := range held {
		held[i], _ = tab.Find(k, "u", c.now, noon())
		if !held[i].Acquire(0, 3) {
			t.Fatalf("place %d refused", i)
		}
	}
	if e, _ := tab.Find(k, "u", c.now, noon()); e.Acquire(0, 3) {
		t.Fatal("a fourth place taken")
	}
	r.BumpEndUserEpoch() // a worker died holding them
	fresh, _ := tab.Find(k, "u", c.now, noon())
	if !fresh.Acquire(0, 3) {
		t.Fatal("the places of the ended epoch still count")
	}
	for _, e := range held {
		e.Release(0) // of the ended epoch: takes nothing from now's
	}
	for i := 0; i < 2; i++ {
		if e, _ := tab.Find(k, "u", c.now, noon()); !e.Acquire(0, 3) {
			t.Fatalf("place %d of the new epoch refused after old releases", i+2)
		}
	}
	if e, _ := tab.Find(k, "u", c.now, noon()); e.Acquire(0, 3) {
		t.Fatal("old releases gave back places of the new epoch")
	}
}

// An end user's quota: reserved, settled on use, refused past it, kept
// through a flood (an entry with use this period is never taken over),
// new the next period.
func TestEndUserQuota(t *testing.T) {
	_, tab := testTable(t, 8) // one bucket
	cal := quota.Calendar{Loc: time.UTC}
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	lim := Limits{Quota: 100, Per: quota.Day}
	k := testKey("k", 100, lim)
	period := &Clock{Cal: cal, Now: now}
	e, _ := tab.Find(k, "alice", 1, period)
	if no := e.ReserveQuota(60, lim, cal, now); no != nil {
		t.Fatal(no)
	}
	other, _ := tab.Find(k, "alice", 1, period)
	if no := other.ReserveQuota(50, lim, cal, now); no == nil || no.Used != 60 {
		t.Fatalf("60 reserved, 50 more of 100: %+v", no)
	}
	e.SettleQuota(30)
	if no := other.ReserveQuota(50, lim, cal, now); no != nil {
		t.Fatalf("30 used, 50 more: %+v", no)
	}
	other.SettleQuota(50)
	if got := e.QuotaUsed(lim, cal, now); got != 80 {
		t.Fatalf("used %d, want 80", got)
	}
	// Seven others fill the bucket; an eighth has no entry — alice's is
	// not taken over, and the eighth goes to the overflow entry, or none.
	for i := range 7 {
		u, place := tab.Find(k, fmt.Sprintf("u%d", i), 1, period)
		if place != Tracked || u.ReserveQuota(1, lim, cal, now) != nil {
			t.Fatalf("end user %d: %v", i, place)
		}
		u.SettleQuota(1)
	}
	if _, place := tab.Find(k, "eighth", 1, period); place != None {
		t.Fatalf("an eighth end user of a full one-bucket table: %v, want none (no room for the overflow entry either)", place)
	}
	if e2, _ := tab.Find(k, "alice", 1, period); e2.QuotaUsed(lim, cal, now) != 80 {
		t.Fatal("alice's use was lost")
	}
	tomorrow := now.Add(24 * time.Hour)
	if e3, _ := tab.Find(k, "alice", 1, &Clock{Cal: cal, Now: tomorrow}); e3.ReserveQuota(100, lim, cal, tomorrow) != nil {
		t.Fatal("the next day's quota refused")
	}
}

// Sweep frees the entries of keys it is not given once nothing is in
// flight on them.
func TestSweepFreesRemovedKeys(t *testing.T) {
	r, tab := testTable(t, 64)
	k := testKey("gone", 10, Limits{MaxConcurrent: 1})
	e, _ := tab.Find(k, "u", 1, noon())
	e.Acquire(0, 1)
	if n := Sweep(r, map[uint32]*int64{}, 1, noon()); n != 0 {
		t.Fatalf("freed %d entries with a request in flight", n)
	}
	e.Release(0)
	if n := Sweep(r, map[uint32]*int64{}, 1, noon()); n != 1 {
		t.Fatalf("freed %d entries, want 1", n)
	}
}

func BenchmarkFind(b *testing.B) {
	clk := noon()
	_, tab := testTable(b, 1<<16)
	k := testKey("k", 1<<15, Limits{RequestsPerMinute: 1000})
	for b.Loop() {
		tab.Find(k, "a-typical-end-user-id-0042", 1, clk)
	}
}

// Owners spread over every bucket: a table of 64 takes 48 end users whose
// state counts (an owner of 63 bits used half the buckets, and took 32).
func TestEveryBucketUsed(t *testing.T) {
	_, tab := testTable(t, 64)
	c := &clock{now: int64(time.Hour)}
	k := testKey("k", 64, Limits{RequestsPerMinute: 1})
	tracked := 0
	for i := range 48 {
		if place, ok := admit(tab, k, fmt.Sprintf("u%d", i), c); ok && place == Tracked {
			tracked++
		}
	}
	if tracked < 36 { // by chance a bucket overflows by a few; half the buckets is 32 at most
		t.Fatalf("%d of 48 end users tracked in a table of 64", tracked)
	}
}

// Tokens settled on an end user of a key without a quota count nothing:
// the entry is reused once its limiters recover (it used to stay live
// for good, and max_tracked became a lifetime's count of end users).
func TestNoQuotaEntriesReused(t *testing.T) {
	r, tab := testTable(t, 64)
	c := &clock{now: int64(time.Hour)}
	k := testKey("k", 2, Limits{RequestsPerMinute: 10})
	for _, u := range []string{"a", "b"} {
		e, place := tab.Find(k, u, c.now, noon())
		if place != Tracked {
			t.Fatalf("%s: %v", u, place)
		}
		e.SettleQuota(100) // what the pipeline never does without a quota; must not matter either
	}
	c.now += int64(time.Hour)
	Sweep(r, map[uint32]*int64{k.Hash: k.Tracked}, c.now, noon())
	if n := atomic.LoadInt64(k.Tracked); n != 0 {
		t.Fatalf("an hour on, %d live entries", n)
	}
	if _, place := tab.Find(k, "c", c.now, noon()); place != Tracked {
		t.Fatalf("a third end user: %v", place)
	}
}

// A key whose quota counts months never takes over an entry of a key
// whose quota counts weeks with use this week (their period ids do not
// compare), and an entry freed by Sweep starts clean.
func TestTakeoverAcrossPeriodsAndFreedState(t *testing.T) {
	r, tab := testTable(t, 8) // one bucket
	clk := noon()
	weekly := testKey("weekly", 8, Limits{Quota: 1000, Per: quota.Week})
	monthly := testKey("monthly", 8, Limits{Quota: 1000, Per: quota.Month})
	for i := range 8 {
		e, place := tab.Find(weekly, fmt.Sprintf("w%d", i), 1, clk)
		if place != Tracked || e.ReserveQuota(900, weekly.Limits, clk.Cal, clk.Now) != nil {
			t.Fatalf("weekly end user %d: %v", i, place)
		}
		e.SettleQuota(900)
	}
	if _, place := tab.Find(monthly, "m", 1, clk); place == Tracked {
		t.Fatal("a monthly key's end user took over a weekly end user's entry with use this week")
	}
	// The weekly key removed: Sweep frees its entries, their state cleared.
	Sweep(r, map[uint32]*int64{monthly.Hash: monthly.Tracked}, 1, clk)
	e, place := tab.Find(monthly, "m", 1, clk)
	if place != Tracked || e.QuotaUsed(monthly.Limits, clk.Cal, clk.Now) != 0 {
		t.Fatalf("on a freed entry: %v, used %d", place, e.QuotaUsed(monthly.Limits, clk.Cal, clk.Now))
	}
	if no := e.ReserveQuota(1000, monthly.Limits, clk.Cal, clk.Now); no != nil {
		t.Fatalf("a freed entry's old use counts: %+v", no)
	}
}
