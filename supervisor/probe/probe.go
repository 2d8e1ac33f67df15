// Package probe answers the admin listener's health probes — a plain
// "GET /readyz" or "GET /healthz" on a fresh connection — without
// net/http, and hands every other connection to net/http unchanged, its
// first bytes replayed.
//
// Why: load balancers' and orchestrators' probes open a connection per
// check, and an admin listener behind a busy balancer answers them all day.
// Through net/http a probe cost ~78,700 user-space instructions per
// connection (callgrind, docs/accept-path.md); this path costs a fraction
// of that (same document), which is the only reason it is hand-written.
// It answers only heads that net/http would accept and answer the same way
// (FuzzProbeHead checks that against net/http's own parser); anything
// unusual — another method, a body, a head split over two reads, a
// malformed line — goes to net/http, which decides as before. A query is
// ignored, as the mux ignores it: "/healthz?x" is answered here too, so a
// query cannot turn a probe into a keep-alive connection held open.
package probe

import (
	"bytes"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Answer computes a probe's status code and body, at each request.
type Answer func() (status int, body string)

// maxHead bounds the bytes read before deciding: a probe's head is a few
// hundred bytes; a longer first read goes to net/http whole.
const maxHead = 2048

// Listener is a net.Listener for an http.Server: it accepts from the
// wrapped listener, answers probes itself, and returns from Accept only the
// connections that are not probes.
type Listener struct {
	inner   net.Listener
	answers map[string]Answer // by path: "/readyz", "/healthz"
	timeout time.Duration     // for the first read, as net/http's ReadHeaderTimeout
	conns   chan net.Conn     // handed over to Accept
	errs    chan error        // the inner listener's errors, for Accept
	done    chan struct{}     // closed by Close
	once    sync.Once
	bufs    sync.Pool // *[maxHead]byte

	mu       sync.Mutex
	deciding map[net.Conn]struct{} // connections being read: Close cuts their read
}

// Wrap returns a Listener over ln that answers GET requests for the paths
// in answers on its own, reading each connection's first bytes within
// timeout. It starts accepting at once.
func Wrap(ln net.Listener, answers map[string]Answer, timeout time.Duration) *Listener {
	l := &Listener{
		inner:    ln,
		answers:  answers,
		timeout:  timeout,
		conns:    make(chan net.Conn),
		errs:     make(chan error),
		done:     make(chan struct{}),
		deciding: make(map[net.Conn]struct{}),
	}
	l.bufs.New = func() any { return new([maxHead]byte) }
	go l.acceptLoop()
	return l
}

// Accept returns the next connection that is not a probe, or the inner
// listener's error.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case err := <-l.errs:
		return nil, err
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops accepting, closes the inner listener, and ends the reads of
// the connections not yet decided: those are closed unanswered, as
// http.Server.Close closes the connections it serves.
func (l *Listener) Close() error {
	var err error
	l.once.Do(func() {
		close(l.done)
		err = l.inner.Close()
		l.mu.Lock()
		for c := range l.deciding {
			c.SetReadDeadline(aLongTimeAgo) //nolint:errcheck // the read ends either way: closed below, or by its own deadline
		}
		l.mu.Unlock()
	})
	return err
}

// aLongTimeAgo is a deadline in the past: it ends a blocked read at once.
var aLongTimeAgo = time.Unix(1, 0)

// closed reports whether Close was called.
func (l *Listener) closed() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

// Addr is the inner listener's address.
func (l *Listener) Addr() net.Addr { return l.inner.Addr() }

func (l *Listener) acceptLoop() {
	for {
		c, err := l.inner.Accept()
		if err != nil {
			// net/http's Serve backs off on temporary errors and calls
			// Accept again; any other error ends it, and this loop too.
			var ne net.Error
			temporary := errors.As(err, &ne) && ne.Timeout() || isTemporary(err)
			select {
			case l.errs <- err:
			case <-l.done:
				return
			}
			if !temporary {
				return
			}
			continue
		}
		go l.serve(c)
	}
}

// isTemporary reports the errors net/http's Serve retries after a pause
// (file descriptors exhausted and the like).
func isTemporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

// serve reads c's first bytes and answers a probe, or hands c over.
func (l *Listener) serve(c net.Conn) {
	accepted := time.Now()
	l.mu.Lock()
	l.deciding[c] = struct{}{}
	l.mu.Unlock()
	if l.closed() { // Close may have missed c
		l.forget(c)
		c.Close()
		return
	}
	buf := l.bufs.Get().(*[maxHead]byte)
	if l.timeout > 0 {
		c.SetReadDeadline(accepted.Add(l.timeout)) //nolint:errcheck // a failed set shows as a read error
	}
	n, err := c.Read(buf[:])
	l.forget(c)
	if l.closed() {
		l.bufs.Put(buf)
		c.Close()
		return
	}
	if err == nil && n < len(buf) {
		if out := AnswerHead(buf[:0], buf[:n], l.answers); out != nil {
			c.Write(out) //nolint:errcheck // the probe sees the failure
			c.Close()
			l.bufs.Put(buf)
			return
		}
	}
	// Not a probe (or not one this path answers): net/http reads it from
	// the start, including a read error, which it meets again.
	var first []byte
	if n > 0 {
		first = append([]byte(nil), buf[:n]...)
	}
	l.bufs.Put(buf)
	hc := &replayConn{Conn: c, first: first, err: err}
	if l.timeout > 0 {
		// net/http's header timeout starts when it begins to read: the
		// time spent here comes off it (replayConn.SetReadDeadline), so a
		// slow head gets one timeout in all, not two.
		hc.headDeadline = accepted.Add(l.timeout)
	}
	select {
	case l.conns <- hc:
	case <-l.done:
		c.Close()
	}
}

// AnswerHead appends to b the whole answer to head when head is a probe
// that answers has (see ProbeHead), and returns nil otherwise. b may be
// head[:0]: head is read before b is written.
func AnswerHead(b, head []byte, answers map[string]Answer) []byte {
	path, http11, ok := ProbeHead(head)
	if !ok {
		return nil
	}
	answer := answers[path]
	if answer == nil {
		return nil
	}
	status, body := answer()
	return appendAnswer(b, http11, status, body, time.Now())
}

// forget removes c from the connections being decided.
func (l *Listener) forget(c net.Conn) {
	l.mu.Lock()
	delete(l.deciding, c)
	l.mu.Unlock()
}

// appendAnswer appends the whole answer to a probe, byte for byte as
// net/http gives it to a request that asks to close (TestAnswerAsNetHTTP):
// its status line for the request's version, its headers in its order,
// "Connection: close" for HTTP/1.1 (HTTP/1.0 closes by default).
func appendAnswer(b []byte, http11 bool, status int, body string, now time.Time) []byte {
	if http11 {
		b = append(b, "HTTP/1.1 "...)
	} else {
		b = append(b, "HTTP/1.0 "...)
	}
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, ' ')
	b = append(b, http.StatusText(status)...)
	b = append(b, "\r\nDate: "...)
	b = now.UTC().AppendFormat(b, http.TimeFormat)
	b = append(b, "\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\nContent-Type: text/plain; charset=utf-8\r\n"...)
	if http11 {
		b = append(b, "Connection: close\r\n"...)
	}
	b = append(b, "\r\n"...)
	return append(b, body...)
}

