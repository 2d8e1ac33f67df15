package quota

import (
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/shm"
)

// Periods in a zone: a day from local midnight, an ISO week from Monday,
// a month from its first; ids change exactly at those instants.
// ID's arithmetic agrees with the time package's calendar (the way ID
// was first written) at and just before every local midnight of
// 1969–2100 and at random moments up to ±10,000 years, in zones with DST, offsets not of whole hours and
// offsets past 12 hours.
func TestCalendarID(t *testing.T) {
	byDate := func(c Calendar, p Period, t time.Time) int64 {
		t = t.In(c.Loc)
		y, m, d := t.Date()
		day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix()
		day = (day - ((day%86400)+86400)%86400) / 86400 // floor
		switch p {
		case Week:
			w := day + 3
			return (w - ((w%7)+7)%7) / 7
		case Month:
			return int64(y)*12 + int64(m) - 1
		}
		return day
	}
	var cals []Calendar
	for _, z := range []string{"UTC", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "Pacific/Kiritimati", "Pacific/Pago_Pago", "Asia/Kathmandu"} {
		loc, err := time.LoadLocation(z)
		if err != nil {
			t.Fatal(err)
		}
		cals = append(cals, Calendar{Loc: loc})
	}
	check := func(at time.Time) {
		for _, c := range cals {
			for p := Day; p < NumPeriods; p++ {
				if got, want := c.ID(p, at), byDate(c, p, at); got != want {
					t.Fatalf("%s in %s, period %d: %d, want %d", at.UTC(), c.Loc, p, got, want)
				}
			}
		}
	}
	for _, c := range cals { // each local midnight of 1969–2100, and the second before
		for d := time.Date(1969, 1, 1, 0, 0, 0, 0, c.Loc); d.Year() < 2101; d = d.AddDate(0, 0, 1) {
			check(d)
			check(d.Add(-time.Second))
			check(d.Add(13 * time.Hour))
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		check(time.Unix(r.Int64N(2*315569260000)-315569260000, 0))
	}
}

func TestCalendar(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	cal := Calendar{Loc: ny}
	// Sunday 2026-11-29 23:59:59 in New York: the next second begins a
	// new day and a new week (a Monday), in the same month.
	sun := time.Date(2026, 11, 29, 23, 59, 59, 0, ny)
	mon := sun.Add(time.Second)
	if cal.ID(Day, mon) != cal.ID(Day, sun)+1 || cal.ID(Week, mon) != cal.ID(Week, sun)+1 || cal.ID(Month, mon) != cal.ID(Month, sun) {
		t.Errorf("Sunday to Monday: day %d→%d week %d→%d month %d→%d", cal.ID(Day, sun), cal.ID(Day, mon),
			cal.ID(Week, sun), cal.ID(Week, mon), cal.ID(Month, sun), cal.ID(Month, mon))
	}
	if end := cal.End(Week, sun); !end.Equal(mon) {
		t.Errorf("the week of %v ends %v, want %v", sun, end, mon)
	}
	if end := cal.End(Month, sun); !end.Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, ny)) {
		t.Errorf("November ends %v", end)
	}
	if end := cal.End(Day, mon); !end.Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, ny)) {
		t.Errorf("Monday ends %v", end)
	}
	// The same instant is another day in UTC (04:59:59Z Monday).
	if (Calendar{Loc: time.UTC}).ID(Day, sun) != cal.ID(Day, mon) {
		t.Error("the zone does not move the day")
	}
	// Every day of two years: ids consecutive, End the next id's start.
	for d := time.Date(2026, 1, 1, 12, 0, 0, 0, ny); d.Year() < 2028; d = d.AddDate(0, 0, 1) {
		for p := Day; p < NumPeriods; p++ {
			end := cal.End(p, d)
			if cal.ID(p, end) != cal.ID(p, d)+1 || cal.ID(p, end.Add(-time.Nanosecond)) != cal.ID(p, d) {
				t.Fatalf("%v %s: id %d, end %v has id %d", d, p, cal.ID(p, d), end, cal.ID(p, end))
			}
		}
	}
}

