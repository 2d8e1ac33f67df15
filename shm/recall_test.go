package shm

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"
)

// testKey is the i-th key of a test: spread over the buckets as the
// caller's hashes are (fmix64 is a bijection with 0 → 0, so i ≥ 1 gives
// distinct nonzero keys).
func testKey(i int) uint64 { return fmix64(uint64(i)) }

// testVal is the n-th value (1-15) remembered for key: the key is in its
// high bits, so a value returned for the wrong key shows (validVal).
func testVal(key uint64, n int) uint64 { return (key*0x9e3779b97f4a7c15)&^0xf | uint64(n) }

func validVal(key, v uint64) bool { return v&^0xf == (key*0x9e3779b97f4a7c15)&^0xf && v&0xf != 0 }

func recallRegion(t testing.TB, entries int) *Region {
	t.Helper()
	r, err := CreateWith(16, 4, Tables{Recall: entries})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func wantRecall(t *testing.T, r *Region, key, want uint64) {
	t.Helper()
	v, ok := r.Recall(key)
	switch {
	case want == 0 && ok:
		t.Fatalf("Recall(%#x) = %#x, want a miss", key, v)
	case want != 0 && (!ok || v != want):
		t.Fatalf("Recall(%#x) = %#x, %v, want %#x", key, v, ok, want)
	}
}

func TestRecallRememberForget(t *testing.T) {
	r := recallRegion(t, 1024)
	if r.RecallCapacity() != 1024 {
		t.Fatalf("capacity %d", r.RecallCapacity())
	}
	a, b := testKey(1), testKey(2)
	wantRecall(t, r, a, 0)
	r.Remember(a, testVal(a, 1))
	r.Remember(b, testVal(b, 1))
	wantRecall(t, r, a, testVal(a, 1))
	wantRecall(t, r, b, testVal(b, 1))
	r.Remember(a, testVal(a, 2)) // overwrite: the last value counts
	wantRecall(t, r, a, testVal(a, 2))
	r.Forget(a)
	wantRecall(t, r, a, 0)
	wantRecall(t, r, b, testVal(b, 1))
	r.Forget(a) // twice: nothing to do
	r.Remember(a, testVal(a, 3))
	wantRecall(t, r, a, testVal(a, 3))
}

// 0 marks an empty entry: a zero key or value is not recorded, and a zero
// key is never found.
func TestRecallZeroRefused(t *testing.T) {
	r := recallRegion(t, 8)
	r.Remember(0, 5)
	r.Remember(testKey(1), 0)
	wantRecall(t, r, 0, 0)
	wantRecall(t, r, testKey(1), 0)
	for i := 0; i < RecallBucket; i++ {
		if k := r.words[r.recall.base+bKeys+i]; k != 0 {
			t.Fatalf("entry %d holds key %#x after zero writes", i, k)
		}
	}
}

// A full bucket gives the entry written longest ago to a new key; writing
// a key again makes it the newest.
func TestRecallEvictsOldestInBucket(t *testing.T) {
	r := recallRegion(t, RecallBucket) // one bucket: every key shares it
	for i := 1; i <= RecallBucket; i++ {
		r.Remember(testKey(i), testVal(testKey(i), 1))
	}
	r.Remember(testKey(1), testVal(testKey(1), 2)) // key 1 is now the newest
	r.Remember(testKey(100), testVal(testKey(100), 1))
	wantRecall(t, r, testKey(2), 0) // the oldest went
	wantRecall(t, r, testKey(1), testVal(testKey(1), 2))
	wantRecall(t, r, testKey(100), testVal(testKey(100), 1))
	for i := 3; i <= RecallBucket; i++ {
		wantRecall(t, r, testKey(i), testVal(testKey(i), 1))
	}
	// A forgotten key's entry is the next one taken, before the oldest.
	r.Forget(testKey(5))
	r.Remember(testKey(101), testVal(testKey(101), 1))
	wantRecall(t, r, testKey(3), testVal(testKey(3), 1))
}

// However many keys are remembered, the table holds its capacity, and
// each bucket exactly its last RecallBucket keys.
func TestRecallCapacityBound(t *testing.T) {
	r := recallRegion(t, 60) // rounded up to 64: 8 buckets
	if r.RecallCapacity() != 64 {
		t.Fatalf("capacity %d, want 60 rounded up to 64", r.RecallCapacity())
	}
	const n = 10_000
	last := map[int][]uint64{} // bucket → keys in the order remembered
	for i := 1; i <= n; i++ {
		k := testKey(i)
		r.Remember(k, testVal(k, 1))
		b := r.recall.bucket(k)
		last[b] = append(last[b], k)
	}
	if len(last) != 8 {
		t.Fatalf("10,000 keys went to %d buckets of 8", len(last))
	}
	held := 0
	for b, keys := range last {
		kept := map[uint64]bool{}
		for _, k := range keys[len(keys)-RecallBucket:] {
			kept[k] = true
		}
		for _, k := range keys {
			v, ok := r.Recall(k)
			if ok != kept[k] || ok && v != testVal(k, 1) {
				t.Fatalf("bucket %d: key %#x found %v (%#x), want found %v", b, k, ok, v, kept[k])
			}
			if ok {
				held++
			}
		}
	}
	if held != 64 {
		t.Fatalf("%d keys held, want 64", held)
	}
}

// A writer can die between any two stores of a Remember (nothing is locked,
// so nothing stays taken): each partial write reads as a miss for both the
// key it overwrote and the key it was writing, and the entry is written
// over normally afterwards. The same holds for words mixed by two writers.
func TestRecallTornEntryMisses(t *testing.T) {
	r := recallRegion(t, RecallBucket)
	old, nu := testKey(1), testKey(2)
	b := r.recall.base
	pair := b + bPairs // entry 0
	for stores := 1; stores <= 3; stores++ {
		r.Remember(old, testVal(old, 1))
		if r.words[b+bKeys] != int64(old) {
			t.Fatal("the test expects the key in entry 0")
		}
		// Remember(nu, ...) into entry 0, stopped after `stores` of its
		// stores (value, check, stamp; the key never comes).
		v := testVal(nu, 1)
		w := []struct {
			at int
			v  int64
		}{{pair, int64(v)}, {pair + 1, int64(recallCheck(nu, v))}, {b + bStamps, 99}}
		for _, s := range w[:stores] {
			atomic.StoreInt64(&r.words[s.at], s.v)
		}
		wantRecall(t, r, old, 0)
		wantRecall(t, r, nu, 0)
		if stores >= 2 {
			// Key and check of one write, value of another (same key):
			// the check is a bijection of the value, so it never agrees.
			atomic.StoreInt64(&r.words[b+bKeys], int64(nu))
			atomic.StoreInt64(&r.words[pair], int64(testVal(nu, 2)))
			wantRecall(t, r, nu, 0)
			// Key of one write, value and check of another key's.
			atomic.StoreInt64(&r.words[b+bKeys], int64(old))
			atomic.StoreInt64(&r.words[pair], int64(v))
			wantRecall(t, r, old, 0)
		}
		// Writing the key again repairs the entry in place.
		r.Remember(old, testVal(old, 3))
		wantRecall(t, r, old, testVal(old, 3))
		r.Forget(old)
	}
}

// Writers, readers and a forgetter hammer a small table (eviction all the
// time, several writers on one entry): every hit is a value that was
// remembered for the key asked (each key has 15 possible values, with the
// key in their high bits), and there are hits.
func TestRecallRace(t *testing.T) {
	r := recallRegion(t, 64)
	const keys, iters = 512, 200_000
	var wrong, hits atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(2)
		go func() { // writer
			defer wg.Done()
			for i := 0; i < iters; i++ {
				k := testKey(1 + (i*7+g)%keys)
				r.Remember(k, testVal(k, 1+(i+g)%15))
			}
		}()
		go func() { // reader
			defer wg.Done()
			for i := 0; i < iters; i++ {
				k := testKey(1 + (i*13+g)%keys)
				if v, ok := r.Recall(k); ok {
					hits.Add(1)
					if !validVal(k, v) {
						wrong.Add(1)
					}
				}
			}
		}()
	}
	wg.Add(1)
	go func() { // forgetter
		defer wg.Done()
		for i := 0; i < iters; i++ {
			r.Forget(testKey(1 + i%keys))
		}
	}()
	wg.Wait()
	t.Logf("%d hits of %d reads", hits.Load(), 4*iters)
	if wrong.Load() != 0 || hits.Load() == 0 {
		t.Fatalf("%d wrong hits, %d hits", wrong.Load(), hits.Load())
	}
}

