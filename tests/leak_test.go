package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// workerCounts is what a worker holds that a leak makes grow: its open
// file descriptors (/proc/PID/fd) and its goroutines
// (sluice_worker_goroutines, by worker slot).
type workerCounts struct {
	fds        map[int]int    // by pid
	goroutines map[string]int // by worker slot
}

func (c workerCounts) String() string {
	var parts []string
	for _, pid := range slices.Sorted(maps.Keys(c.fds)) {
		parts = append(parts, fmt.Sprintf("pid %d: %d fds", pid, c.fds[pid]))
	}
	for _, s := range slices.Sorted(maps.Keys(c.goroutines)) {
		parts = append(parts, fmt.Sprintf("worker %s: %d goroutines", s, c.goroutines[s]))
	}
	return strings.Join(parts, ", ")
}

// counts reads every worker's fds and goroutines now.
func (g *gateway) counts() workerCounts {
	g.t.Helper()
	c := workerCounts{fds: map[int]int{}, goroutines: map[string]int{}}
	for _, pid := range g.workerPIDs() {
		entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		if err != nil {
			g.t.Fatalf("worker %d: %v", pid, err)
		}
		c.fds[pid] = len(entries)
	}
	if fam := g.metricFamilies()["sluice_worker_goroutines"]; fam != nil {
		for _, m := range fam.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "worker" {
					c.goroutines[lp.GetValue()] = int(m.GetGauge().GetValue())
				}
			}
		}
	}
	return c
}

// leakSlack is how far above its baseline a worker's fd or goroutine count
// may settle: room for a health check's connection caught mid-round. The
// leaks this guards against grow by one or two per request, over hundreds.
const leakSlack = 3

