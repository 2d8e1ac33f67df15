package fleetspend

import (
	"maps"
	"strconv"
	"strings"
	"sync"
	"testing"

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
	if _, err := Exchange(st, path, "a", fixed(figures(id, 100, 1000)), ids); err != nil {
		t.Fatal(err)
	}
	res, err := Exchange(st, path, "b", fixed(figures(id, 30, 300)), ids)
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
	res, _ = Exchange(st, path, "a", func(prev *Figures) Figures { before = prev; return figures(id, 150, 1000) }, ids)
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
	res, err := Exchange(st, path, "a", fixed(figures(id, 5, 0)), ids)
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
	if _, err := Exchange(st2, path, "a", fixed(figures(id, 5, 0)), ids); err == nil || !strings.Contains(err.Error(), "CAS conflicts") {
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
			Exchange(st, path, "other"+strconv.Itoa(*n), fixed(figures(id, 10, 0)), ids)
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

// The stated bound, simulated: n replicas each admit a request of r
// tokens a tick while their own use and the others' (as of their last
// exchange) leave room under the limit, and exchange every k ticks, at
// staggered moments. What the fleet spends passes the limit by at most
// n·r·k — the fleet's rate × the exchange period — and once exchanges
// have caught up every replica refuses.
func TestOvershootBound(t *testing.T) {
	for _, tc := range []struct{ n, k int }{{2, 1}, {2, 5}, {4, 5}, {8, 3}} {
		const limit, r = 10_000, 7
		st := newMemStore()
		path := "sluice/spend/gw/k"
		own := make([]int64, tc.n)
		others := make([]int64, tc.n)
		var spent int64
		for tick := 0; tick < 3*limit/r; tick++ {
			for i := range tc.n {
				if own[i]+others[i]+r <= limit {
					own[i] += r
					spent += r
				}
				if (tick+i)%tc.k == 0 {
					res, err := Exchange(st, path, "r"+strconv.Itoa(i), fixed(figures(id, own[i], 0)), ids)
					if err != nil {
						t.Fatal(err)
					}
					others[i] = res.Others.Used(Tokens, quota.Day, id)
				}
			}
		}
		if bound := int64(tc.n * r * tc.k); spent > limit+bound {
			t.Errorf("%d replicas, exchange every %d: spent %d, over the limit %d by more than %d", tc.n, tc.k, spent, limit, bound)
		}
		if spent < limit-int64(r) {
			t.Errorf("%d replicas: spent only %d of %d", tc.n, spent, limit)
		}
	}
}

// fixed is an own func that ignores the item before.
func fixed(f Figures) func(*Figures) Figures { return func(*Figures) Figures { return f } }
