package enduser

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/quota"
	"github.com/sluice-gw/sluice/shm"
)

// spend reserves and settles used tokens of end user id's quota.
func spend(t *testing.T, tab Table, k *Key, id string, used int64, clk *Clock) {
	t.Helper()
	e, place := tab.Find(k, id, int64(time.Hour), clk)
	if place != Tracked {
		t.Fatalf("%s: %v", id, place)
	}
	if no := e.ReserveQuota(used, k.Limits, clk.Cal, clk.Now); no != nil {
		t.Fatalf("%s: refused %+v", id, no)
	}
	e.SettleQuota(used)
}

// What end users used of their quotas this period survives a new region:
// the state file written from the old table and read into a fresh one
// (its seed taken back) finds each end user's use under the same id and
// key; an end user of yesterday, one without a quota and an idle one are
// not saved; a smaller table loses what finds no room and says so.
func TestStateRoundTrip(t *testing.T) {
	r, tab := testTable(t, 64)
	clk := noon()
	lim := Limits{Quota: 1000, Per: quota.Day}
	a := testKey("a", 100, lim)
	b := testKey("b", 100, lim)
	free := testKey("free", 100, Limits{RequestsPerMinute: 5})
	spend(t, tab, a, "alice", 300, clk)
	spend(t, tab, a, "bob", 40, clk)
	spend(t, tab, b, "alice", 7, clk)
	tab.Find(a, "idle", int64(time.Hour), clk)
	tab.Find(free, "carol", int64(time.Hour), clk)
	yesterday := &Clock{Cal: clk.Cal, Now: clk.Now.Add(-24 * time.Hour)}
	spend(t, tab, a, "yesterday", 50, yesterday)

	saved := Save(r, clk)
	if len(saved) != 3 {
		t.Fatalf("saved %d entries, want alice, bob and b's alice: %+v", len(saved), saved)
	}
	var buf bytes.Buffer
	if err := WriteState(&buf, r.EndUserSeed(), saved); err != nil {
		t.Fatal(err)
	}
	// A torn last line and a corrupt one cost only themselves.
	text := buf.String()
	damaged := "0badc0de 1 2 3 4 5\n" + text + text[:len(text)-5]
	seed, hasSeed, got, bad, err := ReadState(strings.NewReader(damaged))
	if err != nil || !hasSeed || bad != 2 || len(got) != 5 || seed != r.EndUserSeed() {
		t.Fatalf("read: seed %v, %d entries, %d bad, %v", hasSeed, len(got), bad, err)
	}

	fresh, err := shm.CreateWith(8, 4, shm.Tables{EndUsers: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if !fresh.SetEndUserSeed(seed) || fresh.EndUserSeed() != seed {
		t.Fatal("the seed was not taken back")
	}
	restored, lost := Restore(fresh, got, int64(time.Minute))
	if restored != 3 || lost != 0 {
		t.Fatalf("restored %d, lost %d; want 3, 0 (the duplicate lines placed once)", restored, lost)
	}
	ft := NewTable(fresh)
	a2 := NewKey(seed, "a", new(int64), 100, lim)
	b2 := NewKey(seed, "b", new(int64), 100, lim)
	for _, c := range []struct {
		k    *Key
		id   string
		want int64
	}{{&a2, "alice", 300}, {&a2, "bob", 40}, {&b2, "alice", 7}, {&a2, "yesterday", 0}, {&a2, "idle", 0}} {
		e, _ := ft.Find(c.k, c.id, int64(2*time.Minute), clk)
		if used := e.QuotaUsed(lim, clk.Cal, clk.Now); used != c.want {
			t.Errorf("%s of %s: %d used after the restore, want %d", c.id, c.k.Name, used, c.want)
		}
	}
	// alice's quota holds across the restore: 700 left, not 1000.
	e, _ := ft.Find(&a2, "alice", int64(2*time.Minute), clk)
	if no := e.ReserveQuota(701, lim, clk.Cal, clk.Now); no == nil {
		t.Fatal("alice reserved past her quota after the restore")
	}
	// Restored entries are live: Sweep counts them against max_tracked.
	counts := map[uint32]*int64{a2.Hash: new(int64), b2.Hash: new(int64)}
	Sweep(fresh, counts, int64(2*time.Minute), clk)
	if *counts[a2.Hash] != 2 || *counts[b2.Hash] != 1 {
		t.Fatalf("tracked after the restore: a %d, b %d", *counts[a2.Hash], *counts[b2.Hash])
	}

	// Without the seed, the owners are no one's: another region's seed
	// finds nothing of alice's.
	other, _ := shm.CreateWith(8, 4, shm.Tables{EndUsers: 64})
	defer other.Close()
	Restore(other, got, 0)
	a3 := NewKey(other.EndUserSeed(), "a", new(int64), 100, lim)
	if e, _ := NewTable(other).Find(&a3, "alice", int64(time.Minute), clk); e.QuotaUsed(lim, clk.Cal, clk.Now) != 0 {
		t.Fatal("an end user's use found under another seed: the test would not tell the seed's work")
	}

	// A table of one bucket has room for 8: of 20 saved, 12 are lost.
	many := make([]Saved, 20)
	for i := range many {
		many[i] = Saved{Owner: int64(i)*2 + 1, Key: a2.Hash | 1, Total: 5, PeriodID: 1, Base: 0}
	}
	tiny, _ := shm.CreateWith(8, 4, shm.Tables{EndUsers: shm.EndUserBucket})
	defer tiny.Close()
	if restored, lost := Restore(tiny, many, 0); restored != 8 || lost != 12 {
		t.Fatalf("a table of 8: restored %d, lost %d", restored, lost)
	}
}

// FuzzReadState: any bytes read without a panic, and what was read writes
// back to what reads the same.
func FuzzReadState(f *testing.F) {
	var buf bytes.Buffer
	WriteState(&buf, [16]byte{1, 2, 3}, []Saved{{Owner: 3, Key: 5, Total: 10, PeriodID: 2, Base: 4}})
	f.Add(buf.Bytes())
	f.Add([]byte("00000000 seed\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		seed, _, saved, _, err := ReadState(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := WriteState(&out, seed, saved); err != nil {
			t.Fatal(err)
		}
		seed2, has, saved2, bad, err := ReadState(&out)
		if err != nil || !has || bad != 0 || seed2 != seed || len(saved2) != len(saved) {
			t.Fatalf("round trip: %v %d %d %v", has, len(saved2), bad, err)
		}
		for i := range saved {
			if saved[i] != saved2[i] {
				t.Fatalf("entry %d: %+v, then %+v", i, saved[i], saved2[i])
			}
		}
	})
}
