// Package upstream is the gateway's HTTP/1.1 client for its backends: a
// keep-alive pool per backend, and a request sent and its response read by
// the goroutine that asked for it.
//
// net/http's Transport, used before, runs two goroutines per connection
// and hands every request and response between them over channels, and it
// writes a request's head and body in separate write(2)s (a 100 KB body in
// 32 KiB pieces). Measured in the benchmark rig (docs/benchmarks.md), those
// were 20–25% of the gateway's CPU per request, and the two goroutines and
// their buffers a large part of the memory of an open stream. Here a request
// is one writev(2) of its head and body pieces, the response is parsed by
// net/http's own http.ReadResponse (status line, headers, chunked and
// Content-Length bodies: the parsing stays the well-tested library's) but
// for the plain heads backends send, read by readResponse the same way with
// fewer allocations (response.go), and
// an open stream costs one connection and one 1 KiB read buffer.
//
// Connections are netpoll's, like the client side's: one event loop
// (netpoll's epoll) serves both legs of a request, instead of netpoll's for
// the client and the Go runtime's for the backend, each waking on its own.
package upstream

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/cloudwego/netpoll"

	"github.com/sluice-gw/sluice/proxy/directwrite"
)

// Options tune a Pool; zero values take the defaults.
type Options struct {
	ConnectTimeout time.Duration // dialing (and a TLS handshake); default 2s
	MaxIdle        int           // idle connections kept; default 1024
	IdleTimeout    time.Duration // an idle connection is closed after this (or when the backend closes it); default 90s
	TLSConfig      *tls.Config   // https: nil verifies against the system's roots
}

// Pool sends requests to one backend over keep-alive connections. It is
// safe for concurrent use.
type Pool struct {
	addr        string      // host:port dialed
	host        string      // Host header
	tls         *tls.Config // nil: plain HTTP
	connect     time.Duration
	maxIdle     int
	idleTimeout time.Duration

	mu     sync.Mutex
	idle   []*conn // most recently used last
	closed bool
	// janitor closes idle connections once they pass idleTimeout, armed
	// while any is idle: without it they were closed only when the pool was
	// next used, so a burst left its connections open in an idle gateway.
	janitor *time.Timer
	armed   bool
}

// New returns the pool for a backend at baseURL (http or https://host[:port]).
func New(baseURL string, o Options) (*Pool, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, err
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = 2 * time.Second
	}
	if o.MaxIdle <= 0 {
		o.MaxIdle = 1024
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 90 * time.Second
	}
	p := &Pool{host: u.Host, maxIdle: o.MaxIdle, idleTimeout: o.IdleTimeout, connect: o.ConnectTimeout}
	port := u.Port()
	switch u.Scheme {
	case "http":
		if port == "" {
			port = "80"
		}
	case "https":
		if port == "" {
			port = "443"
		}
		p.tls = &tls.Config{}
		if o.TLSConfig != nil {
			p.tls = o.TLSConfig.Clone()
		}
		if p.tls.ServerName == "" {
			p.tls.ServerName = u.Hostname()
		}
		p.tls.NextProtos = []string{"http/1.1"}
	default:
		return nil, fmt.Errorf("upstream %q: scheme must be http or https", baseURL)
	}
	p.addr = net.JoinHostPort(u.Hostname(), port)
	return p, nil
}

// Request is what Do sends. Header holds the header lines ("Name: value\r\n")
// to forward, without Host, Content-Length and hop-by-hop fields: Do writes
// Host and, when there is a body, Content-Length.
type Request struct {
	Method string
	Target string   // the request-target: path and query
	Header []byte   // header lines, each ending in \r\n
	Body   [][]byte // the body, in pieces sent back to back (not copied)
}

// maxHeaderBytes bounds a response's status line and headers, as
// net/http's Transport does (10 MB there; a backend's are a few hundred bytes).
const maxHeaderBytes = 1 << 20

// ErrHeaderTooLarge: the backend's response headers passed maxHeaderBytes.
var ErrHeaderTooLarge = errors.New("upstream response headers larger than 1 MiB")

