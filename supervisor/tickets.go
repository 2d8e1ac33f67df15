package supervisor

import (
	"crypto/rand"
	"time"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/shm"
)

// The region has a ticket key set for every TLS listener config allows.
var _ = [shm.TicketSets - config.MaxTLSListeners]struct{}{}

// ticketKeeper makes and rotates the TLS session ticket keys of every TLS
// listener in the shared region, where each worker reads them: a ticket
// one worker issued resumes on all, across reloads and worker restarts,
// and the keys never touch a disk. The supervisor makes them before its
// first worker starts, and a new one every ticket_rotation; the two
// before it keep resuming.
type ticketKeeper struct {
	region *shm.Region
	stale  [shm.TicketSets]int64 // a set's odd sequence number seen at the last try (a writer at it)
}

// rotate makes a new key for each TLS listener of cfg whose set is due
// (never written, another listener's, or older than its ticket_rotation)
// at now.
func (t *ticketKeeper) rotate(cfg *config.Config, now time.Time) {
	for k, l := range cfg.Listen {
		set := cfg.Listen.TicketSet(k)
		if set < 0 || !l.TLS.Tickets() {
			continue
		}
		_, id, at, _, ok := t.region.TicketKeysOf(set)
		if ok && id == l.TicketID() && now.Sub(time.Unix(0, at)) < time.Duration(l.TLS.TicketRotation) {
			continue
		}
		var fresh shm.TicketKey
		rand.Read(fresh[:])            //nolint:errcheck // it never fails (crypto/rand, Go 1.24 on)
		seq := t.region.TicketSeq(set) // odd: a writer at it, or one that died there
		t.region.RotateTicketKeys(set, l.TicketID(), fresh, now.UnixNano(), t.stale[set])
		t.stale[set] = 0
		if seq&1 == 1 {
			t.stale[set] = seq
		}
	}
}

// rotateTickets rotates, every second, what is due, until the supervisor's
// background work ends.
func (s *supervisor) rotateTickets(t *ticketKeeper) {
	for {
		select {
		case <-s.bgDone:
			return
		case <-time.After(time.Second):
		}
		cfg, _, _ := s.current()
		t.rotate(cfg, time.Now())
	}
}
