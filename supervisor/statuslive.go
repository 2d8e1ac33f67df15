package supervisor

import (
	"cmp"
	"math"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/meter"
	"github.com/sluice-gw/sluice/quota"
	"github.com/sluice-gw/sluice/shm"
)

// LiveStatus is GET /status/live, what the status page (GET /ui) shows and
// polls every second. Every figure is read from where /metrics reads it —
// the shared region's cells and meter, the supervisor's own counters — so
// that the page and a scrape of the same moment agree.
type LiveStatus struct {
	// Time is when the figures were read (RFC 3339, milliseconds).
	Time   string `json:"time"`
	PID    int    `json:"pid"`
	Config string `json:"config"`
	// Generation is the running configuration's (sluice_config_generation).
	Generation int64 `json:"generation"`
	// Reloads are the reload attempts; ReloadsOK and ReloadsFailed split
	// them as sluice_config_reloads_total{result} does.
	Reloads       int64 `json:"reloads"`
	ReloadsOK     int64 `json:"reloads_ok"`
	ReloadsFailed int64 `json:"reloads_failed"`
	// LastReload is the last reload's result; null before the first.
	LastReload *ReloadResult `json:"last_reload"`
	// DiscoveryError is /status's discovery_error.
	DiscoveryError string `json:"discovery_error"`
	// Workers are the worker slots; WorkersReady those accepting
	// (sluice_workers_ready); WorkerRestarts sluice_worker_restarts_total.
	Workers        []WorkerStatus  `json:"workers"`
	WorkersReady   int             `json:"workers_ready"`
	WorkerRestarts int64           `json:"worker_restarts"`
	Backends       []BackendStatus `json:"backends"`
	Queues         []QueueStatus   `json:"queues"`
	// Keys are the keys nearest one of their limits (max_concurrent,
	// requests_per_minute, tokens_per_minute), most used first, at most
	// liveKeysMax of the KeysLimited keys that have a limit.
	Keys        []KeyStatus `json:"keys"`
	KeysLimited int         `json:"keys_limited"`
	// Budgets are the keys' quotas and budgets nearest their end, most
	// used first, at most liveKeysMax of the BudgetsSet there are.
	Budgets    []BudgetStatus `json:"budgets"`
	BudgetsSet int            `json:"budgets_set"`
	// Certificates are the TLS listeners' certificates, soonest to expire
	// first (sluice_tls_certificate_expiry_seconds).
	Certificates []CertificateStatus `json:"certificates"`
}

// BudgetStatus is one quota (keys[].quotas: tokens) or budget
// (keys[].budget: USD) of a key in the period running now, as
// sluice_key_quota_used_tokens and sluice_key_spend_usd read it; Limit is
// this gateway's share (divided by sluice_fleet_replicas).
type BudgetStatus struct {
	Key    string  `json:"key"`
	Kind   string  `json:"kind"` // "tokens" or "usd"
	Period string  `json:"period"`
	Used   float64 `json:"used"`
	Limit  float64 `json:"limit"`
	// UsedFraction is Used over Limit (0–1, more once requests used more
	// than they reserved).
	UsedFraction float64 `json:"used_fraction"`
	ResetsAt     string  `json:"resets_at"` // RFC 3339, the period's end
}

