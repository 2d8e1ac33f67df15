package proxy

import (
	"errors"
	"strconv"
	"time"

	"github.com/cloudwego/hertz/pkg/app"
	"github.com/cloudwego/hertz/pkg/network"
	hertznetpoll "github.com/cloudwego/hertz/pkg/network/netpoll"
	"github.com/cloudwego/hertz/pkg/protocol"

	"github.com/sluice-gw/sluice/proxy/directwrite"
)

// chunkWriter writes a streamed response to the client in HTTP/1.1 chunked
// encoding, each Write sent at once: the head (with the first chunk), then
// size line, data and CRLF in one writev from the calling goroutine
// (directwrite). It replaces hertz's chunked writer, which copies every
// chunk into netpoll's output buffer and so leaves a 4 KiB slab in it for
// the rest of the connection's life — memory every open stream paid for.
// hertz calls Finalize (the last chunk and the trailer) after the handler.
//
// With a length (newLengthWriter) it writes a body without chunks instead:
// Content-Length n, or, for an HTTP/1.0 client and no length known, a body
// that ends when the connection closes.
type chunkWriter struct {
	length      int // as hertz's SetContentLength takes it: -1 chunked, -2 up to the connection's close, else the Content-Length
	r           *protocol.Response
	w           network.Writer // the connection's buffered writer: what the socket does not take at once
	fd          int            // the client's socket, -1 if it cannot be written to directly
	wroteHeader bool
	finalized   bool
	closeConn   bool // the client asked to close: the head says so (hertz would, after the handler)
	err         error
	size        [20]byte // a chunk's size line
	iov         [6][]byte

	// With conn set (bound), each write gets until or send_timeout,
	// whichever ends first, as its deadline; without, netpoll's write
	// timeout (send_timeout) alone.
	conn  network.Conn
	until time.Time
	send  time.Duration
}

var errChunkedFinished = errors.New("chunked response already finished")

// newChunkWriter makes the writer of c's streamed response and installs it
// as the response's writer.
func newChunkWriter(c *app.RequestContext) *chunkWriter {
	cw := &chunkWriter{length: -1, r: &c.Response, w: c.GetWriter(), fd: -1, closeConn: c.Request.Header.ConnectionClose()}
	if hc, ok := c.GetConn().(*hertznetpoll.Conn); ok {
		cw.fd = directwrite.FD(hc.Conn)
	}
	c.Response.HijackWriter(cw)
	return cw
}

// newLengthWriter makes a writer of c's response body without chunks:
// length n >= 0 is its Content-Length; -2 ends it by closing the
// connection (for an HTTP/1.0 client, when no length is known).
func newLengthWriter(c *app.RequestContext, n int) *chunkWriter {
	cw := newChunkWriter(c)
	cw.length = n
	return cw
}

// Write sends p as one chunk (nothing for an empty p: an empty chunk would
// end the body).
func (cw *chunkWriter) Write(p []byte) (int, error) {
	if cw.finalized {
		return 0, errChunkedFinished
	}
	if cw.err != nil || len(p) == 0 {
		return 0, cw.err
	}
	iov := cw.head(cw.iov[:0])
	if cw.chunked() {
		iov = cw.chunk(iov, p)
	} else {
		iov = append(iov, p)
	}
	if cw.err = cw.sendv(iov); cw.err != nil {
		return 0, cw.err
	}
	return len(p), nil
}

// WriteLast sends p as the last chunk, followed by the end of the body, in
// one write (Finalize then has nothing left to do).
func (cw *chunkWriter) WriteLast(p []byte) error {
	if cw.finalized || cw.err != nil {
		return cw.err
	}
	cw.finalized = true
	iov := cw.head(cw.iov[:0])
	switch {
	case !cw.chunked():
		iov = append(iov, p)
	case len(p) > 0:
		iov = cw.chunk(iov, p)
	}
	if cw.chunked() {
		iov = append(iov, lastChunk, cw.r.Header.Trailer().Header())
	}
	cw.err = cw.sendv(iov)
	return cw.err
}

// bound gives every later write of the relay the deadline until (the
// exchange's timeouts.total and its grace) as well as send_timeout.
func (cw *chunkWriter) bound(conn network.Conn, until time.Time, send time.Duration) {
	cw.conn, cw.until, cw.send = conn, until, send
}

// sendv sends iov under the writer's deadline. The deadline is set for
// this write alone and lifted after it: netpoll's write timeout
// (send_timeout) then bounds the connection's next answers again.
func (cw *chunkWriter) sendv(iov [][]byte) error {
	if cw.conn == nil {
		return directwrite.Send(cw.fd, cw.w, iov)
	}
	d := time.Now().Add(cw.send)
	if cw.until.Before(d) {
		d = cw.until
	}
	cw.conn.SetWriteDeadline(d) //nolint:errcheck // netpoll's never fails
	err := directwrite.Send(cw.fd, cw.w, iov)
	cw.conn.SetWriteDeadline(time.Time{}) //nolint:errcheck
	return err
}

// gone is the usage line's error for a write to the client that failed:
// client_stalled when it timed out (the client stopped reading for
// send_timeout, or until timeouts.total and its grace passed), else
// client_closed.
func (cw *chunkWriter) gone() string {
	if isTimeout(cw.err) {
		return "client_stalled"
	}
	return "client_closed"
}

// Flush reports the first failed write: every Write is already sent.
func (cw *chunkWriter) Flush() error { return cw.err }

// Finalize ends the body (the zero-length chunk and the trailer) unless
// WriteLast did.
func (cw *chunkWriter) Finalize() error { return cw.WriteLast(nil) }

// head adds the response head to iov the first time.
func (cw *chunkWriter) head(iov [][]byte) [][]byte {
	if cw.wroteHeader {
		return iov
	}
	cw.wroteHeader = true
	cw.r.Header.SetContentLength(cw.length) // -1: Transfer-Encoding: chunked; -2: Connection: close
	if cw.closeConn {
		// RFC 9112 §9.6: the server closes after this answer, and should say
		// so. hertz adds it to the answers it writes, after the handler; this
		// head goes out before.
		cw.r.Header.SetConnectionClose(true)
	}
	h := cw.r.Header.Header()
	cw.r.Header.SetHeaderLength(len(h))
	return append(iov, h)
}

// chunk adds p as one chunk to iov: size line, data, CRLF.
func (cw *chunkWriter) chunk(iov [][]byte, p []byte) [][]byte {
	size := append(strconv.AppendInt(cw.size[:0], int64(len(p)), 16), '\r', '\n')
	return append(iov, size, p, crlf)
}

var (
	crlf      = []byte("\r\n")
	lastChunk = []byte("0\r\n")
)

// chunked reports whether the body goes out in chunks.
func (cw *chunkWriter) chunked() bool { return cw.length == -1 }

// abort ends the response without the end of its body: Finalize then
// returns err, and hertz closes the connection instead of ending the body
// cleanly.
func (cw *chunkWriter) abort(err error) {
	cw.finalized, cw.err = true, err
}
