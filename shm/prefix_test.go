package shm

import (
	"testing"
	"unsafe"
)

func prefixRegion(t testing.TB, recall, prefix int) *Region {
	t.Helper()
	r, err := CreateWith(16, 4, Tables{Recall: recall, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// chain is n block hashes of one prompt (any distinct nonzero values do).
func chain(seed, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = fmix64(uint64(seed)<<32 | uint64(i+1))
	}
	return out
}

func TestPrefixMatch(t *testing.T) {
	r := prefixRegion(t, 64, 1024)
	if r.PrefixCapacity() != 1024 {
		t.Fatalf("capacity %d", r.PrefixCapacity())
	}
	a, b := uint64(0xa1), uint64(0xb2)
	doc := chain(1, 10)
	if n := r.PrefixMatch(a, doc); n != 0 {
		t.Fatalf("empty index matched %d", n)
	}
	r.NotePrefix(a, doc[:6])
	if n := r.PrefixMatch(a, doc); n != 6 {
		t.Fatalf("match %d, want the 6 recorded", n)
	}
	if n := r.PrefixMatch(b, doc); n != 0 {
		t.Fatalf("another backend matched %d", n)
	}
	// A longer prompt sharing the first blocks matches as far as they go;
	// one that differs from its first block matches nothing.
	longer := append(append([]uint64{}, doc[:6]...), chain(2, 4)...)
	if n := r.PrefixMatch(a, longer); n != 6 {
		t.Fatalf("shared head matched %d, want 6", n)
	}
	if n := r.PrefixMatch(a, chain(3, 10)); n != 0 {
		t.Fatalf("another prompt matched %d", n)
	}
	// A hole stops the match: blocks past it are not a prefix.
	r.NotePrefix(b, []uint64{doc[0], doc[1], doc[3]})
	if n := r.PrefixMatch(b, doc); n != 2 {
		t.Fatalf("match past a hole: %d, want 2", n)
	}
	// Zero backends are not recorded; the recall table is untouched.
	r.NotePrefix(0, doc)
	if n := r.PrefixMatch(0, doc); n != 0 {
		t.Fatalf("backend 0 matched %d", n)
	}
	for w := r.recall.base; w < r.recall.base+r.recall.words(); w++ {
		if r.words[w] != 0 {
			t.Fatalf("the recall table's word %d was written", w-r.recall.base)
		}
	}
}

// The index keeps about its capacity of the last recorded pairs: the
// blocks recorded long ago are gone, the last ones are there, and a
// prompt recorded again (every request resends its head) stays.
func TestPrefixEviction(t *testing.T) {
	r := prefixRegion(t, 8, 256)
	const backend = 7
	head := chain(1, 8)
	old := chain(2, 64)
	r.NotePrefix(backend, old)
	for i := 0; i < 64; i++ {
		r.NotePrefix(backend, head)
		r.NotePrefix(backend, chain(100+i, 16)) // 1,024 other pairs: 4× the capacity
	}
	if n := r.PrefixMatch(backend, head); n != len(head) {
		t.Fatalf("the head, recorded with every request, matched %d of %d", n, len(head))
	}
	if n := r.PrefixMatch(backend, old); n == len(old) {
		t.Fatal("64 blocks recorded before 4× the capacity all still match")
	}
	held := 0
	for _, b := range old {
		if r.PrefixMatch(backend, []uint64{b}) == 1 {
			held++
		}
	}
	if held > 4 {
		t.Fatalf("%d of 64 old blocks held after 4× the capacity was recorded", held)
	}
	last := chain(163, 16)
	if n := r.PrefixMatch(backend, last); n < 14 {
		t.Fatalf("the last recorded prompt matched %d of 16", n)
	}
}

// A writer can die between any two stores of its entry (as for the recall
// table: TestRecallTornEntryMisses): the block reads as missing, for the
// block that was there and the one being written, never as a match.
func TestPrefixTornEntryMisses(t *testing.T) {
	r := prefixRegion(t, 8, RecallBucket) // one bucket
	const backend = 9
	old, nu := chain(1, 1), chain(2, 1)
	b := r.prefix.base
	for stores := 1; stores <= 3; stores++ {
		r.prefix = newTable(b, RecallBucket)
		clear(r.words[b : b+bucketWords])
		r.NotePrefix(backend, old)
		if r.PrefixMatch(backend, old) != 1 {
			t.Fatal("recorded block missing")
		}
		at := -1
		for i := 0; i < RecallBucket; i++ {
			if r.words[b+bKeys+i] != 0 {
				at = i
			}
		}
		k, v := prefixKey(nu[0], backendMix(backend)), prefixVal(nu[0])
		// The new block's stores into old's entry, cut after `stores` of
		// value, check and key (the order put writes them, the stamp aside).
		w := []struct{ at, val int64 }{
			{int64(b + bPairs + 2*at), int64(v)},
			{int64(b + bPairs + 2*at + 1), int64(recallCheck(k, v))},
			{int64(b + bKeys + at), int64(k)},
		}
		for _, s := range w[:stores] {
			r.words[s.at] = s.val
		}
		if r.PrefixMatch(backend, old) != 0 && stores > 0 {
			t.Fatalf("after %d stores the old block still matches with torn words", stores)
		}
		if got := r.PrefixMatch(backend, nu); stores < 3 && got != 0 {
			t.Fatalf("after %d stores the new block matches", stores)
		}
		// The value of another block under a matching key and check is
		// not a match either.
		r.words[b+bPairs+2*at] = int64(prefixVal(old[0]))
		r.words[b+bPairs+2*at+1] = int64(recallCheck(k, prefixVal(old[0])))
		r.words[b+bKeys+at] = int64(k)
		if r.PrefixMatch(backend, nu) != 0 {
			t.Fatal("an entry whose value is another block matched")
		}
	}
}

// Two mappings of one region share the index (workers are processes).
func TestPrefixSharedMappings(t *testing.T) {
	r := prefixRegion(t, 8, 1024)
	r2, err := Open(r.File())
	if err != nil {
		t.Fatal(err)
	}
	defer r2.mem.Unmap() //nolint:errcheck // the file is r's
	doc := chain(1, 5)
	r.NotePrefix(3, doc)
	if r2.PrefixCapacity() != 1024 || r2.PrefixMatch(3, doc) != 5 {
		t.Fatalf("second mapping: capacity %d, match %d", r2.PrefixCapacity(), r2.PrefixMatch(3, doc))
	}
}

// A region made by a version-3 sluice (recall table and meter, no prefix
// index) is opened in a binary upgrade: the index always misses and
// records nothing, the rest works. A version-3 header that claims an
// index is not one version 3 wrote, nor is a version-2 one.
func TestOpenVersion3Region(t *testing.T) {
	r, r2 := oldRegion(t, layoutNoPrefix, Tables{Recall: 64})
	if s, _ := r2.MeterCapacity(); r2.PrefixCapacity() != 0 || r2.RecallCapacity() != 64 || s != DefaultMeterSeries {
		t.Fatalf("a version-3 region: %d prefix, %d recall entries, %d meter series", r2.PrefixCapacity(), r2.RecallCapacity(), s)
	}
	doc := chain(1, 3)
	r2.NotePrefix(5, doc)
	if r2.PrefixMatch(5, doc) != 0 {
		t.Fatal("a region without an index matched")
	}
	k := testKey(1)
	r2.Remember(k, testVal(k, 1))
	wantRecall(t, r2, k, testVal(k, 1))
	r.words[hPrefix] = 8
	if _, err := Open(r.File()); err == nil {
		t.Fatal("Open of a version-3 region that claims a prefix index")
	}
	r.words[hVersion] = layoutNoMeter
	if _, err := Open(r.File()); err == nil {
		t.Fatal("Open of a version-2 region that claims a prefix index (and a meter)")
	}
	r.words[hVersion] = 99
	if _, err := Open(r.File()); err == nil {
		t.Fatal("Open of an unknown version")
	}
}

// The index follows the recall table on a cache line, the meter follows
// it; the size counts it; the default is 2^16 entries, 2 MiB.
func TestPrefixLayout(t *testing.T) {
	r := prefixRegion(t, 100, 100)
	if r.PrefixCapacity() != 104 {
		t.Fatalf("capacity %d, want 100 rounded up to 104", r.PrefixCapacity())
	}
	if uintptr(unsafe.Pointer(&r.words[r.prefix.base]))%64 != 0 || r.prefix.base != r.recall.base+r.recall.words() {
		t.Fatal("the prefix index is not on a cache line after the recall table")
	}
	if got, want := len(r.words)*8, Size(16, 4, Tables{Recall: 100, Prefix: 100}); got != want || r.prefix.base+104*RecallEntryBytes/8+extWords != r.meterBase {
		t.Fatalf("region of %d bytes, Size says %d", got, want)
	}
	d, err := Create(1, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.PrefixCapacity() != DefaultPrefixEntries || Size(1, 1, Tables{Prefix: DefaultPrefixEntries})-Size(1, 1, Tables{}) != 2<<20 {
		t.Fatalf("default index: %d entries", d.PrefixCapacity())
	}
}

func BenchmarkPrefixMatch(b *testing.B) {
	r := prefixRegion(b, 8, DefaultPrefixEntries)
	doc := chain(1, 400)
	r.NotePrefix(3, doc)
	for b.Loop() {
		r.PrefixMatch(3, doc)
	}
}

func BenchmarkNotePrefix(b *testing.B) {
	r := prefixRegion(b, 8, DefaultPrefixEntries)
	doc := chain(1, 400)
	for b.Loop() {
		r.NotePrefix(3, doc)
	}
}

// Writers racing on a small index (every bucket written over and over)
// never make a block read as sent to a backend it was not sent to: each
// backend is sent only its own prompt, and the others' never match it.
func TestPrefixRaceNoWrongMatch(t *testing.T) {
	r := prefixRegion(t, 8, 64)
	const writers, iters = 4, 20_000
	done := make(chan int)
	for w := 1; w <= writers; w++ {
		go func() {
			wrong := 0
			mine := chain(w, 16)
			for i := 0; i < iters; i++ {
				r.NotePrefix(uint64(w), mine)
				other := w%writers + 1
				if r.PrefixMatch(uint64(w), chain(other, 16)) != 0 || r.PrefixMatch(uint64(other), mine) != 0 {
					wrong++
				}
			}
			done <- wrong
		}()
	}
	for range writers {
		if n := <-done; n != 0 {
			t.Fatalf("%d wrong matches", n)
		}
	}
}