func testCell(t testing.TB, cols int) *shm.Cell {
	t.Helper()
	r, err := shm.Create(8, cols)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	c, err := r.Alloc("quota/k")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Reservations count until settled; what is settled counts in its
// period; a period rolls over at its end, a new one starting empty.
func TestReserveSettleRollover(t *testing.T) {
	c := testCell(t, 2)
	cal := Calendar{Loc: time.UTC}
	limits := []Limit{{Day, 100}, {Month, 150}}
	if no := Reserve(c, 0, 60, limits, cal); no != nil {
		t.Fatal(no)
	}
	if no := Reserve(c, 1, 50, limits, cal); no == nil || no.Limit.P != Day || no.Used != 60 {
		t.Fatalf("60 reserved, 50 more of 100: %+v", no)
	}
	Settle(c, 0, 60, 20) // used 20 of its 60
	if no := Reserve(c, 1, 50, limits, cal); no != nil {
		t.Fatalf("20 used, 50 of 100: %v", no)
	}
	Settle(c, 1, 50, 70) // used more than it reserved
	if got := Used(c, Day, cal, cal.Now()); got != 90 {
		t.Fatalf("used today %d, want 90", got)
	}
	// Tomorrow: the day is new, the month is not.
	tomorrow := Calendar{Loc: time.UTC, Shift: cal.End(Day, cal.Now()).Sub(time.Now()) + time.Second}
	if cal.ID(Month, cal.Now()) != tomorrow.ID(Month, tomorrow.Now()) {
		t.Skip("the test runs on a month's last day: the month would roll over too")
	}
	if no := Reserve(c, 0, 61, limits, tomorrow); no == nil || no.Limit.P != Month || no.Used != 90 {
		t.Fatalf("a new day, 90 of the month's 150 used, 61 more: %+v", no)
	}
	if no := Reserve(c, 0, 60, limits, tomorrow); no != nil {
		t.Fatalf("a new day, 60 more: %v", no)
	}
	if got := Used(c, Day, tomorrow, tomorrow.Now()); got != 0 {
		t.Fatalf("the new day used %d", got)
	}
}

// Workers racing for a quota never take more than it together.
func TestReserveRace(t *testing.T) {
	const workers, each, quota = 4, 1000, 500
	c := testCell(t, workers)
	cal := Calendar{Loc: time.UTC}
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if Reserve(c, w, 1, []Limit{{Day, quota}}, cal) == nil {
					admitted.Add(1)
					Settle(c, w, 1, 1)
				}
			}
		}()
	}
	wg.Wait()
	if n := admitted.Load(); n != quota {
		t.Fatalf("admitted %d of a quota of %d", n, quota)
	}
}

// A worker that died rolling a period over is relieved.
func TestRolloverTakeover(t *testing.T) {
	c := testCell(t, 1)
	cal := Calendar{Loc: time.UTC}
	id := cal.ID(Day, cal.Now())
	atomic.StoreInt64(c.Scalar(sTotal), 40)
	atomic.StoreInt64(c.Scalar(idScalar(Day)), -id) // died mid-roll
	if got := Used(c, Day, cal, cal.Now()); got != 0 {
		t.Fatalf("after the takeover, used %d", got)
	}
	if atomic.LoadInt64(c.Scalar(idScalar(Day))) != id {
		t.Fatal("the id was not restored")
	}
}

// A period later than now's: read as it is across a boundary another
// worker just passed; otherwise (a zone changed, a clock set back)
// carried on with what it spent, never read as unused.
func TestUsedPeriodAhead(t *testing.T) {
	cal := Calendar{Loc: time.UTC}
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	id := cal.ID(Day, now)
	ahead := func(by int64) *shm.Cell {
		c := testCell(t, 1)
		atomic.StoreInt64(c.Scalar(sTotal), 100)
		atomic.StoreInt64(c.Scalar(baseScalar(Day)), 30)
		atomic.StoreInt64(c.Scalar(idScalar(Day)), id+by)
		return c
	}
	c := ahead(1)
	if got := Used(c, Day, cal, now); got != 70 {
		t.Fatalf("a day ahead at noon: used %d, want 70 carried on", got)
	}
	if got := atomic.LoadInt64(c.Scalar(idScalar(Day))); got != id {
		t.Fatalf("carried on: id %d, want %d", got, id)
	}
	c = ahead(1)
	justBefore := cal.End(Day, now).Add(-time.Millisecond)
	if got := Used(c, Day, cal, justBefore); got != 70 {
		t.Fatalf("the next day, a moment before midnight: used %d, want 70", got)
	}
	if got := atomic.LoadInt64(c.Scalar(idScalar(Day))); got != id+1 {
		t.Fatalf("across the boundary the later id %d must stay, got %d", id+1, got)
	}
	c = ahead(30)
	if got := Used(c, Day, cal, now); got != 70 {
		t.Fatalf("a month ahead: used %d, want 70", got)
	}
}

// A saturated total fails closed: every period is used up, the next ones
// too, rather than each new period's base equalling it and reading 0.
func TestSaturatedFailsClosed(t *testing.T) {
	c := testCell(t, 1)
	cal := Calendar{Loc: time.UTC}
	Settle(c, 0, 0, math.MaxInt64-5)
	Settle(c, 0, 0, 10)
	if got := Total(c); got != math.MaxInt64 {
		t.Fatalf("total %d, want saturated", got)
	}
	tomorrow := Calendar{Loc: time.UTC, Shift: 24 * time.Hour}
	for _, k := range []Calendar{cal, tomorrow} {
		if no := Reserve(c, 0, 1, []Limit{{Day, 1 << 40}}, k); no == nil {
			t.Fatalf("shift %v: a saturated cell admitted a request", k.Shift)
		}
	}
}
