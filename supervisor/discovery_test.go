package supervisor

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/shm"
)

// parseLoad sums running and waiting over a vLLM page's series, takes the
// KV usage from the current metric name or the older one, sums the
// prefix-cache counters over their series (current names, else the
// deprecated ones), and refuses a page whose figures are not counts or
// fractions.
func TestParseLoad(t *testing.T) {
	// What vLLM v1 serves with two engines (data parallel): counters are
	// named with _total in the text format, beside a _created gauge.
	const dataParallel = `# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 2.0
vllm:num_requests_running{engine="1",model_name="m"} 1.0
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="m"} 0.0
vllm:num_requests_waiting{engine="1",model_name="m"} 0.0
# HELP vllm:prefix_cache_queries_total Prefix cache queries, in terms of number of queried tokens.
# TYPE vllm:prefix_cache_queries_total counter
vllm:prefix_cache_queries_total{engine="0",model_name="m"} 1000.0
vllm:prefix_cache_queries_total{engine="1",model_name="m"} 3000.0
# HELP vllm:prefix_cache_queries_created Prefix cache queries, in terms of number of queried tokens.
# TYPE vllm:prefix_cache_queries_created gauge
vllm:prefix_cache_queries_created{engine="0",model_name="m"} 1.7e+09
vllm:prefix_cache_queries_created{engine="1",model_name="m"} 1.7e+09
# HELP vllm:prefix_cache_hits_total Prefix cache hits, in terms of number of cached tokens.
# TYPE vllm:prefix_cache_hits_total counter
vllm:prefix_cache_hits_total{engine="0",model_name="m"} 500.0
vllm:prefix_cache_hits_total{engine="1",model_name="m"} 2500.0
# HELP vllm:gpu_prefix_cache_queries_total deprecated
# TYPE vllm:gpu_prefix_cache_queries_total counter
vllm:gpu_prefix_cache_queries_total{engine="0",model_name="m"} 7.0
# TYPE vllm:gpu_prefix_cache_hits_total counter
vllm:gpu_prefix_cache_hits_total{engine="0",model_name="m"} 7.0
`
	pages := map[string]struct {
		body    string
		want    loadPage
		wantErr string // "" when the page is read
	}{
		"data parallel": {dataParallel, loadPage{load: 3, prefixQueries: 4000, prefixHits: 3000, hasPrefix: true}, ""},
		"deprecated prefix names": {`# TYPE vllm:num_requests_running gauge
vllm:num_requests_running 1
# TYPE vllm:gpu_prefix_cache_queries_total counter
vllm:gpu_prefix_cache_queries_total{engine="0"} 90
# TYPE vllm:gpu_prefix_cache_hits_total counter
vllm:gpu_prefix_cache_hits_total{engine="0"} 30
`, loadPage{load: 1, prefixQueries: 90, prefixHits: 30, hasPrefix: true}, ""},
		"prefix queries without hits": {"vllm:num_requests_running 1\nvllm:prefix_cache_queries_total 5\n", loadPage{load: 1}, ""},
		"untyped prefix counters": {"vllm:num_requests_running 0\nvllm:prefix_cache_queries_total 0\nvllm:prefix_cache_hits_total 0\n",
			loadPage{hasPrefix: true}, ""},
		"negative prefix counter": {"vllm:num_requests_running 0\nvllm:prefix_cache_queries_total 5\nvllm:prefix_cache_hits_total -1\n",
			loadPage{}, "is not a count"},
		"NaN prefix counter": {"vllm:num_requests_running 0\nvllm:prefix_cache_queries_total NaN\nvllm:prefix_cache_hits_total 0\n",
			loadPage{}, "is not a count"},
		"absurd prefix counter": {"vllm:num_requests_running 0\nvllm:prefix_cache_queries_total 1e300\nvllm:prefix_cache_hits_total 0\n",
			loadPage{}, "is not a count"},
		"absurd prefix sum": {`vllm:num_requests_running 0
vllm:prefix_cache_queries_total{engine="0"} 6e15
vllm:prefix_cache_queries_total{engine="1"} 6e15
vllm:prefix_cache_hits_total 0
`, loadPage{}, "are not token counts"},
		"a billion tokens is a count, not an absurd load": {"vllm:num_requests_running 0\nvllm:prefix_cache_queries_total 3e12\nvllm:prefix_cache_hits_total 2e12\n",
			loadPage{prefixQueries: 3e12, prefixHits: 2e12, hasPrefix: true}, ""},
		"current": {`# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="a"} 3
vllm:num_requests_running{model_name="b"} 2
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{model_name="a"} 4
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{model_name="a"} 0.5
`, loadPage{load: 9, kv: 0.5}, ""},
		"older": {`# TYPE vllm:num_requests_running gauge
vllm:num_requests_running 1
# TYPE vllm:gpu_cache_usage_perc gauge
vllm:gpu_cache_usage_perc 0.85
`, loadPage{load: 1, kv: 0.85}, ""},
		"untyped":                  {"vllm:num_requests_running 2\nvllm:num_requests_waiting 5\nvllm:kv_cache_usage_perc 0.25\n", loadPage{load: 7, kv: 0.25}, ""},
		"kv above 1 reads as full": {"vllm:num_requests_running 0\nvllm:kv_cache_usage_perc 3\n", loadPage{kv: 1}, ""},
		"not vllm":                 {"# TYPE up gauge\nup 1\n", loadPage{}, "not vLLM's metrics"},
		"garbage":                  {"{{{", loadPage{}, "not a Prometheus text page"},
		"negative":                 {"vllm:num_requests_running -4\n", loadPage{}, "is not a count"},
		"NaN":                      {"vllm:num_requests_waiting NaN\n", loadPage{}, "is not a count"},
		"infinite":                 {"vllm:num_requests_running +Inf\n", loadPage{}, "is not a count"},
		"absurd":                   {"vllm:num_requests_running 1e300\n", loadPage{}, "is not a count"},
		"absurd in sum": {`vllm:num_requests_running{a="1"} 6e8
vllm:num_requests_running{a="2"} 6e8
`, loadPage{}, "is not a load"},
		"NaN KV": {"vllm:num_requests_running 1\nvllm:kv_cache_usage_perc NaN\n", loadPage{}, "is not a count or a fraction"},
	}
	for name, p := range pages {
		t.Run(name, func(t *testing.T) {
			got, err := parseLoad([]byte(p.body))
			switch {
			case p.wantErr == "" && err != nil:
				t.Fatalf("parseLoad: %v", err)
			case p.wantErr != "" && (err == nil || !strings.Contains(err.Error(), p.wantErr)):
				t.Fatalf("parseLoad error = %v; want one that says %q", err, p.wantErr)
			case got != p.want:
				t.Errorf("parseLoad = %+v; want %+v", got, p.want)
			}
		})
	}
}