// Do sends req and returns when the response headers have arrived. The
// response body reads from the connection; closing it gives the connection
// back to the pool when the body was read to its end, and closes it
// otherwise. Cancelling ctx ends the request at any point, also while the
// body is being read: the connection is closed, and the backend sees it.
//
// A kept connection the backend closed while it sat idle (vLLM's server
// closes them after 5 s) fails before a byte of the answer arrives; the
// request is then sent once more on another connection, as net/http does.
func (p *Pool) Do(ctx context.Context, req *Request) (*http.Response, error) {
	for {
		c, reused, err := p.get(ctx)
		if err != nil {
			return nil, err
		}
		before := c.meter.n
		res, err := p.roundTrip(ctx, c, req)
		if err == nil {
			return res, nil
		}
		c.nc.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w (%w)", context.Cause(ctx), err)
		}
		if reused && c.meter.n == before && closedByPeer(err) {
			continue // nothing came back: the backend never saw it
		}
		return nil, err
	}
}

// roundTrip writes req on c and reads the response head.
func (p *Pool) roundTrip(ctx context.Context, c *conn, req *Request) (*http.Response, error) {
	stop := context.AfterFunc(ctx, c.abortFunc) // a blocked read or write returns
	head := headPool.Get().(*[]byte)
	*head = appendHead((*head)[:0], req, p.host)
	err := c.write(*head, req.Body)
	headPool.Put(head)
	if err != nil {
		stop()
		return nil, err
	}
	c.meter.limit = c.meter.n + maxHeaderBytes
	res, err := readResponse(c.br)
	for err == nil && res.StatusCode >= 100 && res.StatusCode < 200 {
		res, err = readResponse(c.br) // 1xx: informational, the answer follows
	}
	c.meter.limit = 0
	if err != nil {
		stop()
		return nil, err
	}
	res.Body = &body{rc: res.Body, pool: p, c: c, stop: stop, close: res.Close}
	return res, nil
}

// write sends the request head and body pieces: for plain HTTP, linked
// into netpoll's output buffer (large pieces without a copy) and sent by one
// sendmsg(2) with them all.
func (c *conn) write(head []byte, body [][]byte) error {
	if c.nc != net.Conn(c.raw) { // TLS
		bufs := append(net.Buffers{head}, body...)
		_, err := bufs.WriteTo(c.nc)
		return err
	}
	// One writev from here (directwrite says why not netpoll's buffer).
	var arr [8][]byte
	iov := append(append(arr[:0], head), body...)
	return directwrite.Send(directwrite.FD(c.raw), c.raw.Writer(), iov) // returns once everything is sent: the pieces are free again
}

// abort makes whatever waits on c — a blocked write or read — return an
// error, without closing c: the goroutine using c closes it (Do,
// body.Close). Closing it here would free its descriptor's number while that
// goroutine may be about to write to it (directwrite and netpoll's flush
// both take the number from c), and a connection accepted meanwhile could
// be given the same number. shutdown(2) wakes both directions and keeps it.
func (c *conn) abort() {
	if fd := directwrite.FD(c.raw); fd >= 0 {
		syscall.Shutdown(fd, syscall.SHUT_RDWR) //nolint:errcheck // the owner's close follows either way
		return
	}
	c.raw.Close()
}

// headPool holds the buffers request heads are written into.
var headPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// appendHead appends the request line and headers of req.
func appendHead(b []byte, req *Request, host string) []byte {
	b = append(b, req.Method...)
	b = append(b, ' ')
	b = append(b, req.Target...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, host...)
	b = append(b, "\r\n"...)
	if req.Body != nil || req.Method == http.MethodPost || req.Method == http.MethodPut {
		n := 0
		for _, piece := range req.Body {
			n += len(piece)
		}
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(n), 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, req.Header...)
	return append(b, "\r\n"...)
}

// conn is one connection to the backend.
type conn struct {
	nc     net.Conn           // raw, or TLS over it
	raw    netpoll.Connection // the TCP connection
	meter  meter
	br     *bufio.Reader
	idleAt time.Time
	// abortFunc is c.abort, made once: a method value made at each
	// request's context.AfterFunc would be an allocation each.
	abortFunc func()
}

