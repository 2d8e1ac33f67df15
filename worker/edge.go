package worker

import (
	"context"
	"crypto/tls"
	"net"
	"time"

	"github.com/cloudwego/hertz/pkg/app"
	"github.com/cloudwego/hertz/pkg/app/server"
	"github.com/cloudwego/hertz/pkg/network/netpoll"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/proxy"
)

// edge is one listener of the worker and the hertz engine serving it: a
// plain one on netpoll behind the accept gate, a TLS one on hertz's
// standard transport (netpoll has no TLS), both with the same pipeline
// mounted.
type edge struct {
	h    *server.Hertz
	gate *acceptGate // nil for a TLS listener
}

// newEdge builds the engine of listener l on its socket ln.
func newEdge(cfg *config.Config, l config.Listener, ln net.Listener, g *proxy.Gateway, conns *connTracker, bounds *connBounds) (*edge, error) {
	common := append(proxy.ServerOptions(cfg),
		// hertz bounds Shutdown by this as well as by its context: the
		// context decides (shutdown_timeout, or none for a graceful stop).
		server.WithExitWaitTime(gracefulForever),
		// keepalive_timeout: hertz waits this long for a keep-alive
		// connection's next request (its first bytes), then closes it.
		server.WithIdleTimeout(time.Duration(cfg.KeepaliveTimeout)),
	)
	if l.TLS != nil {
		tc, err := serverTLS(l.TLS)
		if err != nil {
			return nil, err
		}
		h := server.New(append(common,
			server.WithListener(ln),
			server.WithTLS(tc),
			server.WithALPN(false), // http/1.1 only: tc offers it, and a client that asked for h2 falls back
			server.WithOnAccept(func(c net.Conn) context.Context {
				// client_header_timeout bounds the handshake and the first
				// head: the deadline is on the socket before the handshake
				// reads from it (hertz's first read runs it).
				c.SetReadDeadline(time.Now().Add(time.Duration(bounds.head.Load()))) //nolint:errcheck // a closed socket fails the read anyway
				return context.Background()
			}),
		)...)
		g.Mount(h.Engine, func(ctx context.Context, c *app.RequestContext) {
			// client_body_timeout for the body (over the whole body here:
			// the standard transport's read timeout is a deadline).
			c.GetConn().SetReadTimeout(time.Duration(bounds.body.Load())) //nolint:errcheck // see above
		})
		return &edge{h: h}, nil
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
	g.Mount(h.Engine, conns.markBusy)
	return &edge{h: h, gate: gate}, nil
}

// serverTLS is the crypto/tls configuration of a TLS listener: its
// certificates (chosen by SNI, the first as the default), its minimum
// version, http/1.1 as the only ALPN protocol, and with client_ca a
// verified client certificate required.
func serverTLS(t *config.TLS) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: t.MinTLSVersion(), NextProtos: []string{"http/1.1"}}
	now := time.Now()
	for _, c := range t.Certificates {
		pair, err := config.LoadCertificate(c, now)
		if err != nil {
			return nil, err
		}
		tc.Certificates = append(tc.Certificates, pair)
	}
	if t.ClientCA != "" {
		pool, err := config.LoadClientCAs(t.ClientCA)
		if err != nil {
			return nil, err
		}
		tc.ClientCAs, tc.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return tc, nil
}
