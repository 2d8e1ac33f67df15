package supervisor

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/sluice-gw/sluice/cells"
	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/meter"
	"github.com/sluice-gw/sluice/shm"
)

// The provider keys' series come from their cells, one per configured
// key name: up is 0 while a key is out (until the generation after its
// 401/403) or resting after a 429.
func TestMetricsProviderKeys(t *testing.T) {
	const model, url = "m", "https://api.example:443"
	keys := []string{"KEY_A", "KEY_B", "KEY_C"}
	cfg := &config.Config{Models: []config.Model{{Name: model, Backends: []config.Backend{{URL: url, Slots: 4, APIKeysEnv: keys}}}}}
	region := regionFor(t, cfg)
	region.SetGeneration(1)
	set := func(key string, i int, v int64) { *region.Lookup(shm.BackendKeyCell(model, url, key)).Scalar(i) = v }
	set("KEY_A", shm.BackendKeyRequestsScalar, 7)
	set("KEY_B", shm.BackendKeyOutScalar, 2) // rejected under generation 1
	set("KEY_B", shm.BackendKeyRejectedScalar, 1)
	set("KEY_C", shm.BackendKeyRestScalar, region.Now()+int64(time.Hour))
	set("KEY_C", shm.BackendKeyRateLimitedScalar, 3)

	s := &supervisor{region: region, cfg: cfg, gen: 1}
	scrape := func() map[string]map[string]float64 {
		fams, err := newMetrics(s).reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]map[string]float64{}
		for _, f := range fams {
			for _, m := range f.GetMetric() {
				labels := map[string]string{}
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				if labels["key"] == "" {
					continue
				}
				if labels["model"] != model || labels["backend"] != url {
					t.Fatalf("%s has labels %v", f.GetName(), labels)
				}
				if out[f.GetName()] == nil {
					out[f.GetName()] = map[string]float64{}
				}
				out[f.GetName()][labels["key"]] = value(m)
			}
		}
		return out
	}
	got := scrape()
	for name, want := range map[string]map[string]float64{
		"sluice_backend_key_up":                 {"KEY_A": 1, "KEY_B": 0, "KEY_C": 0},
		"sluice_backend_key_requests_total":     {"KEY_A": 7, "KEY_B": 0, "KEY_C": 0},
		"sluice_backend_key_rejected_total":     {"KEY_A": 0, "KEY_B": 1, "KEY_C": 0},
		"sluice_backend_key_rate_limited_total": {"KEY_A": 0, "KEY_B": 0, "KEY_C": 3},
	} {
		for k, v := range want {
			if g, ok := got[name][k]; !ok || g != v {
				t.Errorf("%s{key=%q} = %v (present %v), want %v", name, k, g, ok, v)
			}
		}
		if len(got[name]) != len(keys) {
			t.Errorf("%s has %d series, want %d", name, len(got[name]), len(keys))
		}
	}
	region.SetGeneration(2) // a reload brings KEY_B back
	if up := scrape()["sluice_backend_key_up"]; up["KEY_B"] != 1 || up["KEY_C"] != 0 {
		t.Errorf("after a reload: up %v", up)
	}
}

// regionFor is a private region of two columns with the cells of cfg,
// closed at the end of the test.
func regionFor(t *testing.T, cfg *config.Config) *shm.Region {
	t.Helper()
	region, err := shm.Create(cfg.CellsNeeded(), 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { region.Close() })
	if err := cells.Alloc(region, cfg); err != nil {
		t.Fatal(err)
	}
	return region
}

func value(m *dto.Metric) float64 {
	if c := m.GetCounter(); c != nil {
		return c.GetValue()
	}
	return m.GetGauge().GetValue()
}

