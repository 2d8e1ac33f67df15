// Package proxy is a request's life in sluice, from the head hertz hands
// over to the usage line: admission (keys and limits), the body, the scan
// and the route, placement and the queue, upstream attempts and what a
// failure means, the relay of the answer, usage. phases.go is its front
// page: one request, phase by phase. The process around it — the
// listener, connections, reloads over the control socket, drain — is
// package worker's, which builds a Gateway and hands it requests.
package proxy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-gw/sluice/cells"
	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/enduser"
	"github.com/sluice-gw/sluice/meter"
	"github.com/sluice-gw/sluice/proxy/queue"
	"github.com/sluice-gw/sluice/proxy/usage"
	"github.com/sluice-gw/sluice/quota"
	"github.com/sluice-gw/sluice/shm"
)

// Options is what a Gateway is built from.
type Options struct {
	Config *config.Config // validated configuration
	// Generation is the configuration generation Config belongs to.
	Generation int64
	// Region is the shared-memory region (PrivateRegion for one process).
	Region *shm.Region
	// Column is this worker's column in every shared cell; Slot its slot
	// number, for request ids, usage log names and spans.
	Column, Slot int
	// WakeWrite holds every worker's wake pipe, by column (nil: a single
	// worker with no others to wake).
	WakeWrite []int
	Log       *slog.Logger
	// Backends is how the gateway reaches its backends (zero: over the
	// network).
	Backends Backends
	// Clock, when set, is the region's clock as the pipeline reads it (the
	// limits' and the queue's time, provider keys' rests) in place of
	// Region's own: a test's, to move time by hand. Timeouts run on the
	// runtime's timers whatever it says.
	Clock Clock
	// UsageSink, when set, takes the usage lines whatever usage_log says,
	// and keeps them across reloads (a test, a program embedding the
	// pipeline). Each Write is whole lines.
	UsageSink io.Writer
}

// Region is what the pipeline uses of the shared region besides the
// cells' own methods: the cells by name, its clock and configuration
// generation, the bounded map of stored responses and conversations
// (Remember, Recall, Forget) and the prefix index. *shm.Region is the
// one a worker passes (Options.Region: the meter's tables are read from
// it too); PrivateRegion makes one of this process alone.
type Region interface {
	Lookup(name string) *shm.Cell
	Now() int64
	Generation() int64
	Remember(key, val uint64)
	Recall(key uint64) (val uint64, ok bool)
	Forget(key uint64)
	NotePrefix(backend uint64, blocks []uint64)
	PrefixMatch(backend uint64, blocks []uint64) int
	PrefixCapacity() int
	EndUserSeed() [16]byte
}

// Clock is a clock on the region's time base: nanoseconds since its epoch.
type Clock interface{ Now() int64 }

// clockedRegion is a region read through another clock (Options.Clock).
type clockedRegion struct {
	*shm.Region
	clock Clock
}

// Now is the other clock's.
func (r clockedRegion) Now() int64 { return r.clock.Now() }

// Gateway is the state a worker's request handlers share, each part in a
// type of its own that owns it.
type Gateway struct {
	routes routeState // the route table, its reloads and health checks (reload.go)
	region Region
	// endUsers is the shared end-user table (endusers.go).
	endUsers enduser.Table
	col      int // this worker's column in every shared cell
	queues   *queue.Set[*backendRoute]
	bodies   bodyStore    // request bodies kept for retries (body.go)
	marks    workerMarks  // what the worker publishes in the region, and the fleet size it reads
	records  recorder     // usage lines, the meter, request ids
	tracer   tracerState  // trace.go
	client   clientBounds // the bounds on a request's body and answer (client.go)
	log      *slog.Logger
	life     lifecycle
	// journal is the spend journal in state_dir (package quota; nil
	// without state_dir): each settle of a quota or budget, for a
	// restart after a kill -9 to find what the last checkpoint missed.
	journal *quota.Journal
}

// lifecycle is the gateway's own life: when it began, and the background
// work Start began that Close waits for.
type lifecycle struct {
	started time.Time
	// background is the goroutines Start began that write the region.
	background sync.WaitGroup
}

// workerMarks are the region's cells of the worker as a whole.
type workerMarks struct {
	// fleet holds the number of gateway replicas key limits are shared by.
	fleet *shm.Cell
	// generation's mark in this worker's column is the oldest
	// configuration generation a running request may still use (see
	// publishGenerations).
	generation *shm.Cell
	// goroutines' mark in this worker's column is its goroutine count
	// (sluice_worker_goroutines), published with the generation; nil in a
	// region older than it: not published.
	goroutines *shm.Cell
}

// recorder is what writes down each request: its id, its usage line, its
// place in the metrics.
type recorder struct {
	usage       *usage.Log
	meter       *requestMeter // /metrics counters and histograms; nil: none (unit tests)
	idPrefix    string
	idSeq       atomic.Uint64
	stopFlusher context.CancelFunc // ends the usage log's flusher
}

