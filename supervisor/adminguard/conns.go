package adminguard

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Conns is a net.Listener that caps the connections it has open. Under
// its cap it accepts as the listener it wraps. At the cap, a new
// connection closes the open one idle longest — a keep-alive connection
// between requests, or one that has sent nothing since its accept — and
// takes its place; with none idle (every one inside a request, each
// bounded by the server's timeouts) the newcomer is answered "503
// Service Unavailable" with "Retry-After: 1" and closed, but a plain
// probe is answered as a probe (see Probe), so that readiness checks
// outlast a flood.
//
// Why: on 011fb07, 232 idle keep-alive admin connections under a
// descriptor limit of 256 left a killed worker unrestarted (issue 30
// item 5). An http.Server whose ConnState is the Conns' ConnState tells it
// which of its connections are idle.
type Conns struct {
	net.Listener
	max int
	// probe, when set, answers a head read from a connection refused at
	// the cap: the whole answer, or nil when the head is not a probe.
	probe func(head []byte) []byte
	// Silent closes a connection refused at the cap unanswered: on a TLS
	// listener a clear-text 503 would be noise to the client's handshake.
	Silent bool

	mu   sync.Mutex
	open int
	idle idleList // idle longest first

	evicted, refused atomic.Int64
	refusing         chan struct{} // bounds the refusals being written
}

// maxRefusing bounds the connections being refused at once: each holds a
// descriptor for up to refuseTimeout; past the bound one is closed unanswered.
const maxRefusing = 8

// refuseTimeout bounds a refusal: reading the request's head, writing the
// 503, reading what the client sends before it closes.
const refuseTimeout = time.Second

// NewConns wraps ln with a cap of max connections (at least 1). probe,
// when not nil, answers the head of a connection refused at the cap (nil
// when it is not a probe's).
func NewConns(ln net.Listener, max int, probe func(head []byte) []byte) *Conns {
	return &Conns{Listener: ln, max: max1(max), probe: probe, refusing: make(chan struct{}, maxRefusing)}
}

// Max is the cap.
func (l *Conns) Max() int { return l.max }

// Open is how many accepted connections are open.
func (l *Conns) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// Evicted counts the idle connections closed to make room at the cap.
func (l *Conns) Evicted() int64 { return l.evicted.Load() }

// Refused counts the connections answered 503 at the cap (or closed
// unanswered past maxRefusing); a probe answered there is not counted.
func (l *Conns) Refused() int64 { return l.refused.Load() }

// Accept returns the next connection admitted under the cap; those
// refused at it are answered and closed here.
func (l *Conns) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		tc, victim := l.admit(c)
		if victim != nil {
			victim.Conn.Close() //nolint:errcheck // its reader sees the close
			l.evicted.Add(1)
		}
		if tc != nil {
			return tc, nil
		}
		l.refuse(c)
	}
}

// admit tracks c when there is room, making room by forgetting the
// connection idle longest (returned, for the caller to close); nil when
// there is none.
func (l *Conns) admit(c net.Conn) (tc, victim *conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open >= l.max {
		victim = l.idle.head
		if victim == nil {
			return nil, nil
		}
		l.forgetLocked(victim)
	}
	tc = &conn{Conn: c, l: l, tracked: true}
	l.open++
	l.idleLocked(tc) // nothing read yet
	return tc, victim
}

