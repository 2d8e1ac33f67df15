package supervisor

import (
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/meter"
	"github.com/sluice-gw/sluice/quota"
	"github.com/sluice-gw/sluice/shm"
	"github.com/sluice-gw/sluice/supervisor/adminguard"
)

// metrics is what the admin listener's /metrics shows: the supervisor's own
// counters, and the shared gauges read from the region at scrape time — so
// the figures are every worker's together, and stay right across worker
// restarts.
type metrics struct {
	reg      *prometheus.Registry
	region   *shm.Region // its meter is written after the registry's families
	s        *supervisor
	restarts prometheus.Counter
	released prometheus.Counter
	reloads  *prometheus.CounterVec
	upgrades *prometheus.CounterVec
	freed    prometheus.Counter

	nomadUp     *prometheus.GaugeVec
	nomadErrors *prometheus.CounterVec
	// spendExchanges counts the fleet's spend exchanges, one per key and
	// round, by result (ok, error), and the CAS conflicts they met.
	spendExchanges *prometheus.CounterVec
	discPending    prometheus.Gauge
	discErrors     prometheus.Counter

	hostRejected   prometheus.Counter
	loginFailures  prometheus.Counter
	loginThrottled prometheus.Counter
	fdReleased     prometheus.Counter
}

func newMetrics(s *supervisor) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		restarts: prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_worker_restarts_total",
			Help: "Workers that exited unexpectedly and were restarted."}),
		released: prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_shm_released_total",
			Help: "Places (slots, concurrency, queue) held by exited workers and given back."}),
	}
	m.reloads = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sluice_config_reloads_total",
		Help: "Reloads by result: ok, or error (the previous configuration kept serving)."}, []string{"result"})
	m.freed = prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_shm_cells_freed_total",
		Help: "Cells of names removed by a reload, freed once nothing used them."})
	m.upgrades = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sluice_binary_upgrades_total",
		Help: "Binary upgrades started from this supervisor, by result: ok (it handed over), or error (it kept serving)."}, []string{"result"})
	for _, r := range []string{"ok", "error"} {
		m.reloads.WithLabelValues(r)
		m.upgrades.WithLabelValues(r)
	}
	m.nomadUp = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "sluice_nomad_up",
		Help: "1 when the last Nomad query for the service succeeded; 0 while Nomad is unreachable (the last known instances stay in use)."}, []string{"service"})
	m.nomadErrors = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sluice_nomad_errors_total",
		Help: "Failed Nomad queries, by service."}, []string{"service"})
	m.spendExchanges = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sluice_fleet_spend_exchanges_total",
		Help: "The fleet's spend exchanges through Nomad Variables (fleet.spend_exchange), one per key with a quota or budget and round, by result: ok, error, and conflict (CAS conflicts met, each merged and retried)."}, []string{"result"})
	m.discPending = prometheus.NewGauge(prometheus.GaugeOpts{Name: "sluice_discovery_pending",
		Help: "1 while backends Nomad lists are not all in use (the shared region is full: shm_cells; retried, see /status), else 0."})
	m.discErrors = prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_discovery_errors_total",
		Help: "Attempts to apply discovered backends that could not apply them all (the shared region was full)."})
	m.hostRejected = prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_admin_host_rejected_total",
		Help: "Admin requests answered 421: their Host was neither the admin address nor in admin_hosts (DNS rebinding)."})
	m.loginFailures = prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_admin_login_failures_total",
		Help: "Admin requests that presented a wrong token (bearer header or the status page's login form)."})
	m.loginThrottled = prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_admin_login_throttled_total",
		Help: "Admin requests answered 429: their address had failed too many logins (10 a minute)."})
	m.fdReleased = prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_fd_reserve_released_total",
		Help: "Times the supervisor ran out of file descriptors starting a worker and released its reserve to start it."})
	adminConns := func(f func(*adminguard.Conns) float64) func() float64 {
		return func() float64 {
			if c := s.adminConns.Load(); c != nil {
				return f(c)
			}
			return 0
		}
	}
	m.reg.MustRegister(m.restarts, m.released, m.reloads, m.upgrades, m.freed, m.nomadUp, m.nomadErrors, m.spendExchanges,
		m.discPending, m.discErrors, m.hostRejected, m.loginFailures, m.loginThrottled, m.fdReleased, &shmCollector{s: s},
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sluice_admin_conns",
			Help: "Open admin connections."}, adminConns(func(c *adminguard.Conns) float64 { return float64(c.Open()) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sluice_admin_conns_max",
			Help: "The admin connection cap: admin_max_conns, or half the file descriptors free at start when that is less."},
			adminConns(func(c *adminguard.Conns) float64 { return float64(c.Max()) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "sluice_admin_conns_evicted_total",
			Help: "Idle admin connections closed to make room for a new one at the cap."},
			adminConns(func(c *adminguard.Conns) float64 { return float64(c.Evicted()) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "sluice_admin_conns_refused_total",
			Help: "Admin connections answered 503 at the cap, none being idle."},
			adminConns(func(c *adminguard.Conns) float64 { return float64(c.Refused()) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sluice_fd_reserve",
			Help: "File descriptors the supervisor holds in reserve for starting workers (16 when full)."},
			func() float64 {
				if s.fds == nil {
					return 0
				}
				return float64(s.fds.held())
			}),
	)
	m.region, m.s = s.region, s
	return m
}

// textFormat is the exposition format /metrics writes: Prometheus text,
// version 0.0.4, whatever the scraper offers to accept (every Prometheus
// scrapes it).
var textFormat = expfmt.NewFormat(expfmt.TypeTextPlain)

// handler serves /metrics: the registry's families (gauges read from the
// cells, the supervisor's own counters), then the meter's counters and
// histograms, written straight from the region (meter.WriteText: tens of
// thousands of series a scrape, too many for the registry's const
// metrics to take under 10 ms).
func (m *metrics) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fams, err := m.reg.Gather()
		if err != nil && len(fams) == 0 {
			http.Error(w, "gathering metrics: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", string(textFormat))
		enc := expfmt.NewEncoder(w, textFormat)
		for _, f := range fams {
			if err := enc.Encode(f); err != nil {
				return // the scraper went away
			}
		}
		text := meter.NewText(w)
		cfg, _, _ := m.s.current()
		writeKeyMetrics(text, cfg, m.region)
		text.WriteMeter(m.region)
		text.Flush() //nolint:errcheck // the scraper went away
	})
}

