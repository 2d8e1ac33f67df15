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
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-gw/sluice/cells"
	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/meter"
	"github.com/sluice-gw/sluice/proxy/tracing"
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
}

// Gateway is the state a worker's request handlers share.
type Gateway struct {
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
	// client holds the bounds on a request's body and answer.
	client  clientBounds
	started time.Time

	applyMu    sync.Mutex    // one reload at a time
	retired    []*routeTable // tables replaced by a reload, until no request runs on them
	stopHealth func()        // ends the current table's health checks (checkHealth)

	idPrefix string
	idSeq    atomic.Uint64

	stopFlusher context.CancelFunc // ends the usage log's flusher
}

// New builds the gateway of o.Config over o.Region and runs its first
// round of health checks; Start begins its background work, Close ends it.
func New(o Options) (*Gateway, error) {
	cfg, region := o.Config, o.Region
	usage, err := openUsageLog(cfg.UsageLog, o.Slot, time.Duration(cfg.UsageLogFlush))
	if err != nil {
		return nil, fmt.Errorf("usage_log: %w", err)
	}
	var rnd [4]byte
	rand.Read(rnd[:]) //nolint:errcheck // never fails on Linux
	g := &Gateway{
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
	g.stopFlusher = func() {}
	g.stopHealth = func() {}
	g.setBodyLimits(cfg)
	g.client.set(cfg)
	g.setTracer(cfg.Tracing, o.Slot)
	g.bodyBytes, g.spilled = region.Lookup(shm.BodyBytesCell), region.Lookup(shm.BodySpillCell)
	g.genCell, g.fleet = region.Lookup(shm.GenerationCell), region.Lookup(shm.FleetCell)
	g.goroutines = region.Lookup(shm.WorkerGoroutinesCell) // nil in a region older than it: not published
	if g.bodyBytes == nil || g.spilled == nil || g.genCell == nil || g.fleet == nil {
		g.Close()
		return nil, fmt.Errorf("shared region lacks one of the cells %s, %s, %s and %s",
			shm.BodyBytesCell, shm.BodySpillCell, shm.GenerationCell, shm.FleetCell)
	}
	routes, err := compileRoutes(cfg, region, g.queues, g.log)
	if err != nil {
		g.Close()
		return nil, err
	}
	routes.gen = o.Generation
	g.routes.Store(routes)
	g.genCell.SetMark(g.col, routes.gen)
	// Health checks run for the gateway's life; the first round completes
	// before New returns (before the worker reports ready).
	g.stopHealth = checkHealth(routes, o.Log)
	return g, nil
}

// Start begins the gateway's background work until ctx ends: the usage
// log's flusher, the queue's dispatcher and its wake pipe (wakeRead, nil
// for none), and the publication of generations and goroutines.
func (g *Gateway) Start(ctx context.Context, wakeRead *os.File) {
	fctx, stop := context.WithCancel(context.Background())
	g.stopFlusher = stop
	go g.usage.runFlusher(fctx) // until Close: the last lines are flushed there
	go g.queues.run(ctx)
	if wakeRead != nil {
		go g.queues.listen(wakeRead)
	}
	go g.publishGenerations(ctx)
}

// Close ends the health checks, flushes the spans and the usage log, and
// closes it. Requests still running may write no more usage lines.
func (g *Gateway) Close() {
	g.applyMu.Lock()
	g.stopHealth()
	g.applyMu.Unlock()
	g.flushTraces()
	g.stopFlusher()
	g.usage.close()
}

// ReopenUsageLog reopens the usage log at its path (SIGUSR1: logrotate
// renamed it).
func (g *Gateway) ReopenUsageLog() error { return g.usage.reopen() }

// ConnKey is the context key under which the worker keeps its record of
// a client connection (hertz hands each request its connection's
// context), a Conn.
type ConnKey struct{}

// Conn is what a request's life reads of its connection's record.
type Conn interface {
	// ClientAddr is the client's address, formatted once per connection
	// ("" if unknown: the request's remote address is used).
	ClientAddr() string
}

// PrivateRegion is a region of this process alone, for a gateway run
// without a supervisor (tests).
func PrivateRegion(cfg *config.Config) (*shm.Region, error) {
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
func (g *Gateway) nextRequestID() string {
	b := make([]byte, 0, 32)
	b = append(b, g.idPrefix...)
	b = strconv.AppendUint(b, g.idSeq.Add(1), 36)
	return string(b)
}
