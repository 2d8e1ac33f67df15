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
	"runtime"
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
//
// The local day is t's UTC day moved by the zone's offset at t, and the
// month comes from that day by integer arithmetic (civil): callgrind on
// the accept path with governance counted t.Date and time.Date, which
// this replaced, at some 600 instructions a request (TestCalendarID
// checks it against them).
func (c Calendar) ID(p Period, t time.Time) int64 {
	_, off := t.In(c.Loc).Zone()
	day := floorDiv(t.Unix()+int64(off), 86400) // 1970-01-01 was a Thursday
	switch p {
	case Week:
		return floorDiv(day+3, 7) // weeks from Monday 1969-12-29
	case Month:
		y, m := civil(day)
		return y*12 + m - 1
	}
	return day
}

// floorDiv is a / b rounded down (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// civil is the year and month (1–12) of day, counted from 1970-01-01, in
// the proleptic Gregorian calendar (Howard Hinnant's civil_from_days).
func civil(day int64) (y, m int64) {
	z := day + 719468 // from 0000-03-01
	era := floorDiv(z, 146097)
	doe := z - era*146097                                  // [0, 146096]
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // [0, 399]
	doy := doe - (365*yoe + yoe/4 - yoe/100)               // [0, 365], from March 1
	mp := (5*doy + 2) / 153                                // [0, 11], March first
	y, m = yoe+era*400, mp+3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return y, m
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
// id's negation, so that readers wait instead of reading the old base
// under the new id. The roll is three stores; a reader that waits
// rollTimeout for it takes the roller for dead (a worker killed between
// them) and finishes the roll itself. Were the roller only descheduled,
// its late store of the base moves the base forward by what was settled
// in between — a few requests' worth, at most, on a machine stalled
// past rollTimeout.
const rollTimeout = 250 * time.Millisecond

// boundarySlack is how close to a period's end a worker may read the
// clock while another, a moment later, already rolled the period over:
// a period id ahead of the caller's by one, within it, is that race.
const boundarySlack = time.Minute

// Saturated is what Used says of a cell whose total reached the largest
// int64 (a lifetime of 9.2 million USD in pico-USD, or 9.2e18 tokens:
// never from real traffic, as every request's figures are bounded
// before they are settled): every period is then taken for used up, so
// that a saturated total, where each new period's base would equal it,
// fails closed instead of lifting the limit for good.
const Saturated = math.MaxInt64

// Used is what c's period p at now (in cal) used: c's total less the
// period's base, rolling the period over first when the cell still has
// an earlier one.
//
// A cell whose period is later than now's — another worker's clock read a
// moment after this one's, across the boundary — is read as it is. Any
// other later period (quota_timezone changed by a reload to a zone behind
// it, the clock set back) is carried on: the cell takes now's id with
// its base as it was, so what was spent still counts, until now's period
// ends.
func Used(c *shm.Cell, p Period, cal Calendar, now time.Time) int64 {
	return UsedOf(c.Scalar(idScalar(p)), c.Scalar(baseScalar(p)), c.Scalar(sTotal), p, cal, now)
}

// UsedOf is Used over any three words of the shared region: a period's id
// and base, and the total they count from (an end user's quota keeps them
// in its entry of the end-user table).
func UsedOf(ip, bp, tp *int64, p Period, cal Calendar, now time.Time) int64 {
	id := cal.ID(p, now)
	var deadline time.Time
	for spins := 0; ; spins++ {
		got := atomic.LoadInt64(ip)
		switch {
		case got == id:
			return used(tp, bp)
		case got >= 0 && got < id:
			if atomic.CompareAndSwapInt64(ip, got, -id) {
				atomic.StoreInt64(bp, atomic.LoadInt64(tp))
				atomic.StoreInt64(ip, id)
			}
		case got > id:
			if got == id+1 && cal.End(p, now).Sub(now) < boundarySlack {
				return used(tp, bp) // the next period, as rolled a moment ago
			}
			atomic.CompareAndSwapInt64(ip, got, id) // carried on: the base stays
		default: // got < 0: another worker rolls the period over to -got now
			if deadline.IsZero() {
				deadline = time.Now().Add(rollTimeout)
			} else if time.Now().After(deadline) && atomic.LoadInt64(ip) == got {
				atomic.StoreInt64(bp, atomic.LoadInt64(tp))
				atomic.CompareAndSwapInt64(ip, got, -got)
			}
			if spins < 64 {
				runtime.Gosched()
			} else {
				time.Sleep(50 * time.Microsecond)
			}
		}
	}
}

// used is a period's use from its total and base (0 at least; Saturated
// once the total is).
func used(tp, bp *int64) int64 {
	total := atomic.LoadInt64(tp)
	if total == Saturated {
		return Saturated
	}
	return max(total-atomic.LoadInt64(bp), 0)
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
	return ReserveAt(c, nil, col, want, limits, cal, cal.Now())
}

// ReserveAt is Reserve at now, on cal (a request reads its calendar once
// for every quota it checks).
//
// fleet, when not nil, is the key's FleetQuotaCell (or FleetBudgetCell):
// what the gateway's other replicas used counts as used here too.
func ReserveAt(c, fleet *shm.Cell, col int, want int64, limits []Limit, cal Calendar, now time.Time) *Refusal {
	if len(limits) == 0 {
		return nil
	}
	want = max(want, 0)
	c.Add(col, want)
	reserved := c.Total()
	for _, l := range limits {
		used := Used(c, l.P, cal, now)
		if fleet != nil {
			used = sat(used, Others(fleet, l.P, cal.ID(l.P, now)))
		}
		if sat(used, reserved) > l.Max {
			c.Add(col, -want)
			return &Refusal{Limit: l, Used: sat(used, reserved-want), Want: want, ResetAt: cal.End(l.P, now)}
		}
	}
	return nil
}

// Settle adds what the request used to c's total (0 or more), then gives
// back its reservation from column col: in that order, so that a Reserve
// in between counts the request twice rather than not at all.
func Settle(c *shm.Cell, col int, reserved, used int64) {
	if used > 0 {
		addSaturating(c.Scalar(sTotal), used) // a backend's figures are not trusted to stay in range
	}
	c.Add(col, -reserved)
}

// sat is a+b for a, b ≥ 0, held at the largest int64.
func sat(a, b int64) int64 {
	if s := a + b; s >= a {
		return s
	}
	return math.MaxInt64
}

// AddSaturating adds d (> 0) to a total at p, held at the largest int64.
func AddSaturating(p *int64, d int64) { addSaturating(p, d) }

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