// writeKeyMetrics writes the families of the configured keys, read from
// their cells: a few series per key, thousands in a large configuration
// (written as text, not through the registry: see meter.Text).
func writeKeyMetrics(t *meter.Text, cfg *config.Config, r *shm.Region) {
	type keyCell struct {
		name    string
		cell    *shm.Cell
		limited bool // has max_concurrent
	}
	keys := make([]keyCell, 0, len(cfg.Keys))
	limited := false
	for _, k := range cfg.Keys {
		if cell := r.Lookup(shm.KeyCell(k.Name)); cell != nil {
			keys = append(keys, keyCell{k.Name, cell, k.MaxConcurrent > 0})
			limited = limited || k.MaxConcurrent > 0
		}
	}
	if len(keys) == 0 {
		return
	}
	if limited {
		t.Family("sluice_key_inflight", "Requests in flight for a key that has max_concurrent, all workers together.", "gauge", "key")
		for _, k := range keys {
			if k.limited {
				t.Int(k.cell.Total(), k.name)
			}
		}
	}
	t.Family("sluice_key_queue_depth", "Requests of a key waiting for a slot, all models and workers together.", "gauge", "key")
	for _, k := range keys {
		t.Int(k.cell.MarkCount(), k.name)
	}
	t.Family("sluice_key_queued_total", "Requests of a key that waited for a slot (served, timed out or gone).", "counter", "key")
	for _, k := range keys {
		t.Int(atomic.LoadInt64(k.cell.Scalar(shm.KeyQueuedScalar)), k.name)
	}
	t.Family("sluice_key_queue_wait_seconds_total",
		"Time the requests of a key spent waiting for a slot; divided by sluice_key_queued_total, the mean wait.", "counter", "key")
	for _, k := range keys {
		t.Float(float64(atomic.LoadInt64(k.cell.Scalar(shm.KeyQueueWaitScalar)))/1e9, k.name)
	}
	writeQuotaMetrics(t, cfg, r)
	writeEndUserMetrics(t, cfg, r)
	t.Family("sluice_key_served_tokens",
		"A key's fair-queue finish tag, in tokens over its weight: the virtual time at which its last request, served or waiting, ends. Requests go in the order of their start tags; an idle key starts at the model's virtual time.",
		"gauge", "key")
	for _, k := range keys {
		t.Int(atomic.LoadInt64(k.cell.Scalar(shm.KeyServedScalar))/shm.ServedUnitsPerToken, k.name)
	}
}

