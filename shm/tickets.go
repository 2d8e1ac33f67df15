package shm

import (
	"encoding/binary"
	"sync/atomic"
)

// The ticket key sets: the TLS session ticket keys of each TLS listener,
// at the very end of the region (after the meter), made and rotated by the
// supervisor and read by every worker, so that a ticket one worker issued
// resumes on every other, across reloads and worker restarts, and no key
// is ever written to a disk (the region is a memfd).
//
// A set is TicketSetWords words: a sequence number (odd while a writer
// changes the set: a seqlock), when it was last rotated (unix ns), the id
// of the listener it belongs to (a hash of its address; 0: unused), a
// reserved word, then TicketKeys keys of 32 bytes each, the newest first
// (the one tickets are issued with); an all-zero key is absent.
const (
	// TicketSets is the number of ticket key sets a region holds: one per
	// TLS listener, so at most this many TLS listeners share keys across
	// workers (config refuses more).
	TicketSets = 16
	// TicketKeys is the number of keys of a set: the one tickets are
	// issued with and the two before it, still accepted.
	TicketKeys = 3
	// TicketSetWords is a set's size in words (two cache lines).
	TicketSetWords = 16

	tSeq       = 0
	tRotatedAt = 1
	tID        = 2
	tKeys      = 4
	keyWords   = 4
)

// ticketWords is the words sets key sets take.
func ticketWords(sets int) int { return sets * TicketSetWords }

// setTickets places sets key sets at the end of the region.
func (r *Region) setTickets(sets int) {
	r.ticketSets, r.ticketBase = sets, len(r.words)-ticketWords(sets)
}

// TicketKey is one session ticket key.
type TicketKey = [32]byte

// HasTickets reports whether the region holds ticket key sets (a region
// made by a sluice before them, inherited in a binary upgrade, does not:
// each worker then keeps its own keys until a restart).
func (r *Region) HasTickets() bool { return r.ticketSets > 0 }

// set is the words of ticket key set i, or nil when there is none.
func (r *Region) set(i int) []int64 {
	if i < 0 || i >= r.ticketSets {
		return nil
	}
	base := r.ticketBase + i*TicketSetWords
	return r.words[base : base+TicketSetWords : base+TicketSetWords]
}

// TicketSeq is set i's sequence number: it changes whenever the set does,
// so a reader that saw the same even number has the keys of now (0: the
// set was never written, or there is none).
func (r *Region) TicketSeq(i int) int64 {
	s := r.set(i)
	if s == nil {
		return 0
	}
	return atomic.LoadInt64(&s[tSeq])
}

// TicketKeysOf reads set i: its keys (newest first, absent ones left
// out), the id it was made for, when it was last rotated, and the
// sequence number it was read at (which TicketSeq returns as long as the
// set is unchanged). ok is false when there is no such set or it was
// never written.
func (r *Region) TicketKeysOf(i int) (keys []TicketKey, id uint64, rotatedAt, seq int64, ok bool) {
	s := r.set(i)
	if s == nil {
		return nil, 0, 0, 0, false
	}
	for spins := 0; ; {
		seq = atomic.LoadInt64(&s[tSeq])
		if seq == 0 {
			return nil, 0, 0, 0, false
		}
		if seq&1 == 1 { // a writer is at it: its write takes nanoseconds
			if spins++; spins > maxSpins {
				return nil, 0, 0, 0, false // one that died in it: keep what you have
			}
			continue
		}
		keys = keys[:0]
		for k := 0; k < TicketKeys; k++ {
			var key TicketKey
			zero := true
			for w := 0; w < keyWords; w++ {
				v := atomic.LoadInt64(&s[tKeys+k*keyWords+w])
				binary.LittleEndian.PutUint64(key[w*8:], uint64(v))
				zero = zero && v == 0
			}
			if !zero {
				keys = append(keys, key)
			}
		}
		id, rotatedAt = uint64(atomic.LoadInt64(&s[tID])), atomic.LoadInt64(&s[tRotatedAt])
		if atomic.LoadInt64(&s[tSeq]) == seq {
			return keys, id, rotatedAt, seq, true
		}
	}
}

// maxSpins bounds how long a reader waits for a writer to finish.
const maxSpins = 1 << 16

// RotateTicketKeys makes fresh the newest key of set i, made for the
// listener id, at now (unix ns): the keys before it move down one place
// (the oldest goes), or, when the set was made for another id (or never),
// fresh is its only key. It reports false when there is no such set, or
// another writer holds it (two supervisors during a hand-over: the other
// one rotates) — except that a writer found at it with the sequence
// number stale (what TicketSeq said at the caller's previous try, a
// second or more ago) died there, and is taken over.
func (r *Region) RotateTicketKeys(i int, id uint64, fresh TicketKey, now, stale int64) bool {
	s := r.set(i)
	if s == nil {
		return false
	}
	seq := atomic.LoadInt64(&s[tSeq])
	held := seq + 1
	if seq&1 == 1 {
		if seq != stale {
			return false
		}
		held = seq + 2 // still odd: ours now
	}
	if !atomic.CompareAndSwapInt64(&s[tSeq], seq, held) {
		return false
	}
	same := seq > 0 && seq&1 == 0 && uint64(atomic.LoadInt64(&s[tID])) == id
	for k := TicketKeys - 1; k > 0; k-- {
		for w := 0; w < keyWords; w++ {
			var v int64
			if same {
				v = atomic.LoadInt64(&s[tKeys+(k-1)*keyWords+w])
			}
			atomic.StoreInt64(&s[tKeys+k*keyWords+w], v)
		}
	}
	for w := 0; w < keyWords; w++ {
		atomic.StoreInt64(&s[tKeys+w], int64(binary.LittleEndian.Uint64(fresh[w*8:])))
	}
	atomic.StoreInt64(&s[tID], int64(id))
	atomic.StoreInt64(&s[tRotatedAt], now)
	atomic.StoreInt64(&s[tSeq], held+1)
	return true
}
