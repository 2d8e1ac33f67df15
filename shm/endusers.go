package shm

import (
	"encoding/binary"
	"math/bits"
	"sync/atomic"
)

// The end-user table: per-end-user limits' state (package enduser), for
// every key with an end_user block, in one bounded table of the region
// that every worker claims entries of. It lies after the prefix index,
// behind an extension header (layout version 6), and is no
// configuration's: reloads leave it alone, a restart empties it.
//
// An entry is owned by the (seeded) hash of its key and end user, in its
// bucket's owner word, 0 when free; its EndUserEntryWords words of state
// are the enduser package's. A bucket is one cache line of EndUserBucket
// owner words, then its entries' words:
//
//	words 0-7     owners (0: free)
//	words 8-71    eight entries of eight words
//
// The table takes no lock: an owner is claimed and given up by
// compare-and-swap, and what an entry means is package enduser's.

// EndUserBucket is the number of entries of a bucket of the end-user table.
const EndUserBucket = 8

// EndUserEntryWords is the state an entry holds, in words.
const EndUserEntryWords = 8

// EndUserEntryBytes is the bytes one entry of the table takes (its owner
// word and its state).
const EndUserEntryBytes = (1 + EndUserEntryWords) * 8

const euBucketWords = EndUserBucket * (1 + EndUserEntryWords)

// The extension header (layout version 6 on): 8 words after the prefix
// index, before the end-user table.
const (
	extWords  = 8
	xEndUsers = 0 // entries of the end-user table
	xEpoch    = 1 // EndUserEpoch
	xSeed     = 2 // EndUserSeed: two random words, made with the region
)

// endUserTable is where the table lies.
type endUserTable struct {
	base    int
	buckets uint64 // 0: none
}

// endUserWords is the size in words of a table of entries.
func endUserWords(entries int) int { return roundEntries(entries) / EndUserBucket * euBucketWords }

// extBase is the first word of the extension header of a region laid out
// as r (version 6 on): after the cells, the recall table and the index.
func (r *Region) extBase() int { return r.prefix.base + r.prefix.words() }

// setEndUsers places the extension header (when the layout has one) and
// the table.
func (r *Region) setEndUsers(ext bool, entries int) {
	if !ext {
		r.ext, r.endUsers = -1, endUserTable{}
		return
	}
	r.ext = r.extBase()
	r.endUsers = endUserTable{base: r.ext + extWords, buckets: uint64(entries / EndUserBucket)}
}

// extFits reports whether header w of a region as Open found it places its
// extension header inside the region, with a table size Create writes
// (always true of a version without one).
func extFits(w []int64) bool {
	if w[hVersion] < LayoutVersion {
		return true
	}
	base := headerWords + int(w[hCells])*cellWords(int(w[hColumns])) + tableWords(int(w[hRecall])) + tableWords(int(w[hPrefix]))
	return base > 0 && base+extWords <= len(w) && tableWord(w[base+xEndUsers])
}

// extSize is the bytes of the extension header and the end-user table of
// a region whose header is w (extFits holds).
func extSize(w []int64) int {
	if w[hVersion] < LayoutVersion {
		return 0
	}
	base := headerWords + int(w[hCells])*cellWords(int(w[hColumns])) + tableWords(int(w[hRecall])) + tableWords(int(w[hPrefix]))
	return (extWords + endUserWords(int(w[base+xEndUsers]))) * 8
}

// EndUserCapacity is the number of entries of the end-user table; 0 when
// the region has none (made without one, or by a version-5 sluice and
// inherited in a binary upgrade).
func (r *Region) EndUserCapacity() int { return int(r.endUsers.buckets) * EndUserBucket }

// EndUserEpoch is the number of workers that died since the region was
// made (in a region without an extension header, always 0): what the
// end-user table counts in flight is counted in an epoch, and a count of
// an earlier one reads as none — the requests of a worker that died are
// never released, and their entries would otherwise stay taken.
func (r *Region) EndUserEpoch() int64 {
	if r.ext < 0 {
		return 0
	}
	return atomic.LoadInt64(&r.words[r.ext+xEpoch])
}

// BumpEndUserEpoch starts a new epoch (the supervisor, when a worker
// died).
func (r *Region) BumpEndUserEpoch() {
	if r.ext >= 0 {
		atomic.AddInt64(&r.words[r.ext+xEpoch], 1)
	}
}

// EndUserEpochWord is the epoch's word, for package enduser's reads (nil
// without an extension header).
func (r *Region) EndUserEpochWord() *int64 {
	if r.ext < 0 {
		return nil
	}
	return &r.words[r.ext+xEpoch]
}

// EndUserSeed is the region's secret for the end-user table's owner
// hashes: 16 random bytes made with the region (zero without an
// extension header, where there is no table).
func (r *Region) EndUserSeed() (seed [16]byte) {
	if r.ext >= 0 {
		binary.LittleEndian.PutUint64(seed[:], uint64(atomic.LoadInt64(&r.words[r.ext+xSeed])))
		binary.LittleEndian.PutUint64(seed[8:], uint64(atomic.LoadInt64(&r.words[r.ext+xSeed+1])))
	}
	return seed
}

// SetEndUserSeed makes seed the region's end-user seed: the one a state
// file kept, so that the owners it saved are the same end users' again.
// Only for a fresh region, before any worker reads the seed (its keys'
// owner hashes are made under it once); false without a table.
func (r *Region) SetEndUserSeed(seed [16]byte) bool {
	if r.ext < 0 || r.endUsers.buckets == 0 {
		return false
	}
	atomic.StoreInt64(&r.words[r.ext+xSeed], int64(binary.LittleEndian.Uint64(seed[:])))
	atomic.StoreInt64(&r.words[r.ext+xSeed+1], int64(binary.LittleEndian.Uint64(seed[8:])))
	return true
}

// EndUserSlots is one bucket of the end-user table.
type EndUserSlots struct{ w []int64 }

// EndUserBucketOf is the bucket of owner hash h, chosen by its high bits;
// ok is false when the region has no table.
func (r *Region) EndUserBucketOf(h uint64) (b EndUserSlots, ok bool) {
	t := r.endUsers
	if t.buckets == 0 {
		return EndUserSlots{}, false
	}
	hi, _ := bits.Mul64(h, t.buckets)
	base := t.base + int(hi)*euBucketWords
	return EndUserSlots{w: r.words[base : base+euBucketWords]}, true
}

// Owner is the owner word of entry i (0–7), for sync/atomic.
func (b EndUserSlots) Owner(i int) *int64 { return &b.w[i] }

// Entry is the state words of entry i.
func (b EndUserSlots) Entry(i int) []int64 {
	base := EndUserBucket + i*EndUserEntryWords
	return b.w[base : base+EndUserEntryWords : base+EndUserEntryWords]
}

// EndUserBuckets calls fn with every bucket of the table, in order (the
// supervisor's sweep).
func (r *Region) EndUserBuckets(fn func(b EndUserSlots)) {
	t := r.endUsers
	for i := uint64(0); i < t.buckets; i++ {
		base := t.base + int(i)*euBucketWords
		fn(EndUserSlots{w: r.words[base : base+euBucketWords]})
	}
}

// GCRA is Cell.GCRA on any word p: a limiter's theoretical arrival time.
func GCRA(p *int64, now, cost, window int64) (bool, int64) {
	for {
		old := atomic.LoadInt64(p)
		next := max(old, now) + cost
		if next-now > window {
			return false, old
		}
		if atomic.CompareAndSwapInt64(p, old, next) {
			return true, next
		}
	}
}
