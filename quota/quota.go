// Package quota keeps each key's token quotas and spend budget over
// calendar periods (a day, an ISO week, a month, in one time zone), exact
// across workers, in two cells of the shared region per key: one for
// tokens, one for pico-USD. Each cell keeps a monotonic total of what was
// settled and, for each period, the period's id and the total when it
// began (its base): what a period used is the total less its base, so a
// period rolls over by one snapshot, whoever notices first. What requests
// in flight reserved is each worker's column of the cell (cleared when a
// worker dies), admitted the way shm.Cell.Acquire is: counted first, the
// sum checked after, given back when over — so that no two workers can
// both take the last of a quota.
//
// The package knows nothing of requests or HTTP: the pipeline reserves a
// request's worst case (Reserve), and settles what it used (Settle).
package quota

import (
	"fmt"
	"math"
	"os"
	"sync/atomic"
	"time"

	"github.com/sluice-gw/sluice/shm"
)

// Period is a calendar period of a quota or a budget.
type Period uint8

// The periods.
const (
	Day Period = iota
	Week
	Month
	NumPeriods
)

var periodNames = [NumPeriods]string{"day", "week", "month"}

// String is the period's name in the configuration and the metrics.
func (p Period) String() string { return periodNames[p] }

// ParsePeriod reads a period's name.
func ParsePeriod(s string) (Period, bool) {
	for i, n := range periodNames {
		if n == s {
			return Period(i), true
		}
	}
	return 0, false
}

// Calendar says which period a moment is in, in a time zone, on a clock
// that may be shifted (for tests: SLUICE_TEST_QUOTA_CLOCK).
type Calendar struct {
	Loc   *time.Location
	Shift time.Duration // added to the machine's clock
}

// NewCalendar is loc's calendar, moved by SLUICE_TEST_QUOTA_SHIFT, a
// duration, when it is set (tests of a period's rollover: a gateway
// started moments before midnight). The supervisor's workers inherit it,
// so every process reads one calendar.
func NewCalendar(loc *time.Location) Calendar {
	d, _ := time.ParseDuration(os.Getenv("SLUICE_TEST_QUOTA_SHIFT"))
	return Calendar{Loc: loc, Shift: d}
}

// Now is the calendar's time now.
func (c Calendar) Now() time.Time { return time.Now().Add(c.Shift).In(c.Loc) }

// ID is the number of t's period p: days and months count from 1970 in
// the calendar's zone, ISO weeks (Monday first) likewise.
func (c Calendar) ID(p Period, t time.Time) int64 {
	t = t.In(c.Loc)
	y, m, d := t.Date()
	day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400 // 1970-01-01 was a Thursday
	switch p {
	case Week:
		return (day + 3) / 7 // weeks from Monday 1969-12-29
	case Month:
		return int64(y)*12 + int64(m) - 1
	}
	return day
}

// End is when t's period p ends (the next one begins), in the zone.
func (c Calendar) End(p Period, t time.Time) time.Time {
	t = t.In(c.Loc)
	y, m, d := t.Date()
	switch p {
	case Week:
		back := (int(t.Weekday()) + 6) % 7 // days since Monday
		return time.Date(y, m, d-back+7, 0, 0, 0, 0, c.Loc)
	case Month:
		return time.Date(y, m+1, 1, 0, 0, 0, 0, c.Loc)
	}
	return time.Date(y, m, d+1, 0, 0, 0, 0, c.Loc)
}

// Cell scalars: the total, then each period's id and base.
const (
	sTotal = 0
	sFirst = 1 // Day's id; its base next, then Week's, Month's
)

func idScalar(p Period) int   { return sFirst + 2*int(p) }
func baseScalar(p Period) int { return sFirst + 2*int(p) + 1 }

// rolling marks a period's id while one worker takes its new base: the
// id's negation, so that readers wait (rollTimeout at most) instead of
// reading the old base under the new id.
const rollTimeout = time.Millisecond

// Used is what c's period p (its id id) used: c's total less the base of
// the period, rolling it over first if it is a period before id.
func Used(c *shm.Cell, p Period, id int64) int64 {
	ip, bp, tp := c.Scalar(idScalar(p)), c.Scalar(baseScalar(p)), c.Scalar(sTotal)
	deadline := time.Time{}
	for {
		got := atomic.LoadInt64(ip)
		switch {
		case got == id:
			return max(atomic.LoadInt64(tp)-atomic.LoadInt64(bp), 0)
		case got >= 0 && got < id:
			if atomic.CompareAndSwapInt64(ip, got, -id) {
				atomic.StoreInt64(bp, atomic.LoadInt64(tp))
				atomic.StoreInt64(ip, id)
			}
		case got == -id:
			// Another worker rolls it over now; one that died doing it is
			// relieved after rollTimeout.
			if deadline.IsZero() {
				deadline = time.Now().Add(rollTimeout)
			} else if time.Now().After(deadline) && atomic.LoadInt64(ip) == -id {
				atomic.StoreInt64(bp, atomic.LoadInt64(tp))
				atomic.StoreInt64(ip, id)
			}
		default:
			// A later period than id (another worker's clock ran ahead, or
			// an id being rolled to another): nothing used in id.
			return 0
		}
	}
}

// Limit is one quota: at most Max in period P (Max > 0).
type Limit struct {
	P   Period
	Max int64
}

// Refusal says which limit a reservation did not fit, and until when.
type Refusal struct {
	Limit   Limit
	Used    int64 // settled in the period, and reserved by requests in flight
	Want    int64
	ResetAt time.Time // the period's end
}

// Error is the refusal in words, for the client.
func (r *Refusal) Error() string {
	return fmt.Sprintf("%d of %d used this %s, %d more asked", r.Used, r.Limit.Max, r.Limit.P, r.Want)
}

// Reserve takes want from worker column col of c for a request, if every
// limit holds with it: settled use plus everything reserved, want
// included, at most each Max. On a refusal nothing is taken.
func Reserve(c *shm.Cell, col int, want int64, limits []Limit, cal Calendar) *Refusal {
	if len(limits) == 0 {
		return nil
	}
	want = max(want, 0)
	now := cal.Now()
	c.Add(col, want)
	reserved := c.Total()
	for _, l := range limits {
		used := Used(c, l.P, cal.ID(l.P, now))
		if used+reserved > l.Max {
			c.Add(col, -want)
			return &Refusal{Limit: l, Used: used + reserved - want, Want: want, ResetAt: cal.End(l.P, now)}
		}
	}
	return nil
}

// Settle gives back a reservation from column col and adds what the
// request used to c's total (0 or more).
func Settle(c *shm.Cell, col int, reserved, used int64) {
	c.Add(col, -reserved)
	if used > 0 {
		addSaturating(c.Scalar(sTotal), used) // a backend's figures are not trusted to stay in range
	}
}

// addSaturating adds d (> 0) to *p, stopping at the largest int64 rather
// than wrapping to a negative total (which would lift every quota). The
// supervisor imports this package, and the pipeline's sat may not be its
// dependency: the few lines are here.
func addSaturating(p *int64, d int64) {
	for {
		old := atomic.LoadInt64(p)
		n := old + d
		if n < old {
			n = math.MaxInt64
		}
		if atomic.CompareAndSwapInt64(p, old, n) {
			return
		}
	}
}

// Total is everything c settled, ever (every period's use is a part).
func Total(c *shm.Cell) int64 { return atomic.LoadInt64(c.Scalar(sTotal)) }