// A second mapping of the region's file sees what the first remembers,
// and the other way round: the table is in the shared memory, not in the
// Region.
func TestRecallSharedMappings(t *testing.T) {
	r := recallRegion(t, 1024)
	r2, err := Open(r.File())
	if err != nil {
		t.Fatal(err)
	}
	defer r2.mem.Unmap() //nolint:errcheck // the file is r's
	if r2.RecallCapacity() != 1024 {
		t.Fatalf("the second mapping has %d entries", r2.RecallCapacity())
	}
	a, b := testKey(1), testKey(2)
	r.Remember(a, testVal(a, 1))
	r2.Remember(b, testVal(b, 1))
	wantRecall(t, r2, a, testVal(a, 1))
	wantRecall(t, r, b, testVal(b, 1))
	r2.Forget(a)
	wantRecall(t, r, a, 0)
}

// Four processes remember and recall over one small table, started
// together and racing until one has made 50,000 tries while another made
// progress: none ever gets a value remembered for another key.
func TestRecallAcrossProcesses(t *testing.T) {
	r := recallRegion(t, 64)
	var seen []int64
	var hits int64
	for i, out := range runChildren(t, r, 4, "recall") {
		var wrong, h, s int64
		if _, err := fmt.Sscan(out, &wrong, &h, &s); err != nil {
			t.Fatalf("child %d said %q", i, out)
		}
		if wrong != 0 {
			t.Errorf("child %d got %d values of other keys", i, wrong)
		}
		hits += h
		seen = append(seen, s)
	}
	t.Logf("%d hits; tries each process made while another made progress: %v", hits, seen)
	if hits == 0 {
		t.Fatal("no process ever found a key")
	}
}