// awaitSettled waits until every worker of base is back within leakSlack of
// its fds and goroutines there, and returns the counts it settled at. The
// same workers must still run (a restart would hide a leak).
func (g *gateway) awaitSettled(base workerCounts, what string) workerCounts {
	g.t.Helper()
	var now workerCounts
	end := time.Now().Add(2 * deadline)
	for {
		now = g.counts()
		ok := len(now.fds) == len(base.fds) && len(now.goroutines) == len(base.goroutines)
		for pid, n := range base.fds {
			m, found := now.fds[pid]
			if !found {
				g.t.Fatalf("%s: worker %d is gone (now %v)", what, pid, now)
			}
			ok = ok && m <= n+leakSlack
		}
		for s, n := range base.goroutines {
			ok = ok && now.goroutines[s] <= n+leakSlack
		}
		if ok {
			return now
		}
		if time.Now().After(end) {
			g.t.Fatalf("%s: workers did not come back to their baseline\nbaseline %v\nnow      %v", what, base, now)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// awaitQuiet waits until the workers' counts hold still (the same in two
// readings more than a publishing interval apart) and returns them: a
// baseline taken while the last requests wind down would be too high.
func (g *gateway) awaitQuiet(workers int) workerCounts {
	g.t.Helper()
	last := g.awaitCounts(workers)
	var c workerCounts
	await(g.t, "the workers' counts to hold still", func() bool {
		time.Sleep(time.Second) // twice the publishing interval: a new reading
		c = g.counts()
		same := c.String() == last.String()
		last = c
		return same
	})
	return c
}

// awaitCounts waits until every worker publishes its goroutine count.
func (g *gateway) awaitCounts(workers int) workerCounts {
	g.t.Helper()
	var c workerCounts
	await(g.t, "every worker's goroutine count in /metrics", func() bool {
		c = g.counts()
		return len(c.goroutines) == workers && len(c.fds) == workers
	})
	return c
}

// failCase is one way a backend breaks, as the fake does it on request.
type failCase struct {
	name      string
	header    map[string]string // what makes the fake fail this way
	wholeOnly bool              // not asked as a stream
}

// failCases is every failure the fake backend can produce: connection
// refused (a backend that went away after its health check passed), each
// X-Fake-Fail mode, and a head slower than every timeout.
func failCases() []failCase {
	cases := []failCase{{name: "refused"}, {name: "slow-head", header: map[string]string{"X-Fake-Delay-Ms": "4000"}},
		// A whole answer past 1 MiB, relayed as it arrives, cut after 1.2 MB
		// of its 1.6 MB (with a Content-Length, and chunked).
		{name: "large-cut", header: map[string]string{"X-Fake-Tokens": "400000", "X-Fake-Break-After": "1200000"}, wholeOnly: true},
		{name: "large-cut-chunked", header: map[string]string{"X-Fake-Tokens": "400000", "X-Fake-Break-After": "1200000", "X-Fake-Chunked": "1"}, wholeOnly: true},
	}
	for _, mode := range fakevllm.FailModes {
		cases = append(cases, failCase{name: mode, header: map[string]string{"X-Fake-Fail": mode}})
	}
	return cases
}

// leakModels renders a model entry per failure case, with and without
// first_token_deadline, each on its own backends (of urls, or of dead for
// "refused"): a backend a failure ejects is then out of rotation for its
// own model only. Three backends and the default two retries: a failing
// request tries each once.
func leakModels(cases []failCase, urls, dead []string) string {
	var b strings.Builder
	for _, c := range cases {
		for _, ft := range []bool{false, true} {
			name, backends, health := c.name, urls, ""
			if ft {
				name += "-ft"
			}
			if c.name == "refused" {
				// Not checked again after the first round: the backends
				// close their ports after it, and must stay in rotation.
				backends, health = dead, "\n    health: {interval: 1h}"
			}
			fmt.Fprintf(&b, "  - name: %s\n    affinity: none\n    load_interval: 0s%s\n    timeouts: {connect: 1s, stream_idle: 1s, total: 2s", name, health)
			if ft {
				b.WriteString(", first_token_deadline: 300ms")
			}
			b.WriteString("}\n    backends:\n")
			for _, u := range backends {
				fmt.Fprintf(&b, "      - url: %s\n        slots: 64\n", u)
			}
		}
	}
	return b.String()
}

// leakConfig is a two-worker gateway with model "ok" on a healthy backend
// and the models of leakModels. Request bodies past 1 KiB go to temporary
// files in spillDir (a file per request, open until its response starts).
func leakConfig(usage, spillDir, ok, models string) string {
	return fmt.Sprintf(`listen: 127.0.0.1:0
admin: 127.0.0.1:0
workers: 2
pin_cpus: true
shutdown_timeout: 5s
usage_log: %s
body_memory: 1KiB
body_temp_dir: %s
keys:
  - name: all
    sha256: %s
    models: ["*"]
models:
  - name: ok
    load_interval: 0s
    backends:
      - url: %s
        slots: 64
%s`, usage, spillDir, sha(keyAll), ok, models)
}

// leakPrompt makes a request body large enough to go to a temporary file
// (leakConfig's body_memory), and not read with the request's head.
var leakPrompt = strings.Repeat("does anything leak? ", 64<<10/20)

// leakRequest sends one request of model on a connection of its own
// (closed after it), reads the answer to its end, and returns its status.
// With leave above 0 the client gives up that long after it wrote the
// whole request (status 0). Counted from the write, not from the start: a
// client slowed down (-race, a loaded CI machine) could otherwise give up
// before the gateway had its request, and a request the gateway never got
// has no usage line to wait for.
func leakRequest(t *testing.T, g *gateway, model string, stream bool, hdr map[string]string, leave time.Duration) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if leave > 0 {
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
			WroteRequest: func(httptrace.WroteRequestInfo) { time.AfterFunc(leave, cancel) },
		})
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.URL+"/v1/chat/completions", bytes.NewReader(chatBody(model, stream, leakPrompt)))
	req.Header.Set("Authorization", "Bearer "+keyAll)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := freshClient().Do(req)
	if err != nil {
		if leave == 0 {
			t.Errorf("%s (stream %v): %v", model, stream, err)
		}
		return 0
	}
	io.Copy(io.Discard, res.Body) //nolint:errcheck // a cut answer is one of the cases
	res.Body.Close()
	return res.StatusCode
}

