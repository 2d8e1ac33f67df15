package worker

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/shm"
)

// The connection's bounds, on nginx's model: client_header_timeout and
// worker_connections (what hertz and netpoll offer for them: proxy/client.go).

// connBounds are the running configuration's bounds on a client
// connection, read by the connection tracker (a reload stores new ones:
// they apply to the heads and connections that come after it). body and
// send become each connection's netpoll read and write timeouts; the
// pipeline keeps its own copy of them for the waits it bounds itself.
type connBounds struct {
	head, body, send atomic.Int64 // client_header_timeout, client_body_timeout, send_timeout (ns)
	maxConns         atomic.Int64 // worker_connections
}

func (b *connBounds) set(cfg *config.Config) {
	b.head.Store(int64(cfg.ClientHeaderTimeout))
	b.body.Store(int64(cfg.ClientBodyTimeout))
	b.send.Store(int64(cfg.SendTimeout))
	b.maxConns.Store(int64(cfg.WorkerConnections))
}

// sweepEvery is how often sweep looks at every connection: a head is cut
// between client_header_timeout and this much later. A pass over 4,096
// connections takes tens of microseconds.
const sweepEvery = 250 * time.Millisecond

// sweep closes, every sweepEvery until ctx ends, each connection whose
// request head has taken longer than client_header_timeout: a new
// connection that sent nothing or part of a head, or a keep-alive request
// whose head (or the first 8 KiB of its body, which hertz reads with it,
// before any handler runs) stopped arriving. Like nginx, it closes them
// without an answer. A keep-alive request's head starts when sweep first
// sees its bytes; a handler starting ends it (markBusy).
func (t *connTracker) sweep(ctx context.Context) {
	tick := time.NewTicker(sweepEvery)
	defer tick.Stop()
	var late []*connState
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := time.Now().UnixNano()
		limit := t.bounds.head.Load()
		t.mu.Lock()
		for st := range t.conns {
			if st.busy.Load() {
				continue
			}
			since := st.headSince.Load()
			switch {
			case since == 0:
				if st.input != nil && st.input.Len() > 0 && st.headSince.CompareAndSwap(0, now) && st.busy.Load() {
					// A handler began meanwhile (markBusy): its head is in.
					st.headSince.CompareAndSwap(now, 0)
				}
			case now-since > limit:
				late = append(late, st)
			}
		}
		t.mu.Unlock()
		// Closed outside the lock: netpoll runs the close callback, which
		// takes it, inside Close. hertz's read of the head then fails, and
		// it writes nothing to a closed connection.
		for _, st := range late {
			st.conn.Close()
		}
		late = late[:0]
	}
}

// full reports whether the worker has worker_connections open: the gate
// then closes a new connection as soon as it is accepted, and counts it.
func (t *connTracker) full() bool {
	return t.cell.Held(t.col) >= t.bounds.maxConns.Load()
}

// refused counts a connection closed because the worker was full.
func (t *connTracker) refused() {
	t.cell.Settle(shm.RefusedConnsScalar, 1)
}
