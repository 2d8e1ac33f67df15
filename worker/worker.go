// Package worker is one worker process of sluice: it adopts the listening
// socket the supervisor opened for its slot and serves the OpenAI-compatible
// API on it with hertz over netpoll, proxying to the configured backends.
// A worker owns nothing that must outlive it: the socket stays open in the
// supervisor, so a replacement takes over the connections queued on it.
package worker

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cloudwego/hertz/pkg/common/hlog"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/hotreload"
	"github.com/sluice-gw/sluice/meter"
	"github.com/sluice-gw/sluice/proxy"
	"github.com/sluice-gw/sluice/shm"
)

// Options is what a worker is handed by the supervisor.
type Options struct {
	Slot     int          // worker slot number, 0-based
	Listener net.Listener // this slot's SO_REUSEPORT socket of listen's first listener
	// More are its sockets of listen's other listeners, in order.
	More   []net.Listener
	Config *config.Config // validated configuration
	Log    *slog.Logger   // structured log on stderr
	Ready  func()         // called once the worker accepts connections

	// Region is the shared-memory region; nil makes a private one (tests).
	Region *shm.Region
	// Column is this worker's column in every shared cell.
	Column int
	// WakeRead is this worker's wake pipe; WakeWrite holds every worker's,
	// by column (nil: a single worker with no others to wake).
	WakeRead  *os.File
	WakeWrite []int
	// Control is the supervisor's reload channel (nil: no reloads).
	Control *os.File
	// Generation is the configuration generation Config belongs to.
	Generation int64
}

// Run serves until ctx is cancelled, then stops accepting, lets in-flight
// requests and streams finish for up to shutdown_timeout, and returns.
func Run(ctx context.Context, o Options) error {
	cfg := o.Config
	region := o.Region
	if region == nil {
		r, err := proxy.PrivateRegion(cfg)
		if err != nil {
			return err
		}
		defer r.Close()
		region = r
	}
	// The process's own settings; a reload changes them in serveControl.
	var bounds connBounds
	bounds.set(cfg)
	var shutdownTimeout atomic.Int64 // read when the drain begins
	shutdownTimeout.Store(int64(cfg.ShutdownTimeout))
	debug.SetGCPercent(cfg.GOGC)

	g, err := proxy.New(proxy.Options{Config: cfg, Generation: o.Generation, Region: region,
		Column: o.Column, Slot: o.Slot, WakeWrite: o.WakeWrite, Log: o.Log})
	if err != nil {
		return err
	}
	// Deferred in this order so that they run in the other: the queues'
	// context ends first, then Close, which waits for the work Start began
	// under it (Close before stopQueues would wait for ever).
	defer g.Close()
	qctx, stopQueues := context.WithCancel(context.Background())
	defer stopQueues()
	g.Start(qctx, o.WakeRead)
	defer reopenOnUSR1(g, o.Log)()

	hlog.SetLevel(hlog.LevelError) // hertz's own chatter; sluice logs what matters
	bursts := newCloseBurst()
	go bursts.run(qctx) // the worker's life, like publishGenerations
	connCell := region.Lookup(shm.ConnCell)
	if connCell == nil {
		return fmt.Errorf("shared region lacks the cell %s", shm.ConnCell)
	}
	conns := newConnTracker(bursts, &bounds, connCell, o.Column)
	go conns.sweep(qctx) // client_header_timeout
	lns := append([]net.Listener{o.Listener}, o.More...)
	if len(lns) != len(cfg.Listen) {
		return fmt.Errorf("%d listening sockets handed over for %d listeners", len(lns), len(cfg.Listen))
	}
	ready := readyOnce(len(lns), o.Ready)
	edges := make([]*edge, len(lns))
	rec := meter.NewRecorder(region, o.Column)
	for k, ln := range lns {
		if edges[k], err = newEdge(cfg, k, ln, g, region, rec, conns, &bounds); err != nil {
			return fmt.Errorf("listener %s: %w", cfg.Listen[k].Address, err)
		}
		edges[k].h.OnRun = append(edges[k].h.OnRun, func(context.Context) error { ready(); return nil })
	}
	if o.Control != nil {
		go serveControl(o.Control, g, edges, &bounds, &shutdownTimeout, o.Log)
	}
	served := make(chan error, len(edges))
	for _, e := range edges {
		go func() { served <- <-e.run() }()
	}
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	return drainAll(context.Cause(ctx), edges, conns, time.Duration(shutdownTimeout.Load()), o)
}

// readyOnce returns what each of n engines calls once it runs: the n-th
// call calls ready (nil: none).
func readyOnce(n int, ready func()) func() {
	var left atomic.Int64
	left.Store(int64(n))
	return func() {
		if left.Add(-1) == 0 && ready != nil {
			ready()
		}
	}
}