// No failure of a backend leaves anything behind in a worker: every way
// the fake can break an exchange (refused, reset before and after the
// head, head then close, head then silence, a slow head past every timeout,
// a head that is not HTTP, broken chunking, a close mid-answer), streamed
// and whole (also past 1 MiB, relayed as it arrives), with and without
// first_token_deadline, several times each over both workers, and clients
// that leave while the backend stalls or mid-stream, every request body in
// a temporary file (body_memory); afterwards every worker's file descriptors and
// goroutines come back to where they were before.
//
// Fails on the code before the fix: with first_token_deadline, a stream
// whose backend sent its head and then closed, reset or broke its chunking
// kept its connection open (one fd per request).
func TestNoLeakOnFailurePaths(t *testing.T) {
	ok := startBackend(t, fakevllm.Options{Tokens: 3})
	var urls, dead []string
	var deadServers []*fakevllm.Server
	for i := 0; i < 3; i++ {
		urls = append(urls, startBackend(t, fakevllm.Options{Tokens: 3}).URL())
		d := startBackend(t, fakevllm.Options{Tokens: 3})
		deadServers = append(deadServers, d)
		dead = append(dead, d.URL())
	}
	cases := failCases()
	usage := filepath.Join(t.TempDir(), "usage.log")
	g := startGateway(t, leakConfig(usage, t.TempDir(), ok.URL(), leakModels(cases, urls, dead)))
	g.UsageLog = usage
	for _, d := range deadServers {
		d.Close() // from now on its port refuses connections
	}

	// Warm up: what a worker makes once (its first connections, pools,
	// buffers) is part of the baseline, not a leak.
	for i := 0; i < 4; i++ {
		leakRequest(t, g, "ok", i%2 == 0, nil, 0)
	}
	base := g.awaitQuiet(2)
	t.Logf("baseline: %v", base)

	const perCase = 4 // per model, streamed and whole: over both workers
	type job struct {
		model  string
		stream bool
		hdr    map[string]string
		leave  time.Duration // the client gives up after this long
	}
	var jobs []job
	for _, c := range cases {
		for _, suffix := range []string{"", "-ft"} {
			for i := 0; i < perCase; i++ {
				jobs = append(jobs, job{c.name + suffix, false, c.header, 0})
				if !c.wholeOnly {
					jobs = append(jobs, job{c.name + suffix, true, c.header, 0})
				}
			}
			if c.name == "slow-head" || c.name == "silent-after-head" {
				// And a client that leaves while the backend keeps it waiting
				// (before and after first_token_deadline's retry).
				for _, leave := range []time.Duration{100 * time.Millisecond, 500 * time.Millisecond} {
					jobs = append(jobs, job{c.name + suffix, false, c.header, leave}, job{c.name + suffix, true, c.header, leave})
				}
			}
		}
	}
	// Clients that leave mid-answer, from a backend that does not fail.
	slow := map[string]string{"X-Fake-Tokens": "20", "X-Fake-Interval-Ms": "100", "X-Fake-Delay-Ms": "100"}
	for i := 0; i < perCase; i++ {
		jobs = append(jobs, job{"ok", true, slow, 400 * time.Millisecond}, job{"ok", false, slow, 50 * time.Millisecond})
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[string]map[int]int{}
	sem := make(chan struct{}, 16)
	for _, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			code := leakRequest(t, g, j.model, j.stream, j.hdr, j.leave)
			key := j.model + map[bool]string{true: " stream", false: " whole"}[j.stream]
			if j.leave > 0 {
				key += " left"
			}
			mu.Lock()
			if statuses[key] == nil {
				statuses[key] = map[int]int{}
			}
			statuses[key][code]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	peak := g.counts()
	t.Logf("right after %d failing requests: %v", len(jobs), peak)

	// Each failure was met for real, not only answered from an ejection.
	wantLines := map[string]int{"ok": 4} // the warm-up's and one per job
	for _, j := range jobs {
		wantLines[j.model]++
	}
	awaitUsageLines(t, g, wantLines)
	reached := map[string]int{}
	attempts := 0
	for _, l := range g.usageLines() {
		if l["model"] == "ok" {
			continue // the warm-up and the clients that left
		}
		if n, _ := l["attempts"].(float64); n > 0 {
			reached[l["model"].(string)]++
			attempts += int(n)
		}
	}
	for _, c := range cases {
		for _, suffix := range []string{"", "-ft"} {
			if reached[c.name+suffix] == 0 {
				t.Errorf("no request of %s reached a backend: %v", c.name+suffix, statuses)
			}
		}
	}
	t.Logf("%d failing attempts on backends; statuses %v", attempts, statuses)

	if os.Getenv("SLUICE_TEST_LEAK_LINES") != "" {
		for _, l := range g.usageLines() {
			t.Logf("%v %v %v %v %v %v", l["model"], l["stream"], l["status"], l["error"], l["attempts"], l["duration_ms"])
		}
	}
	if n, _ := g.metric("sluice_request_bodies_spilled_total", nil); n < float64(len(jobs)) {
		t.Errorf("%v request bodies went to temporary files; want every one of the %d", n, len(jobs))
	}
	settled := g.awaitSettled(base, "after the failures")
	t.Logf("settled: %v", settled)
	for _, s := range []string{"0", "1"} {
		if _, ok := settled.goroutines[s]; !ok {
			t.Fatalf("no goroutine count for worker %s", s)
		}
	}
}

// soakTraffic runs moderate traffic until stop: a loop of streams of model
// "m" and two loops of small whole answers of "m-alias", each request on a
// connection of its own; sentNow says how many were sent so far, and stop
// how many were sent and failed. Few loops, so that the connections the
// backends' pools keep (as many as ran at once in a worker, until they
// expire after 90 s) cannot differ much between two runs.
func soakTraffic(t *testing.T, g *gateway) (sentNow func() int64, stop func() (sent, failed int64)) {
	var sentN, failedN atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := freshClient()
			model, stream := "m-alias", false
			if w == 0 {
				model, stream = "m", true
			}
			for {
				select {
				case <-done:
					return
				default:
				}
				req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/chat/completions", bytes.NewReader(chatBody(model, stream, "soak")))
				req.Header.Set("Authorization", "Bearer "+keyAll)
				res, err := client.Do(req)
				sentN.Add(1)
				if err == nil {
					_, err = io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if err == nil && res.StatusCode != 200 {
						err = fmt.Errorf("%s", res.Status)
					}
				}
				if err != nil {
					failedN.Add(1)
					t.Errorf("soak request: %v", err)
				}
				time.Sleep(3 * time.Millisecond) // pacing, not synchronisation: moderate traffic, not flat out
			}
		}()
	}
	var once sync.Once
	stop = func() (int64, int64) {
		once.Do(func() { close(done); wg.Wait() })
		return sentN.Load(), failedN.Load()
	}
	t.Cleanup(func() { stop() })
	return sentN.Load, stop
}

