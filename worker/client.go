package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/cloudwego/hertz/pkg/app"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/shm"
)

// This file holds what a client may make a worker wait for or hold, on
// nginx's model: client_header_timeout, client_body_timeout, send_timeout,
// keepalive_timeout (hertz's idle timeout, in worker.go), the size of a
// request head, and worker_connections.
//
// What hertz and netpoll offer, read in their sources and tried with raw
// TCP clients (tests/slowclient_test.go):
//   - netpoll's read timeout (hertz's ReadTimeout) bounds each wait for
//     bytes, not a head: hertz reads a head by peeking one more byte each
//     time, so a client sending a byte a minute keeps a 60 s timeout from
//     ever firing. The whole head is bounded here instead (sweep).
//   - hertz's IdleTimeout bounds the wait for a keep-alive connection's
//     next request (its first 4 bytes): keepalive_timeout.
//   - netpoll's write timeout bounds each flush of what the socket did not
//     take at once (a deadline, when set, replaces it): send_timeout.
//   - hertz's MaxHeaderBytes bounds the whole head (request line included)
//     with its own bare 431; it has no per-line limit (checkHead).

// clientBounds are the running configuration's client-side bounds, read
// by every connection (a reload stores new ones: they apply to the heads,
// bodies and connections that come after it).
type clientBounds struct {
	head, body, send atomic.Int64 // client_header_timeout, client_body_timeout, send_timeout (ns)
	maxConns         atomic.Int64 // worker_connections
}

func (b *clientBounds) set(cfg *config.Config) {
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

// The head limits, nginx's large_client_header_buffers 4 8k: one line of
// the head (the request line, a header) up to maxHeadLine bytes, the whole
// head up to maxHeadBytes (hertz's MaxHeaderBytes: past it hertz answers
// its own bare 431 and closes).
const (
	maxHeadLine  = 8 << 10
	maxHeadBytes = 32 << 10
)

// checkHead is middleware: a request line over maxHeadLine gets 414, a
// header line over it 431, both in OpenAI's shape with a usage line, and
// the connection is closed (the body is not read).
func (g *gateway) checkHead(ctx context.Context, c *app.RequestContext) {
	h := &c.Request.Header
	// The request line: method SP request-target SP HTTP-version.
	if n := len(h.Method()) + 1 + len(h.RequestURI()) + 1 + len(h.GetProtocol()); n > maxHeadLine {
		g.refuseHead(ctx, c, errInvalid(http.StatusRequestURITooLong, "uri_too_long",
			fmt.Sprintf("The request line is %d bytes; the gateway's limit is %d.", n, maxHeadLine)))
		return
	}
	if n := longestLine(h.RawHeaders()); n > maxHeadLine {
		g.refuseHead(ctx, c, errInvalid(http.StatusRequestHeaderFieldsTooLarge, "header_too_large",
			fmt.Sprintf("A header line is %d bytes; the gateway's limit is %d.", n, maxHeadLine)))
		return
	}
	c.Next(ctx)
}

// refuseHead answers e to a request whose head is over a limit, and
// closes the connection.
func (g *gateway) refuseHead(ctx context.Context, c *app.RequestContext, e *apiError) {
	rec := g.beginRecord(ctx, c)
	defer g.finish(rec)
	g.refuse(c, rec, e, shapeOf(c.Path()))
	c.Abort()
}

// longestLine is the length of the longest line of raw header lines,
// without its CRLF.
func longestLine(raw []byte) int {
	longest := 0
	for len(raw) > 0 {
		i := bytes.IndexByte(raw, '\n')
		if i < 0 {
			i = len(raw)
		}
		n := i
		if n > 0 && raw[n-1] == '\r' {
			n--
		}
		longest = max(longest, n)
		raw = raw[min(i+1, len(raw)):]
	}
	return longest
}

// errBodyTimeout is readBody's refusal of a body that stopped arriving for
// client_body_timeout: 408, and the connection is closed (the rest of the
// body is unread), as nginx does.
var errBodyTimeout = errInvalid(http.StatusRequestTimeout, "request_timeout",
	"The request body stopped arriving for longer than the gateway waits (client_body_timeout).")

// bodyReadFailed is readBody's error for a body whose reading failed with
// err: errBodyTimeout when the client stopped sending for
// client_body_timeout, else 400 incomplete_body.
func bodyReadFailed(err error) *apiError {
	if isTimeout(err) {
		return errBodyTimeout
	}
	return errIncompleteBody()
}

// isTimeout reports whether err is a timeout (netpoll's read and write
// timeouts say so).
func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}
