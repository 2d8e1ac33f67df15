// Package worker is one worker process of sluice: it adopts the listening
// socket the supervisor opened for its slot and serves the OpenAI-compatible
// API on it with hertz over netpoll, proxying to the configured backends.
// A worker owns nothing that must outlive it: the socket stays open in the
// supervisor, so a replacement takes over the connections queued on it.
package worker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cloudwego/hertz/pkg/app/server"
	"github.com/cloudwego/hertz/pkg/common/hlog"
	"github.com/cloudwego/hertz/pkg/network/netpoll"

	"github.com/sluice-gw/sluice/cells"
	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/meter"
	"github.com/sluice-gw/sluice/shm"
	"github.com/sluice-gw/sluice/worker/tracing"
)

// Options is what a worker is handed by the supervisor.
type Options struct {
	Slot     int            // worker slot number, 0-based
	Listener net.Listener   // this slot's SO_REUSEPORT socket
	Config   *config.Config // validated configuration
	Log      *slog.Logger   // structured log on stderr
	Ready    func()         // called once the worker accepts connections

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

// gateway is the state a worker's request handlers share.
type gateway struct {
	routes atomic.Pointer[routeTable]
	region *shm.Region
	col    int
	queues *queues
	// bodyBytes is the shared gauge of request bodies kept for retries;
	// spilled the gauge of those in temporary files and their count.
	bodyBytes, spilled *shm.Cell
	// memBodies is the bytes of request bodies this worker holds in memory,
	// held under bodyMemory by spilling to files in bodyTempDir (nil: off).
	memBodies, bodyMemory atomic.Int64
	bodyTempDir           atomic.Pointer[string]
	spillWarned           atomic.Int64 // when a failing temporary file was last logged (unix ns)
	// fleet holds the number of gateway replicas key limits are shared by.
	fleet *shm.Cell
	// genCell's mark in this worker's column is the oldest configuration
	// generation a running request may still use (see publishGenerations).
	genCell *shm.Cell
	// goroutines' mark in this worker's column is its goroutine count
	// (sluice_worker_goroutines), published with the generation.
	goroutines *shm.Cell
	usage      *usageLog
	meter      *requestMeter                  // /metrics counters and histograms; nil: none (unit tests)
	tracer     atomic.Pointer[tracing.Tracer] // nil: tracing off
	slot       int                            // the worker's slot, for its spans' resource
	log        *slog.Logger
	maxBody    atomic.Int64
	// client holds the client-side bounds: timeouts, worker_connections.
	client clientBounds
	// shutdownTimeout is the running configuration's shutdown_timeout,
	// read when the drain begins (a reload may have changed it).
	shutdownTimeout atomic.Int64
	started         time.Time

	applyMu    sync.Mutex    // one reload at a time
	retired    []*routeTable // tables replaced by a reload, until no request runs on them
	stopHealth func()        // ends the current table's health checks (checkHealth)

	idPrefix string
	idSeq    atomic.Uint64
}

// Run serves until ctx is cancelled, then stops accepting, lets in-flight
// requests and streams finish for up to shutdown_timeout, and returns.
func Run(ctx context.Context, o Options) error {
	cfg := o.Config
	usage, err := openUsageLog(cfg.UsageLog, o.Slot, time.Duration(cfg.UsageLogFlush))
	if err != nil {
		return fmt.Errorf("usage_log: %w", err)
	}
	defer usage.close()
	fctx, stopFlusher := context.WithCancel(context.Background())
	defer stopFlusher()
	go usage.runFlusher(fctx)

	region := o.Region
	if region == nil {
		r, err := privateRegion(cfg)
		if err != nil {
			return err
		}
		defer r.Close()
		region = r
	}

	var rnd [4]byte
	rand.Read(rnd[:]) //nolint:errcheck // never fails on Linux
	g := &gateway{
		usage:    usage,
		region:   region,
		col:      o.Column,
		queues:   newQueues(o.Column, region, o.WakeWrite),
		meter:    newRequestMeter(meter.NewRecorder(region, o.Column)),
		slot:     o.Slot,
		log:      o.Log,
		started:  time.Now(),
		idPrefix: "req_" + hex.EncodeToString(rnd[:]) + "w" + strconv.Itoa(o.Slot) + "_",
	}
	g.setBodyLimits(cfg)
	g.client.set(cfg)
	g.shutdownTimeout.Store(int64(cfg.ShutdownTimeout))
	debug.SetGCPercent(cfg.GOGC)
	g.setTracer(cfg.Tracing, o.Slot)
	defer g.flushTraces()
	g.bodyBytes, g.spilled = region.Lookup(shm.BodyBytesCell), region.Lookup(shm.BodySpillCell)
	g.genCell, g.fleet = region.Lookup(shm.GenerationCell), region.Lookup(shm.FleetCell)
	g.goroutines = region.Lookup(shm.WorkerGoroutinesCell) // nil in a region older than it: not published
	if g.bodyBytes == nil || g.spilled == nil || g.genCell == nil || g.fleet == nil {
		return fmt.Errorf("shared region lacks one of the cells %s, %s, %s and %s",
			shm.BodyBytesCell, shm.BodySpillCell, shm.GenerationCell, shm.FleetCell)
	}
	routes, err := compileRoutes(cfg, region, g.queues, g.log)
	if err != nil {
		return err
	}
	routes.gen = o.Generation
	g.routes.Store(routes)
	g.genCell.SetMark(g.col, routes.gen)
	qctx, stopQueues := context.WithCancel(context.Background())
	defer stopQueues()
	go g.queues.run(qctx)
	if o.WakeRead != nil {
		go g.queues.listen(o.WakeRead)
	}
	// Health checks run for the worker's life; the first round completes
	// before the worker reports ready.
	g.stopHealth = checkHealth(routes, o.Log)
	defer func() { g.applyMu.Lock(); g.stopHealth(); g.applyMu.Unlock() }()
	go g.publishGenerations(qctx)
	// SIGUSR1: reopen the usage log (logrotate renamed it).
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	defer signal.Stop(usr1)
	go func() {
		for range usr1 {
			if err := g.usage.reopen(); err != nil {
				o.Log.Error("reopen usage_log", "err", err)
			}
		}
	}()
	if o.Control != nil {
		go g.serveControl(o.Control)
	}

	hlog.SetLevel(hlog.LevelError) // hertz's own chatter; sluice logs what matters
	bursts := newCloseBurst()
	go bursts.run(qctx) // the worker's life, like publishGenerations
	connCell := region.Lookup(shm.ConnCell)
	if connCell == nil {
		return fmt.Errorf("shared region lacks the cell %s", shm.ConnCell)
	}
	conns := newConnTracker(bursts, &g.client, connCell, g.col)
	go conns.sweep(qctx) // client_header_timeout
	gate, err := newAcceptGate(o.Listener)
	if err != nil {
		return fmt.Errorf("listener: %w", err)
	}
	gate.full, gate.refused = conns.full, conns.refused
	h := server.New(
		server.WithListener(gate),
		server.WithTransport(netpoll.NewTransporter),
		server.WithStreamBody(true), // read the body ourselves, bounded by max_body
		server.WithMaxRequestBodySize(int(cfg.MaxBody)),
		// A request's body buffer goes back to hertz's shared pool when
		// reset, not kept in its context (see proxy: released as soon as
		// the body is read).
		server.WithMaxKeepBodySize(0),
		server.WithSenseClientDisconnection(true), // cancel the upstream when the client leaves
		// hertz bounds Shutdown by this as well as by its context: the
		// context decides (shutdown_timeout, or none for a graceful stop).
		server.WithExitWaitTime(gracefulForever),
		// keepalive_timeout: hertz waits this long for a keep-alive
		// connection's next request (its first bytes), then closes it.
		server.WithIdleTimeout(time.Duration(cfg.KeepaliveTimeout)),
		// The whole head; a line of it is bounded by checkHead.
		server.WithMaxHeaderBytes(maxHeadBytes),
		// hertz would otherwise read a multipart/form-data body whole,
		// into memory and files, before any handler runs: before the key
		// is checked and unbounded by max_body. The body is the proxy's
		// to read (or refuse), whatever its content type.
		server.WithDisablePreParseMultipartForm(true),
		server.WithOnAccept(conns.accept),
		server.WithDisablePrintRoute(true),
		// "/v1/models/" is an unknown URL (404 with a request id and a
		// usage line), not a redirect answered by hertz itself.
		server.WithRedirectTrailingSlash(false),
		server.WithHandleMethodNotAllowed(true),
	)
	h.Name = "sluice" // the Server header
	h.ContinueHandler = g.mayContinue
	h.Use(conns.markBusy, g.checkHead)
	g.register(h)
	h.OnRun = append(h.OnRun, func(context.Context) error {
		if o.Ready != nil {
			o.Ready()
		}
		return nil
	})

	served := make(chan error, 1)
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
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	cause := context.Cause(ctx)
	handover := cause == ErrHandover
	shutdown := time.Duration(g.shutdownTimeout.Load())
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
	if handover {
		// Another worker accepts on the same socket: stop accepting, and
		// stop the engine only once no connection is left (see acceptGate:
		// hertz's Shutdown would close the idle-looking ones at once).
		conns.drain(sctx, gate.stop())
	} else {
		// Stopping: Shutdown closes the listener at once, so that with the
		// supervisor's copies closed new connections are refused (a load
		// balancer moves on) rather than left queued.
		go conns.drain(sctx, 0)
	}
	// On a hand-over nothing is left to close by now (unless the deadline
	// came first: the exit closes the rest), and netpoll may have dropped
	// the stopped listener already, which ends Run: Shutdown then only says
	// the engine is not running. Not worth failing the exit for.
	if err := h.Shutdown(sctx); err != nil && err != context.DeadlineExceeded && !handover {
		return err
	}
	return nil
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

// privateRegion is a region of this process alone, for a worker run
// without a supervisor (tests).
func privateRegion(cfg *config.Config) (*shm.Region, error) {
	r, err := shm.CreateWith(max(cfg.ShmCells, cfg.CellsNeeded()), 1, shm.Tables{Recall: shm.DefaultRecallEntries, Prefix: cfg.PrefixEntries()})
	if err != nil {
		return nil, err
	}
	if err := cells.Alloc(r, cfg); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// nextRequestID returns a request id unique across workers and restarts.
func (g *gateway) nextRequestID() string {
	b := make([]byte, 0, 32)
	b = append(b, g.idPrefix...)
	b = strconv.AppendUint(b, g.idSeq.Add(1), 36)
	return string(b)
}