// writeQuotaMetrics writes each key's use of its quotas and budget in the
// periods running now (package quota; a period that ended rolls over here
// as it would at a request).
func writeQuotaMetrics(t *meter.Text, cfg *config.Config, r *shm.Region) {
	cal := quota.NewCalendar(cfg.QuotaLocation())
	now := cal.Now()
	type row struct {
		key, period string
		v           int64
	}
	var tokens, spend []row
	for _, k := range cfg.Keys {
		if c := r.Lookup(shm.QuotaCell(k.Name)); c != nil {
			for _, q := range []struct {
				p quota.Period
				v int64
			}{{quota.Day, k.Quotas.Day}, {quota.Week, k.Quotas.Week}, {quota.Month, k.Quotas.Month}} {
				if q.v > 0 {
					used, _ := quota.FleetUsed(c, r.Lookup(shm.FleetQuotaCell(k.Name)), q.p, cal, now)
					tokens = append(tokens, row{k.Name, q.p.String(), used})
				}
			}
		}
		if c := r.Lookup(shm.BudgetCell(k.Name)); c != nil && k.Budget != nil {
			if p, ok := quota.ParsePeriod(k.Budget.Per); ok {
				used, _ := quota.FleetUsed(c, r.Lookup(shm.FleetBudgetCell(k.Name)), p, cal, now)
				spend = append(spend, row{k.Name, p.String(), used})
			}
		}
	}
	if len(tokens) > 0 {
		t.Family("sluice_key_quota_used_tokens", "Tokens a key with quotas used in the period running now (settled; in quota_timezone), all workers together.", "gauge", "key", "period")
		for _, r := range tokens {
			t.Int(r.v, r.key, r.period)
		}
	}
	if len(spend) > 0 {
		t.Family("sluice_key_spend_usd", "USD a key with a budget spent in the period running now (settled, at its models' prices), all workers together.", "gauge", "key", "period")
		for _, r := range spend {
			t.Float(float64(r.v)/1e12, r.key, r.period)
		}
	}
}

// writeEndUserMetrics writes, for each key with end_user, how many of its
// end users the table tracks and how many requests went to its overflow
// end user (per end user there are no series: there may be millions).
func writeEndUserMetrics(t *meter.Text, cfg *config.Config, r *shm.Region) {
	var cells []*shm.Cell
	var names []string
	for _, k := range cfg.Keys {
		if c := r.Lookup(shm.KeyCell(k.Name)); c != nil && k.EndUser != nil {
			cells, names = append(cells, c), append(names, k.Name)
		}
	}
	if len(cells) == 0 {
		return
	}
	t.Family("sluice_end_users_tracked", "End users of a key whose limits' state the end-user table holds now, its overflow end user included (at most its end_user.max_tracked and that one, and one more between counts), as of the supervisor's last count (every second).", "gauge", "key")
	for i, c := range cells {
		t.Int(atomic.LoadInt64(c.Scalar(shm.KeyEndUsersScalar)), names[i])
	}
	t.Family("sluice_end_user_overflow_total", "Requests of a key's end users it could not track (its max_tracked reached, or their bucket full), held together to one end user's limits.", "counter", "key")
	for i, c := range cells {
		t.Int(atomic.LoadInt64(c.Scalar(shm.KeyEndUserOverflowScalar)), names[i])
	}
}

