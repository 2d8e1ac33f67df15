package worker

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"

	"github.com/cloudwego/netpoll"
)

// acceptGate is the worker's listening socket as netpoll sees it, with a
// way to stop accepting without closing anything.
//
// The socket is shared: the supervisor opened it and passes it to every
// worker it starts for the slot, and to its successor at a binary upgrade.
// When a worker drains, its successor must take the new connections while
// the old worker finishes with its own. hertz's Shutdown cannot do the two
// apart: netpoll's server stops polling the socket and, in the same step,
// closes every connection it finds idle — one accepted a moment earlier
// whose request has not been read yet included, which its client sees as a
// reset or an empty answer (about one per upgrade under new-connection
// traffic, measured). So on a hand-over the worker first stops accepting
// here, then lets its connection tracker close its connections as they fall
// quiet (a new one gets time for its first request), and calls hertz's
// Shutdown once none is left. (On a plain stop there is no one to hand the
// socket to: Shutdown closes it at once, so new connections are refused.)
type acceptGate struct {
	netpoll.Listener
	mu       sync.Mutex // held across an Accept, so that stop knows the last one
	stopped  atomic.Bool
	accepted int64 // connections handed to netpoll (under mu)
	// full, when set, says the worker has worker_connections open: a new
	// connection is then closed at once and refused counts it.
	full    func() bool
	refused func()
}

// errDraining is what Accept returns once the gate is stopped. netpoll
// takes a listener whose Accept fails with "closed" out of its poller (and
// logs the error to hertz's discarded netpoll log).
var errDraining = errors.New("listener closed: this worker is draining and accepts no more connections")

func newAcceptGate(ln net.Listener) (*acceptGate, error) {
	nl, err := netpoll.ConvertListener(ln)
	if err != nil {
		return nil, err
	}
	return &acceptGate{Listener: nl}, nil
}

// Accept accepts the next connection, or fails with errDraining once the
// gate is stopped, leaving the connection to the socket's other workers.
// (The socket is non-blocking: holding mu across accept(2) costs nothing.)
func (g *acceptGate) Accept() (net.Conn, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped.Load() {
		return nil, errDraining
	}
	c, err := g.Listener.Accept()
	if c != nil && g.full != nil && g.full() {
		// Like nginx at worker_connections: closed before a byte is read.
		// (nil, nil) is netpoll's "nothing to accept now"; the socket is
		// level-triggered, so any other waiting connection comes next.
		c.Close()
		g.refused()
		return nil, nil
	}
	if c != nil {
		g.accepted++
	}
	return c, err
}

// stop makes every later Accept fail and returns how many connections the
// gate handed out in all. netpoll calls Accept when the socket has a
// connection waiting; the first call after stop takes the socket out of
// this worker's poller. A connection accepted just before stop reaches the
// connection tracker a moment later (netpoll registers it right after
// Accept returns): drain waits until the tracker has seen them all.
func (g *acceptGate) stop() (accepted int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stopped.Store(true)
	return g.accepted
}
