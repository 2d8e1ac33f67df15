package shm

import (
	"math/bits"
	"sync/atomic"
)

// The recall table: a bounded map of nonzero 64-bit keys to nonzero 64-bit
// values that every worker writes and reads, for what one worker learns and
// another needs — which backend holds a stored response (the Responses
// API's previous_response_id must go back to the vLLM that made it, and the
// next turn may reach any worker). It lies after the cells and is no
// configuration's: reloads leave it alone.
//
// It takes no lock, not even one entry's: a worker may die between any two
// of its stores, so a claim it held would stay taken until someone noticed.
// Instead every entry carries a check word, a hash of its key and value
// written with them, and a reader takes an entry only when the three words
// it loaded agree. Two writers racing on one entry, or a writer killed half
// way, leave words of different writes, which do not agree: the key reads
// as absent (the caller then tries the backends in turn) and the entry is
// written over like any other. The check is a bijection of the value for a
// given key and of the key for a given value, so words mixed from two
// writes that share the key, or the value, never agree; words mixed
// otherwise agree by chance once in 2^64. A hit is therefore always a value
// that was remembered for that key, never a torn pair. What the table does
// give up is a write: a Remember that loses a race is a miss later.
//
// A key lives in one bucket of RecallBucket entries, chosen by its high
// bits; a Remember writes over the entry of the same key, else an empty
// one, else the one written longest ago. Buckets fill evenly (keys are
// hashes), so the table keeps about the RecallEntries last remembered keys.
// A bucket (256 bytes, four cache lines, aligned on one) holds its keys in
// its first line and its stamps in the second, so a miss reads one line and
// a hit two:
//
//	words 0-7    keys (0: empty)
//	words 8-15   stamps: the order of writes within the bucket (the
//	             bucket's largest stamp + 1 when written; no clock, no
//	             shared counter to contend on)
//	words 16-31  value, check: one pair per entry

// RecallBucket is the number of entries of a bucket (of the recall table,
// and of the prefix index, which shares its layout and code: prefix.go).
const RecallBucket = 8

// RecallEntryBytes is the bytes one entry of the recall table takes.
const RecallEntryBytes = 4 * 8

// DefaultRecallEntries is the recall table's capacity in regions made by
// Create: 65,536 entries, 2 MiB (2,097,152 bytes). At a few hundred stored
// responses a second that keeps minutes of them; vLLM itself drops stored
// responses when it restarts.
const DefaultRecallEntries = 1 << 16

// Bucket words.
const (
	bKeys       = 0
	bStamps     = RecallBucket
	bPairs      = 2 * RecallBucket
	bucketWords = 4 * RecallBucket
)

// roundEntries rounds a table's entries up to whole buckets.
func roundEntries(entries int) int {
	return (entries + RecallBucket - 1) / RecallBucket * RecallBucket
}

// tableWords is the size in words of a table of entries.
func tableWords(entries int) int { return roundEntries(entries) / RecallBucket * bucketWords }

// table is one of the region's bounded tables (the recall table, the
// prefix index): buckets of RecallBucket entries laid out as above, from
// word base of the region. Its methods take the region's words, so one
// piece of code serves every table and every mapping.
type table struct {
	base    int    // first word of the table, on a cache line
	buckets uint64 // 0: the region has no such table
}

// newTable is the table of entries (a multiple of RecallBucket) from word base.
func newTable(base, entries int) table {
	return table{base: base, buckets: uint64(entries / RecallBucket)}
}

// words is the table's size in words.
func (t table) words() int { return int(t.buckets) * bucketWords }

// setTables places the tables after the cells, the recall table first.
// A new table goes after them too: the meter, last, is found from the
// region's end (setMeter), and older layouts are this one with parts left
// out (see LayoutVersion).
func (r *Region) setTables(recall, prefix int) {
	r.recall = newTable(headerWords+r.cells*r.cw, recall) // a multiple of 8 words: 64-byte aligned
	r.prefix = newTable(r.recall.base+r.recall.words(), prefix)
}

// RecallCapacity is the number of entries of the recall table; 0 when the
// region has none (one made by a version-1 sluice, inherited in a binary
// upgrade).
func (r *Region) RecallCapacity() int { return int(r.recall.buckets) * RecallBucket }

// bucket is the first word of key's bucket. It takes the key's high bits
// (key·buckets / 2^64), so any number of buckets spreads hashes evenly and
// no division is needed.
func (t table) bucket(key uint64) int {
	hi, _ := bits.Mul64(key, t.buckets)
	return t.base + int(hi)*bucketWords
}

// recallCheck is an entry's check word: a bijection of val for a given key
// and of key for a given val (the murmur3 finalizer is one, and so is xor
// with a constant), so torn words that share one of the two never agree.
func recallCheck(key, val uint64) uint64 { return fmix64(key ^ fmix64(val)) }

