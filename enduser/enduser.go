// Package enduser holds each end user of a key (the application behind a
// key serves many) to the key's end_user limits — requests and tokens per
// minute, requests in flight, tokens per calendar period — exact across
// workers, in the shared region's end-user table (shm's endusers.go).
//
// Each key may hold at most its max_tracked entries at once (counted by
// Sweep, bounded at every claim), so that one key's flood of distinct
// end users takes no other key's room. An end user who cannot have an
// entry — the key's share full of end users whose state still counts, or
// their bucket full — is held, with every other such end user of the key,
// to the key's overflow entry: one end user's limits for them all. A flood
// of distinct ids therefore tightens the limits, never lifts them: an
// entry is only ever taken over when what it holds is what a new entry
// would (nothing in flight, both rates recovered, nothing used this
// period), so no end user's state is lost to another's arrival.
//
// The package knows nothing of HTTP: the pipeline finds a request's entry
// (Find), admits it on the entry with package admission (the entry is a
// Counter, as a key's cell is), reserves its quota (ReserveQuota) and
// settles it when the request ends.
package enduser

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/dchest/siphash"

	"github.com/sluice-gw/sluice/quota"
	"github.com/sluice-gw/sluice/shm"
)

// Entry words (shm.EndUserEntryWords of them).
const (
	wKeyStamp  = 0 // the owning key's hash (its low 2 bits: its quota's period, Kind) in the high 32 bits, the last use (region seconds) in the low 32
	wRequest   = 1 // the requests limiter's TAT (shm.RequestTAT + 1)
	wTokens    = 2 // the tokens limiter's TAT
	wInFlight  = 3 // epoch<<countBits | requests in flight
	wReserved  = 4 // epoch<<countBits | quota tokens reserved by requests in flight
	wTotal     = 5 // quota tokens settled, ever
	wPeriodID  = 6 // the quota period's id (negative while it rolls over)
	wPeriodBas = 7 // the total when the period began
)

// countBits holds a count of an epoch: in flight, reserved tokens (the
// epoch is shm's EndUserEpoch, 23 bits of it, so the word stays positive).
const (
	countBits = 40
	countMask = 1<<countBits - 1
	epochMask = 1<<23 - 1
)

// Limits are an end user's limits (0: none).
type Limits struct {
	RequestsPerMinute, TokensPerMinute, MaxConcurrent int64
	Quota                                             int64 // tokens per Per; 0: none
	Per                                               quota.Period
}

// Key is a key's end users as the table knows them (NewKey).
type Key struct {
	Name    string
	Hash    uint32 // KeyHash(Name)
	Tracked *int64 // the key's count of entries whose state counts (its cell's shm.KeyEndUsersScalar)
	Max     int64  // max_tracked: at most this many (the overflow entry aside)
	Limits  Limits

	// sip is the key's SipHash key for its end users' owner words, and
	// overflow its overflow entry's owner: both derived from the table's
	// seed and the key's name (SHA-256), once.
	sip      [2]uint64
	overflow int64
}

// NewKey is key name's end users in the table of region seed seed.
func NewKey(seed [16]byte, name string, tracked *int64, max int64, lim Limits) Key {
	k := Key{Name: name, Hash: KeyHash(name), Tracked: tracked, Max: max, Limits: lim}
	h := sha256.New()
	h.Write(seed[:])
	h.Write([]byte(name))
	sum := h.Sum(nil)
	k.sip = [2]uint64{binary.LittleEndian.Uint64(sum), binary.LittleEndian.Uint64(sum[8:])}
	k.overflow = int64(binary.LittleEndian.Uint64(sum[16:]) | 1)
	return k
}

// KeyHash is the 30 bits an entry keeps of its key's name, for Sweep (in
// a 32-bit word whose low 2 bits are its quota's Kind).
func KeyHash(name string) uint32 {
	s := sha256.Sum256([]byte(name))
	return binary.LittleEndian.Uint32(s[:]) &^ 3
}

// kind is which period an entry's quota counts: 0 none, else the
// quota.Period + 1 (period ids of different periods do not compare).
func (l Limits) kind() uint32 {
	if l.Quota <= 0 {
		return 0
	}
	return uint32(l.Per) + 1
}

// Clock is a moment on the quotas' calendar, whose period ids are read
// only when needed (a takeover's check), once each.
type Clock struct {
	Cal quota.Calendar
	Now time.Time
	ids [quota.NumPeriods + 1]int64
}