var (
	descBackendInflight = prometheus.NewDesc("sluice_backend_inflight",
		"Requests in flight to a backend, all workers together (slots in use).", []string{"model", "backend"}, nil)
	descBackendSlots = prometheus.NewDesc("sluice_backend_slots",
		"Configured slots of a backend.", []string{"model", "backend"}, nil)
	descBackendLoad = prometheus.NewDesc("sluice_backend_reported_load",
		"A backend's own count of requests running and waiting, from its /metrics (absent while stale).", []string{"model", "backend"}, nil)
	descBackendKV = prometheus.NewDesc("sluice_backend_kv_cache_usage",
		"A backend's KV-cache usage (0-1), from its /metrics (absent while stale).", []string{"model", "backend"}, nil)
	descPrefixQueries = prometheus.NewDesc("sluice_backend_prefix_cache_queries_total", "A backend's prefix-cache queries in tokens (vllm:prefix_cache_queries), its own counter as read from its /metrics (absent while stale; a backend restart resets it).", []string{"model", "backend"}, nil)
	descPrefixHits    = prometheus.NewDesc("sluice_backend_prefix_cache_hits_total", "A backend's prefix-cache hits in tokens (vllm:prefix_cache_hits), its own counter as read from its /metrics (absent while stale; a backend restart resets it).", []string{"model", "backend"}, nil)
	descPrefixRatio   = prometheus.NewDesc("sluice_backend_prefix_cache_hit_ratio", "A backend's prefix-cache hits over queries (0-1) between its last two reads of /metrics (absent until two reads, when no token was queried between them, or while stale).", []string{"model", "backend"}, nil)

	descKeyUp = prometheus.NewDesc("sluice_backend_key_up",
		"1 while a provider key (api_keys_env, by its variable) is in rotation and not resting after a 429; 0 while it is out (401/403, until a reload) or resting.",
		[]string{"model", "backend", "key"}, nil)
	descKeyRequests = prometheus.NewDesc("sluice_backend_key_requests_total",
		"Requests sent to a backend with a provider key.", []string{"model", "backend", "key"}, nil)
	descKeyRateLimited = prometheus.NewDesc("sluice_backend_key_rate_limited_total",
		"429 answers to requests sent with a provider key.", []string{"model", "backend", "key"}, nil)
	descKeyRejected = prometheus.NewDesc("sluice_backend_key_rejected_total",
		"401 and 403 answers to requests sent with a provider key.", []string{"model", "backend", "key"}, nil)
	descQueueDepth = prometheus.NewDesc("sluice_queue_depth",
		"Requests waiting for a slot of a model, all workers together.", []string{"model"}, nil)
	descBodyBytes = prometheus.NewDesc("sluice_request_body_bytes_held",
		"Request body bytes kept for retries, all workers together: a body is let go when its response starts.", nil, nil)
	descBodySpilled = prometheus.NewDesc("sluice_request_body_bytes_spilled",
		"Of the request body bytes held, those in temporary files (bodies that would have taken a worker past body_memory).", nil, nil)
	descBodiesSpilled = prometheus.NewDesc("sluice_request_bodies_spilled_total",
		"Request bodies written to a temporary file since the shared region was made.", nil, nil)
	descConns = prometheus.NewDesc("sluice_client_connections",
		"Open client connections, all workers together.", nil, nil)
	descConnsRefused = prometheus.NewDesc("sluice_client_connections_refused_total",
		"Client connections closed as soon as they were accepted because their worker had worker_connections open.", nil, nil)
	descFleet = prometheus.NewDesc("sluice_fleet_replicas",
		"Live gateway replicas the key limits are divided by (fleet.nomad_service; 1 without it).", nil, nil)
	descGeneration = prometheus.NewDesc("sluice_config_generation",
		"Generation of the running configuration: 1 at start, +1 per applied reload.", nil, nil)
	descWorkersReady = prometheus.NewDesc("sluice_workers_ready",
		"Worker slots with a worker accepting connections.", nil, nil)
	descWorkers = prometheus.NewDesc("sluice_workers",
		"Worker slots.", nil, nil)
	descGoroutines = prometheus.NewDesc("sluice_worker_goroutines",
		"Goroutines of a worker (published by the worker twice a second): one that keeps growing with traffic gone is a leak.", []string{"worker"}, nil)
	descCellsUsed = prometheus.NewDesc("sluice_shm_cells_used",
		"Cells allocated in the shared-memory region.", nil, nil)
	descCells = prometheus.NewDesc("sluice_shm_cells",
		"Capacity of the shared-memory region in cells (shm_cells).", nil, nil)
)

// shmCollector reads the shared gauges of the running configuration.
type shmCollector struct{ s *supervisor }

func (c *shmCollector) Describe(ch chan<- *prometheus.Desc) { prometheus.DescribeByCollect(c, ch) }

