package worker

import (
	"syscall"
	"time"

	"github.com/cloudwego/hertz/pkg/app"
	hnetpoll "github.com/cloudwego/hertz/pkg/network/netpoll"
	"github.com/cloudwego/hertz/pkg/protocol/http1/resp"
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
func refuseAndClose(c *app.RequestContext, e *apiError) {
	writeError(c, e)
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
