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
			if !ok {
				s.forgetPrefix(name)
			}
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
// cell, vLLM's running + waiting requests and KV-cache usage, and for the
// admin /metrics its prefix-cache counters (recordPrefix). Pages that
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
		page, err := readLoad(ctx, client, url)
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
				c.SetReportedLoad(page.load, max(ownBefore, s.ownLoad(cellName, url)), page.kv, s.region.Now())
			}
			s.recordPrefix(ctx, cellName, page, time.Now())
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// prefixFigures is a backend's prefix-cache counters as its scraper last
// read them, and the hit ratio between its last two reads.
type prefixFigures struct {
	queries, hits float64   // tokens, the backend's own counters as read
	at            time.Time // when they were read
	ratio         float64   // hits/queries of the tokens queried between the last two reads
	hasRatio      bool      // false after one read, or when queries did not grow (idle, restarted)
}

// recordPrefix keeps the prefix-cache figures of page, read at now, for the
// backend of cellName. They live in the supervisor's memory, not in the
// backend's cell as the load does: the supervisor alone reads them (its
// admin /metrics), no worker routes on them, and the ratio needs the
// previous read, which only this backend's scraper has. After a binary
// upgrade the new supervisor has them again at its first read (the
// counters are the backend's), the ratio at its second. ctx is the
// scraper's: once it is cancelled nothing is written, so that a backend
// syncScrapers removed (forgetPrefix) leaves no entry behind.
func (s *supervisor) recordPrefix(ctx context.Context, cellName string, page loadPage, now time.Time) {
	s.prefixMu.Lock()
	defer s.prefixMu.Unlock()
	if ctx.Err() != nil {
		return
	}
	if !page.hasPrefix {
		delete(s.prefix, cellName)
		return
	}
	next := prefixFigures{queries: page.prefixQueries, hits: page.prefixHits, at: now}
	if prev, ok := s.prefix[cellName]; ok {
		// A restart resets both counters: queries then did not grow (or
		// hits fell), and the ratio is absent until the next read.
		if dq, dh := next.queries-prev.queries, next.hits-prev.hits; dq > 0 && dh >= 0 {
			// vLLM adds to both at once, but the page reads one after the
			// other: hits may run a little ahead of the queries read.
			next.ratio, next.hasRatio = min(dh/dq, 1), true
		}
	}
	if s.prefix == nil {
		s.prefix = map[string]prefixFigures{}
	}
	s.prefix[cellName] = next
}

// forgetPrefix drops the prefix-cache figures of a backend whose scraper
// was stopped (cancelled first: see recordPrefix).
func (s *supervisor) forgetPrefix(cellName string) {
	s.prefixMu.Lock()
	delete(s.prefix, cellName)
	s.prefixMu.Unlock()
}

