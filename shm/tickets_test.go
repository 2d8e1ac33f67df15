package shm

import (
	"bytes"
	"sync"
	"sync/atomic"
	"testing"
)

func key(b byte) TicketKey { return TicketKey(bytes.Repeat([]byte{b}, 32)) }

// A set keeps the newest key first and the two before it; another
// listener's id starts it afresh; a second mapping (another worker) reads
// what the first wrote.
func TestTicketKeysRotate(t *testing.T) {
	r, other := oldRegion(t, LayoutVersion, Tables{})
	if !other.HasTickets() {
		t.Fatal("a current region has no ticket key sets")
	}
	if _, _, _, _, ok := other.TicketKeysOf(0); ok || other.TicketSeq(0) != 0 {
		t.Fatal("a set never written reads as written")
	}
	for i, b := range []byte{1, 2, 3, 4} {
		if !r.RotateTicketKeys(0, 77, key(b), int64(100+i), 0) {
			t.Fatalf("rotation %d refused", i)
		}
	}
	keys, id, at, seq, ok := other.TicketKeysOf(0)
	if !ok || id != 77 || at != 103 || seq != other.TicketSeq(0) || len(keys) != TicketKeys ||
		keys[0] != key(4) || keys[1] != key(3) || keys[2] != key(2) {
		t.Fatalf("after four rotations: ok %v id %d at %d seq %d/%d keys %d (%x…)", ok, id, at, seq, other.TicketSeq(0), len(keys), keys[0][0])
	}
	if _, _, _, _, ok := other.TicketKeysOf(1); ok {
		t.Fatal("set 1 reads as written")
	}
	r.RotateTicketKeys(0, 78, key(9), 200, 0) // another listener took the place
	if keys, id, _, _, _ := other.TicketKeysOf(0); id != 78 || len(keys) != 1 || keys[0] != key(9) {
		t.Fatalf("another listener's set: id %d, %d keys", id, len(keys))
	}
	if r.RotateTicketKeys(TicketSets, 1, key(1), 1, 0) || r.RotateTicketKeys(-1, 1, key(1), 1, 0) {
		t.Fatal("a set past the end was written")
	}
}

// A writer that died in the middle of a rotation (its sequence number left
// odd) is waited for, not for ever, and taken over by the next writer that
// saw the same odd number before.
func TestTicketKeysWriterDiedInRotation(t *testing.T) {
	r, other := oldRegion(t, LayoutVersion, Tables{})
	r.RotateTicketKeys(2, 5, key(1), 1, 0)
	s := r.set(2)
	s[tSeq]++ // odd: a writer at it
	stuck := r.TicketSeq(2)
	if _, _, _, _, ok := other.TicketKeysOf(2); ok {
		t.Fatal("a set under a writer read as whole")
	}
	if r.RotateTicketKeys(2, 5, key(2), 2, 0) {
		t.Fatal("a writer at it was overtaken at once")
	}
	if !r.RotateTicketKeys(2, 5, key(3), 3, stuck) {
		t.Fatal("a writer stuck at the same number was not taken over")
	}
	keys, _, _, seq, ok := other.TicketKeysOf(2)
	if !ok || seq&1 != 0 || len(keys) != 1 || keys[0] != key(3) {
		t.Fatalf("after the take-over: ok %v seq %d, %d keys", ok, seq, len(keys))
	}
}

// Readers in other mappings never see a set half written: every key they
// read is whole, and the keys are in the order they were made.
func TestTicketKeysNoTornRead(t *testing.T) {
	r, other := oldRegion(t, LayoutVersion, Tables{})
	var done atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for b := 1; b < 20000; b++ {
			r.RotateTicketKeys(0, 1, key(byte(b%250+1)), int64(b), 0)
		}
		done.Store(true)
	}()
	reads := 0
	for !done.Load() {
		keys, _, _, _, ok := other.TicketKeysOf(0)
		if !ok {
			continue
		}
		reads++
		for i, k := range keys {
			if k != key(k[0]) {
				t.Fatalf("key %d torn: %x", i, k)
			}
			if i > 0 && k[0] != keys[i-1][0]-1 && !(keys[i-1][0] == 1 && k[0] == 250) {
				t.Fatalf("keys out of order: %x then %x", keys[i-1][0], k[0])
			}
		}
	}
	wg.Wait()
	if reads == 0 {
		t.Fatal("no read while the writer rotated")
	}
}

// A region of the version before the ticket key sets opens, with none:
// reads miss and rotations are refused.
func TestTicketKeysInAnOlderRegion(t *testing.T) {
	_, opened := oldRegion(t, layoutNoTickets, Tables{Recall: 64, Prefix: 64})
	if opened.HasTickets() || opened.RotateTicketKeys(0, 1, key(1), 1, 0) || opened.TicketSeq(0) != 0 {
		t.Fatal("a version-4 region has ticket key sets")
	}
	if _, rows := opened.MeterCapacity(); rows == 0 {
		t.Fatal("its meter is gone")
	}
}