// drainAll drains every edge at once (drain), and returns the first
// failure.
func drainAll(cause error, edges []*edge, conns *connTracker, shutdown time.Duration, o Options) error {
	errs := make(chan error, len(edges))
	for _, e := range edges {
		go func() { errs <- drain(cause, e, conns, shutdown, o) }()
	}
	var first error
	for range edges {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// run runs the edge's engine in the background; the channel says how it
// ended.
func (e *edge) run() <-chan error {
	h, gate := e.h, e.gate
	served := make(chan error, 1)
	if gate == nil { // TLS: hertz's standard transport returns once its listener is closed
		go func() { served <- h.Run() }()
		return served
	}
	go func() {
		defer func() {
			// hertz panics when netpoll's Serve returns an error, which the
			// stopped gate causes on purpose (see acceptGate): the engine is
			// done, and the connections it accepted are still served.
			if r := recover(); r != nil {
				if !gate.stopped.Load() || r != "netpoll server exit" {
					panic(r)
				}
				// netpoll has taken the socket out of its poller: close
				// this worker's copies now (as its Shutdown would), so that
				// a socket no successor took over (an upgrade to fewer
				// workers) leaves the port's group instead of queueing
				// connections nobody accepts.
				gate.Close() //nolint:errcheck // nothing to do about it
				served <- nil
			}
		}()
		served <- h.Run()
	}()
	return served
}

// drain stops the worker for cause (ErrHandover, ErrGracefulStop, or
// any other: a stop within shutdown): stop accepting, let in-flight
// requests and streams finish, close connections as they fall quiet.
func drain(cause error, e *edge, conns *connTracker, shutdown time.Duration, o Options) error {
	h, gate := e.h, e.gate
	handover := cause == ErrHandover
	if cause == ErrGracefulStop {
		shutdown = gracefulForever
		o.Log.Info("worker draining, with no deadline (graceful stop)", "slot", o.Slot)
	} else {
		o.Log.Info("worker draining", "slot", o.Slot, "shutdown_timeout", shutdown.String(), "handover", handover)
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdown)
	defer cancel()
	// The tracker closes this worker's connections as they fall quiet:
	// between requests, or once a new one has had time to send its first.
	// hertz parks a goroutine on every keep-alive connection waiting for
	// its next request, and its graceful stop would wait for those as if
	// they were busy.
	switch {
	case e.tls != nil:
		// TLS: closing this worker's copy of the socket stops accepting
		// (a successor has its own), and the tracker closes the
		// connections as for a plain listener; Shutdown then finds none.
		conns.drain(sctx, e.tls.stop())
	case handover:
		// Another worker accepts on the same socket: stop accepting, and
		// stop the engine only once no connection is left (see acceptGate:
		// hertz's Shutdown would close the idle-looking ones at once).
		conns.drain(sctx, gate.stop())
	default:
		// Stopping: Shutdown closes the listener at once, so that with the
		// supervisor's copies closed new connections are refused (a load
		// balancer moves on) rather than left queued.
		go conns.drain(sctx, 0)
	}
	// On a hand-over nothing is left to close by now (unless the deadline
	// came first: the exit closes the rest), and netpoll may have dropped
	// the stopped listener already, which ends Run: Shutdown then only says
	// the engine is not running. Not worth failing the exit for.
	if err := h.Shutdown(sctx); err != nil && err != context.DeadlineExceeded && !handover && e.tls == nil {
		return err
	}
	return nil
}

// applyTLS makes the certificates, keys and CAs of cfg's TLS listeners
// (from the bytes the frame carried) those of the next handshakes; on an
// error none changes.
func applyTLS(edges []*edge, cfg *config.Config) error {
	next := make([]*tlsSettings, len(edges))
	for k, e := range edges {
		if e.tls == nil || k >= len(cfg.Listen) || cfg.Listen[k].TLS == nil {
			continue
		}
		s, err := e.tls.edge.settings(cfg.Listen[k].TLS, cfg.Files)
		if err != nil {
			return fmt.Errorf("listener %s: %w", cfg.Listen[k].Address, err)
		}
		next[k] = s
	}
	for k, s := range next {
		if s != nil {
			edges[k].tls.edge.cur.Store(s)
		}
	}
	return nil
}

// reopenOnUSR1 reopens g's usage log on each SIGUSR1 (logrotate renamed
// it) until the returned stop.
func reopenOnUSR1(g *proxy.Gateway, log *slog.Logger) (stop func()) {
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	go func() {
		for range usr1 {
			if err := g.ReopenUsageLog(); err != nil {
				log.Error("reopen usage_log", "err", err)
			}
		}
	}()
	return func() { signal.Stop(usr1) }
}

// ErrGracefulStop, as the cause of Run's context, asks for nginx's graceful
// stop (SIGQUIT): drain every request and stream, however long they take,
// instead of for shutdown_timeout.
var ErrGracefulStop = errors.New("graceful stop")

// ErrHandover, as the cause of Run's context, says another worker accepts
// on this worker's socket from now on (a binary upgrade's new worker):
// stop accepting, and close each connection only once it is quiet, within
// shutdown_timeout.
var ErrHandover = errors.New("hand-over")

// gracefulForever is the drain deadline of a graceful stop: none, in effect.
const gracefulForever = 100 * 365 * 24 * time.Hour

// serveControl reads reload frames (hotreload.Frame) from the supervisor
// until the socket closes, applies each to the TLS listeners (their
// certificates, first: they are what can still fail), the gateway and the
// process's own settings (the connection bounds, shutdown_timeout, GOGC),
// and answers it. (A reload that changes the listeners replaces the
// workers: edges are the configuration's listeners, in order.)
func serveControl(conn *os.File, g *proxy.Gateway, edges []*edge, bounds *connBounds, shutdownTimeout *atomic.Int64, log *slog.Logger) {
	defer conn.Close()
	r := bufio.NewReader(conn)
	for {
		f, err := hotreload.ReadConfig(r)
		if err != nil {
			if err != io.EOF {
				log.Error("control socket", "err", err)
			}
			return
		}
		gen := f.Gen
		cfg, err := f.Config()
		if err == nil {
			err = applyTLS(edges, cfg)
		}
		if err == nil {
			err = g.Apply(cfg, gen)
		}
		if err == nil {
			bounds.set(cfg)
			shutdownTimeout.Store(int64(cfg.ShutdownTimeout))
			debug.SetGCPercent(cfg.GOGC)
		}
		if err != nil {
			log.Error("reload failed in this worker", "generation", gen, "err", err)
		} else {
			log.Info("configuration applied", "generation", gen)
		}
		hotreload.WriteReply(conn, gen, err) //nolint:errcheck // the supervisor times out on a lost answer
	}
}