// id is the id of the period of kind (1–3) at the clock's moment.
func (c *Clock) id(kind uint32) int64 {
	if c.ids[kind] == 0 {
		c.ids[kind] = c.Cal.ID(quota.Period(kind-1), c.Now)
	}
	return c.ids[kind]
}

// Table is a region's end-user table.
type Table struct{ r *shm.Region }

// NewTable is r's table.
func NewTable(r *shm.Region) Table { return Table{r: r} }

// MaxID bounds an end user id, in bytes (longer ones are the caller's to
// refuse).
const MaxID = 1024

// owner is the owner word of end user id of k: SipHash-2-4 of the id under
// the key's own SipHash key, which the region's random seed makes
// unpredictable, so that no client can choose an id whose owner is another
// end user's, or ids that crowd one bucket. Never 0 (a free entry).
// SipHash rather than SHA-256, which the owner first was: the same
// unpredictability for a tenth of the instructions (callgrind, the accept
// path: about 250 against 2,500 per request).
func (k *Key) owner(id string) int64 {
	return int64(siphash.Hash(k.sip[0], k.sip[1], unsafe.Slice(unsafe.StringData(id), len(id))) | 1)
}

// Place is where Find put an end user.
type Place uint8

// Places.
const (
	None     Place = iota // no entry could be had (the table is full around it): refuse
	Tracked               // the end user's own entry
	Overflow              // the key's overflow entry, shared with every end user it could not track
)

// String is the place's name (the usage line, metrics).
func (p Place) String() string { return [...]string{"none", "tracked", "overflow"}[p] }

// Entry is a request's handle on an end user's entry: a Counter for
// package admission, and the quota's reservation. One per request.
type Entry struct {
	w     []int64
	epoch *int64

	held     int64 // the epoch a place was taken in (Acquire)
	reserved int64 // quota tokens reserved
	resEpoch int64 // the epoch they were reserved in
}

// Find is the entry of end user id of key k at now (region clock, ns)
// in quota period id period (calendar; any value without a quota), taken
// if needed; or the key's overflow entry; or None.
func (t Table) Find(k *Key, id string, now int64, clk *Clock) (*Entry, Place) {
	e := &Entry{}
	if p := t.FindInto(e, k, id, now, clk); p != None {
		return e, p
	}
	return nil, None
}

// FindInto is Find into e, an entry handle of the caller's (a request's
// own state holds one, with no allocation of its own).
func (t Table) FindInto(e *Entry, k *Key, id string, now int64, clk *Clock) Place {
	if w := t.claim(k, k.owner(id), now, clk, true); w != nil {
		*e = Entry{w: w, epoch: t.r.EndUserEpochWord()}
		return Tracked
	}
	if w := t.claim(k, k.overflow, now, clk, false); w != nil {
		*e = Entry{w: w, epoch: t.r.EndUserEpochWord()}
		return Overflow
	}
	return None
}

// claim finds owner's entry in its bucket, or takes a free one, or one
// whose state is a new entry's (the least recently used first). bounded:
// only while k holds fewer than its Max.
func (t Table) claim(k *Key, owner int64, now int64, clk *Clock, bounded bool) []int64 {
	b, ok := t.r.EndUserBucketOf(uint64(owner))
	if !ok {
		return nil
	}
	epoch := t.epoch()
	stamp := int64(k.Hash|k.Limits.kind())<<32 | (now/int64(time.Second))&math.MaxUint32
	for try := 0; try < 4; try++ {
		victim, victimOwner, oldest := -1, int64(0), int64(math.MaxInt64)
		for i := range shm.EndUserBucket {
			o := atomic.LoadInt64(b.Owner(i))
			w := b.Entry(i)
			if o == freeing {
				continue // Sweep clears it now
			}
			if o == owner {
				if atomic.LoadInt64(&w[wKeyStamp]) != stamp {
					atomic.StoreInt64(&w[wKeyStamp], stamp)
				}
				return w
			}
			age := int64(-1) // free entries first
			if o != 0 {
				if !reusable(w, now, epoch, clk) {
					continue
				}
				age = atomic.LoadInt64(&w[wKeyStamp]) & math.MaxUint32
			}
			if age < oldest {
				victim, victimOwner, oldest = i, o, age
			}
		}
		if victim < 0 {
			return nil
		}
		if bounded && !incrementBelow(k.Tracked, k.Max) {
			return nil
		}
		if atomic.CompareAndSwapInt64(b.Owner(victim), victimOwner, owner) {
			w := b.Entry(victim)
			atomic.StoreInt64(&w[wKeyStamp], stamp)
			return w
		}
		if bounded {
			atomic.AddInt64(k.Tracked, -1)
		}
	}
	return nil
}