// replayConn is a connection whose first bytes were already read: Read
// returns them, then the error that ended the first read if any, then
// reads on.
type replayConn struct {
	net.Conn
	first []byte
	err   error
	// headDeadline, when set, bounds the first read deadline net/http
	// sets (its header timeout): the head's time started at accept.
	headDeadline time.Time
}

// SetReadDeadline sets the connection's read deadline; the first one set
// is no later than headDeadline.
func (c *replayConn) SetReadDeadline(t time.Time) error {
	if !c.headDeadline.IsZero() {
		if t.IsZero() || t.After(c.headDeadline) {
			t = c.headDeadline
		}
		c.headDeadline = time.Time{}
	}
	return c.Conn.SetReadDeadline(t)
}

// SetDeadline sets both deadlines, the read one as SetReadDeadline does.
func (c *replayConn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.Conn.SetWriteDeadline(t)
}

func (c *replayConn) Read(p []byte) (int, error) {
	if len(c.first) > 0 {
		n := copy(p, c.first)
		c.first = c.first[n:]
		return n, nil
	}
	if c.err != nil {
		err := c.err
		c.err = nil
		return 0, err
	}
	return c.Conn.Read(p)
}

// NetConn is the connection underneath, as tls.Conn's NetConn is.
func (c *replayConn) NetConn() net.Conn { return c.Conn }