// nearestBudgets returns the n quotas and budgets nearest their limit,
// and how many there are.
func nearestBudgets(cfg *config.Config, r *shm.Region, n int) ([]BudgetStatus, int) {
	replicas := int64(1)
	if c := r.Lookup(shm.FleetCell); c != nil {
		replicas = max(1, atomic.LoadInt64(c.Scalar(0)))
	}
	cal := quota.NewCalendar(cfg.QuotaLocation())
	now := cal.Now()
	out := []BudgetStatus{}
	add := func(key, kind string, c, fleet *shm.Cell, p quota.Period, limit int64, unit float64) {
		if c == nil || limit <= 0 {
			return
		}
		used, whole := quota.FleetUsed(c, fleet, p, cal, now) // the fleet's, or this replica's share
		if !whole {
			limit = max(limit/replicas, 1)
		}
		out = append(out, BudgetStatus{Key: key, Kind: kind, Period: p.String(), Used: float64(used) / unit, Limit: float64(limit) / unit,
			UsedFraction: float64(used) / float64(limit), ResetsAt: cal.End(p, now).UTC().Format(time.RFC3339)})
	}
	for _, k := range cfg.Keys {
		qc, qf := r.Lookup(shm.QuotaCell(k.Name)), r.Lookup(shm.FleetQuotaCell(k.Name))
		add(k.Name, "tokens", qc, qf, quota.Day, k.Quotas.Day, 1)
		add(k.Name, "tokens", qc, qf, quota.Week, k.Quotas.Week, 1)
		add(k.Name, "tokens", qc, qf, quota.Month, k.Quotas.Month, 1)
		if b := k.Budget; b != nil {
			if p, ok := quota.ParsePeriod(b.Per); ok {
				add(k.Name, "usd", r.Lookup(shm.BudgetCell(k.Name)), r.Lookup(shm.FleetBudgetCell(k.Name)), p, b.BudgetPico(), 1e12)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b BudgetStatus) int {
		if c := cmp.Compare(b.UsedFraction, a.UsedFraction); c != 0 {
			return c
		}
		return cmp.Compare(a.Key, b.Key)
	})
	return out[:min(len(out), n)], len(out)
}

// ReloadResult is how the last reload ended.
type ReloadResult struct {
	At    string `json:"at"` // RFC 3339
	OK    bool   `json:"ok"`
	Error string `json:"error"` // "" when OK
}

// WorkerStatus is one worker slot.
type WorkerStatus struct {
	Slot  int  `json:"slot"`
	PID   int  `json:"pid"` // 0 while no worker runs in the slot
	Ready bool `json:"ready"`
	// Restarts are the slot's unexpected exits, each followed by a
	// restart (their sum is WorkerRestarts).
	Restarts int64 `json:"restarts"`
	// Goroutines is sluice_worker_goroutines; null until the worker
	// published it.
	Goroutines *int64 `json:"goroutines"`
}

// BackendStatus is one backend of one model.
type BackendStatus struct {
	Model   string `json:"model"`
	Backend string `json:"backend"`
	// InFlight and Slots are sluice_backend_inflight and sluice_backend_slots.
	InFlight int64 `json:"inflight"`
	Slots    int64 `json:"slots"`
	// LoadRead is the supervisor's read of the backend's /metrics: "fresh"
	// (read within the last 2 s), "stale" (failing: the workers route on
	// their own count) or "off" (load_interval: 0s). It is what the
	// supervisor knows of a backend's health: the active health checks and
	// ejections are each worker's own (Ejections counts the latter).
	LoadRead string `json:"load_read"`
	// ReportedLoad is vLLM's requests running plus waiting (one figure: the
	// region keeps their sum, sluice_backend_reported_load), KVCacheUsage
	// its KV-cache usage 0–1; both null unless fresh.
	ReportedLoad *int64   `json:"reported_load"`
	KVCacheUsage *float64 `json:"kv_cache_usage"`
	// PrefixQueries and PrefixHits are vLLM's prefix-cache counters in
	// tokens, PrefixHitRatio hits over queries between the last two reads:
	// sluice_backend_prefix_cache_*; null as /metrics leaves them out.
	PrefixQueries  *float64 `json:"prefix_cache_queries"`
	PrefixHits     *float64 `json:"prefix_cache_hits"`
	PrefixHitRatio *float64 `json:"prefix_cache_hit_ratio"`
	// Attempts, Failures (every kind) and Ejections are the meter's
	// sluice_backend_attempts_total, _failures_total and _ejections_total.
	Attempts  int64 `json:"attempts"`
	Failures  int64 `json:"failures"`
	Ejections int64 `json:"ejections"`
}

// QueueStatus is one model's queue.
type QueueStatus struct {
	Model string `json:"model"`
	// Depth is sluice_queue_depth, Max the model's queue.max.
	Depth int64 `json:"depth"`
	Max   int   `json:"max"`
	// Waited and WaitSeconds are sluice_queue_wait_seconds' count and sum
	// (requests that waited for a slot, and their waits); MeanWaitSeconds
	// the one over the other, null before any. The region keeps no
	// waiter's arrival time, so the oldest waiter's wait is not known.
	Waited          int64    `json:"waited"`
	WaitSeconds     float64  `json:"wait_seconds"`
	MeanWaitSeconds *float64 `json:"mean_wait_seconds"`
}

// KeyStatus is one key with a limit. Limits are this gateway's share of
// the configured ones (divided by sluice_fleet_replicas, as the workers
// enforce them); 0: no such limit.
type KeyStatus struct {
	Key string `json:"key"`
	// InFlight is sluice_key_inflight, against MaxConcurrent.
	InFlight      int64 `json:"inflight"`
	MaxConcurrent int64 `json:"max_concurrent"`
	// RPM and TPM are the per-minute limits; RPMUsed and TPMUsed how much of
	// each the key has used (0–1): how far its limiter's theoretical
	// arrival time runs ahead of now, over the limiter's minute (GCRA: it
	// refuses at 1, and falls back to 0 at the limit's pace).
	RPM     int64   `json:"rpm"`
	RPMUsed float64 `json:"rpm_used"`
	TPM     int64   `json:"tpm"`
	TPMUsed float64 `json:"tpm_used"`
	// Nearest is the largest of InFlight/MaxConcurrent, RPMUsed and TPMUsed.
	Nearest float64 `json:"nearest"`
	// QueueDepth, Queued and QueueWaitSeconds are sluice_key_queue_depth,
	// sluice_key_queued_total and sluice_key_queue_wait_seconds_total;
	// MeanWaitSeconds the last over the one before, null before any.
	QueueDepth       int64    `json:"queue_depth"`
	Queued           int64    `json:"queued"`
	QueueWaitSeconds float64  `json:"queue_wait_seconds"`
	MeanWaitSeconds  *float64 `json:"mean_wait_seconds"`
}

// liveKeysMax is how many keys /status/live lists: a page of the keys
// nearest their limits, whatever the configuration's size.
const liveKeysMax = 20

// liveStatus reads the figures of LiveStatus.
func (s *supervisor) liveStatus() LiveStatus {
	s.cfgMu.Lock()
	cfg, gen := s.cfg, s.gen
	st := LiveStatus{PID: os.Getpid(), Config: s.o.ConfigName, Generation: gen,
		Reloads: s.reloads.Load(), DiscoveryError: s.discErr}
	if !s.lastReloadAt.IsZero() {
		st.LastReload = &ReloadResult{At: s.lastReloadAt.Format(time.RFC3339), OK: s.lastReloadErr == "", Error: s.lastReloadErr}
	}
	s.cfgMu.Unlock()
	st.Time = time.Now().Format("2006-01-02T15:04:05.000Z07:00")
	st.ReloadsOK = counterValue(s.metrics.reloads.WithLabelValues("ok"))
	st.ReloadsFailed = counterValue(s.metrics.reloads.WithLabelValues("error"))
	st.WorkerRestarts = counterValue(s.metrics.restarts)

	r := s.region
	st.Workers = make([]WorkerStatus, 0, len(s.slots))
	goroutines := r.Lookup(shm.WorkerGoroutinesCell)
	for _, sl := range s.slots {
		w := WorkerStatus{Slot: sl.n, Ready: sl.ready.Load(), Restarts: sl.restarts.Load()}
		sl.mu.Lock()
		if sl.proc != nil {
			w.PID = sl.proc.Pid
		}
		sl.mu.Unlock()
		if goroutines != nil {
			if n := goroutines.Mark(sl.col); n != shm.NoMark {
				w.Goroutines = &n
			}
		}
		if w.Ready {
			st.WorkersReady++
		}
		st.Workers = append(st.Workers, w)
	}

	st.Certificates = s.certs.of(cfg, time.Now())
	slices.SortStableFunc(st.Certificates, func(a, b CertificateStatus) int { return cmp.Compare(a.ExpiresIn, b.ExpiresIn) })

	meters := readMeter(r)
	now := r.Now()
	st.Backends, st.Queues = []BackendStatus{}, []QueueStatus{}
	for _, m := range cfg.Models {
		if cell := r.Lookup(shm.QueueCell(m.Name)); cell != nil {
			q := QueueStatus{Model: m.Name, Depth: cell.Total()}
			if m.Queue.Max != nil {
				q.Max = *m.Queue.Max
			}
			h := meters[meter.Descriptor(meter.QueueWait, m.Name)]
			q.Waited, q.WaitSeconds = h.count, float64(h.sumNanos)/1e9
			q.MeanWaitSeconds = ratio(q.WaitSeconds, q.Waited)
			st.Queues = append(st.Queues, q)
		}
		for _, b := range m.Backends {
			cell := r.Lookup(shm.BackendCell(m.Name, b.URL))
			if cell == nil {
				continue
			}
			bs := BackendStatus{Model: m.Name, Backend: b.URL, InFlight: cell.Total(), Slots: int64(b.Slots), LoadRead: "off"}
			if m.LoadInterval != nil && *m.LoadInterval > 0 {
				bs.LoadRead = "stale"
			}
			if load, kv, fresh := cell.ReportedLoad(now); fresh {
				u := float64(kv) / 1e6
				bs.LoadRead, bs.ReportedLoad, bs.KVCacheUsage = "fresh", &load, &u
			}
			if p, fresh := s.freshPrefix(shm.BackendCell(m.Name, b.URL)); fresh {
				bs.PrefixQueries, bs.PrefixHits = &p.queries, &p.hits
				if p.hasRatio {
					bs.PrefixHitRatio = &p.ratio
				}
			}
			// The workers label a backend with its URL less a final "/".
			url := strings.TrimSuffix(b.URL, "/")
			bs.Attempts = meters[meter.Descriptor(meter.Attempts, m.Name, url)].count
			bs.Ejections = meters[meter.Descriptor(meter.Ejections, m.Name, url)].count
			bs.Failures = meters[failuresKey(m.Name, url)].count
			st.Backends = append(st.Backends, bs)
		}
	}
	st.Keys, st.KeysLimited = nearestKeys(cfg, r, now, liveKeysMax)
	st.Budgets, st.BudgetsSet = nearestBudgets(cfg, r, liveKeysMax)
	return st
}

// meterFigure is one series of the meter summed over the workers: a
// counter's value, or a histogram's count and sum.
type meterFigure struct{ count, sumNanos int64 }

// readMeter sums the meter's series the page shows (the backends'
// counters, the queue-wait histograms), by descriptor; the failures of
// every kind of a backend add up under failuresKey. One pass over the
// index: the page polls every second, and a lookup per series would probe
// the index as often.
func readMeter(r *shm.Region) map[string]meterFigure {
	out := map[string]meterFigure{}
	r.MeterEach(func(desc string, row, rows int) {
		name, values := meter.Parse(desc)
		switch {
		case (name == meter.Attempts.Name || name == meter.Ejections.Name) && rows == 1 && len(values) == 2:
			out[desc] = meterFigure{count: r.MeterSum(row)}
		case name == meter.Failures.Name && rows == 1 && len(values) == 3:
			k := failuresKey(values[0], values[1])
			f := out[k]
			f.count += r.MeterSum(row)
			out[k] = f
		case name == meter.QueueWait.Name && rows == meter.HistogramRows && len(values) == 1:
			var f meterFigure
			for i := 0; i < rows-1; i++ { // bucket counts, +Inf; the last row is the sum
				f.count += r.MeterSum(row + i)
			}
			f.sumNanos = r.MeterSum(row + rows - 1)
			out[desc] = f
		}
	})
	return out
}

// failuresKey is where readMeter adds up a backend's failures of every kind.
func failuresKey(model, url string) string {
	return meter.Descriptor(meter.Failures, model, url) + "\x00*"
}

// nearestKeys returns the n keys with a limit nearest one of them, and how
// many keys have a limit. The limiters' state is read as the workers read
// it (proxy/limits.go): the fleet's share of each limit, a GCRA limiter's
// use as its theoretical arrival time's lead over now.
func nearestKeys(cfg *config.Config, r *shm.Region, now int64, n int) ([]KeyStatus, int) {
	replicas := int64(1)
	if c := r.Lookup(shm.FleetCell); c != nil {
		replicas = max(1, atomic.LoadInt64(c.Scalar(0)))
	}
	share := func(v int64) int64 {
		if v <= 0 {
			return 0
		}
		return max(1, v/replicas)
	}
	const minute = int64(time.Minute)
	used := func(cell *shm.Cell, i int, window int64) float64 {
		lead := atomic.LoadInt64(cell.Scalar(i)) - now
		return min(max(float64(lead)/float64(window), 0), 1)
	}
	keys := []KeyStatus{}
	limited := 0
	for _, k := range cfg.Keys {
		if k.MaxConcurrent <= 0 && k.RequestsPerMinute <= 0 && k.TokensPerMinute <= 0 {
			continue
		}
		cell := r.Lookup(shm.KeyCell(k.Name))
		if cell == nil {
			continue
		}
		limited++
		ks := KeyStatus{Key: k.Name, MaxConcurrent: share(k.MaxConcurrent), RPM: share(k.RequestsPerMinute), TPM: share(k.TokensPerMinute)}
		if ks.MaxConcurrent > 0 {
			ks.InFlight = cell.Total()
			ks.Nearest = float64(ks.InFlight) / float64(ks.MaxConcurrent)
		}
		if ks.RPM > 0 {
			ks.RPMUsed = used(cell, shm.RequestTAT, minute/ks.RPM*ks.RPM)
		}
		if ks.TPM > 0 {
			ks.TPMUsed = used(cell, shm.TokenTAT, max(minute/ks.TPM, 1)*ks.TPM)
		}
		ks.Nearest = max(ks.Nearest, ks.RPMUsed, ks.TPMUsed)
		ks.QueueDepth = cell.MarkCount()
		ks.Queued = atomic.LoadInt64(cell.Scalar(shm.KeyQueuedScalar))
		ks.QueueWaitSeconds = float64(atomic.LoadInt64(cell.Scalar(shm.KeyQueueWaitScalar))) / 1e9
		ks.MeanWaitSeconds = ratio(ks.QueueWaitSeconds, ks.Queued)
		keys = append(keys, ks)
	}
	slices.SortStableFunc(keys, func(a, b KeyStatus) int {
		if c := cmp.Compare(b.Nearest, a.Nearest); c != 0 {
			return c
		}
		return cmp.Compare(a.Key, b.Key)
	})
	return keys[:min(len(keys), n)], limited
}

// ratio is sum/n, nil when n is 0.
func ratio(sum float64, n int64) *float64 {
	if n <= 0 {
		return nil
	}
	v := sum / float64(n)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// counterValue reads a counter of the supervisor's registry, so that the
// page shows the very figure /metrics does.
func counterValue(c prometheus.Counter) int64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		return 0
	}
	return int64(m.GetCounter().GetValue())
}