func (t Table) epoch() int64 { return t.r.EndUserEpoch() & epochMask }

// reusable reports whether entry w holds what a new entry would: nothing
// in flight or reserved (this epoch), both limiters recovered by now, no
// quota tokens used in the period of its own quota running at clk, no
// rollover under way. Taking it over loses no one's state.
func reusable(w []int64, now, epoch int64, clk *Clock) bool {
	if counted(atomic.LoadInt64(&w[wInFlight]), epoch) > 0 || counted(atomic.LoadInt64(&w[wReserved]), epoch) > 0 {
		return false
	}
	if atomic.LoadInt64(&w[wRequest]) > now || atomic.LoadInt64(&w[wTokens]) > now {
		return false
	}
	kind := uint32(atomic.LoadInt64(&w[wKeyStamp])>>32) & 3
	if kind == 0 {
		return true // no quota: its total counts nothing
	}
	id := atomic.LoadInt64(&w[wPeriodID])
	used := atomic.LoadInt64(&w[wTotal]) - atomic.LoadInt64(&w[wPeriodBas])
	return id >= 0 && (id < clk.id(kind) || used <= 0)
}

// Live reports whether entry w's state counts (it is not reusable): what
// Sweep counts against its key's max_tracked.
func Live(w []int64, now, epoch int64, clk *Clock) bool {
	return !reusable(w, now, epoch&epochMask, clk)
}

// freeing marks an entry Sweep frees while it clears its state (owners
// are odd: never this).
const freeing = 2

// KeyOf is the key hash entry w keeps.
func KeyOf(w []int64) uint32 { return uint32(atomic.LoadInt64(&w[wKeyStamp])>>32) &^ 3 }

// counted is the count a word of epoch<<countBits|count holds in epoch:
// none when written in another.
func counted(v, epoch int64) int64 {
	if v>>countBits != epoch {
		return 0
	}
	return v & countMask
}

// incrementBelow adds 1 to *p if it stays at most max.
func incrementBelow(p *int64, max int64) bool {
	for {
		old := atomic.LoadInt64(p)
		if old >= max {
			return false
		}
		if atomic.CompareAndSwapInt64(p, old, old+1) {
			return true
		}
	}
}

// Acquire takes a place of at most limit in flight (col unused: the
// entry counts all workers in one word, in the epoch, so that a dead
// worker's places are forgotten with its epoch).
func (e *Entry) Acquire(_ int, limit int64) bool {
	epoch := atomic.LoadInt64(e.epoch) & epochMask
	for {
		old := atomic.LoadInt64(&e.w[wInFlight])
		n := counted(old, epoch)
		if n >= limit {
			return false
		}
		if atomic.CompareAndSwapInt64(&e.w[wInFlight], old, epoch<<countBits|(n+1)) {
			e.held = epoch
			return true
		}
	}
}

// Release gives the place back, unless its epoch has ended (a worker
// died since: every place of then was forgotten).
func (e *Entry) Release(_ int) {
	for {
		old := atomic.LoadInt64(&e.w[wInFlight])
		if counted(old, e.held) == 0 {
			return
		}
		if atomic.CompareAndSwapInt64(&e.w[wInFlight], old, old-1) {
			return
		}
	}
}

// GCRA is shm.Cell.GCRA on the entry's limiter i (shm.RequestTAT,
// shm.TokenTAT).
func (e *Entry) GCRA(i int, now, cost, window int64) (bool, int64) {
	return shm.GCRA(&e.w[wRequest+i], now, cost, window)
}

// Settle is shm.Cell.Settle on the entry's limiter i.
func (e *Entry) Settle(i int, delta int64) { atomic.AddInt64(&e.w[wRequest+i], delta) }

// QuotaRefusal is the quota's no.
type QuotaRefusal struct {
	Used, Want, Max int64
	ResetAt         time.Time
}