// recallChild is the work of a child of TestRecallAcrossProcesses: remember
// a key, recall another, in turn.
func recallChild(r *Region, col int) int {
	o := startTogether(r, col)
	if o == nil {
		return 1
	}
	var wrong, hits int64
	for i, more := 0, true; more; i++ {
		t0 := o.others()
		k := testKey(1 + (i*7+col)%512)
		r.Remember(k, testVal(k, 1+(i+col)%15))
		k = testKey(1 + (i*13+3*col)%512)
		if v, ok := r.Recall(k); ok {
			hits++
			if !validVal(k, v) {
				wrong++
			}
		}
		more = o.next(t0)
	}
	fmt.Println(wrong, hits, o.seen)
	return 0
}

// A process killed while it remembers, at any point of a write, leaves
// nothing held: every key still reads as a value remembered for it or as a
// miss, and every entry takes new keys.
func TestRecallWriterKilled(t *testing.T) {
	r := recallRegion(t, 64)
	for try := 0; try < 5; try++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "SHM_TEST_CHILD=remember-forever", "SHM_TEST_COL=0")
		cmd.ExtraFiles = []*os.File{r.File()}
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "writing\n" {
			t.Fatalf("child: %q %v", line, err)
		}
		cmd.Process.Kill()
		cmd.Wait()
		for i := 1; i <= 512; i++ {
			k := testKey(i)
			if v, ok := r.Recall(k); ok && !validVal(k, v) {
				t.Fatalf("key %#x reads %#x after the writer was killed", k, v)
			}
		}
	}
	// Every entry is usable: the last 8 keys of each bucket are all found.
	for i := 1000; i < 1000+64*50; i++ {
		r.Remember(testKey(i), testVal(testKey(i), 1))
	}
	held := 0
	for i := 1000; i < 1000+64*50; i++ {
		if v, ok := r.Recall(testKey(i)); ok {
			held++
			if v != testVal(testKey(i), 1) {
				t.Fatalf("key %d reads %#x", i, v)
			}
		}
	}
	if held != 64 {
		t.Fatalf("%d of 64 entries hold keys after the writer was killed", held)
	}
}

