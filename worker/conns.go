package worker

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cloudwego/hertz/pkg/app"
	hnetpoll "github.com/cloudwego/hertz/pkg/network/netpoll"
	"github.com/cloudwego/netpoll"

	"github.com/sluice-gw/sluice/proxy"
	"github.com/sluice-gw/sluice/shm"
)

// A draining worker closes a connection between requests only once it has
// been quiet for a while: a client that connected just before the worker
// stopped accepting gets firstRequestGrace to send its first request, and
// a busy keep-alive client sends its next request within idleGrace and is
// answered with "Connection: close" instead of being cut while it sends.
const (
	firstRequestGrace = 2 * time.Second
	idleGrace         = time.Second
)

// connTracker knows every client connection of the worker and whether a
// request is being handled on it, so a graceful stop can close the idle
// ones at once and the busy ones as soon as they finish.
type connTracker struct {
	mu       sync.Mutex
	conns    map[*connState]struct{}
	accepted int64 // connections ever registered (under mu)
	draining atomic.Bool
	bursts   *closeBurst // told of every close
	// cell counts the tracked connections in this worker's column: for
	// worker_connections, and sluice_client_connections.
	cell   *shm.Cell
	col    int
	bounds *connBounds
}

type connState struct {
	conn     net.Conn
	addr     string                 // the client's address, for the usage lines
	input    interface{ Len() int } // bytes received and not yet read (a request arriving); nil if unknown
	tls      *tlsConn               // a TLS connection's; nil for a plain one
	accepted time.Time
	busy     atomic.Bool
	served   atomic.Int64 // requests handled
	lastDone atomic.Int64 // unix ns when the last request was handled
	// headSince is when the request head now arriving began (unix ns):
	// the accept for a new connection, else when sweep first saw a
	// keep-alive request's bytes; 0 while a handler runs or the connection
	// waits for its next request. client_header_timeout counts from it.
	headSince atomic.Int64
}

// idle reports whether closing the connection now loses nothing: no
// request is being handled or arriving, and it is not a new connection
// whose first request may still be on its way.
func (st *connState) idle(now time.Time) bool {
	if st.busy.Load() || st.input != nil && st.input.Len() > 0 {
		return false
	}
	if st.served.Load() == 0 {
		return now.Sub(st.accepted) > firstRequestGrace
	}
	return now.UnixNano()-st.lastDone.Load() > int64(idleGrace)
}

// ClientAddr is the client's address (proxy.Conn).
func (st *connState) ClientAddr() string { return st.addr }

// TLS is the connection's TLS version and whether its session was
// resumed (proxy.Conn); 0 for a plain connection.
func (st *connState) TLS() (version uint16, resumed bool) {
	if st.tls == nil {
		return 0, false
	}
	return st.tls.TLSState()
}

// ClientCert is the SHA-256 of the client certificate the connection's
// handshake verified (proxy.Conn); ok false for a plain connection or
// one without a client certificate.
func (st *connState) ClientCert() (sum [32]byte, ok bool) {
	if st.tls == nil {
		return sum, false
	}
	return st.tls.ClientCert()
}

func newConnTracker(bursts *closeBurst, bounds *connBounds, cell *shm.Cell, col int) *connTracker {
	return &connTracker{conns: map[*connState]struct{}{}, bursts: bursts, bounds: bounds, cell: cell, col: col}
}

