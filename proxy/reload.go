package proxy

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/proxy/queue"
)

// routeState is the route table requests run on, and what replaces it.
type routeState struct {
	current    atomic.Pointer[routeTable]
	mu         sync.Mutex    // one reload at a time
	retired    []*routeTable // tables replaced by a reload, until no request runs on them
	stopHealth func()        // ends the current table's health checks (checkHealth)
	reach      Backends      // how each table's backends are reached
}

// Reload, the pipeline's side. The supervisor validates a new
// configuration, allocates its cells and sends it to every worker over the
// worker's control socket (worker/worker.go: serveControl); Apply compiles
// a new route table over the same shared cells and swaps it in atomically.
// A request finishes on the table it started on; the old table is retired
// once no request runs on it.

// acquireRoutes returns the current route table, counted as in use until
// the caller releases it with refs.Add(-1).
func (g *Gateway) acquireRoutes() *routeTable {
	rt := g.routes.current.Load()
	rt.refs.Add(1)
	return rt
}

// Apply swaps in the configuration of generation gen: routes, limits, the
// usage log, body and answer bounds, tracing. Health state carries over
// for backends that stay; new backends are checked before the swap. A
// generation at or below the running one is already applied: nil.
func (g *Gateway) Apply(cfg *config.Config, gen int64) error {
	g.routes.mu.Lock()
	defer g.routes.mu.Unlock()
	old := g.routes.current.Load()
	if gen <= old.gen {
		return nil // already running it (a worker started after the reload)
	}
	rt, err := compileRoutes(cfg, g.region, g.queues, g.routes.reach, g.log)
	if err != nil {
		return err
	}
	rt.gen = gen
	rt.carryHealth(old)
	rt.jwt = g.newJWTAuth(cfg.Auth.JWT, old.jwt)
	stopHealth := checkHealth(rt, g.routes.reach, g.log)
	if err := g.records.usage.Retarget(cfg.UsageLog, time.Duration(cfg.UsageLogFlush)); err != nil {
		stopHealth()
		if rt.jwt != old.jwt {
			rt.jwt.close()
		}
		return fmt.Errorf("usage_log: %w", err)
	}
	g.bodies.setLimits(cfg)
	g.client.set(cfg)
	g.setTracer(cfg.Tracing)
	g.routes.current.Store(rt)
	if old.jwt != rt.jwt {
		old.jwt.close() // its verifier keeps its set for requests still on old
	}
	g.routes.stopHealth()
	g.routes.stopHealth = stopHealth
	old.retiredAt = time.Now()
	g.routes.retired = append(g.routes.retired, old)
	g.queues.Prune(func(model string, lq *queue.Queue[*backendRoute]) bool {
		m := rt.models[model]
		return m != nil && m.queue == lq
	})
	return nil
}

// retireGrace is how long a replaced table is assumed reachable by a
// request that loaded it but has not yet counted itself on it.
const retireGrace = 2 * time.Second

// publishGenerations publishes, in this worker's column of the generation
// cell, the oldest configuration generation a running request may still
// use. The supervisor frees the cells of names a reload removed only once
// every worker has moved past the generation that last had them.
// It publishes the worker's goroutine count too (sluice_worker_goroutines).
func (g *Gateway) publishGenerations(ctx context.Context) {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		if g.marks.goroutines != nil {
			g.marks.goroutines.SetMark(g.col, int64(runtime.NumGoroutine()))
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		g.routes.mu.Lock()
		current := g.routes.current.Load()
		oldest := current.gen
		kept := g.routes.retired[:0]
		for _, rt := range g.routes.retired {
			if rt.refs.Load() > 0 || time.Since(rt.retiredAt) < retireGrace {
				kept = append(kept, rt)
				oldest = min(oldest, rt.gen)
			} else {
				rt.closePools(current)
			}
		}
		clear(g.routes.retired[len(kept):])
		g.routes.retired = kept
		g.marks.generation.SetMark(g.col, oldest)
		g.routes.mu.Unlock()
	}
}