// New builds the gateway of o.Config over o.Region and runs its first
// round of health checks; Start begins its background work, Close ends it.
func New(o Options) (*Gateway, error) {
	cfg := o.Config
	var region Region = o.Region
	if o.Clock != nil {
		region = clockedRegion{o.Region, o.Clock}
	}
	dest := cfg.UsageLog
	if o.UsageSink != nil {
		dest = "off" // no file opened for lines that go to the sink
	}
	ulog, err := usage.Open(dest, o.Slot, time.Duration(cfg.UsageLogFlush))
	if err != nil {
		return nil, fmt.Errorf("usage_log: %w", err)
	}
	if o.UsageSink != nil {
		ulog.SinkTo(o.UsageSink)
	}
	var rnd [4]byte
	rand.Read(rnd[:]) //nolint:errcheck // never fails on Linux
	g := &Gateway{
		region:   region,
		endUsers: enduser.NewTable(o.Region),
		col:      o.Column,
		queues:   queue.NewSet[*backendRoute](o.Column, region, o.WakeWrite),
		log:      o.Log,
		life:     lifecycle{started: time.Now()},
		records: recorder{usage: ulog, meter: newRequestMeter(meter.NewRecorder(o.Region, o.Column)),
			idPrefix: "req_" + hex.EncodeToString(rnd[:]) + "w" + strconv.Itoa(o.Slot) + "_"},
		bodies: bodyStore{col: o.Column, log: o.Log,
			bytes: region.Lookup(shm.BodyBytesCell), spilled: region.Lookup(shm.BodySpillCell)},
		marks: workerMarks{fleet: region.Lookup(shm.FleetCell), generation: region.Lookup(shm.GenerationCell),
			goroutines: region.Lookup(shm.WorkerGoroutinesCell)},
	}
	g.routes.reach = o.Backends
	g.records.stopFlusher = func() {}
	g.routes.stopHealth = func() {}
	if g.journal, err = quota.OpenJournal(cfg.StateDir, func(err error) { g.log.Error("spend journal", "err", err) }); err != nil {
		g.log.Error("spend journal: cannot open; what is settled between checkpoints would be lost to a kill -9", "dir", cfg.StateDir, "err", err)
	}
	g.bodies.setLimits(cfg)
	g.client.set(cfg)
	g.tracer.slot = o.Slot
	g.setTracer(cfg.Tracing)
	if g.bodies.bytes == nil || g.bodies.spilled == nil || g.marks.generation == nil || g.marks.fleet == nil {
		g.Close()
		return nil, fmt.Errorf("shared region lacks one of the cells %s, %s, %s and %s",
			shm.BodyBytesCell, shm.BodySpillCell, shm.GenerationCell, shm.FleetCell)
	}
	routes, err := compileRoutes(cfg, region, g.queues, o.Backends, g.log)
	if err != nil {
		g.Close()
		return nil, err
	}
	routes.gen = o.Generation
	routes.jwt = g.newJWTAuth(cfg.Auth.JWT, nil)
	g.routes.current.Store(routes)
	g.marks.generation.SetMark(g.col, routes.gen)
	// Health checks run for the gateway's life; the first round completes
	// before New returns (before the worker reports ready).
	g.routes.stopHealth = checkHealth(routes, o.Backends, o.Log)
	return g, nil
}

// Start begins the gateway's background work until ctx ends: the usage
// log's flusher, the queue's dispatcher and its wake pipe (wakeRead, nil
// for none), and the publication of generations and goroutines.
func (g *Gateway) Start(ctx context.Context, wakeRead *os.File) {
	fctx, stop := context.WithCancel(context.Background())
	g.records.stopFlusher = stop
	go g.records.usage.RunFlusher(fctx) // until Close: the last lines are flushed there
	if wakeRead != nil {
		go g.queues.Listen(wakeRead) // only kicks the dispatcher: no cell touched
	}
	// These two write the region's cells: Close waits for them, so that
	// the region can be unmapped after it.
	g.life.background.Add(2)
	go func() { defer g.life.background.Done(); g.queues.Run(ctx) }()
	go func() { defer g.life.background.Done(); g.publishGenerations(ctx) }()
}

// Close waits for the background work Start began (whose ctx must have
// ended: a worker stops its queues first), ends the health checks,
// flushes the spans and the usage log, and closes it. Requests still
// running may write no more usage lines. The region may be closed after.
func (g *Gateway) Close() {
	g.life.background.Wait()
	g.routes.mu.Lock()
	g.routes.stopHealth()
	if rt := g.routes.current.Load(); rt != nil {
		rt.jwt.close()
	}
	g.routes.mu.Unlock()
	g.flushTraces()
	g.records.stopFlusher()
	g.records.usage.Close()
	g.journal.Close()
}

// ReopenUsageLog reopens the usage log at its path (SIGUSR1: logrotate
// renamed it).
func (g *Gateway) ReopenUsageLog() error { return g.records.usage.Reopen() }

// ConnKey is the context key under which the worker keeps its record of
// a client connection (hertz hands each request its connection's
// context), a Conn.
type ConnKey struct{}

// Conn is what a request's life reads of its connection's record.
type Conn interface {
	// ClientAddr is the client's address, formatted once per connection
	// ("" if unknown: the request's remote address is used).
	ClientAddr() string
	// TLS is the connection's TLS version (crypto/tls's VersionTLS12,
	// VersionTLS13) and whether its session was resumed; 0 when plain.
	TLS() (version uint16, resumed bool)
	// ClientCert is the SHA-256 of the client certificate the handshake
	// verified (against the listener's client_ca); ok false when there
	// is none (a plain connection, or a listener without client_ca).
	ClientCert() (sum [32]byte, ok bool)
}

// PrivateRegion is a region of this process alone, for a gateway run
// without a supervisor (tests).
func PrivateRegion(cfg *config.Config) (*shm.Region, error) {
	r, err := shm.CreateWith(max(cfg.ShmCells, cfg.CellsNeeded()), 1, shm.Tables{Recall: shm.DefaultRecallEntries, Prefix: cfg.PrefixEntries(), EndUsers: cfg.EndUserEntries()})
	if err != nil {
		return nil, err
	}
	if err := cells.Alloc(r, cfg); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// nextID returns a request id unique across workers and restarts.
func (r *recorder) nextID() string {
	b := make([]byte, 0, 32)
	b = append(b, r.idPrefix...)
	b = strconv.AppendUint(b, r.idSeq.Add(1), 36)
	return string(b)
}