// readLoad fetches the page and refuses what is not the backend's own
// page in full: an error status, a redirect (not followed), a page past
// maxMetricsPage.
func TestReadLoad(t *testing.T) {
	const page = "vllm:num_requests_running 3\nvllm:kv_cache_usage_perc 0.5\n"
	target := httptest.NewServer( // what the redirect points at: a readable page
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(page))
		}))
	defer target.Close()
	big := "# " + strings.Repeat("x", 1<<20) + "\n" // a comment line of 1 MiB
	cases := map[string]struct {
		handler http.HandlerFunc
		load    int64
		wantErr string
	}{
		"page": {func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(page)) }, 3, ""},
		"large but within the bound": {func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(strings.Repeat(big, maxMetricsPage>>20-1) + page))
		}, 3, ""},
		"past the bound": {func(w http.ResponseWriter, r *http.Request) {
			for range maxMetricsPage>>20 + 1 {
				if _, err := w.Write([]byte(big)); err != nil {
					return
				}
			}
			w.Write([]byte(page))
		}, 0, "larger than 8 MiB"},
		"error status": {func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "no", http.StatusServiceUnavailable)
		}, 0, "503"},
		"redirect": {func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL+"/metrics", http.StatusFound)
		}, 0, "302"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(c.handler)
			defer srv.Close()
			client := scrapeClient(5 * time.Second)
			got, err := readLoad(context.Background(), client, srv.URL)
			load := got.load
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatalf("readLoad: %v", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Fatalf("readLoad error = %v; want one that says %q", err, c.wantErr)
			case load != c.load:
				t.Errorf("readLoad = %d; want %d", load, c.load)
			}
		})
	}
}

