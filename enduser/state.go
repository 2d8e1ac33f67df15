package enduser

// End users' quotas outlive the service (state_dir): the supervisor
// writes, with each checkpoint of the keys' quotas, the quota state of
// every end user who used some of a period running now — its owner word,
// its key's hash and quota kind, its total and its period's id and base —
// and the table's seed, under which the owner words were made. A fresh
// region takes the seed back before any worker reads it (so that an end
// user's id hashes to the same owner, and its key's overflow entry is the
// same), and each saved entry back into its owner's bucket. Rate limits
// and places in flight are not kept: a minute's window and the requests
// of processes that are gone mean nothing after a restart.
//
// One line per entry, each with its own checksum (CRC-32, hex, then the
// line), as the keys' state file: a torn or corrupt line is reported and
// skipped, never fatal.

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/sluice-gw/sluice/shm"
)

// Saved is one end user's quota state as the state file keeps it.
type Saved struct {
	Owner    int64  // the entry's owner word (seeded hash of key and end user)
	Key      uint32 // the entry's KeyHash | its quota's kind
	Total    int64  // quota tokens settled, ever
	PeriodID int64  // the period's id
	Base     int64  // the total when the period began
}

// Save is the quota state of every entry of r's table that has used some
// of its quota in the period of its kind running at clk: what a restart
// must not forget (an entry with nothing used this period holds what a
// new one would).
func Save(r *shm.Region, clk *Clock) []Saved {
	var out []Saved
	eachOwned(r, func(b shm.EndUserSlots, i int, o int64, w []int64) {
		key := uint32(atomic.LoadInt64(&w[wKeyStamp]) >> 32)
		kind := key & 3
		if kind == 0 {
			return
		}
		s := Saved{Owner: o, Key: key, PeriodID: atomic.LoadInt64(&w[wPeriodID]), Base: atomic.LoadInt64(&w[wPeriodBas]), Total: atomic.LoadInt64(&w[wTotal])}
		// The owner read again: an entry taken over while it was read is
		// not saved under the new end user's owner (the next checkpoint,
		// a second later, saves the new one's).
		if s.PeriodID != clk.id(kind) || s.Total-s.Base <= 0 || atomic.LoadInt64(b.Owner(i)) != o {
			return
		}
		out = append(out, s)
	})
	return out
}

// Restore puts saved back into r's table, fresh (no worker uses it yet;
// its seed the one the owners were made under:
// shm.Region.SetEndUserSeed), each into a free
// entry of its owner's bucket, its last use now (region clock, ns).
// lost counts those that found no free entry (a smaller table than they
// were saved from) or no table at all.
func Restore(r *shm.Region, saved []Saved, now int64) (restored, lost int) {
	stampNow := (now / 1e9) & math.MaxUint32
	for _, s := range saved {
		b, ok := r.EndUserBucketOf(uint64(s.Owner))
		if !ok || s.Owner&1 == 0 || s.Key&3 == 0 {
			lost++
			continue
		}
		placed := false
		for i := range shm.EndUserBucket {
			if o := atomic.LoadInt64(b.Owner(i)); o == s.Owner {
				placed = true // a duplicate line: the first holds
				break
			}
		}
		for i := 0; i < shm.EndUserBucket && !placed; i++ {
			if atomic.CompareAndSwapInt64(b.Owner(i), 0, s.Owner) {
				w := b.Entry(i)
				atomic.StoreInt64(&w[wKeyStamp], int64(s.Key)<<32|stampNow)
				atomic.StoreInt64(&w[wTotal], s.Total)
				atomic.StoreInt64(&w[wPeriodBas], s.Base)
				atomic.StoreInt64(&w[wPeriodID], s.PeriodID)
				placed = true
				restored++
			}
		}
		if !placed {
			lost++
		}
	}
	return restored, lost
}

// WriteState writes the seed and saved, a line each: the line's CRC-32
// (IEEE) in hex, a space, the line.
func WriteState(w io.Writer, seed [16]byte, saved []Saved) error {
	bw := bufio.NewWriter(w)
	line := func(s string) { fmt.Fprintf(bw, "%08x %s\n", crc32.ChecksumIEEE([]byte(s)), s) }
	line("seed " + hex.EncodeToString(seed[:]))
	for _, s := range saved {
		line(fmt.Sprintf("%d %d %d %d %d", s.Owner, s.Key, s.Total, s.PeriodID, s.Base))
	}
	return bw.Flush()
}

// maxStateLine bounds a line of the file: an entry's is the longest, at
// most 113 bytes (a checksum and five int64s, signs included).
const maxStateLine = 128

// ReadState reads what WriteState wrote. hasSeed is false when no good
// seed line was read: the entries then cannot be placed (their owners
// were made under a seed that is lost). Lines that do not read are
// counted in bad and skipped; err is only the reader's own failure.
func ReadState(r io.Reader) (seed [16]byte, hasSeed bool, saved []Saved, bad int, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, maxStateLine), maxStateLine)
	for {
		if !sc.Scan() {
			if err = sc.Err(); err == bufio.ErrTooLong {
				// Not ours past here: what follows cannot be told from
				// the rest of that line.
				bad++
				err = nil
			}
			return seed, hasSeed, saved, bad, err
		}
		sum, body, ok := strings.Cut(sc.Text(), " ")
		want, perr := strconv.ParseUint(sum, 16, 32)
		if !ok || perr != nil || len(sum) != 8 || crc32.ChecksumIEEE([]byte(body)) != uint32(want) {
			bad++
			continue
		}
		if h, found := strings.CutPrefix(body, "seed "); found {
			b, herr := hex.DecodeString(h)
			if herr != nil || len(b) != len(seed) {
				bad++
				continue
			}
			copy(seed[:], b)
			hasSeed = true
			continue
		}
		if s, ok := parseSaved(body); ok {
			saved = append(saved, s)
		} else {
			bad++
		}
	}
}

// parseSaved reads one entry's line.
func parseSaved(body string) (Saved, bool) {
	f := strings.Fields(body)
	if len(f) != 5 {
		return Saved{}, false
	}
	var n [5]int64
	for i, s := range f {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return Saved{}, false
		}
		n[i] = v
	}
	if n[1] < 0 || n[1] > math.MaxUint32 {
		return Saved{}, false
	}
	return Saved{Owner: n[0], Key: uint32(n[1]), Total: n[2], PeriodID: n[3], Base: n[4]}, true
}