// accept registers a new connection (hertz's OnAccept); the context it
// returns is the one every request on the connection is handled with.
func (t *connTracker) accept(conn net.Conn) context.Context {
	st := &connState{conn: conn, accepted: time.Now()}
	if a := conn.RemoteAddr(); a != nil {
		st.addr = a.String()
	}
	st.headSince.Store(st.accepted.UnixNano())
	// Track the connection only if it says when it closes, whoever closes
	// it (netpoll's always do): drain waits until none is left. Counted
	// and tracked in one step, so drain never sees the count without it.
	var pc netpoll.Connection
	if hc, ok := conn.(*hnetpoll.Conn); ok {
		pc, _ = hc.Conn.(netpoll.Connection)
	}
	tc, _ := conn.(*tlsConn)
	t.mu.Lock()
	t.accepted++
	if pc != nil {
		st.input = pc.Reader()
		t.conns[st] = struct{}{}
	}
	if tc != nil {
		st.tls, tc.st = tc, st
		t.conns[st] = struct{}{}
	}
	t.mu.Unlock()
	if tc != nil {
		// client_header_timeout bounds the handshake and the first head:
		// the deadline is on the socket before the handshake reads from it
		// (sweep bounds them too, as it does a plain connection's head).
		tc.raw.SetReadDeadline(time.Now().Add(time.Duration(t.bounds.head.Load()))) //nolint:errcheck // a closed socket fails the read anyway
		t.cell.Add(t.col, 1)
		tc.onClose = func() { t.release(st) }
	}
	if pc != nil {
		t.cell.Add(t.col, 1)
		// send_timeout: netpoll bounds each flush of what the socket did
		// not take at once by it. Set here, not as hertz's WriteTimeout
		// (taken once at start), so that a reload applies to new
		// connections.
		pc.SetWriteTimeout(time.Duration(t.bounds.send.Load())) //nolint:errcheck // netpoll's never fails
		pc.AddCloseCallback(func(netpoll.Connection) error {
			t.release(st)
			return nil
		})
	}
	return context.WithValue(context.Background(), proxy.ConnKey{}, st)
}

// release forgets a closed connection.
func (t *connTracker) release(st *connState) {
	t.mu.Lock()
	delete(t.conns, st)
	t.mu.Unlock()
	t.cell.Add(t.col, -1)
	t.bursts.closed(time.Now().UnixNano())
}

// markBusy is middleware: the connection is busy while a handler runs.
func (t *connTracker) markBusy(ctx context.Context, c *app.RequestContext) {
	st, _ := ctx.Value(proxy.ConnKey{}).(*connState)
	if st == nil {
		c.Next(ctx)
		return
	}
	st.busy.Store(true)
	st.headSince.Store(0) // the head is in: client_header_timeout no longer runs
	// client_body_timeout: each wait for more of the body (netpoll's read
	// timeout bounds every wait for bytes, here the handler's reads of the
	// body and, after it, hertz's skipping of a body left unread). hertz
	// sets its own before the next request's head.
	c.GetConn().SetReadTimeout(time.Duration(t.bounds.body.Load())) //nolint:errcheck // netpoll's never fails
	defer func() {
		st.lastDone.Store(time.Now().UnixNano())
		st.served.Add(1)
		// A sweep that read busy false just before this handler began may
		// have started the head clock since: clear it before going idle.
		st.headSince.Store(0)
		st.busy.Store(false)
	}()
	if t.draining.Load() {
		// Tell the client not to reuse the connection: closing it later,
		// idle, could race with its next request.
		c.SetConnectionClose()
	}
	c.Next(ctx)
}

// drain closes every idle connection, now and then every 50 ms, until no
// connection is left or ctx ends. Busy ones are told to close after their
// response (markBusy) and closed here once quiet. It does not end before
// the tracker has seen atLeast connections in all: those accepted just
// before the listener stopped may not have reached it yet.
func (t *connTracker) drain(ctx context.Context, atLeast int64) {
	t.draining.Store(true)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var quiet []*connState
	for {
		now := time.Now()
		t.mu.Lock()
		for st := range t.conns {
			if st.idle(now) {
				quiet = append(quiet, st)
				delete(t.conns, st)
			}
		}
		left, seen := len(t.conns), t.accepted
		t.mu.Unlock()
		// Closed outside the lock: netpoll may run the close callback,
		// which takes it, right inside Close.
		for _, st := range quiet {
			st.conn.Close()
		}
		quiet = quiet[:0]
		if left == 0 && seen >= atLeast {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
