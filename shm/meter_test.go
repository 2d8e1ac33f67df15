package shm

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Series are found by descriptor, the same rows for every caller; each
// worker column adds to its own words and the sum is over the columns.
func TestMeterSeries(t *testing.T) {
	r, err := create(4, 3, Tables{}, 64, 256, TicketSets)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	a, ok := r.MeterSeries("requests\x00m\x00k\x00ok", 1)
	h, ok2 := r.MeterSeries("ttft\x00m", 18)
	if !ok || !ok2 {
		t.Fatal("no series in an empty meter")
	}
	if again, _ := r.MeterSeries("requests\x00m\x00k\x00ok", 1); again != a {
		t.Fatalf("the same descriptor got row %d, then %d", a, again)
	}
	if h < a+1 && a < h+18 {
		t.Fatalf("series overlap: counter at %d, histogram at %d..%d", a, h, h+17)
	}
	atomic.AddInt64(&r.MeterWords(0, a, 1)[0], 5)
	atomic.AddInt64(&r.MeterWords(2, a, 1)[0], 7)
	atomic.AddInt64(&r.MeterWords(1, h, 18)[17], 100)
	if got := r.MeterSum(a); got != 12 {
		t.Fatalf("sum %d, want 12", got)
	}
	// A dead worker's counts stay: ReleaseColumn gives back places, not counts.
	r.ReleaseColumn(2)
	if got := r.MeterSum(a); got != 12 {
		t.Fatalf("after a worker's column was released: %d, want 12", got)
	}
	seen := map[string][2]int{}
	r.MeterEach(func(desc string, row, rows int) { seen[desc] = [2]int{row, rows} })
	if len(seen) != 2 || seen["requests\x00m\x00k\x00ok"] != [2]int{a, 1} || seen["ttft\x00m"] != [2]int{h, 18} {
		t.Fatalf("MeterEach saw %v", seen)
	}
	if r.MeterSum(h+17) != 100 {
		t.Fatal("the histogram's last row is not what column 1 added")
	}
}

// What cannot be kept is refused, never misplaced: a descriptor too long,
// a full index, rows run out, a shape that changed, a region without a meter.
func TestMeterLimits(t *testing.T) {
	r, err := create(4, 2, Tables{}, 8, 10, TicketSets)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, ok := r.MeterSeries(strings.Repeat("x", MeterDescMax+1), 1); ok {
		t.Error("a descriptor past MeterDescMax was kept")
	}
	if _, ok := r.MeterSeries(strings.Repeat("x", MeterDescMax), 1); !ok {
		t.Error("a descriptor of MeterDescMax bytes was refused")
	}
	if _, ok := r.MeterSeries("big", 10); ok {
		t.Error("10 rows taken with 9 left")
	}
	if _, ok := r.MeterSeries("c", 9); !ok {
		t.Error("the last 9 rows refused")
	}
	if _, ok := r.MeterSeries("c", 1); ok {
		t.Error("a series asked again with another number of rows")
	}
	for i := range 8 {
		r.MeterSeries(string(rune('a'+i))+"-extra", 0) // no rows: refused, takes no entry's rows
	}
	n := 0
	r.MeterEach(func(string, int, int) { n++ })
	if n != 2 {
		t.Errorf("MeterEach saw %d series, want 2", n)
	}
	_, o := oldRegion(t, layoutNoMeter, Tables{})
	if s, _ := o.MeterCapacity(); s != 0 {
		t.Fatal("a version-2 region has a meter")
	}
	if _, ok := o.MeterSeries("x", 1); ok {
		t.Fatal("a series kept in a region without a meter")
	}
	// A version-2 header that claims a meter is not one version 2 wrote.
	withMeter, _ := create(4, 2, Tables{}, 8, 8, TicketSets)
	defer withMeter.Close()
	withMeter.words[hVersion] = layoutNoMeter
	if _, err := Open(withMeter.File()); err == nil {
		t.Fatal("Open of a version-2 region that claims a meter")
	}
}

// Workers racing to claim the same series all get its one set of rows,
// and none of their counts is lost.
func TestMeterRace(t *testing.T) {
	r, err := create(4, 4, Tables{}, 1024, 4096, TicketSets)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var wg sync.WaitGroup
	for col := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				desc := "s" + string(rune('a'+i%50))
				row, ok := r.MeterSeries(desc, 2)
				if !ok {
					t.Error("no series")
					return
				}
				atomic.AddInt64(&r.MeterWords(col, row, 2)[1], 1)
			}
		}()
	}
	wg.Wait()
	total, n := int64(0), 0
	r.MeterEach(func(desc string, row, rows int) {
		n++
		total += r.MeterSum(row + 1)
	})
	if n != 50 || total != 8000 {
		t.Fatalf("%d series, %d counts; want 50 and 8000", n, total)
	}
}