// meter counts the bytes read from a connection (to know whether anything
// came back) and caps them while a response head is read.
type meter struct {
	nc    net.Conn
	n     int64
	limit int64 // 0: none
}

func (m *meter) Read(p []byte) (int, error) {
	if m.limit > 0 {
		if m.n >= m.limit {
			return 0, ErrHeaderTooLarge
		}
		p = p[:min(int64(len(p)), m.limit-m.n)]
	}
	n, err := m.nc.Read(p)
	m.n += int64(n)
	if err != nil && errors.Is(err, netpoll.ErrEOF) {
		err = io.EOF // what bufio and net/http's body framing expect at the end
	}
	return n, err
}

// readBufferSize is the bufio.Reader http.ReadResponse needs. netpoll has
// already read the bytes into memory, so a fill is a copy, not a system
// call: a small buffer costs little, and an open stream keeps it all along.
const readBufferSize = 1 << 10

// get returns an idle connection (reused) or a new one.
func (p *Pool) get(ctx context.Context) (c *conn, reused bool, err error) {
	now := time.Now()
	for {
		p.mu.Lock()
		if len(p.idle) == 0 {
			p.mu.Unlock()
			break
		}
		c = p.idle[len(p.idle)-1]
		p.idle[len(p.idle)-1] = nil
		p.idle = p.idle[:len(p.idle)-1]
		p.mu.Unlock()
		if now.Sub(c.idleAt) > p.idleTimeout || !alive(c.raw) {
			c.nc.Close()
			continue
		}
		return c, true, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	raw, err := netpoll.DialConnection("tcp", p.addr, p.connect)
	if err != nil {
		return nil, false, err
	}
	var nc net.Conn = raw
	if p.tls != nil {
		tc := tls.Client(nc, p.tls)
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, false, err
		}
		nc = tc
	}
	return p.newConn(nc, raw), false, nil
}

// newConn wraps a new connection (nc: raw, or TLS over it). Apart from
// get, so that get's c is not captured by the hang-up callback below: a
// captured result would be allocated at every get, reused or not.
func (p *Pool) newConn(nc net.Conn, raw netpoll.Connection) *conn {
	c := &conn{nc: nc, raw: raw}
	c.abortFunc = c.abort
	c.meter.nc = nc
	c.br = bufio.NewReaderSize(&c.meter, readBufferSize)
	// A backend that closes a kept connection (vLLM does after 5 s idle)
	// gets it closed here at once, not left half-closed until the pool is
	// next used: netpoll tells, from its poller, when the peer hangs up.
	if d, ok := raw.(disconnectNotifier); ok {
		d.SetOnDisconnect(func(context.Context, netpoll.Connection) { p.drop(c) }) //nolint:errcheck // never fails
	}
	return c
}

// disconnectNotifier is netpoll's connection's hook for the peer's hang-up
// (not in its Connection interface).
type disconnectNotifier interface {
	SetOnDisconnect(netpoll.OnDisconnect) error
}

// drop closes c if it is idle in the pool (the backend closed it); one in
// use is its user's to close.
func (p *Pool) drop(c *conn) {
	p.mu.Lock()
	i := slices.Index(p.idle, c)
	if i >= 0 {
		p.idle = slices.Delete(p.idle, i, i+1)
	}
	p.mu.Unlock()
	if i >= 0 {
		go c.nc.Close() // not from within netpoll's poller callback
	}
}

// put returns a connection whose response was read to its end (one the
// backend has already closed is closed instead).
func (p *Pool) put(c *conn) {
	c.idleAt = time.Now()
	p.mu.Lock()
	if p.closed || len(p.idle) >= p.maxIdle || !c.raw.IsActive() {
		p.mu.Unlock()
		c.nc.Close()
		return
	}
	p.idle = append(p.idle, c)
	if !p.armed {
		p.armed = true
		if p.janitor == nil {
			p.janitor = time.AfterFunc(p.idleTimeout, p.expire)
		} else {
			p.janitor.Reset(p.idleTimeout)
		}
	}
	p.mu.Unlock()
}