func fmix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// Remember records that key maps to val (both nonzero: the caller passes
// hashes — of a response id and of the backend's URL; a zero key or value
// is ignored, 0 marking an empty entry). It writes over key's entry if
// there is one, else over an empty entry or the bucket's oldest. It never
// waits; one that races another writer on the same entry may be lost (a
// miss later). A region without a recall table ignores it.
func (r *Region) Remember(key, val uint64) { r.recall.put(r.words, key, val) }

// put is Remember on table t of the region's words w.
func (t table) put(w []int64, key, val uint64) {
	if key == 0 || val == 0 || t.buckets == 0 {
		return
	}
	b := t.bucket(key)
	keys := w[b+bKeys : b+bKeys+RecallBucket]
	stamps := w[b+bStamps : b+bStamps+RecallBucket]
	if t.refresh(w, b, key, val) {
		return
	}
	at, victim, oldest, newest := -1, -1, int64(0), int64(0)
	for i := range keys {
		k, s := atomic.LoadInt64(&keys[i]), atomic.LoadInt64(&stamps[i])
		newest = max(newest, s)
		if k == int64(key) {
			if at < 0 {
				at = i
			} else {
				// A second entry of the key (two Remembers raced to
				// empty entries): drop it, so that the entry written
				// over is the only one found.
				atomic.CompareAndSwapInt64(&keys[i], k, 0)
			}
			continue
		}
		if k == 0 {
			s = -1 // empty entries go first (stamps are never negative)
		}
		if victim < 0 || s < oldest {
			victim, oldest = i, s
		}
	}
	if at < 0 {
		at = victim
	}
	p := b + bPairs + 2*at
	// Value and check before the key: an entry taken from another key
	// reads, meanwhile, as that key with words that do not agree (a miss).
	atomic.StoreInt64(&w[p], int64(val))
	atomic.StoreInt64(&w[p+1], int64(recallCheck(key, val)))
	atomic.StoreInt64(&stamps[at], newest+1)
	atomic.StoreInt64(&keys[at], int64(key))
}

// refresh is put's fast path, for an entry already there with the same
// value (the prefix index records a conversation's head with every
// request): only its age changes, one store at most instead of four. It
// reports whether it found the entry. Should another writer take the
// entry meanwhile, that key's age is what moves — an LRU a little off,
// never a wrong hit.
func (t table) refresh(w []int64, b int, key, val uint64) bool {
	keys := w[b+bKeys : b+bKeys+RecallBucket]
	for i := range keys {
		if atomic.LoadInt64(&keys[i]) != int64(key) {
			continue
		}
		p := b + bPairs + 2*i
		if uint64(atomic.LoadInt64(&w[p])) != val || uint64(atomic.LoadInt64(&w[p+1])) != recallCheck(key, val) {
			return false
		}
		stamps := w[b+bStamps : b+bStamps+RecallBucket]
		s, newest := atomic.LoadInt64(&stamps[i]), int64(0)
		for j := range stamps {
			newest = max(newest, atomic.LoadInt64(&stamps[j]))
		}
		if s != newest {
			atomic.StoreInt64(&stamps[i], newest+1)
		}
		return true
	}
	return false
}

// Recall returns the value last remembered for key (one of them, when
// Remembers of the key raced), if the table still holds it. A miss (ok
// false) may also mean that the entry was being written that instant, or
// was torn by racing writers or one that died: a hit is never a value
// remembered for another key.
func (r *Region) Recall(key uint64) (val uint64, ok bool) { return r.recall.get(r.words, key) }

// get is Recall on table t of the region's words w.
func (t table) get(w []int64, key uint64) (val uint64, ok bool) {
	if key == 0 || t.buckets == 0 {
		return 0, false
	}
	b := t.bucket(key)
	keys := w[b+bKeys : b+bKeys+RecallBucket]
	for i := range keys {
		if atomic.LoadInt64(&keys[i]) != int64(key) {
			continue
		}
		p := b + bPairs + 2*i
		v := uint64(atomic.LoadInt64(&w[p]))
		c := uint64(atomic.LoadInt64(&w[p+1]))
		// Another key's pair, written here since the key was loaded, does
		// not agree with this key (see recallCheck).
		if v != 0 && c == recallCheck(key, v) {
			return v, true
		}
	}
	return 0, false
}

// Forget drops key (its response was deleted), so Recall misses it.
func (r *Region) Forget(key uint64) { r.recall.drop(r.words, key) }

// drop is Forget on table t of the region's words w.
func (t table) drop(w []int64, key uint64) {
	if key == 0 || t.buckets == 0 {
		return
	}
	b := t.bucket(key)
	keys := w[b+bKeys : b+bKeys+RecallBucket]
	for i := range keys {
		// A compare-and-swap: an entry another worker has just given to
		// another key stays.
		atomic.CompareAndSwapInt64(&keys[i], int64(key), 0)
	}
}