// Reloads leave nothing behind: the same traffic, first without reloads
// (the baseline, once idle), then with reloads one after another, each
// followed by traffic on its new table, that add and remove a backend, a
// model, and change a model's connect timeout (new pools) and health
// interval; once idle again every worker is back within leakSlack of the
// baseline's fds and goroutines.
//
// Fails on the code before the fix: each reload left every worker a health
// checker's HTTP client with a kept connection (two goroutines and an fd
// per backend) that nothing closed. Nine reloads leave at least nine fds and
// eighteen goroutines more per worker, far past leakSlack.
func TestReloadSoakNoLeak(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 4, Interval: 10 * time.Millisecond})
	other := startBackend(t, fakevllm.Options{Tokens: 1})
	base := baseConfig(be.URL(), "off", "")
	variants := []string{
		withBackend(base, other.URL()), // a backend comes (new cell, health-checked before the swap)
		base,                           // and goes (its pool closed once no request uses it)
		strings.Replace(withBackend(base, other.URL()), "  - name: m-alias\n", // new pools for m-alias
			"  - name: m-alias\n    timeouts: {connect: 3s}\n    health: {interval: 1s}\n", 1),
		base + "  - name: m-extra\n    backends:\n      - url: " + other.URL() + "\n        slots: 4\n", // a model comes
	}
	g := startGateway(t, base)
	g.awaitCounts(2)

	// As much traffic without reloads as with them (60 a table, eight
	// tables, and the last reload's): the pools then reach the same number
	// of kept connections.
	// Counted in requests rather than timed: a loaded machine sends fewer
	// in a given time, and a table must carry traffic before the next.
	const (
		reloads  = 2*4 + 1 // every variant twice, then back to base
		perTable = 60      // requests sent on a new table before the next reload
	)
	sentNow, stop := soakTraffic(t, g)
	await(t, "the traffic without reloads", func() bool { return sentNow() >= reloads*perTable })
	sent, failed := stop()
	before := g.awaitQuiet(2)
	t.Logf("without reloads: %d requests (%d failed); idle after: %v", sent, failed, before)

	sentNow, stop = soakTraffic(t, g)
	for i := range reloads - 1 {
		g.reloadWith(variants[i%len(variants)])
		n := sentNow()
		await(t, "traffic on the new table", func() bool { return sentNow() >= n+perTable })
	}
	g.reloadWith(base) // back to where it began
	sent, failed = stop()
	peak := g.counts()
	t.Logf("with %d reloads: %d requests (%d failed); right after: %v", reloads, sent, failed, peak)
	after := g.awaitSettled(before, fmt.Sprintf("idle after %d reloads", reloads))
	t.Logf("idle after the reloads: %v", after)
}

// awaitUsageLines waits until the usage log holds want[model] lines of
// each model; on timeout it says which are missing or extra, and which
// lines are not JSON, so a failure names the path that lost (or doubled)
// one.
func awaitUsageLines(t *testing.T, g *gateway, want map[string]int) {
	t.Helper()
	total := 0
	for _, n := range want {
		total += n
	}
	end := time.Now().Add(deadline)
	for {
		lines := g.usageLines()
		if len(lines) == total {
			return
		}
		if time.Now().After(end) {
			diff := map[string]int{} // lines written minus lines expected
			for model, n := range want {
				diff[model] -= n
			}
			for _, l := range lines {
				diff[fmt.Sprint(l["model"])]++
			}
			maps.DeleteFunc(diff, func(_ string, n int) bool { return n == 0 })
			var bad []string // lines usageLines could not parse
			data, _ := os.ReadFile(g.UsageLog)
			for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				if !json.Valid([]byte(l)) {
					bad = append(bad, l)
				}
			}
			t.Fatalf("timed out after %v waiting for every usage line: %d of %d; written minus expected, by model: %v; lines that are not JSON: %q", deadline, len(lines), total, diff, bad)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