// rememberForever is the work of TestRecallWriterKilled's child: remember
// until killed.
func rememberForever(r *Region) int {
	for i := 0; ; i++ {
		k := testKey(1 + i%512)
		r.Remember(k, testVal(k, 1+i%15))
		if i == 1000 {
			fmt.Println("writing")
		}
	}
}

// A region made by a version-1 sluice (no recall table) is opened by this
// binary in a binary upgrade: the table is absent, Recall misses and
// Remember and Forget do nothing.
func TestOpenVersion1Region(t *testing.T) {
	r, r2 := oldRegion(t, layoutNoRecall, Tables{})
	if r2.RecallCapacity() != 0 {
		t.Fatalf("a version-1 region has %d recall entries", r2.RecallCapacity())
	}
	k := testKey(1)
	r2.Remember(k, testVal(k, 1))
	wantRecall(t, r2, k, 0)
	r2.Forget(k)
	// A version-1 header with a table word set is not one version 1 wrote.
	r.words[hRecall] = 8
	if _, err := Open(r.File()); err == nil {
		t.Fatal("Open of a version-1 region that claims a recall table")
	}
}

// oldRegion makes a region with tables t, marks it as of layout version
// v, and opens it again as a binary upgrade would: the region and the
// second mapping (both undone when the test ends). Versions before the
// meter have none, versions before the ticket key sets none of them.
func oldRegion(t *testing.T, v int64, tables Tables) (r, opened *Region) {
	t.Helper()
	series, rows, tickets := DefaultMeterSeries, DefaultMeterRows, TicketSets
	if v <= layoutNoMeter {
		series, rows = 0, 0
	}
	if v <= layoutNoTickets {
		tickets = 0
	}
	r, err := createLayout(8, 2, tables, series, rows, tickets, v >= LayoutVersion)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	r.words[hVersion] = v
	if opened, err = Open(r.File()); err != nil {
		t.Fatalf("Open of a version-%d region: %v", v, err)
	}
	t.Cleanup(func() { opened.mem.Unmap() }) //nolint:errcheck // the file is r's
	return r, opened
}

// The table starts on a cache line after the cells, the meter follows it
// (and the prefix index, here empty), and the region's size counts both.
func TestRecallLayout(t *testing.T) {
	r := recallRegion(t, 100)
	if r.RecallCapacity() != 104 {
		t.Fatalf("capacity %d, want 100 rounded up to 104", r.RecallCapacity())
	}
	if uintptr(unsafe.Pointer(&r.words[r.recall.base]))%64 != 0 {
		t.Fatal("the recall table is not on a cache line")
	}
	if got, want := len(r.words)*8, Size(16, 4, Tables{Recall: 104}); got != want || r.recall.base+104*RecallEntryBytes/8+extWords != r.meterBase {
		t.Fatalf("region of %d bytes, Size says %d; table from word %d", got, want, r.recall.base)
	}
	if d, _ := Create(1, 1); d.RecallCapacity() != DefaultRecallEntries || Size(1, 1, Tables{Recall: DefaultRecallEntries})-Size(1, 1, Tables{}) != 2<<20 {
		t.Fatalf("default table: %d entries", d.RecallCapacity())
	} else {
		d.Close()
	}
}

func BenchmarkRemember(b *testing.B) {
	r := recallRegion(b, DefaultRecallEntries)
	i := 0
	for b.Loop() {
		i++
		k := testKey(i)
		r.Remember(k, k)
	}
}

func BenchmarkRecallHit(b *testing.B) {
	r := recallRegion(b, DefaultRecallEntries)
	const n = 1 << 12 // 4,096 keys in 8,192 buckets: none overflows
	for i := 1; i <= n; i++ {
		r.Remember(testKey(i), testKey(i))
	}
	i := 0
	for b.Loop() {
		i++
		if _, ok := r.Recall(testKey(1 + i%n)); !ok {
			b.Fatal("miss")
		}
	}
}

func BenchmarkRecallMiss(b *testing.B) {
	r := recallRegion(b, DefaultRecallEntries)
	for i := 1; i <= DefaultRecallEntries; i++ {
		r.Remember(testKey(i), testKey(i))
	}
	i := DefaultRecallEntries
	for b.Loop() {
		i++
		if _, ok := r.Recall(testKey(i)); ok {
			b.Fatal("hit")
		}
	}
}
