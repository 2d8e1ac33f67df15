package proxy

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Passive ejection, as nginx's max_fails/fail_timeout: a backend whose
// connection failed (other than by a timeout) is out of rotation for
// ejectMin, doubling with each further failure up to ejectMax, and back
// when that time is up, on time alone; a passing active check resets the
// doubling. Waiting for a check instead would keep every ejected backend
// out for up to a whole health.interval (5 s by default), however brief
// its failure; a backend still broken costs one failed attempt (retried on
// the next backend) per ejection, and the active check, if it fails too,
// keeps it out by itself until one passes.
const (
	ejectMin = time.Second
	ejectMax = 30 * time.Second
)

// healthy reports whether b may be sent requests now.
func (b *backendRoute) healthy(now time.Time) bool {
	return b.passing(now) && (b.keys == nil || b.keys.UsableNow())
}

// passing reports whether b passes its health checks and is not ejected at
// now: healthy, but for its provider keys.
func (b *backendRoute) passing(now time.Time) bool {
	return b.state.up.Load() && now.UnixNano() >= b.state.ejectedUntil.Load()
}

// probeAuth is the Authorization value b's health checks send: its
// api_key_env, or one of its api_keys_env; "" without.
func (b *backendRoute) probeAuth() string {
	if b.keys != nil {
		return b.keys.ProbeHeader()
	}
	return b.authHeader
}

// eject takes b out of rotation after a connection failure.
func (b *backendRoute) eject(now time.Time) time.Duration {
	n := b.state.failures.Add(1)
	d := ejectMin << min(n-1, 5)
	d = min(d, ejectMax)
	b.state.ejectedUntil.Store(now.Add(d).UnixNano())
	return d
}

// checkHealth runs the active health checks of every backend of t until
// stop is called: GET health.path every health.interval, up on a 2xx. The
// first round runs before it returns, so a worker starts with a real view —
// except for backends whose state a reload carried over: they keep it until
// their next check.
//
// stop returns once every checker has ended, and closes the connections
// they kept: each table (each reload, each backend change Nomad finds) has
// checkers of its own, and the kept connections of a replaced table's
// client (an fd and two goroutines of net/http's each) were never closed.
func checkHealth(t *routeTable, probeWith Backends, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	send, closeIdle := probeWith.Probe, func() {}
	if send == nil {
		send, closeIdle = httpProbe()
	}
	var first, running sync.WaitGroup
	for _, m := range t.order {
		for _, b := range m.backends {
			first.Add(1)
			running.Add(1)
			go func() {
				defer running.Done()
				probe := func() {
					timeout := min(m.health.interval, 2*time.Second)
					pctx, cancel := context.WithTimeout(ctx, timeout)
					defer cancel()
					status, err := send(pctx, b.url+m.health.path, b.probeAuth())
					up := err == nil && status >= 200 && status < 300
					if up {
						b.state.failures.Store(0)
					}
					if was := b.state.up.Swap(up); was != up && ctx.Err() == nil {
						log.Info("backend health changed", "model", m.name, "backend", b.url, "healthy", up, "err", err)
					}
				}
				if !b.state.carried {
					probe()
				}
				first.Done()
				tick := time.NewTicker(m.health.interval)
				defer tick.Stop()
				for {
					select {
					case <-ctx.Done():
						return
					case <-tick.C:
						probe()
					}
				}
			}()
		}
	}
	first.Wait()
	return func() {
		cancel()
		running.Wait()
		closeIdle()
	}
}
