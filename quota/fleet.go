package quota

// What the gateway's other replicas used of a key's quota or budget (a
// shm.FleetQuotaCell or FleetBudgetCell), written by the supervisor after
// each spend exchange (package fleetspend) and read by every admission:
// for each period, its id and the others' use in it, and until when the
// figures hold. Figures older than that (the store unreachable for
// several exchanges) are not trusted to bound the fleet: the caller then
// divides the limits by the live replicas instead, as without the
// exchange.

import (
	"sync/atomic"
	"time"

	"github.com/sluice-gw/sluice/shm"
)

// Fleet cell scalars: each period's id and the others' use, then the
// moment (unix nanoseconds) the figures stop holding.
func fleetID(p Period) int   { return 2 * int(p) }
func fleetUsed(p Period) int { return 2*int(p) + 1 }

const fleetFresh = 2 * int(NumPeriods)

// SetOthers records that the other replicas used used in period p of id
// id (one writer: the supervisor). The id is cleared while the figure
// changes, so that a reader never takes a new figure for an old period.
func SetOthers(f *shm.Cell, p Period, id, used int64) {
	atomic.StoreInt64(f.Scalar(fleetID(p)), -1)
	atomic.StoreInt64(f.Scalar(fleetUsed(p)), used)
	atomic.StoreInt64(f.Scalar(fleetID(p)), id)
}

// Others is what the other replicas used in period p of id id (0: none
// known for that period).
func Others(f *shm.Cell, p Period, id int64) int64 {
	for range 4 {
		if atomic.LoadInt64(f.Scalar(fleetID(p))) != id {
			return 0
		}
		v := atomic.LoadInt64(f.Scalar(fleetUsed(p)))
		if atomic.LoadInt64(f.Scalar(fleetID(p))) == id {
			return v
		}
	}
	return 0 // rewritten under the reader four times in a row: read as unknown this once
}

// SetFresh says the figures hold until until (unix nanoseconds).
func SetFresh(f *shm.Cell, until int64) { atomic.StoreInt64(f.Scalar(fleetFresh), until) }

// Fresh reports whether f's figures hold at now (unix nanoseconds).
func Fresh(f *shm.Cell, now int64) bool {
	return f != nil && now < atomic.LoadInt64(f.Scalar(fleetFresh))
}

// FleetUsed is what c's period p used at now (Used), with what the other
// replicas used when fleet's figures hold — whole is then true: the
// limit holds for the fleet whole; otherwise it is divided by the
// replicas, and the use is this replica's alone.
func FleetUsed(c, fleet *shm.Cell, p Period, cal Calendar, now time.Time) (used int64, whole bool) {
	used = Used(c, p, cal, now)
	if Fresh(fleet, time.Now().UnixNano()) {
		return sat(used, Others(fleet, p, cal.ID(p, now))), true
	}
	return used, false
}
