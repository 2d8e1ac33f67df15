package fleetspend

import (
	"encoding/json"
	"maps"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/quota"
)

// memStore is a Store with Nomad's CAS rules, and a hook that writes
// between a replica's read and its write (another replica's exchange).
type memStore struct {
	mu     sync.Mutex
	vars   map[string]map[string]string
	index  map[string]uint64
	next   uint64
	before func(path string) // called, unlocked, before each Write
}

func newMemStore() *memStore {
	return &memStore{vars: map[string]map[string]string{}, index: map[string]uint64{}, next: 100}
}

func (m *memStore) Read(path string) (map[string]string, uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.vars[path]), m.index[path], nil
}

func (m *memStore) Write(path string, items map[string]string, cas uint64) (bool, map[string]string, uint64, error) {
	if m.before != nil {
		m.before(path)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.index[path] != cas {
		return false, maps.Clone(m.vars[path]), m.index[path], nil
	}
	m.next++
	m.vars[path], m.index[path] = maps.Clone(items), m.next
	return true, nil, 0, nil
}

func figures(id, tokens, pico int64) Figures {
	var f Figures
	for p := quota.Day; p < quota.NumPeriods; p++ {
		f[Tokens][p] = [2]int64{id, tokens}
		f[Pico][p] = [2]int64{id, pico}
	}
	return f
}

var ids = [quota.NumPeriods]int64{id, id, id}

const id = 20000

// Two replicas exchanging learn each other's figures; a third's item of
// an ended period is dropped, an unreadable one kept but not counted.
func TestExchange(t *testing.T) {
	st := newMemStore()
	path := Path("sluice/spend/gw", "team-a")
	st.vars[path] = map[string]string{"old": Encode(figures(id-40, 500, 5)), "junk": "{not figures", "c": Encode(figures(id, 1, 2))}
	st.index[path] = 7
	if _, err := Exchange(st, path, "a", fixed(figures(id, 100, 1000)), ids, t0); err != nil {
		t.Fatal(err)
	}
	res, err := Exchange(st, path, "b", fixed(figures(id, 30, 300)), ids, t0)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Others.Used(Tokens, quota.Month, id); got != 101 {
		t.Errorf("b sees others' tokens %d, want 101 (a's and c's)", got)
	}
	if got := res.Others.Used(Pico, quota.Day, id); got != 1002 {
		t.Errorf("b sees others' pico %d, want 1002", got)
	}
	if res.Ignored != 1 {
		t.Errorf("ignored %d, want the junk item", res.Ignored)
	}
	items, _, _ := st.Read(path)
	if _, ok := items["old"]; ok {
		t.Error("an item whose periods have all ended was kept")
	}
	if items["junk"] != "{not figures" {
		t.Error("an unreadable item was dropped: it is someone's")
	}
	var before *Figures
	res, _ = Exchange(st, path, "a", func(prev *Figures) Item { before = prev; return Item{Figures: figures(id, 150, 1000)} }, ids, t0)
	if before == nil || before.Used(Tokens, quota.Day, id) != 100 {
		t.Errorf("a's own item before: %v, want its 100 tokens", before)
	}
	if got := res.Others.Used(Tokens, quota.Day, id); got != 31 {
		t.Errorf("a sees %d, want 31", got)
	}
}

// A write that meets another replica's (CAS conflict) merges into what
// the conflict returned and tries again: the other's item is not lost.
func TestExchangeConflict(t *testing.T) {
	st := newMemStore()
	path := "sluice/spend/gw/k"
	n := 0
	st.before = otherReplicas(st, &n) // three other replicas land between this one's read and write
	res, err := Exchange(st, path, "a", fixed(figures(id, 5, 0)), ids, t0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Conflicts != 3 {
		t.Errorf("conflicts %d, want 3", res.Conflicts)
	}
	items, _, _ := st.Read(path)
	for _, name := range []string{"a", "other1", "other2", "other3"} {
		if _, ok := items[name]; !ok {
			t.Errorf("%s's item was lost to the conflict: %v", name, items)
		}
	}
	if got := res.Others.Used(Tokens, quota.Day, id); got != 30 {
		t.Errorf("others %d, want 30", got)
	}

	// A store that always changes first: bounded, an error.
	st2 := newMemStore()
	st2.before = func(p string) { st2.mu.Lock(); st2.next++; st2.index[p] = st2.next; st2.mu.Unlock() }
	if _, err := Exchange(st2, path, "a", fixed(figures(id, 5, 0)), ids, t0); err == nil || !strings.Contains(err.Error(), "CAS conflicts") {
		t.Fatalf("endless conflicts: %v", err)
	}
}

// otherReplicas is a hook in which, three times, another replica
// exchanges first.
func otherReplicas(st *memStore, n *int) func(string) {
	var f func(string)
	f = func(path string) {
		if *n < 3 {
			*n++
			st.before = nil
			Exchange(st, path, "other"+strconv.Itoa(*n), fixed(figures(id, 10, 0)), ids, t0)
			st.before = f
		}
	}
	return f
}

// Decode refuses what is not figures: too long, negative, not JSON.
func TestDecode(t *testing.T) {
	for _, bad := range []string{"", "[]x", strings.Repeat(" ", MaxItemBytes+1) + "[]", `[[[1,-5],[1,0],[1,0]],[[1,0],[1,0],[1,0]]]`} {
		if _, err := Decode(bad); err == nil {
			t.Errorf("Decode(%.30q) accepted", bad)
		}
	}
	f := figures(id, 3, 4)
	if g, err := Decode(Encode(f)); err != nil || g != f {
		t.Fatalf("round trip: %v, %v", g, err)
	}
}

// Path uses the key's name where Nomad allows it, a hash otherwise.
func TestPath(t *testing.T) {
	if p := Path("sluice/spend/gw", "team-a"); p != "sluice/spend/gw/team-a" {
		t.Error(p)
	}
	for _, odd := range []string{"team a", "..", "a/b", strings.Repeat("k", 120), "ключ"} {
		p := Path("sluice/spend/gw", odd)
		if !strings.HasPrefix(p, "sluice/spend/gw/sha256-") || len(p) > maxPath {
			t.Errorf("Path(%q) = %q", odd, p)
		}
	}
}

// The stated bound, simulated: n replicas each start a request of r
// tokens a tick while their own use and reservations and the others' (as
// of their last exchange) leave room under the limit; a request settles
// l ticks after it starts (l = 0: at once); each replica exchanges every
// k ticks, at staggered moments, publishing what it has in flight. What
// the fleet spends passes the limit by at most n·r·k — the fleet's rate ×
// the exchange period — however long the requests last; and without the
// reservations published, long requests pass it by far more (the test
// can fail).
func TestOvershootBound(t *testing.T) {
	for _, tc := range []struct{ n, k, l int }{{2, 1, 0}, {2, 5, 0}, {4, 5, 0}, {8, 3, 0}, {4, 5, 40}, {8, 3, 100}} {
		if spent, bound := overshoot(t, tc.n, tc.k, tc.l, true); spent > limitSim+bound {
			t.Errorf("%+v: spent %d, over the limit %d by more than %d", tc, spent, limitSim, bound)
		} else if spent < limitSim-rSim {
			t.Errorf("%+v: spent only %d of %d", tc, spent, limitSim)
		}
		if tc.l > 0 {
			if spent, bound := overshoot(t, tc.n, tc.k, tc.l, false); spent <= limitSim+bound {
				t.Errorf("%+v, reservations not published: spent %d, within the bound: the simulation does not tell them apart", tc, spent)
			}
		}
	}
}

const limitSim, rSim = 10_000, 7

// overshoot runs the simulation of TestOvershootBound and returns what
// the fleet spent and the bound.
func overshoot(t *testing.T, n, k, l int, publish bool) (spent, bound int64) {
	st := newMemStore()
	path := "sluice/spend/gw/k"
	used, inFlight, others := make([]int64, n), make([]int64, n), make([]int64, n)
	ends := make([][]int, n) // each replica's requests' settle ticks
	for tick := 0; tick < 3*limitSim/rSim+l; tick++ {
		now := t0.Add(time.Duration(tick) * time.Second)
		for i := range n {
			for len(ends[i]) > 0 && ends[i][0] <= tick {
				ends[i] = ends[i][1:]
				used[i] += rSim
				inFlight[i] -= rSim
			}
			if used[i]+inFlight[i]+others[i]+rSim <= limitSim {
				inFlight[i] += rSim
				spent += rSim
				ends[i] = append(ends[i], tick+l)
			}
			if (tick+i)%k == 0 {
				it := Item{Figures: figures(id, used[i], 0), At: now.Unix(), Hold: int64(3 * k)}
				if publish {
					it.Reserved[Tokens] = inFlight[i]
				}
				res, err := Exchange(st, path, "r"+strconv.Itoa(i), func(*Figures) Item { return it }, ids, now)
				if err != nil {
					t.Fatal(err)
				}
				others[i] = res.Others.Used(Tokens, quota.Day, id) + res.Reserved[Tokens]
			}
		}
	}
	return spent, int64(n * rSim * k)
}

// Reservations: an item's reservation counts for the others while its
// hold lasts, not before it was written nor after; an item of a replica
// before reservations reads as none reserved, and an item with one reads
// as its figures to such a replica (Go drops a fixed array's extra
// elements).
func TestReservations(t *testing.T) {
	st := newMemStore()
	path := "sluice/spend/gw/k"
	item := Item{Figures: figures(id, 100, 0), Reserved: [NumKinds]int64{40, 9}, At: t0.Unix(), Hold: 15}
	if _, err := Exchange(st, path, "a", func(*Figures) Item { return item }, ids, t0); err != nil {
		t.Fatal(err)
	}
	st.vars[path]["old"] = Encode(figures(id, 5, 0))
	// A replica with nothing settled but requests in flight: its item is
	// kept (and counted) while its hold lasts, dropped after.
	st.vars[path]["c"] = EncodeItem(Item{Reserved: [NumKinds]int64{5, 0}, At: t0.Unix(), Hold: 15})
	for _, c := range []struct {
		at   time.Duration
		want int64
	}{{0, 45}, {14 * time.Second, 45}, {-time.Second, 45}, {15 * time.Second, 0}, {-16 * time.Second, 0}} {
		res, err := Exchange(st, path, "b", fixed(figures(id, 1, 0)), ids, t0.Add(c.at))
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Reserved[Tokens]; got != c.want || res.Others.Used(Tokens, quota.Day, id) != 105 {
			t.Errorf("at +%v: reserved %d (want %d), used %d", c.at, got, c.want, res.Others.Used(Tokens, quota.Day, id))
		}
		if c.want > 0 && res.Reserved[Pico] != 9 {
			t.Errorf("at +%v: pico reserved %d", c.at, res.Reserved[Pico])
		}
		if _, kept := st.vars[path]["c"]; kept != (c.want > 0) {
			t.Errorf("at +%v: the item of c, with nothing settled, kept %v", c.at, kept)
		}
	}
	var asBefore Figures // what a replica of the version before reads
	if err := json.Unmarshal([]byte(EncodeItem(item)), &asBefore); err != nil || asBefore != item.Figures {
		t.Fatalf("an item with a reservation, read as figures alone: %v %v", asBefore, err)
	}
	if got, err := DecodeItem(EncodeItem(item)); err != nil || got != item {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	for _, bad := range []string{`[[[1,0],[1,0],[1,0]]]`, `[[[1,0],[1,0],[1,0]],[[1,0],[1,0],[1,0]],[-1,0,0,5]]`, `[[[1,0],[1,0],[1,0]],[[1,0],[1,0],[1,0]],"x"]`} {
		if _, err := DecodeItem(bad); err == nil {
			t.Errorf("DecodeItem(%s) accepted", bad)
		}
	}
}

// fixed is an own func that ignores the item before.
func fixed(f Figures) func(*Figures) Item { return func(*Figures) Item { return Item{Figures: f} } }

// t0 is the exchanges' clock in the tests.
var t0 = time.Unix(1_000_000_000, 0)