// FuzzParseLoad: any page either fails or gives a load and a KV usage the
// router can use as they are (a count, a fraction), and prefix-cache
// counts that are token counts (or none).
func FuzzParseLoad(f *testing.F) {
	f.Add([]byte("vllm:num_requests_running{model_name=\"a\"} 3\nvllm:num_requests_waiting 4\nvllm:kv_cache_usage_perc 0.5\n"))
	f.Add([]byte("# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 1\n# TYPE vllm:gpu_cache_usage_perc gauge\nvllm:gpu_cache_usage_perc 0.85\n"))
	f.Add([]byte("vllm:num_requests_running NaN\n"))
	f.Add([]byte("vllm:num_requests_running 1e300\nvllm:num_requests_waiting -1\n"))
	f.Add([]byte("# HELP x y\n# TYPE vllm:num_requests_running histogram\nvllm:num_requests_running_bucket{le=\"1\"} 2\n"))
	f.Add([]byte("# TYPE vllm:prefix_cache_queries_total counter\nvllm:prefix_cache_queries_total{engine=\"0\"} 100.0\n" +
		"vllm:prefix_cache_queries_total{engine=\"1\"} 50.0\n# TYPE vllm:prefix_cache_hits_total counter\n" +
		"vllm:prefix_cache_hits_total{engine=\"0\"} 80.0\nvllm:num_requests_running 1\n"))
	f.Add([]byte("vllm:num_requests_running 0\nvllm:gpu_prefix_cache_queries_total 9e15\nvllm:gpu_prefix_cache_hits_total NaN\n"))
	f.Add([]byte("# TYPE vllm:prefix_cache_queries counter\nvllm:prefix_cache_queries_total 1\nvllm:prefix_cache_hits_total 1\nvllm:num_requests_waiting 0\n"))
	f.Fuzz(func(t *testing.T, page []byte) {
		p, err := parseLoad(bytes.Clone(page))
		if err != nil {
			if p != (loadPage{}) {
				t.Fatalf("failed page gave %+v", p)
			}
			return
		}
		if p.load < 0 || p.load > maxReportedLoad {
			t.Fatalf("load %d out of range", p.load)
		}
		if math.IsNaN(p.kv) || p.kv < 0 || p.kv > 1 {
			t.Fatalf("kv %v out of range", p.kv)
		}
		for _, v := range []float64{p.prefixQueries, p.prefixHits} {
			if !(v >= 0 && v <= maxTokenCount) {
				t.Fatalf("prefix-cache count %v out of range", v)
			}
		}
		if !p.hasPrefix && (p.prefixQueries != 0 || p.prefixHits != 0) {
			t.Fatalf("prefix-cache counts %+v from a page without them", p)
		}
	})
}

// cellName is the backend cell the scrape tests read into.
const cellName = "backend test"

// regionWithCell is a private region of two columns with one cell, name.
func regionWithCell(t *testing.T, name string) (*shm.Region, *shm.Cell) {
	t.Helper()
	region, err := shm.Create(4, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { region.Close() })
	cell, err := region.Alloc(name)
	if err != nil {
		t.Fatal(err)
	}
	return region, cell
}

// scrape says once that a backend's page cannot be read, however many
// intervals that lasts, says when it can be read again, and records the
// load in the backend's cell only from a good page.
func TestScrapeLogsChangesOnly(t *testing.T) {
	region, cell := regionWithCell(t, cellName)
	var (
		mu    sync.Mutex
		good  bool
		calls int
		seen  = make(chan int, 100)
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n, ok := calls, good
		mu.Unlock()
		if ok {
			w.Write([]byte("vllm:num_requests_running 7\n"))
		} else {
			w.Write([]byte("vllm:num_requests_running NaN\n"))
		}
		seen <- n
	}))
	defer srv.Close()
	var logs bytes.Buffer // read once the scraper has returned
	s := &supervisor{log: slog.New(slog.NewTextHandler(&logs, nil)), region: region}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.scrape(ctx, cellName, srv.URL, 10*time.Millisecond, scrapeClient(30*time.Second))
	}()
	defer func() { cancel(); <-done }()

	awaitCalls := func(n int) {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			select {
			case c := <-seen:
				if c >= n {
					return
				}
			case <-deadline:
				t.Fatalf("the scraper read the page fewer than %d times in 30 s", n)
			}
		}
	}
	// ReportedLoad at time 0 returns whatever was ever recorded, however
	// long ago: this test must not depend on how fast a loaded machine runs.
	awaitCalls(5) // five bad pages
	if _, _, recorded := cell.ReportedLoad(0); recorded {
		t.Fatal("a bad page's load was recorded")
	}
	mu.Lock()
	good = true
	mu.Unlock()
	awaitCalls(10) // and some good ones
	cancel()
	<-done
	load, _, recorded := cell.ReportedLoad(0)
	if !recorded || load != 7 {
		t.Errorf("cell holds load %d (recorded %v), want 7 from the good page", load, recorded)
	}
	out := logs.String()
	if n := strings.Count(out, "cannot read a backend's load"); n != 1 {
		t.Errorf("the failure was logged %d times, want once:\n%s", n, out)
	}
	if n := strings.Count(out, "reading a backend's load from its /metrics again"); n != 1 {
		t.Errorf("the recovery was logged %d times, want once:\n%s", n, out)
	}
	if !strings.Contains(out, "NaN is not a count") {
		t.Errorf("the log does not say what was wrong with the page:\n%s", out)
	}
}