// refuse answers c, refused at the cap, and closes it, in the background.
func (l *Conns) refuse(c net.Conn) {
	if l.Silent {
		c.Close() //nolint:errcheck // refused: nothing to tell
		l.refused.Add(1)
		return
	}
	select {
	case l.refusing <- struct{}{}:
	default:
		c.Close() //nolint:errcheck // too many being refused: no answer
		l.refused.Add(1)
		return
	}
	go func() {
		defer func() { <-l.refusing }()
		defer c.Close()
		c.SetDeadline(time.Now().Add(refuseTimeout)) //nolint:errcheck // a failed set shows as a failed read
		buf := make([]byte, 2048)
		n, _ := c.Read(buf)
		if l.probe != nil && n > 0 {
			if out := l.probe(buf[:n]); out != nil {
				c.Write(out) //nolint:errcheck // the probe sees the failure
				return
			}
		}
		l.refused.Add(1)
		if _, err := io.WriteString(c, refusal); err != nil {
			return
		}
		// Closing with the request unread would reset the connection,
		// maybe before the client read the 503: half-close, and read what
		// it sends until it closes (it was told to).
		if cw, ok := c.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite() //nolint:errcheck // the close below ends it either way
		}
		io.Copy(io.Discard, io.LimitReader(c, 64<<10)) //nolint:errcheck // bounded by the deadline
	}()
}

const refusalBody = "503 service unavailable: the admin listener has admin_max_conns connections open, none idle; retry\n"

var refusal = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nRetry-After: 1\r\nConnection: close\r\n" +
	"Content-Length: " + strconv.Itoa(len(refusalBody)) + "\r\n\r\n" + refusalBody

// ConnState is for http.Server.ConnState: a connection idle between
// requests may be evicted; one in a request may not.
func (l *Conns) ConnState(c net.Conn, st http.ConnState) {
	tc := unwrap(c)
	if tc == nil {
		return
	}
	switch st {
	case http.StateIdle:
		l.mu.Lock()
		if tc.tracked {
			l.idleLocked(tc)
		}
		l.mu.Unlock()
	case http.StateActive:
		tc.busy()
	}
}

// unwrap finds the Conns' connection under c (net/http sees it through
// wrappers such as the probe's, which expose it as NetConn).
func unwrap(c net.Conn) *conn {
	for c != nil {
		if tc, ok := c.(*conn); ok {
			return tc
		}
		u, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return nil
		}
		c = u.NetConn()
	}
	return nil
}

func (l *Conns) idleLocked(c *conn) {
	if !c.idle.Load() {
		l.idle.pushBack(c)
		c.idle.Store(true)
	}
}

func (l *Conns) busyLocked(c *conn) {
	if c.idle.Load() {
		l.idle.remove(c)
		c.idle.Store(false)
	}
}

func (l *Conns) forgetLocked(c *conn) {
	if c.tracked {
		l.busyLocked(c)
		c.tracked = false
		l.open--
	}
}

// idleList is a doubly linked list threaded through the connections
// themselves: no allocation per connection (the probes' accept path is
// counted in instructions, docs/accept-path.md).
type idleList struct{ head, tail *conn }

func (q *idleList) pushBack(c *conn) {
	c.prev, c.next = q.tail, nil
	if q.tail != nil {
		q.tail.next = c
	} else {
		q.head = c
	}
	q.tail = c
}

func (q *idleList) remove(c *conn) {
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		q.head = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		q.tail = c.prev
	}
	c.prev, c.next = nil, nil
}

func (q *idleList) len() int {
	n := 0
	for c := q.head; c != nil; c = c.next {
		n++
	}
	return n
}

// conn is an admitted connection: it stops being idle when it reads a
// byte, and leaves the count when closed.
type conn struct {
	net.Conn
	l          *Conns
	idle       atomic.Bool // in l.idle; written under l.mu, read without it
	tracked    bool        // counted in l.open; guarded by l.mu
	prev, next *conn       // l.idle's links; guarded by l.mu
	once       sync.Once
}

func (c *conn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && c.idle.Load() {
		c.busy()
	}
	return n, err
}

// busy takes c off the idle list: it is in a request.
func (c *conn) busy() {
	c.l.mu.Lock()
	c.l.busyLocked(c)
	c.l.mu.Unlock()
}

func (c *conn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		c.l.forgetLocked(c)
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}

// CloseWrite half-closes the connection when it can, as net/http expects
// of a TCP connection.
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// NetConn is the connection underneath.
func (c *conn) NetConn() net.Conn { return c.Conn }