// expire closes the idle connections past idleTimeout (the oldest are
// first) and waits for the next to pass it, while any is idle.
func (p *Pool) expire() {
	now := time.Now()
	p.mu.Lock()
	n := 0
	for n < len(p.idle) && now.Sub(p.idle[n].idleAt) >= p.idleTimeout {
		n++
	}
	expired := slices.Clone(p.idle[:n])
	p.idle = slices.Delete(p.idle, 0, n)
	p.armed = len(p.idle) > 0 && !p.closed
	if p.armed {
		p.janitor.Reset(p.idle[0].idleAt.Add(p.idleTimeout).Sub(now))
	}
	p.mu.Unlock()
	for _, c := range expired {
		c.nc.Close()
	}
}

// Idle returns the number of idle connections kept.
func (p *Pool) Idle() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}

// Close closes the idle connections, and every connection in use as it is
// given back: for a backend that left the configuration.
func (p *Pool) Close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	if p.janitor != nil {
		p.janitor.Stop()
	}
	p.mu.Unlock()
	for _, c := range idle {
		c.nc.Close()
	}
}

// alive reports whether an idle connection is still open and silent
// (netpoll's poller saw no EOF, and nothing unasked arrived on it: bytes
// from nowhere mean the connection cannot be trusted).
func alive(raw netpoll.Connection) bool {
	return raw.IsActive() && raw.Reader().Len() == 0
}

// closedByPeer reports errors of a connection the other end had closed.
func closedByPeer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, netpoll.ErrConnClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// body is a response body that gives its connection back when done.
type body struct {
	rc     io.ReadCloser // http.ReadResponse's body: chunked or Content-Length framing
	pool   *Pool
	c      *conn
	stop   func() bool // unregisters the cancellation; false once it ran
	close  bool        // the backend said Connection: close
	eof    bool
	closed bool
}

// errBodyClosed is returned by Read after Close.
var errBodyClosed = errors.New("upstream: read on a closed response body")

func (b *body) Read(p []byte) (int, error) {
	if b.closed {
		return 0, errBodyClosed
	}
	n, err := b.rc.Read(p)
	if err == io.EOF {
		b.eof = true
	}
	return n, err
}

// WaitData blocks until the backend has sent more bytes (or the connection
// failed, or the request was cancelled), without a buffer of the caller's:
// a relay of a mostly idle stream need not hold one while it waits. A Read
// after it returns the data, or the same error.
func (b *body) WaitData() error {
	if b.closed || b.eof {
		return nil
	}
	_, err := b.c.br.Peek(1)
	return err
}

// WaitDataFor is WaitData bounded by d: false when nothing arrived in time
// (and at once over TLS, whose reads a timeout may leave broken).
func (b *body) WaitDataFor(d time.Duration) bool {
	if b.closed || b.eof || b.Buffered() > 0 {
		return true
	}
	if b.c.nc != net.Conn(b.c.raw) {
		return false
	}
	b.c.raw.SetReadTimeout(d) //nolint:errcheck // netpoll's never fails
	_, err := b.c.br.Peek(1)  // a timeout is returned once, not kept by bufio
	b.c.raw.SetReadTimeout(0) //nolint:errcheck
	return !errors.Is(err, netpoll.ErrReadTimeout)
}

// Buffered returns how many bytes of the response have arrived and not been
// read yet, framing included: while it is above zero a Read finds data
// without waiting for the backend (unless those bytes end inside a chunk's
// header line, which backends write whole).
func (b *body) Buffered() int {
	if b.closed || b.eof {
		return 0
	}
	return b.c.br.Buffered() + b.c.raw.Reader().Len()
}

// Close ends the response. A body read to its end, on a connection the
// backend keeps open, with nothing after it, goes back to the pool; any
// other is closed (never drained: an abandoned stream could run for minutes).
func (b *body) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	if b.stop() && b.eof && !b.close && b.c.br.Buffered() == 0 {
		b.pool.put(b.c)
		return nil
	}
	return b.c.nc.Close()
}