func (c *shmCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	cfg, _, gen := s.current()
	r := s.region
	ch <- prometheus.MustNewConstMetric(descGeneration, prometheus.GaugeValue, float64(gen))
	s.collectCertificates(ch, cfg)
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, m := range cfg.Models {
		if cell := r.Lookup(shm.QueueCell(m.Name)); cell != nil {
			gauge(descQueueDepth, float64(cell.Total()), m.Name)
		}
		for _, b := range m.Backends {
			if cell := r.Lookup(shm.BackendCell(m.Name, b.URL)); cell != nil {
				gauge(descBackendInflight, float64(cell.Total()), m.Name, b.URL)
				gauge(descBackendSlots, float64(b.Slots), m.Name, b.URL)
				if load, kv, fresh := cell.ReportedLoad(r.Now()); fresh {
					gauge(descBackendLoad, float64(load), m.Name, b.URL)
					gauge(descBackendKV, float64(kv)/1e6, m.Name, b.URL)
				}
			}
			if p, fresh := s.freshPrefix(shm.BackendCell(m.Name, b.URL)); fresh {
				ch <- prometheus.MustNewConstMetric(descPrefixQueries, prometheus.CounterValue, p.queries, m.Name, b.URL)
				ch <- prometheus.MustNewConstMetric(descPrefixHits, prometheus.CounterValue, p.hits, m.Name, b.URL)
				if p.hasRatio {
					gauge(descPrefixRatio, p.ratio, m.Name, b.URL)
				}
			}
			for _, env := range b.APIKeysEnv {
				if cell := r.Lookup(shm.BackendKeyCell(m.Name, b.URL, env)); cell != nil {
					collectKey(ch, r, cell, m.Name, b.URL, env)
				}
			}
		}
	}
	if cell := r.Lookup(shm.BodyBytesCell); cell != nil {
		gauge(descBodyBytes, float64(cell.Total()))
	}
	if cell := r.Lookup(shm.BodySpillCell); cell != nil {
		gauge(descBodySpilled, float64(cell.Total()))
		ch <- prometheus.MustNewConstMetric(descBodiesSpilled, prometheus.CounterValue,
			float64(atomic.LoadInt64(cell.Scalar(shm.SpilledBodiesScalar))))
	}
	if cell := r.Lookup(shm.ConnCell); cell != nil {
		gauge(descConns, float64(cell.Total()))
		ch <- prometheus.MustNewConstMetric(descConnsRefused, prometheus.CounterValue,
			float64(atomic.LoadInt64(cell.Scalar(shm.RefusedConnsScalar))))
	}
	if cell := r.Lookup(shm.FleetCell); cell != nil {
		gauge(descFleet, float64(max(1, atomic.LoadInt64(cell.Scalar(0)))))
	}
	goroutines := r.Lookup(shm.WorkerGoroutinesCell)
	ready := 0
	for _, sl := range s.slots {
		if sl.ready.Load() {
			ready++
		}
		if goroutines != nil {
			if n := goroutines.Mark(sl.col); n != shm.NoMark {
				gauge(descGoroutines, float64(n), strconv.Itoa(sl.n))
			}
		}
	}
	gauge(descWorkersReady, float64(ready))
	gauge(descWorkers, float64(len(s.slots)))
	gauge(descCellsUsed, float64(r.Used()))
	gauge(descCells, float64(r.Capacity()))
}

// collectKey sends the series of one provider key. Up is proxy/provkeys'
// rule, which the supervisor cannot import: in rotation while the running
// generation has reached BackendKeyOutScalar, and not resting.
func collectKey(ch chan<- prometheus.Metric, r *shm.Region, cell *shm.Cell, labels ...string) {
	load := func(i int) int64 { return atomic.LoadInt64(cell.Scalar(i)) }
	up := 0.0
	if r.Generation() >= load(shm.BackendKeyOutScalar) && r.Now() >= load(shm.BackendKeyRestScalar) {
		up = 1
	}
	ch <- prometheus.MustNewConstMetric(descKeyUp, prometheus.GaugeValue, up, labels...)
	for _, c := range []struct {
		d *prometheus.Desc
		i int
	}{{descKeyRequests, shm.BackendKeyRequestsScalar}, {descKeyRateLimited, shm.BackendKeyRateLimitedScalar}, {descKeyRejected, shm.BackendKeyRejectedScalar}} {
		ch <- prometheus.MustNewConstMetric(c.d, prometheus.CounterValue, float64(load(c.i)), labels...)
	}
}
