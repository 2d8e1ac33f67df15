package worker

import (
	"net"
	"time"

	"github.com/cloudwego/hertz/pkg/app/server"
	"github.com/cloudwego/hertz/pkg/network/netpoll"
	"github.com/cloudwego/hertz/pkg/network/standard"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/meter"
	"github.com/sluice-gw/sluice/proxy"
	"github.com/sluice-gw/sluice/shm"
)

// edge is one listener of the worker and the hertz engine serving it: a
// plain one on netpoll behind the accept gate, a TLS one on hertz's
// standard transport (netpoll has no TLS), both with the same pipeline
// mounted.
type edge struct {
	h    *server.Hertz
	gate *acceptGate  // nil for a TLS listener
	tls  *tlsListener // nil for a plain one
}

// newEdge builds the engine of listener k of cfg on its socket ln; rec
// counts a TLS listener's handshakes.
func newEdge(cfg *config.Config, k int, ln net.Listener, g *proxy.Gateway, region *shm.Region, rec *meter.Recorder,
	conns *connTracker, bounds *connBounds) (*edge, error) {
	l := cfg.Listen[k]
	common := append(proxy.ServerOptions(cfg),
		// hertz bounds Shutdown by this as well as by its context: the
		// context decides (shutdown_timeout, or none for a graceful stop).
		server.WithExitWaitTime(gracefulForever),
		// keepalive_timeout: hertz waits this long for a keep-alive
		// connection's next request (its first bytes), then closes it.
		server.WithIdleTimeout(time.Duration(cfg.KeepaliveTimeout)),
	)
	if l.TLS != nil {
		t, err := newTLSEdge(cfg, k, region, rec, bounds)
		if err != nil {
			return nil, err
		}
		tl := &tlsListener{Listener: ln, edge: t, full: conns.full, refused: conns.refused}
		h := server.New(append(common,
			server.WithListener(tl),
			server.WithTransport(standard.NewTransporter),
			server.WithOnAccept(conns.accept),
		)...)
		// client_body_timeout for the body, over the whole body here (the
		// standard transport's read timeout is a deadline).
		g.Mount(h.Engine, t.verifiesClients, conns.markBusy)
		return &edge{h: h, tls: tl}, nil
	}
	gate, err := newAcceptGate(ln)
	if err != nil {
		return nil, err
	}
	gate.full, gate.refused = conns.full, conns.refused
	h := server.New(append(common,
		server.WithListener(gate),
		server.WithTransport(netpoll.NewTransporter),
		server.WithOnAccept(conns.accept),
	)...)
	g.Mount(h.Engine, nil, conns.markBusy)
	return &edge{h: h, gate: gate}, nil
}