// ReserveQuota reserves want tokens of the end user's quota in the period
// running at now (cal), if settled use, what requests in flight reserved
// and want stay within lim.Quota.
func (e *Entry) ReserveQuota(want int64, lim Limits, cal quota.Calendar, now time.Time) *QuotaRefusal {
	if lim.Quota <= 0 {
		return nil
	}
	want = min(max(want, 0), countMask)
	epoch := atomic.LoadInt64(e.epoch) & epochMask
	for {
		old := atomic.LoadInt64(&e.w[wReserved])
		used := quota.UsedOf(&e.w[wPeriodID], &e.w[wPeriodBas], &e.w[wTotal], lim.Per, cal, now)
		r := counted(old, epoch)
		if used == quota.Saturated || used+r+want > lim.Quota {
			return &QuotaRefusal{Used: min(used, lim.Quota) + r, Want: want, Max: lim.Quota, ResetAt: cal.End(lim.Per, now)}
		}
		// Checked and taken in one compare-and-swap of the reservation:
		// a Settle in between (its use added, then its reservation given
		// back) changes the word, and the check runs again.
		if atomic.CompareAndSwapInt64(&e.w[wReserved], old, epoch<<countBits|min(r+want, countMask)) {
			e.reserved, e.resEpoch = want, epoch
			return nil
		}
	}
}

// SettleQuota adds what the request used to the end user's total, then
// gives back its reservation (unless its epoch has ended).
func (e *Entry) SettleQuota(used int64) {
	if used > 0 {
		quota.AddSaturating(&e.w[wTotal], used)
	}
	e.ReturnQuota()
}

// ReturnQuota gives back the quota reservation unused (a refusal, a
// fallback that reserves its own).
func (e *Entry) ReturnQuota() {
	if e.reserved == 0 {
		return
	}
	for {
		old := atomic.LoadInt64(&e.w[wReserved])
		n := counted(old, e.resEpoch)
		if n == 0 {
			break
		}
		if atomic.CompareAndSwapInt64(&e.w[wReserved], old, e.resEpoch<<countBits|(n-min(n, e.reserved))) {
			break
		}
	}
	e.reserved = 0
}

// QuotaUsed is what the end user settled in the period running at now.
func (e *Entry) QuotaUsed(lim Limits, cal quota.Calendar, now time.Time) int64 {
	return quota.UsedOf(&e.w[wPeriodID], &e.w[wPeriodBas], &e.w[wTotal], lim.Per, cal, now)
}

// Sweep counts each key's entries whose state counts into its count
// (tracked, by KeyHash), correcting what claims and takeovers left (a
// takeover does not know whose entry it took), and frees the entries of
// keys not in tracked (removed, or without end_user now) once nothing in
// flight holds them, their state cleared — the supervisor's, every
// second. Claims made while it scans stay counted: it adds the difference
// between what it counted and what the count was when it began. It
// returns the entries freed.
func Sweep(r *shm.Region, tracked map[uint32]*int64, now int64, clk *Clock) (freed int) {
	epoch := r.EndUserEpoch()
	before := make(map[uint32]int64, len(tracked))
	for h, p := range tracked {
		before[h] = atomic.LoadInt64(p)
	}
	counts := make(map[uint32]int64, len(tracked))
	eachOwned(r, func(b shm.EndUserSlots, i int, o int64, w []int64) {
		_, ok := tracked[KeyOf(w)]
		switch {
		case !ok:
			// Freed once nothing in flight holds it: its limiters and
			// quota are the removed key's, of no one now.
			if counted(atomic.LoadInt64(&w[wInFlight]), epoch&epochMask) == 0 && counted(atomic.LoadInt64(&w[wReserved]), epoch&epochMask) == 0 &&
				atomic.CompareAndSwapInt64(b.Owner(i), o, freeing) {
				for j := range w {
					atomic.StoreInt64(&w[j], 0)
				}
				atomic.StoreInt64(b.Owner(i), 0)
				freed++
			}
		case Live(w, now, epoch, clk):
			counts[KeyOf(w)]++
		}
	})
	for h, p := range tracked {
		atomic.AddInt64(p, counts[h]-before[h])
	}
	return freed
}

// eachOwned calls fn with every entry of r's table that has an owner (o,
// not free and not being freed): its bucket, its index there, its state.
func eachOwned(r *shm.Region, fn func(b shm.EndUserSlots, i int, o int64, w []int64)) {
	r.EndUserBuckets(func(b shm.EndUserSlots) {
		for i := range shm.EndUserBucket {
			if o := atomic.LoadInt64(b.Owner(i)); o != 0 && o != freeing {
				fn(b, i, o, b.Entry(i))
			}
		}
	})
}
