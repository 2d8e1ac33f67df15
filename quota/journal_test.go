package quota

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

// A journal line is a state file line: what appendLine writes by hand
// Read reads as Snapshot's entry, for names JSON must escape too.
func TestJournalLineReads(t *testing.T) {
	c := testCell(t, 1)
	cal := Calendar{Loc: time.UTC}
	Reserve(c, 0, 10, []Limit{{Day, 100}, {Week, 1000}, {Month, 1000}}, cal)
	Settle(c, 0, 10, 7)
	for _, name := range []string{"quota/k", `budget/a "quoted" \ key`, "quota/ключ\u2028<&>"} {
		line := appendLine(nil, NewJournaled(name, c).quoted, Snapshot("", c))
		var want bytes.Buffer
		e := Snapshot(name, c)
		Write(&want, []Entry{e})
		got, bad, err := Read(bytes.NewReader(line))
		if err != nil || bad != 0 || len(got) != 1 || got[0] != e {
			t.Fatalf("%q: read %v (bad %d, %v) from %q; want %v", name, got, bad, err, line, e)
		}
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

// Lines recorded by two journals read back as each cell's latest state;
// a file rotates at its age, and a torn last line is counted, the rest
// read.
func TestJournalRecordAndRead(t *testing.T) {
	dir := t.TempDir()
	tokens, spend := testCell(t, 1), testCell(t, 1)
	cal := Calendar{Loc: time.UTC}
	j := OpenJournal(dir, func(err error) { t.Error(err) })
	jt, js := NewJournaled("quota/k", tokens), NewJournaled("budget/k", spend)
	for i := range 5 {
		Reserve(tokens, 0, 1, []Limit{{Day, 1000}}, cal)
		Settle(tokens, 0, 1, int64(i+1))
		Reserve(spend, 0, 1, []Limit{{Month, 1 << 40}}, cal)
		Settle(spend, 0, 1, 1000)
		j.Record(jt, js)
		if i == 2 {
			j.opened = j.opened.Add(-JournalRotateAge) // the next line opens a new file
		}
	}
	j.Close()
	if files := JournalFiles(dir); len(files) != 2 {
		t.Fatalf("journal files %v, want 2 (one rotation)", files)
	}
	// A second writer's file, older lines, and a torn line at its end.
	old := Snapshot("quota/k", tokens)
	old.Total = 3
	var b bytes.Buffer
	Write(&b, []Entry{old})
	b.WriteString(b.String()[:10])
	os.WriteFile(filepath.Join(dir, JournalPrefix+"1.1"+JournalSuffix), b.Bytes(), 0o600)

	latest, bad, err := ReadJournals(dir)
	if err != nil || bad != 1 {
		t.Fatalf("bad %d, %v; want 1 torn line", bad, err)
	}
	if got, want := latest["quota/k"], Snapshot("quota/k", tokens); got != want {
		t.Errorf("tokens: %v, want %v", got, want)
	}
	if got, want := latest["budget/k"], Snapshot("budget/k", spend); got != want || got.Total != 5000 {
		t.Errorf("spend: %v, want %v", got, want)
	}
}

// PruneJournals removes what a checkpoint holds and nothing else: not a
// file written within pruneSlack of the snapshot, not the newest file of
// a writer that is alive; it removes an older file of that writer, and a
// gone writer's newest.
func TestPruneJournals(t *testing.T) {
	dir := t.TempDir()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	me, dead := os.Getpid(), gone.Process.Pid
	name := func(pid, n int) string {
		return filepath.Join(dir, JournalPrefix+strconv.Itoa(pid)+"."+strconv.Itoa(n)+JournalSuffix)
	}
	long := time.Now().Add(-time.Hour)
	files := map[string]time.Time{
		name(me, 1):   long,       // an older file of a live writer: removed
		name(me, 2):   long,       // its newest: kept
		name(dead, 1): long,       // a gone writer's newest: removed
		name(dead, 0): time.Now(), // just written: kept
	}
	for f, mod := range files {
		os.WriteFile(f, nil, 0o600)
		os.Chtimes(f, mod, mod)
	}
	os.WriteFile(filepath.Join(dir, JournalPrefix+"x.y"+JournalSuffix), nil, 0o600) // not ours: kept
	if n := PruneJournals(dir, time.Now()); n != 2 {
		t.Errorf("removed %d, want 2", n)
	}
	var left []string
	for _, f := range JournalFiles(dir) {
		left = append(left, filepath.Base(f))
	}
	want := []string{filepath.Base(name(dead, 0)), filepath.Base(name(me, 2)), JournalPrefix + "x.y" + JournalSuffix}
	slices.Sort(left)
	slices.Sort(want)
	if !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
}

// BenchmarkJournalRecord is what the journal adds to a settle of a key's
// quota and budget: both cells' lines, one write(2).
func BenchmarkJournalRecord(b *testing.B) {
	tokens, spend := testCell(b, 1), testCell(b, 1)
	j := OpenJournal(b.TempDir(), func(err error) { b.Error(err) })
	defer j.Close()
	jt, js := NewJournaled("quota/team-a", tokens), NewJournaled("budget/team-a", spend)
	b.ReportAllocs()
	for b.Loop() {
		Settle(tokens, 0, 0, 100)
		Settle(spend, 0, 0, 1000)
		j.Record(jt, js)
	}
}