// The scraper takes the gateway's own requests off the backend's count:
// with 3 of its own in flight and a page saying 5, others hold 2, so once
// those 3 end the backend counts as 2 busy, not 5 (issue 18 item 9: the
// whole figure kept newcomers queued behind free slots until the next read).
func TestScrapeTakesOffOwnRequests(t *testing.T) {
	region, cell := regionWithCell(t, cellName)
	cell.Add(0, 2)
	cell.Add(1, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("vllm:num_requests_running 4\nvllm:num_requests_waiting 1\n"))
	}))
	defer srv.Close()
	s := &supervisor{log: slog.New(slog.NewTextHandler(io.Discard, nil)), region: region}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.scrape(ctx, cellName, srv.URL, time.Hour, scrapeClient(30*time.Second))
	}()
	defer func() { cancel(); <-done }()
	end := time.Now().Add(30 * time.Second)
	for {
		if _, _, recorded := cell.ReportedLoad(0); recorded {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the scraper recorded nothing in 30 s")
		}
		time.Sleep(time.Millisecond)
	}
	load, _, _ := cell.ReportedLoad(0)
	others, _, _ := cell.OthersLoad(0)
	if load != 5 || others != 2 {
		t.Fatalf("reported %d, others %d; want 5 and 2 (3 of the 5 are the gateway's own)", load, others)
	}
}

// A server listed under two models: the page counts the gateway's requests
// under both, and both are taken off.
func TestScrapeTakesOffOwnRequestsOfEveryModel(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("vllm:num_requests_running 5\n"))
	}))
	defer srv.Close()
	cfg := &config.Config{Models: []config.Model{
		{Name: "a", Backends: []config.Backend{{URL: srv.URL, Slots: 8}}},
		{Name: "b", Backends: []config.Backend{{URL: srv.URL + "/", Slots: 8}, {URL: "http://elsewhere:1", Slots: 8}}},
	}}
	region, err := shm.Create(8, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer region.Close()
	cells := map[string]*shm.Cell{}
	for _, name := range []string{shm.BackendCell("a", srv.URL), shm.BackendCell("b", srv.URL+"/"), shm.BackendCell("b", "http://elsewhere:1")} {
		if cells[name], err = region.Alloc(name); err != nil {
			t.Fatal(err)
		}
	}
	cells[shm.BackendCell("a", srv.URL)].Add(0, 2)
	cells[shm.BackendCell("b", srv.URL+"/")].Add(1, 1)
	cells[shm.BackendCell("b", "http://elsewhere:1")].Add(1, 4) // another server's: not counted
	s := &supervisor{log: slog.New(slog.NewTextHandler(io.Discard, nil)), region: region, cfg: cfg}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	name := shm.BackendCell("a", srv.URL)
	go func() {
		defer close(done)
		s.scrape(ctx, name, srv.URL, time.Hour, scrapeClient(30*time.Second))
	}()
	defer func() { cancel(); <-done }()
	end := time.Now().Add(30 * time.Second)
	for {
		if _, _, recorded := cells[name].ReportedLoad(0); recorded {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the scraper recorded nothing in 30 s")
		}
		time.Sleep(time.Millisecond)
	}
	if others, _, _ := cells[name].OthersLoad(0); others != 2 {
		t.Fatalf("others %d, want 2 (3 of the 5 are the gateway's: 2 under a, 1 under b)", others)
	}
}
