package quota

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// What Write writes Read reads back; a line whose checksum, JSON or
// length is wrong is counted and skipped, the others read.
func TestStateRoundTrip(t *testing.T) {
	c := testCell(t, 1)
	cal := Calendar{Loc: time.UTC}
	if no := Reserve(c, 0, 10, []Limit{{Day, 100}, {Month, 1000}}, cal); no != nil {
		t.Fatal(no)
	}
	Settle(c, 0, 10, 7)
	e := Snapshot("quota/k", c)
	var b bytes.Buffer
	if err := Write(&b, []Entry{e, {Cell: "budget/k", Total: 5}}); err != nil {
		t.Fatal(err)
	}
	good := b.String()
	lines := strings.SplitAfter(good, "\n")
	flipped := strings.Replace(lines[0], "quota/k", "quota/K", 1) // the checksum no longer matches
	damaged := "garbage\n" + flipped + lines[1] + "00000000 {}\n" + strings.Repeat("x", MaxStateLine+1) + "\n" + lines[0][:20]
	for _, tc := range []struct {
		in      string
		entries int
		bad     int
	}{{good, 2, 0}, {damaged, 1, 5}} {
		got, bad, err := Read(strings.NewReader(tc.in))
		if err != nil || len(got) != tc.entries || bad != tc.bad {
			t.Errorf("read %d entries, %d bad, %v; want %d, %d", len(got), bad, err, tc.entries, tc.bad)
		}
	}
	got, _, _ := Read(strings.NewReader(good))
	fresh := testCell(t, 1)
	Restore(fresh, got[0])
	if u := Used(fresh, Day, cal, cal.Now()); u != 7 {
		t.Fatalf("restored: used %d, want 7", u)
	}
}

// FuzzStateRead: any bytes read without a panic, and what is read back
// writes and reads again the same.
func FuzzStateRead(f *testing.F) {
	var b bytes.Buffer
	Write(&b, []Entry{{Cell: "quota/k", Total: 3, Periods: [NumPeriods][2]int64{{20000, 1}, {2800, 0}, {24000, 2}}}})
	f.Add(b.Bytes())
	f.Add([]byte("00000000 {}\n\n\x00"))
	f.Fuzz(func(t *testing.T, in []byte) {
		entries, _, err := Read(bytes.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := Write(&out, entries); err != nil {
			t.Fatal(err)
		}
		again, bad, _ := Read(&out)
		if bad != 0 || len(again) != len(entries) {
			t.Fatalf("%d entries wrote and read as %d (%d bad)", len(entries), len(again), bad)
		}
	})
}
