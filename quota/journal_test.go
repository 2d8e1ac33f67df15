package quota

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

// A slot reads back as the entry written, for names that need no
// escaping and names that would in JSON; a torn slot (a byte of its body
// changed after its CRC) reads as nothing.
func TestJournalSlot(t *testing.T) {
	c := testCell(t, 1)
	cal := Calendar{Loc: time.UTC}
	Reserve(c, 0, 10, []Limit{{Day, 100}, {Week, 1000}, {Month, 1000}}, cal)
	Settle(c, 0, 10, 7)
	for _, name := range []string{"quota/k", `budget/a "quoted" \ key`, "quota/ключ\u2028<&>"} {
		b := make([]byte, slotBytes)
		putSlot(b, name, Snapshot("", c))
		if got, ok := getSlot(b); !ok || got != Snapshot(name, c) {
			t.Fatalf("%q: read %v, %v", name, got, ok)
		}
		b[slotHead+3] ^= 1
		if _, ok := getSlot(b); ok {
			t.Fatalf("%q: a torn slot was read", name)
		}
	}
	if _, ok := getSlot(make([]byte, slotBytes)); ok {
		t.Fatal("an empty slot was read")
	}
}

// Merge takes the larger total and each period from the state that has
// the later one; a period being rolled (negative) gives way.
func TestMerge(t *testing.T) {
	a := Entry{Cell: "quota/k", Total: 50, Periods: [NumPeriods][2]int64{{100, 10}, {20, 0}, {-7, 40}}}
	b := Entry{Cell: "quota/k", Total: 70, Periods: [NumPeriods][2]int64{{101, 60}, {20, 5}, {6, 0}}}
	want := Entry{Cell: "quota/k", Total: 70, Periods: [NumPeriods][2]int64{{101, 60}, {20, 0}, {6, 0}}}
	if got := Merge(a, b); got != want {
		t.Fatalf("Merge(a, b) = %v, want %v", got, want)
	}
	if got := Merge(b, a); got.Total != 70 || got.Periods[0] != b.Periods[0] || got.Periods[2] != b.Periods[2] {
		t.Fatalf("Merge(b, a) = %v", got)
	}
}

// What a journal records reads back as each cell's latest state, from
// either of its two slots; a slot torn by a kill leaves the state one
// settle before; a dead writer's file is Gone, a live one's is not.
func TestJournalRecordAndRead(t *testing.T) {
	dir := t.TempDir()
	tokens, spend := testCell(t, 1), testCell(t, 1)
	cal := Calendar{Loc: time.UTC}
	j, err := OpenJournal(dir, func(err error) { t.Error(err) })
	if err != nil {
		t.Fatal(err)
	}
	jt, js := NewJournaled("quota/k", tokens), NewJournaled("budget/k", spend)
	var before Entry
	for i := range 5 {
		before = Snapshot("quota/k", tokens)
		Reserve(tokens, 0, 1, []Limit{{Day, 1000}}, cal)
		Settle(tokens, 0, 1, int64(i+1))
		Reserve(spend, 0, 1, []Limit{{Month, 1 << 40}}, cal)
		Settle(spend, 0, 1, 1000)
		j.Record(jt, js)
	}
	latest, err := ReadJournals(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := latest["quota/k"], Snapshot("quota/k", tokens); got != want || got.Total != 15 {
		t.Errorf("tokens: %v, want %v", got, want)
	}
	if got, want := latest["budget/k"], Snapshot("budget/k", spend); got != want || got.Total != 5000 {
		t.Errorf("spend: %v, want %v", got, want)
	}
	// The last write to the tokens' cell torn (it went to slot 0: five
	// writes, the first to slot 0).
	j.mem[slotHead+1] ^= 0x40
	if latest, _ := ReadJournals(dir); latest["quota/k"] != before {
		t.Errorf("torn: %v, want the state before, %v", latest["quota/k"], before)
	}
	if g := Gone(dir); len(g) != 0 {
		t.Errorf("a live writer's journal is Gone: %v", g)
	}
	j.Close()
	j.Record(jt) // closed: nothing, no fault
}

// PruneJournals removes the journals of writers that are gone and nothing
// else; Gone names only those.
func TestPruneJournals(t *testing.T) {
	dir := t.TempDir()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	name := func(pid int) string { return filepath.Join(dir, JournalPrefix+strconv.Itoa(pid)+JournalSuffix) }
	for _, f := range []string{name(os.Getpid()), name(gone.Process.Pid), filepath.Join(dir, JournalPrefix+"x"+JournalSuffix)} {
		os.WriteFile(f, nil, 0o600)
	}
	g := Gone(dir)
	if len(g) != 1 || g[0] != name(gone.Process.Pid) {
		t.Fatalf("Gone: %v, want the dead writer's alone", g)
	}
	if n := PruneJournals(g); n != 1 {
		t.Errorf("removed %d", n)
	}
	var left []string
	for _, f := range JournalFiles(dir) {
		left = append(left, filepath.Base(f))
	}
	want := []string{JournalPrefix + strconv.Itoa(os.Getpid()) + JournalSuffix, JournalPrefix + "x" + JournalSuffix}
	slices.Sort(left)
	slices.Sort(want)
	if !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
}

// BenchmarkJournalRecord is what the journal adds to a settle of a key's
// quota and budget: both cells' slots.
func BenchmarkJournalRecord(b *testing.B) {
	tokens, spend := testCell(b, 1), testCell(b, 1)
	j, err := OpenJournal(b.TempDir(), func(err error) { b.Error(err) })
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	jt, js := NewJournaled("quota/team-a", tokens), NewJournaled("budget/team-a", spend)
	b.ReportAllocs()
	for b.Loop() {
		Settle(tokens, 0, 0, 100)
		Settle(spend, 0, 0, 1000)
		j.Record(jt, js)
	}
}