// CloseWrite half-closes the connection when it can, as net/http expects
// of a TCP connection.
func (c *replayConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// ProbeHead reports whether head is exactly one complete request head that
// this package answers: "GET <path> HTTP/1.1" or "HTTP/1.0", a path of
// lower-case letters only, with or without a query of visible bytes (not
// returned: the answer ignores it, as net/http's mux does), header lines
// net/http accepts, for
// HTTP/1.1 exactly one Host header of a plain host[:port], no
// Content-Length, Transfer-Encoding or Expect (a probe has no body), and
// nothing after the blank line. It returns the path and whether the
// request is HTTP/1.1. Anything else is for net/http.
func ProbeHead(head []byte) (path string, http11, ok bool) {
	end := bytes.Index(head, []byte("\r\n\r\n"))
	if end < 0 || end+4 != len(head) {
		return "", false, false
	}
	line, rest, _ := bytes.Cut(head[:end+2], []byte("\r\n"))
	pathb, ok := bytes.CutPrefix(line, []byte("GET /"))
	if !ok {
		return "", false, false
	}
	sp := bytes.IndexByte(pathb, ' ')
	if sp < 1 {
		return "", false, false
	}
	name, query, hasQuery := bytes.Cut(pathb[:sp], []byte("?"))
	if len(name) == 0 {
		return "", false, false
	}
	for _, ch := range name {
		if ch < 'a' || ch > 'z' {
			return "", false, false
		}
	}
	if hasQuery {
		// net/http's request line takes any byte but a control byte and
		// the space that ends the target.
		for _, ch := range query {
			if ch <= ' ' || ch == 0x7f {
				return "", false, false
			}
		}
	}
	switch string(pathb[sp+1:]) {
	case "HTTP/1.1":
		http11 = true
	case "HTTP/1.0":
	default:
		return "", false, false
	}
	hosts := 0
	for len(rest) > 0 {
		var hl []byte
		hl, rest, _ = bytes.Cut(rest, []byte("\r\n"))
		colon := bytes.IndexByte(hl, ':')
		if colon < 1 {
			return "", false, false
		}
		name := hl[:colon]
		for _, ch := range name {
			if !isTokenChar(ch) {
				return "", false, false
			}
		}
		for _, ch := range hl[colon+1:] {
			if ch < ' ' && ch != '\t' || ch == 0x7f {
				return "", false, false
			}
		}
		switch {
		case equalFold(name, "host"):
			if !plainHost(bytes.Trim(hl[colon+1:], " \t")) {
				return "", false, false
			}
			hosts++
		case equalFold(name, "content-length"), equalFold(name, "transfer-encoding"), equalFold(name, "expect"):
			return "", false, false
		}
	}
	if hosts > 1 || http11 && hosts != 1 {
		return "", false, false
	}
	return "/" + string(name), http11, true
}

// plainHost reports whether h is a host name or address with an optional
// port: letters, digits and ".-_:[]" only, which net/http accepts as a
// Host header (and nothing it would refuse).
func plainHost(h []byte) bool {
	if len(h) == 0 {
		return false
	}
	for _, ch := range h {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || strings.IndexByte(".-_:[]", ch) >= 0) {
			return false
		}
	}
	return true
}

// isTokenChar reports whether ch may appear in a header name (RFC 9110's
// tchar).
func isTokenChar(ch byte) bool {
	switch {
	case ch >= 'a' && ch <= 'z', ch >= 'A' && ch <= 'Z', ch >= '0' && ch <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", ch) >= 0
}

// equalFold reports whether b is s, ASCII case aside (s in lower case).
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		ch := b[i]
		if ch >= 'A' && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		if ch != s[i] {
			return false
		}
	}
	return true
}
