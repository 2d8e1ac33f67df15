package proxy

import (
	"syscall"
	"time"

	"github.com/cloudwego/hertz/pkg/app"
	hnetpoll "github.com/cloudwego/hertz/pkg/network/netpoll"
	"github.com/cloudwego/hertz/pkg/protocol/http1/resp"
	"github.com/sluice-gw/sluice/proxy/usage"
)

// Bounds of the lingering close after refusing a body that was not read.
const (
	lingerTime  = 2 * time.Second
	lingerBytes = 64 << 20
)

// refuseAndClose answers e now and closes the connection, for a request
// whose body the gateway will not read (413). Left to hertz, the unread
// body would be drained after the answer for as long as the client sends
// it (and a chunked body cut mid-chunk is misparsed). Closing at once is no
// better: data still arriving makes the kernel send a reset, which can
// destroy the answer before the client reads it. So, like nginx's
// lingering close: send the answer, shut down the write side (FIN), discard
// what still arrives for a bounded time and size, then close.
func refuseAndClose(c *app.RequestContext, e *apiError, shape errShape) {
	writeError(c, e, shape)
	c.SetConnectionClose()
	conn, w := c.GetConn(), c.GetWriter()
	if err := resp.Write(&c.Response, w); err == nil && w.Flush() == nil {
		if hc, ok := conn.(*hnetpoll.Conn); ok {
			if fc, ok := hc.Conn.(interface{ Fd() int }); ok {
				syscall.Shutdown(fc.Fd(), syscall.SHUT_WR) //nolint:errcheck
			}
		}
		discard(c, time.Now().Add(lingerTime))
	}
	// The answer has been sent: hertz must not write another.
	c.Response.HijackWriter(noopWriter{})
	conn.Close()
}

// discard reads and drops client bytes until EOF, the deadline or the cap.
func discard(c *app.RequestContext, until time.Time) {
	conn, r := c.GetConn(), c.GetReader()
	for total := 0; total < lingerBytes; {
		left := time.Until(until)
		if left <= 0 || conn.SetReadTimeout(left) != nil {
			return
		}
		if _, err := r.Peek(1); err != nil {
			return
		}
		n := r.Len()
		if r.Skip(n) != nil || r.Release() != nil {
			return
		}
		total += n
	}
}

// noopWriter stands in for the response writer once the answer is sent.
type noopWriter struct{}

func (noopWriter) Write(p []byte) (int, error) { return len(p), nil }
func (noopWriter) Flush() error                { return nil }
func (noopWriter) Finalize() error             { return nil }

// fail answers with a gateway error and records it.
func (g *Gateway) fail(c *app.RequestContext, rec *usage.Record, e *apiError, shape errShape) {
	rec.Failed(e.status, e.code, e.source)
	c.Response.Header.Set("X-Request-Id", rec.RequestID)
	writeError(c, e, shape)
	rec.Status = c.Response.StatusCode() // the shape's (Anthropic's 529 for a full queue)
	rec.BytesOut = int64(len(c.Response.Body()))
}

// refuseUnread answers a request refused before its body was read. A
// request without a body keeps its connection; a body of up to drainMax
// with its length declared is read and dropped, within lingerTime (drain),
// so the connection can serve the next request (what nginx does); any
// other is left unread and the connection closed (refuse), so that a
// refused client costs no upload.
func (g *Gateway) refuseUnread(c *app.RequestContext, rec *usage.Record, e *apiError, shape errShape) {
	if expectRefused(c) {
		// The body was never invited, and may come yet: it must not be
		// read as this connection's next request.
		c.SetConnectionClose()
	}
	if !c.Request.IsBodyStream() {
		g.fail(c, rec, e, shape)
		return
	}
	n := int64(c.Request.Header.ContentLength())
	if n >= 0 && n <= drainMax && g.drain(c, n) {
		g.fail(c, rec, e, shape)
		return
	}
	g.refuse(c, rec, e, shape)
}

// drain reads and drops the n bytes of an unread body, within lingerTime
// in all (each wait alone is bounded by client_body_timeout: a client
// trickling a byte a minute would hold the connection, unanswered, for
// days). It reports whether the whole body came.
func (g *Gateway) drain(c *app.RequestContext, n int64) bool {
	conn, body := c.GetConn(), c.Request.BodyStream()
	defer conn.SetReadTimeout(time.Duration(g.client.body.Load())) //nolint:errcheck // back to client_body_timeout
	until := time.Now().Add(lingerTime)
	var buf [4 << 10]byte
	for n > 0 {
		left := time.Until(until)
		if left <= 0 || conn.SetReadTimeout(left) != nil {
			return false
		}
		k, err := body.Read(buf[:min(n, int64(len(buf)))])
		n -= int64(k)
		if err != nil && n > 0 {
			return false
		}
	}
	return true
}

// drainMax is the largest unread body refuseUnread reads to keep a
// connection: a request's worth of a chat turn, not an upload.
const drainMax = 64 << 10

// refuse is fail for a request whose body is left unread: the answer goes
// out at once and the connection is closed (refuseAndClose).
func (g *Gateway) refuse(c *app.RequestContext, rec *usage.Record, e *apiError, shape errShape) {
	rec.Failed(e.status, e.code, e.source)
	c.Response.Header.Set("X-Request-Id", rec.RequestID)
	refuseAndClose(c, e, shape)
	rec.Status = c.Response.StatusCode()
	rec.BytesOut = int64(len(c.Response.Body()))
}
