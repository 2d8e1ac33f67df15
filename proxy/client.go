package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/cloudwego/hertz/pkg/app"

	"github.com/sluice-gw/sluice/config"
)

// This file holds what a client may make a request wait for or hold, on
// nginx's model: client_body_timeout, send_timeout and the size of a
// request head. The connection's bounds are the worker's:
// client_header_timeout (worker/bounds.go: sweep), keepalive_timeout
// (hertz's idle timeout, in worker/worker.go) and worker_connections.
//
// What hertz and netpoll offer, read in their sources and tried with raw
// TCP clients (tests/slowclient_test.go):
//   - netpoll's read timeout (hertz's ReadTimeout) bounds each wait for
//     bytes, not a head: hertz reads a head by peeking one more byte each
//     time, so a client sending a byte a minute keeps a 60 s timeout from
//     ever firing. The whole head is bounded by the worker instead (sweep).
//   - hertz's IdleTimeout bounds the wait for a keep-alive connection's
//     next request (its first 4 bytes): keepalive_timeout.
//   - netpoll's write timeout bounds each flush of what the socket did not
//     take at once (a deadline, when set, replaces it): send_timeout.
//   - hertz's MaxHeaderBytes bounds the whole head (request line included)
//     with its own bare 431; it has no per-line limit (CheckHead).

// clientBounds are the running configuration's bounds on a request's
// body and answer, read by every request (a reload stores new ones: they
// apply to the bodies and answers that come after it). The head's and the
// connections' bounds are the worker's (worker/bounds.go).
type clientBounds struct {
	body, send atomic.Int64 // client_body_timeout, send_timeout (ns)
}

func (b *clientBounds) set(cfg *config.Config) {
	b.body.Store(int64(cfg.ClientBodyTimeout))
	b.send.Store(int64(cfg.SendTimeout))
}

// The head limits, nginx's large_client_header_buffers 4 8k: one line of
// the head (the request line, a header) up to maxHeadLine bytes, the whole
// head up to MaxHeadBytes (hertz's MaxHeaderBytes: past it hertz answers
// its own bare 431 and closes).
const (
	maxHeadLine = 8 << 10
	// MaxHeadBytes bounds the whole head: the worker gives it to hertz.
	MaxHeadBytes = 32 << 10
)

// CheckHead is middleware: a request line over maxHeadLine gets 414, a
// header line over it 431, both in OpenAI's shape with a usage line, and
// the connection is closed (the body is not read).
func (g *Gateway) CheckHead(ctx context.Context, c *app.RequestContext) {
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
func (g *Gateway) refuseHead(ctx context.Context, c *app.RequestContext, e *apiError) {
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
