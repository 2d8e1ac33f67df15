package supervisor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/nomad"
	"github.com/sluice-gw/sluice/shm"
)

// Service discovery and backend load. The supervisor follows Nomad (one
// blocking query per service, not one per worker) and turns every change
// of a model's instances into an install, like a reload: backends that
// stay keep their cells. It also reads each backend's /metrics and writes
// the backend's own view of its load into the backend's cell, where every
// worker reads it.

// stopBackground ends the watches and scrapers and waits for every
// goroutine that uses the region.
func (s *supervisor) stopBackground() {
	s.discMu.Lock()
	if !s.bgStopped {
		s.bgStopped = true
		close(s.bgDone)
	}
	for _, w := range s.watches {
		w.cancel()
	}
	for _, sc := range s.scrapers {
		sc.cancel()
	}
	s.watches, s.scrapers = map[string]*watch{}, map[string]*scraper{}
	s.discMu.Unlock()
	s.bg.Wait()
}

// discoveryWait bounds how long start-up waits for Nomad's first answer
// before the workers start (without the backends, if Nomad is down).
const discoveryWait = 5 * time.Second

// watch is one running nomad.Watch.
type watch struct {
	src    nomad.Source
	client config.NomadClient
	cancel context.CancelFunc
	first  chan struct{} // closed at the first answer or error
}

// syncDiscovery starts, keeps or stops the watches static asks for: one
// per discovery model, and the fleet's.
func (s *supervisor) syncDiscovery(static *config.Config) {
	s.discMu.Lock()
	defer s.discMu.Unlock()
	if s.bgStopped {
		return
	}
	want := map[string]nomad.Source{}
	for _, m := range static.Models {
		if n := m.Nomad; n != nil {
			want["model/"+m.Name] = nomad.Source{Service: n.Service, Namespace: n.Namespace, Tags: n.Tags}
		}
	}
	if f := static.Fleet; f.NomadService != "" {
		ns := f.Namespace
		if ns == "" {
			ns = static.Nomad.Namespace
		}
		want["fleet"] = nomad.Source{Service: f.NomadService, Namespace: ns}
	}
	for key, w := range s.watches {
		if src, ok := want[key]; !ok || !sameSource(src, w.src) || w.client != static.Nomad {
			w.cancel()
			delete(s.watches, key)
		}
	}
	if len(want) == 0 {
		return
	}
	client, err := nomad.NewClient(static.Nomad)
	if err != nil {
		s.log.Error("nomad client", "err", err)
		return
	}
	for key, src := range want {
		if _, ok := s.watches[key]; ok {
			continue
		}
		ctx, cancel := context.WithCancel(context.Background())
		w := &watch{src: src, client: static.Nomad, cancel: cancel, first: make(chan struct{})}
		s.watches[key] = w
		s.bg.Add(1)
		go func() { defer s.bg.Done(); s.follow(ctx, client, key, w) }()
	}
}

func sameSource(a, b nomad.Source) bool {
	return a.Service == b.Service && a.Namespace == b.Namespace && slices.Equal(a.Tags, b.Tags)
}

// follow runs one watch: a model's backends, or the fleet's size.
func (s *supervisor) follow(ctx context.Context, client *api.Client, key string, w *watch) {
	var once atomic.Bool
	firstDone := func() {
		if once.CompareAndSwap(false, true) {
			close(w.first)
		}
	}
	wasUp := true
	status := func(err error) {
		up := 1.0
		if err != nil {
			up = 0
			s.metrics.nomadErrors.WithLabelValues(w.src.Service).Inc()
			if wasUp {
				s.log.Warn("nomad unreachable; keeping the last known instances", "service", w.src.Service, "err", err)
			}
		} else if !wasUp {
			s.log.Info("nomad reachable again", "service", w.src.Service)
		}
		wasUp = err == nil
		s.metrics.nomadUp.WithLabelValues(w.src.Service).Set(up)
		if err != nil {
			firstDone()
		}
	}
	update := func(found []nomad.Instance) {
		defer firstDone()
		if ctx.Err() != nil {
			return
		}
		if key == "fleet" {
			atomic.StoreInt64(s.region.Lookup(shm.FleetCell).Scalar(0), int64(max(1, len(found))))
			s.log.Info("gateway replicas in the fleet", "service", w.src.Service, "replicas", len(found))
			return
		}
		model := key[len("model/"):]
		s.cfgMu.Lock()
		var n *config.NomadService
		for _, m := range s.static.Models {
			if m.Name == model {
				n = m.Nomad
			}
		}
		if n == nil {
			s.cfgMu.Unlock()
			return
		}
		disc := make(config.Discovered, len(s.disc)+1)
		for k, v := range s.disc {
			disc[k] = v
		}
		backends, skipped := nomad.Backends(n, found)
		for _, sk := range skipped {
			s.log.Warn("a Nomad instance is not an address to dial; skipped", "model", model, "service", w.src.Service,
				"address", sk.Address, "port", sk.Port, "err", sk.Err)
		}
		disc[model] = backends
		s.disc = disc
		static, data := s.static, s.cfgData
		s.cfgMu.Unlock()
		s.log.Info("backends discovered", "model", model, "service", w.src.Service, "backends", len(backends))
		if err := s.install(static, data); err != nil {
			s.log.Error("applying discovered backends failed; retrying", "model", model, "err", err)
			s.cfgMu.Lock()
			s.setDiscoveryErrLocked(err)
			s.cfgMu.Unlock()
		}
	}
	nomad.Watch(ctx, client, w.src, update, status)
}

// keptBackends is want without the backends cur does not have yet: what
// discovery can apply while the region has no cells for its additions.
// fewer is false when want adds nothing (trying it again would not help).
func keptBackends(want config.Discovered, cur *config.Config) (kept config.Discovered, fewer bool) {
	have := map[string]bool{}
	for _, m := range cur.Models {
		for _, b := range m.Backends {
			have[shm.BackendCell(m.Name, b.URL)] = true
		}
	}
	kept = make(config.Discovered, len(want))
	for model, bs := range want {
		k := []config.Backend{}
		for _, b := range bs {
			if have[shm.BackendCell(model, b.URL)] {
				k = append(k, b)
			}
		}
		kept[model] = k
		fewer = fewer || len(k) < len(bs)
	}
	return kept, fewer
}

// setDiscoveryErrLocked records whether discovered backends wait (err) or
// are all applied (nil), for /status, the metrics and the log, and wakes
// retryDiscovery while they wait (cfgMu held).
func (s *supervisor) setDiscoveryErrLocked(err error) {
	if err == nil {
		if s.discErr != "" {
			s.log.Info("every discovered backend is in use again")
		}
		s.discErr = ""
		s.metrics.discPending.Set(0)
		return
	}
	if s.discErr == "" {
		s.log.Warn("not every discovered backend is in use; retrying", "err", err)
	}
	s.discErr = err.Error()
	s.metrics.discPending.Set(1)
	s.metrics.discErrors.Inc()
	select {
	case s.discRetry <- struct{}{}:
	default:
	}
}

// Backoff of retryDiscovery.
const (
	minDiscoveryRetry = time.Second // the sweep frees retired cells about this often
	maxDiscoveryRetry = 30 * time.Second
)

// retryDiscovery installs the running configuration again while discovered
// backends wait for cells (backing off 1 s → 30 s), until they are all in
// use: the cells of backends that left are freed once nothing uses them.
func (s *supervisor) retryDiscovery() {
	backoff := minDiscoveryRetry
	for {
		select {
		case <-s.bgDone:
			return
		case <-s.discRetry:
		}
		for {
			select {
			case <-s.bgDone:
				return
			case <-time.After(backoff):
			}
			s.cfgMu.Lock()
			waiting, static, data := s.discErr != "", s.static, s.cfgData
			s.cfgMu.Unlock()
			if !waiting {
				break
			}
			if err := s.install(static, data); err != nil {
				s.cfgMu.Lock()
				s.setDiscoveryErrLocked(err)
				s.cfgMu.Unlock()
			}
			backoff = min(2*backoff, maxDiscoveryRetry)
		}
		backoff = minDiscoveryRetry
		select { // the wake-ups sent while retrying are answered
		case <-s.discRetry:
		default:
		}
	}
}

// awaitDiscovery waits, up to discoveryWait, for every watch's first answer.
func (s *supervisor) awaitDiscovery() {
	s.discMu.Lock()
	var firsts []chan struct{}
	for _, w := range s.watches {
		firsts = append(firsts, w.first)
	}
	s.discMu.Unlock()
	deadline := time.After(discoveryWait)
	for _, f := range firsts {
		select {
		case <-f:
		case <-deadline:
			s.log.Warn("nomad has not answered yet; starting without the backends it will give", "waited", discoveryWait.String())
			return
		}
	}
}

// scraper reads one backend's /metrics.
type scraper struct {
	interval time.Duration
	cancel   context.CancelFunc
}

// syncScrapers starts, keeps or stops a load reader per backend of eff.
func (s *supervisor) syncScrapers(eff *config.Config) {
	s.discMu.Lock()
	defer s.discMu.Unlock()
	if s.bgStopped {
		return
	}
	want := map[string]time.Duration{}
	urls := map[string]string{}
	for _, m := range eff.Models {
		if m.LoadInterval == nil || *m.LoadInterval <= 0 {
			continue
		}
		for _, b := range m.Backends {
			name := shm.BackendCell(m.Name, b.URL)
			want[name] = time.Duration(*m.LoadInterval)
			urls[name] = b.URL
		}
	}
	for name, sc := range s.scrapers {
		if d, ok := want[name]; !ok || d != sc.interval {
			sc.cancel()
			delete(s.scrapers, name)
		}
	}
	for name, d := range want {
		if _, ok := s.scrapers[name]; ok {
			continue
		}
		ctx, cancel := context.WithCancel(context.Background())
		s.scrapers[name] = &scraper{interval: d, cancel: cancel}
		s.bg.Add(1)
		go func() { defer s.bg.Done(); s.scrape(ctx, name, urls[name], d, scrapeClient(max(d, minScrapeTimeout))) }()
	}
}

// scrape reads url/metrics every interval and records, in the backend's
// cell, vLLM's running + waiting requests and KV-cache usage. Pages that
// cannot be read are logged when that starts (with the first error) and
// when it ends, not at every interval (a reset's error names a new port
// each time); meanwhile the last figure goes stale and the workers route on
// their own count. client (scrapeClient) bounds each read.
func (s *supervisor) scrape(ctx context.Context, cellName, url string, interval time.Duration, client *http.Client) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	failing := false
	for {
		// The page counts this gateway's own requests too: what it had in
		// flight to the server while the page was read is taken off (the
		// larger of before and after, so that requests starting or ending
		// meanwhile are not taken for another's), and the workers add
		// their count of the moment.
		ownBefore := s.ownLoad(cellName, url)
		load, kv, err := readLoad(ctx, client, url)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil && !failing:
			s.log.Warn("cannot read a backend's load from its /metrics; routing on the gateway's own count until it can",
				"backend", url, "err", err)
			failing = true
		case err == nil && failing:
			s.log.Info("reading a backend's load from its /metrics again", "backend", url)
			failing = false
		}
		if err == nil {
			// Looked up each time: the cell is freed once a reload removed
			// the backend, and this must never write into another's.
			if c := s.region.Lookup(cellName); c != nil {
				c.SetReportedLoad(load, max(ownBefore, s.ownLoad(cellName, url)), kv, s.region.Now())
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// ownLoad is the gateway's requests in flight to the server at url, all
// workers together, under every model of the running configuration that
// lists it (the page counts them all); the backend's own cell (cellName)
// alone without a configuration.
func (s *supervisor) ownLoad(cellName, url string) int64 {
	total := func(name string) int64 {
		if c := s.region.Lookup(name); c != nil { // a reload may have freed it
			return c.Total()
		}
		return 0
	}
	cfg, _, _ := s.current()
	if cfg == nil {
		return total(cellName)
	}
	var own int64
	for _, m := range cfg.Models {
		for _, b := range m.Backends {
			if strings.TrimSuffix(b.URL, "/") == strings.TrimSuffix(url, "/") {
				own += total(shm.BackendCell(m.Name, b.URL))
			}
		}
	}
	return own
}

// minScrapeTimeout is the shortest time a scraper waits for a page (else
// its interval).
const minScrapeTimeout = 200 * time.Millisecond

// scrapeClient is the HTTP client of one backend's scraper.
func scrapeClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout: timeout,
		// A redirect is not followed: the page is the backend's own or none
		// (a 3xx then reads as a failure), never another host's.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// maxMetricsPage bounds a backend's /metrics page. vLLM's is ~100 KB; a
// larger one is refused, so that a broken or hostile backend cannot make the
// supervisor — whose death takes every worker with it — hold gigabytes.
const maxMetricsPage = 8 << 20

// maxReportedLoad is the most requests a page may claim to run and wait:
// a larger figure is a broken page, not a load.
const maxReportedLoad = 1e9

// readLoad reads a vLLM /metrics page (see parseLoad).
func readLoad(ctx context.Context, client *http.Client, url string) (load int64, kv float64, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/metrics", nil)
	if err != nil {
		return 0, 0, err
	}
	res, err := client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("GET %s/metrics: %s", url, res.Status)
	}
	page, err := io.ReadAll(io.LimitReader(res.Body, maxMetricsPage+1))
	if err != nil {
		return 0, 0, fmt.Errorf("GET %s/metrics: %w", url, err)
	}
	if len(page) > maxMetricsPage {
		return 0, 0, fmt.Errorf("GET %s/metrics: the page is larger than %d MiB", url, maxMetricsPage>>20)
	}
	return parseLoad(page)
}

// parseLoad reads a vLLM /metrics page (Prometheus text format): requests
// running plus waiting, summed over their series, and the KV-cache usage
// (vllm:kv_cache_usage_perc, or the older vllm:gpu_cache_usage_perc), the
// largest of its series, at most 1. A page with neither request count, or
// with a figure that is not a count or a fraction (negative, NaN, infinite,
// absurdly large), is an error: its figures are not used at all.
func parseLoad(page []byte) (load int64, kv float64, err error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(page))
	if err != nil {
		return 0, 0, fmt.Errorf("not a Prometheus text page: %w", err)
	}
	values := func(name string) ([]float64, error) {
		f := fams[name]
		if f == nil {
			return nil, nil
		}
		var vs []float64
		for _, m := range f.GetMetric() {
			v := m.GetGauge().GetValue() // vLLM's are gauges
			if m.GetGauge() == nil {
				v = m.GetUntyped().GetValue() // a page without # TYPE lines
			}
			if !(v >= 0 && v <= maxReportedLoad) { // NaN fails both
				return nil, fmt.Errorf("%s: %v is not a count or a fraction", name, v)
			}
			vs = append(vs, v)
		}
		return vs, nil
	}
	found := false
	total := 0.0
	for _, name := range []string{"vllm:num_requests_running", "vllm:num_requests_waiting"} {
		vs, err := values(name)
		if err != nil {
			return 0, 0, err
		}
		found = found || fams[name] != nil
		for _, v := range vs {
			total += v
		}
	}
	if !found {
		return 0, 0, errors.New("no vllm:num_requests_running or vllm:num_requests_waiting on the page: not vLLM's metrics")
	}
	if total > maxReportedLoad {
		return 0, 0, fmt.Errorf("%v requests running and waiting is not a load", total)
	}
	for _, name := range []string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"} {
		if fams[name] == nil {
			continue
		}
		vs, err := values(name)
		if err != nil {
			return 0, 0, err
		}
		for _, v := range vs {
			kv = max(kv, min(v, 1))
		}
		break
	}
	return int64(total), kv, nil
}
