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
)

// idleTimeout closes a keep-alive client connection after this long without
// a request.
const idleTimeout = 90 * time.Second

// connTracker knows every client connection of the worker and whether a
// request is being handled on it, so a graceful stop can close the idle
// ones at once and the busy ones as soon as they finish.
type connTracker struct {
	mu    sync.Mutex
	conns map[*connState]struct{}
}

type connState struct {
	conn net.Conn
	busy atomic.Bool
}

type connStateKey struct{}

func newConnTracker() *connTracker {
	return &connTracker{conns: map[*connState]struct{}{}}
}

// accept registers a new connection (hertz's OnAccept); the context it
// returns is the one every request on the connection is handled with.
func (t *connTracker) accept(conn net.Conn) context.Context {
	st := &connState{conn: conn}
	t.mu.Lock()
	t.conns[st] = struct{}{}
	t.mu.Unlock()
	// Forget the connection when it closes, whoever closes it.
	if hc, ok := conn.(*hnetpoll.Conn); ok {
		if pc, ok := hc.Conn.(netpoll.Connection); ok {
			pc.AddCloseCallback(func(netpoll.Connection) error {
				t.mu.Lock()
				delete(t.conns, st)
				t.mu.Unlock()
				return nil
			})
		}
	}
	return context.WithValue(context.Background(), connStateKey{}, st)
}

// markBusy is middleware: the connection is busy while a handler runs.
func (t *connTracker) markBusy(ctx context.Context, c *app.RequestContext) {
	st, _ := ctx.Value(connStateKey{}).(*connState)
	if st == nil {
		c.Next(ctx)
		return
	}
	st.busy.Store(true)
	defer st.busy.Store(false)
	c.Next(ctx)
}

// closeIdleUntil closes every connection not handling a request, now and
// then every 50 ms, until ctx ends.
func (t *connTracker) closeIdleUntil(ctx context.Context) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		t.mu.Lock()
		for st := range t.conns {
			if !st.busy.Load() {
				st.conn.Close()
				delete(t.conns, st)
			}
		}
		t.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