// freshPrefix is the prefix-cache figures of a backend read within the last
// shm.StaleLoad (absent while stale, as its load is).
func (s *supervisor) freshPrefix(cellName string) (prefixFigures, bool) {
	s.prefixMu.Lock()
	p, ok := s.prefix[cellName]
	s.prefixMu.Unlock()
	return p, ok && time.Since(p.at) < shm.StaleLoad
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

// maxTokenCount is the most tokens a prefix-cache counter may claim: past
// 2^53 a float64 no longer holds every count (centuries at a million tokens
// a second), so a larger figure is a broken page.
const maxTokenCount = 1 << 53

// loadPage is what one read of a backend's /metrics gives (see parseLoad).
type loadPage struct {
	// load is vLLM's requests running plus waiting.
	load int64
	// kv is its KV-cache usage, 0–1.
	kv float64
	// prefixQueries and prefixHits are vLLM's prefix-cache counters, in
	// tokens since the server started, summed over their series; hasPrefix
	// is false when the page has none (a vLLM before v1, another server).
	prefixQueries, prefixHits float64
	hasPrefix                 bool
}

// readLoad reads a vLLM /metrics page (see parseLoad).
func readLoad(ctx context.Context, client *http.Client, url string) (loadPage, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/metrics", nil)
	if err != nil {
		return loadPage{}, err
	}
	res, err := client.Do(req)
	if err != nil {
		return loadPage{}, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return loadPage{}, fmt.Errorf("GET %s/metrics: %s", url, res.Status)
	}
	page, err := io.ReadAll(io.LimitReader(res.Body, maxMetricsPage+1))
	if err != nil {
		return loadPage{}, fmt.Errorf("GET %s/metrics: %w", url, err)
	}
	if len(page) > maxMetricsPage {
		return loadPage{}, fmt.Errorf("GET %s/metrics: the page is larger than %d MiB", url, maxMetricsPage>>20)
	}
	return parseLoad(page)
}

// prefixCounters are vLLM's prefix-cache counters (v1, in tokens, labelled
// model_name and engine: one series per engine under data parallelism),
// current names first, then the names vLLM 0.9 deprecated; the text format
// names a counter's family with its _total. vLLM v0's
// vllm:gpu_prefix_cache_hit_rate gauge is not read: a rate over the
// server's life, not counts that give one over an interval.
var prefixCounters = [][2]string{
	{"vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total"},
	{"vllm:gpu_prefix_cache_queries_total", "vllm:gpu_prefix_cache_hits_total"},
}

// parseLoad reads a vLLM /metrics page (Prometheus text format): requests
// running plus waiting, summed over their series, the KV-cache usage
// (vllm:kv_cache_usage_perc, or the older vllm:gpu_cache_usage_perc), the
// largest of its series, at most 1, and the prefix-cache queries and hits
// (prefixCounters, both present or neither used), each summed over its
// series. A page with neither request count, or with a figure that is not
// a count or a fraction (negative, NaN, infinite, absurdly large), is an
// error: its figures are not used at all.
func parseLoad(page []byte) (loadPage, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(page))
	if err != nil {
		return loadPage{}, fmt.Errorf("not a Prometheus text page: %w", err)
	}
	values := func(name string, most float64) ([]float64, error) {
		f := fams[name]
		if f == nil {
			return nil, nil
		}
		var vs []float64
		for _, m := range f.GetMetric() {
			var v float64
			switch {
			case m.GetGauge() != nil: // vLLM's load figures
				v = m.GetGauge().GetValue()
			case m.GetCounter() != nil: // its prefix-cache counts
				v = m.GetCounter().GetValue()
			default:
				v = m.GetUntyped().GetValue() // a page without # TYPE lines
			}
			if !(v >= 0 && v <= most) { // NaN fails both
				return nil, fmt.Errorf("%s: %v is not a count or a fraction", name, v)
			}
			vs = append(vs, v)
		}
		return vs, nil
	}
	sum := func(name string, most float64) (float64, error) {
		vs, err := values(name, most)
		total := 0.0
		for _, v := range vs {
			total += v
		}
		return total, err
	}
	found := false
	total := 0.0
	for _, name := range []string{"vllm:num_requests_running", "vllm:num_requests_waiting"} {
		v, err := sum(name, maxReportedLoad)
		if err != nil {
			return loadPage{}, err
		}
		found = found || fams[name] != nil
		total += v
	}
	if !found {
		return loadPage{}, errors.New("no vllm:num_requests_running or vllm:num_requests_waiting on the page: not vLLM's metrics")
	}
	if total > maxReportedLoad {
		return loadPage{}, fmt.Errorf("%v requests running and waiting is not a load", total)
	}
	p := loadPage{load: int64(total)}
	for _, name := range []string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"} {
		if fams[name] == nil {
			continue
		}
		vs, err := values(name, maxReportedLoad)
		if err != nil {
			return loadPage{}, err
		}
		for _, v := range vs {
			p.kv = max(p.kv, min(v, 1))
		}
		break
	}
	for _, names := range prefixCounters {
		if fams[names[0]] == nil || fams[names[1]] == nil {
			continue
		}
		if p.prefixQueries, err = sum(names[0], maxTokenCount); err != nil {
			return loadPage{}, err
		}
		if p.prefixHits, err = sum(names[1], maxTokenCount); err != nil {
			return loadPage{}, err
		}
		if p.prefixQueries > maxTokenCount || p.prefixHits > maxTokenCount {
			return loadPage{}, fmt.Errorf("%v prefix-cache queries and %v hits are not token counts", p.prefixQueries, p.prefixHits)
		}
		p.hasPrefix = true
		break
	}
	return p, nil
}