// A backend's prefix-cache counters appear as read, the hit ratio once two
// reads saw tokens queried between them; a restart (counters reset) or an
// idle interval leaves the ratio out, and a stale read or a removed
// backend leaves all three out.
func TestMetricsPrefixCache(t *testing.T) {
	const model, url = "m", "http://10.0.0.1:8000"
	cfg := &config.Config{Models: []config.Model{{Name: model, Backends: []config.Backend{{URL: url, Slots: 4}}}}}
	region := regionFor(t, cfg)
	s := &supervisor{region: region, cfg: cfg, gen: 1}
	cell := shm.BackendCell(model, url)
	scrape := func() map[string]float64 {
		t.Helper()
		fams, err := newMetrics(s).reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, f := range fams {
			if !strings.HasPrefix(f.GetName(), "sluice_backend_prefix_cache_") {
				continue
			}
			if len(f.GetMetric()) != 1 {
				t.Fatalf("%s has %d series, want 1", f.GetName(), len(f.GetMetric()))
			}
			m := f.GetMetric()[0]
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["model"] != model || labels["backend"] != url {
				t.Fatalf("%s has labels %v", f.GetName(), labels)
			}
			counter := m.GetCounter() != nil
			if want := strings.HasSuffix(f.GetName(), "_total"); counter != want {
				t.Errorf("%s: a counter is %v, want %v", f.GetName(), counter, want)
			}
			out[f.GetName()] = value(m)
		}
		return out
	}
	const queries, hits, ratio = "sluice_backend_prefix_cache_queries_total", "sluice_backend_prefix_cache_hits_total", "sluice_backend_prefix_cache_hit_ratio"
	check := func(what string, want map[string]float64) {
		t.Helper()
		got := scrape()
		if len(got) != len(want) {
			t.Errorf("%s: series %v, want %v", what, got, want)
			return
		}
		for k, v := range want {
			if g, ok := got[k]; !ok || g != v {
				t.Errorf("%s: %s = %v (present %v), want %v", what, k, g, ok, v)
			}
		}
	}
	ctx := context.Background()
	read := func(q, h float64) {
		s.recordPrefix(ctx, cell, loadPage{prefixQueries: q, prefixHits: h, hasPrefix: true}, time.Now())
	}
	check("before any read", nil)
	read(1000, 200)
	check("after one read", map[string]float64{queries: 1000, hits: 200})
	read(1400, 500) // 300 of 400 tokens hit
	check("after two reads", map[string]float64{queries: 1400, hits: 500, ratio: 0.75})
	read(1400, 500)
	check("idle", map[string]float64{queries: 1400, hits: 500})
	read(1500, 600) // hits read a little ahead of queries (the page is not one snapshot)
	check("all hit", map[string]float64{queries: 1500, hits: 600, ratio: 1})
	read(100, 0) // the backend restarted
	check("after a restart", map[string]float64{queries: 100, hits: 0})
	read(300, 50)
	check("after the restart", map[string]float64{queries: 300, hits: 50, ratio: 0.25})
	s.recordPrefix(ctx, cell, loadPage{}, time.Now()) // a page without the counters
	check("a page without them", nil)
	s.recordPrefix(ctx, cell, loadPage{prefixQueries: 10, prefixHits: 5, hasPrefix: true}, time.Now().Add(-shm.StaleLoad))
	check("stale", nil)
	read(20, 5)
	s.forgetPrefix(cell) // its scraper was stopped
	check("forgotten", nil)
	stopped, cancel := context.WithCancel(ctx)
	cancel()
	s.recordPrefix(stopped, cell, loadPage{prefixQueries: 10, prefixHits: 5, hasPrefix: true}, time.Now())
	check("read by a stopped scraper", nil)
	if len(s.prefix) != 0 {
		t.Errorf("entries left: %v", s.prefix)
	}
}

// BenchmarkScrape1000Keys is one /metrics scrape of a configuration of
// 1,000 keys and 4 models of 4 backends, as two workers recorded it:
// "each" — every key used its one model (ok, and 1 key in 10 an error
// code too), the shape of a fleet where each team has its model; "all" —
// every key used every model, with two error codes (24,000 request and
// token series: the worst case of this configuration).
func BenchmarkScrape1000Keys(b *testing.B) {
	for _, all := range []bool{false, true} {
		name := "each"
		if all {
			name = "all"
		}
		b.Run(name, func(b *testing.B) { benchmarkScrape(b, all) })
	}
}

func benchmarkScrape(b *testing.B, all bool) {
	cfg := &config.Config{}
	for i := range 4 {
		m := config.Model{Name: fmt.Sprintf("model-%d", i)}
		for j := range 4 {
			m.Backends = append(m.Backends, config.Backend{URL: fmt.Sprintf("http://10.0.%d.%d:8000", i, j), Slots: 64})
		}
		cfg.Models = append(cfg.Models, m)
	}
	for i := range 1000 {
		cfg.Keys = append(cfg.Keys, config.Key{Name: fmt.Sprintf("team-%04d", i), Models: []string{"*"}, MaxConcurrent: 10})
	}
	region, err := shm.Create(cfg.CellsNeeded(), 8)
	if err != nil {
		b.Fatal(err)
	}
	defer region.Close()
	if err := cells.Alloc(region, cfg); err != nil {
		b.Fatal(err)
	}
	for col := range 2 {
		rec := meter.NewRecorder(region, col)
		for mi, m := range cfg.Models {
			for ki, k := range cfg.Keys {
				codes := []string{"ok"}
				switch {
				case all:
					codes = append(codes, "rate_limited", "upstream_500")
				case ki%4 != mi:
					continue
				case ki%10 == 0:
					codes = append(codes, "rate_limited")
				}
				for _, code := range codes {
					rec.Counter(meter.Requests, m.Name, k.Name, code).Add(3)
				}
				for _, kind := range []string{"prompt", "completion", "cached"} {
					rec.Counter(meter.Tokens, m.Name, k.Name, kind).Add(100)
				}
			}
			for _, h := range []*meter.Metric{meter.TimeToFirstToken, meter.RequestDuration, meter.QueueWait} {
				rec.Histogram(h, m.Name).Observe(time.Second)
			}
			for _, be := range m.Backends {
				rec.Histogram(meter.UpstreamHeaders, m.Name, be.URL).Observe(time.Millisecond)
				rec.Counter(meter.Attempts, m.Name, be.URL).Add(1)
			}
		}
	}
	s := &supervisor{region: region, cfg: cfg, gen: 1}
	h := newMetrics(s).handler()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	w := &countingWriter{header: http.Header{}}
	for b.Loop() {
		w.n = 0
		h.ServeHTTP(w, req)
	}
	b.ReportMetric(float64(w.n), "bytes/scrape")
}

// countingWriter is a ResponseWriter that counts what it is given.
type countingWriter struct {
	header http.Header
	n      int
}

func (w *countingWriter) Header() http.Header         { return w.header }
func (w *countingWriter) WriteHeader(int)             {}
func (w *countingWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }
