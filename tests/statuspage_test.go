package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// evilKey is a key name that would be markup if the status page did not
// escape what comes from the configuration.
const evilKey = `<img src=x onerror=alert(1)>&"q`

// The status page in a real browser, under load: two streams hold both of
// m's slots, three requests wait in its queue, and the backend reports a
// load, a KV-cache usage and prefix-cache counters. Headless Chromium loads
// /ui, its script polls /status/live, and every figure the page then shows
// must be the one /metrics gives at the same (steady) moment.
//
// Set SLUICE_STATUS_SCREENSHOT to a path to also save a screenshot of the
// page there (docs/img/status-page.png is made so; see docs/operations.md).
func TestStatusPageInChromium(t *testing.T) {
	chromium := findChromium(t)
	be := startBackend(t, fakevllm.Options{Tokens: 3})
	be.SetKVUsage(0.42)
	be.SetPrefixCache(2600, 4100)
	usage := t.TempDir() + "/usage.log"
	cfg := slotsConfig(be.URL(), usage, 2, "{max: 10, timeout: 60s}")
	cfg = strings.Replace(cfg, `models: ["m"]`, `models: ["m"]`+"\n    max_concurrent: 4\n    requests_per_minute: 6\n    quotas: {day: 1000000}", 1)
	// One more key, in the keys section (before the models').
	cfg = strings.Replace(cfg, "models:\n  - name: m\n", fmt.Sprintf("  - name: '%s'\n    sha256: %s\n    models: [\"*\"]\n    tokens_per_minute: 100000\n",
		evilKey, sha("sk-test-evil"))+"models:\n  - name: m\n", 1)
	g := startGateway(t, cfg)
	g.UsageLog = usage

	// A worker killed and restarted, and a reload that failed: the page
	// shows both as /metrics counts them.
	if err := syscall.Kill(g.workerPIDs()[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	await(t, "the killed worker's replacement", func() bool {
		restarts, _ := g.metric("sluice_worker_restarts_total", nil)
		ready, _ := g.metric("sluice_workers_ready", nil)
		return restarts == 1 && ready == 2
	})
	if err := os.WriteFile(g.Config, []byte("models: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := g.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	await(t, "the failed reload", func() bool {
		failed, _ := g.metric("sluice_config_reloads_total", map[string]string{"result": "error"})
		return failed == 1
	})

	// Load: 2 streams of "limited" on both slots, then 1 of "limited" and 2
	// of "all" waiting in the queue. limited holds 3 of its 4 places and has
	// spent 3 of its 6 requests a minute.
	var ends []<-chan outcome
	for i := range 2 {
		ends = append(ends, launchKey(t, g, keyLimited, "page", "held "+itoa(i)))
	}
	awaitGauges(t, g, be, 0, 2)
	ends = append(ends, launchKey(t, g, keyLimited, "page", "queued"))
	for i := range 2 {
		ends = append(ends, launchKey(t, g, keyAll, "page", "queued "+itoa(i)))
	}
	awaitGauges(t, g, be, 3, 2, ends...)
	t.Cleanup(func() {
		be.Release("page")
		for _, e := range ends {
			<-e
		}
	})
	backend := map[string]string{"model": "m", "backend": be.URL()}
	await(t, "the backend's load, KV-cache usage and prefix-cache counters in /metrics", func() bool {
		load, ok1 := g.metric("sluice_backend_reported_load", backend)
		_, ok2 := g.metric("sluice_backend_prefix_cache_hits_total", backend)
		return ok1 && ok2 && load == 2
	})

	dom := chromiumDOM(t, chromium, g.AdminURL+"/ui")
	fams := g.metricFamilies()
	want := func(name string, labels map[string]string) (float64, bool) {
		t.Helper()
		return familyValue(fams[name], labels)
	}

	if !regexp.MustCompile(`<body[^>]* data-state="live"`).MatchString(dom) {
		t.Fatalf("the page's script did not show live figures: %s", excerpt(dom, "<body"))
	}
	if m := regexp.MustCompile(`data-polls="(\d+)"`).FindStringSubmatch(dom); m == nil || m[1] == "0" {
		t.Fatalf("the page's script never polled /status/live: %v", m)
	}
	if strings.Contains(dom, "<img") || !strings.Contains(dom, "&lt;img src=x onerror=alert(1)&gt;&amp;") {
		t.Errorf("the key name %q is not shown as text: %s", evilKey, excerpt(dom, "onerror"))
	}

	// The header's figures.
	head := domFigures(dom, "b")
	for f, metric := range map[string]string{"generation": "sluice_config_generation", "workers_ready": "sluice_workers_ready",
		"workers": "sluice_workers", "worker_restarts": "sluice_worker_restarts_total"} {
		v, _ := want(metric, nil)
		checkFigure(t, "header "+f, head[f], v, strconv.FormatFloat(v, 'f', 0, 64))
	}
	for f, result := range map[string]string{"reloads_ok": "ok", "reloads_failed": "error"} {
		v, _ := want("sluice_config_reloads_total", map[string]string{"result": result})
		checkFigure(t, "header "+f, head[f], v, strconv.FormatFloat(v, 'f', 0, 64))
	}
	if lr := head["last_reload"].text; !strings.HasPrefix(lr, "failed: ") || !strings.Contains(lr, "sluice.yaml") {
		t.Errorf("last reload shown as %q; want the failure and its reason", lr)
	}

	// The backend's row.
	rows := domRows(t, dom, "backends")
	row := rows["m|"+be.URL()]
	if row == nil {
		t.Fatalf("no row for backend m|%s; rows: %v", be.URL(), rows)
	}
	for f, metric := range map[string]string{"inflight": "sluice_backend_inflight", "slots": "sluice_backend_slots",
		"reported_load": "sluice_backend_reported_load", "prefix_cache_hits": "sluice_backend_prefix_cache_hits_total",
		"prefix_cache_queries": "sluice_backend_prefix_cache_queries_total", "attempts": "sluice_backend_attempts_total",
		"ejections": "sluice_backend_ejections_total"} {
		v, _ := want(metric, backend) // a counter not yet in the meter is 0
		checkFigure(t, "backend "+f, row[f], v, strconv.FormatFloat(v, 'f', 0, 64))
	}
	kv, _ := want("sluice_backend_kv_cache_usage", backend)
	checkFigure(t, "backend kv_cache_usage", row["kv_cache_usage"], kv, strconv.FormatFloat(kv*100, 'f', 1, 64)+" %")
	if kv != 0.42 {
		t.Errorf("sluice_backend_kv_cache_usage = %v, want the backend's 0.42", kv)
	}
	if row["load_read"].text != "fresh" {
		t.Errorf("backend load_read = %q, want fresh", row["load_read"].text)
	}
	// The counters stand still, so there is no hit ratio of the last
	// interval: absent from /metrics, a dash on the page.
	if _, has := want("sluice_backend_prefix_cache_hit_ratio", backend); has || row["prefix_cache_hit_ratio"].text != "–" {
		t.Errorf("prefix-cache hit ratio: /metrics has one: %v; page shows %q", has, row["prefix_cache_hit_ratio"].text)
	}

	// The queue's row: its depth, and its waits as the histogram counts them.
	q := domRows(t, dom, "queues")["m"]
	depth, _ := want("sluice_queue_depth", map[string]string{"model": "m"})
	checkFigure(t, "queue depth", q["depth"], depth, strconv.FormatFloat(depth, 'f', 0, 64))
	waited := float64(histogramCount(fams["sluice_queue_wait_seconds"], map[string]string{"model": "m"}))
	checkFigure(t, "queue waited", q["waited"], waited, strconv.FormatFloat(waited, 'f', 0, 64))

	// The keys: limited is nearest a limit (3 of 4 places), then the evil
	// key (nothing used); "all" has no limit and is not listed.
	keys := domRows(t, dom, "keys")
	if len(keys) != 2 || keys["all"] != nil {
		t.Errorf("keys listed: %v; want limited and the evil one", keys)
	}
	lim := keys["limited"]
	limKey := map[string]string{"key": "limited"}
	for f, metric := range map[string]string{"inflight": "sluice_key_inflight", "queue_depth": "sluice_key_queue_depth"} {
		v, _ := want(metric, limKey)
		checkFigure(t, "key "+f, lim[f], v, strconv.FormatFloat(v, 'f', 0, 64))
	}
	if lim["inflight"].text != "3" || lim["max_concurrent"].text != "4" || lim["nearest"].text != "75.0 %" {
		t.Errorf("limited: in flight %q of %q, nearest %q; want 3 of 4, 75.0 %%",
			lim["inflight"].text, lim["max_concurrent"].text, lim["nearest"].text)
	}
	// 3 requests of 6 a minute: half the minute spent, given back at one
	// request per 10 s since.
	if used, err := strconv.ParseFloat(lim["rpm_used"].raw, 64); err != nil || used < 0.2 || used > 0.5 {
		t.Errorf("limited's requests/min used = %q (%v); want 0.2–0.5", lim["rpm_used"].raw, err)
	}

	// The quotas: limited's day, as sluice_key_quota_used_tokens reads it
	// at the same moment.
	budgets := domRows(t, dom, "budgets")
	day := budgets["limited|tokens|day"]
	usedDay, _ := want("sluice_key_quota_used_tokens", map[string]string{"key": "limited", "period": "day"})
	if len(budgets) != 1 || day == nil || day["limit"].raw != "1e+06" && day["limit"].raw != "1000000" {
		t.Errorf("budget rows: %v", budgets)
	} else {
		checkFigure(t, "quota used", day["used"], usedDay, strconv.FormatFloat(usedDay, 'f', 0, 64))
	}

	// The workers: one row per slot, its pid the running worker's.
	workers := domRows(t, dom, "workers")
	pids := map[string]bool{}
	for _, pid := range g.workerPIDs() {
		pids[strconv.Itoa(pid)] = true
	}
	if len(workers) != 2 {
		t.Errorf("worker rows: %v", workers)
	}
	restarts := 0
	for slot, w := range workers {
		if !pids[w["pid"].text] || w["ready"].text != "ready" {
			t.Errorf("worker %s: pid %q (workers %v), %q", slot, w["pid"].text, pids, w["ready"].text)
		}
		n, _ := strconv.Atoi(w["restarts"].text)
		restarts += n
	}
	if restarts != 1 {
		t.Errorf("restarts per worker add up to %d; want the 1 killed", restarts)
	}

	// With its counters growing (3 hits in 4 tokens queried), the backend
	// has a hit ratio between two reads: the page shows one too. Not
	// compared to /metrics' at one moment: it changes with every read.
	stop := make(chan struct{})
	grown := make(chan struct{})
	go func() {
		defer close(grown)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for hits, queries := int64(2600), int64(4100); ; {
			select {
			case <-stop:
				return
			case <-tick.C:
				hits, queries = hits+30, queries+40
				be.SetPrefixCache(hits, queries)
			}
		}
	}()
	defer func() { close(stop); <-grown }()
	await(t, "a prefix-cache hit ratio in /metrics", func() bool {
		_, ok := g.metric("sluice_backend_prefix_cache_hit_ratio", backend)
		return ok
	})
	row = domRows(t, chromiumDOM(t, chromium, g.AdminURL+"/ui"), "backends")["m|"+be.URL()]
	r, err := strconv.ParseFloat(row["prefix_cache_hit_ratio"].raw, 64)
	shown, err2 := strconv.ParseFloat(strings.TrimSuffix(row["prefix_cache_hit_ratio"].text, " %"), 64)
	if err != nil || err2 != nil || r < 0.5 || r > 1 || math.Abs(shown-r*100) > 0.051 {
		t.Errorf("prefix-cache hit ratio on the page: %q (raw %q); want about 75 %%", row["prefix_cache_hit_ratio"].text, row["prefix_cache_hit_ratio"].raw)
	}

	if path := os.Getenv("SLUICE_STATUS_SCREENSHOT"); path != "" {
		chromiumScreenshot(t, chromium, g.AdminURL+"/ui", path)
	}
}

// With admin_token_env the page and its JSON need the token: a bearer
// header, or the cookie a login with the token sets. The cookie opens the
// page only, never /metrics; the token is in no page, no URL and no
// cookie; a forged or cleared cookie opens nothing.
func TestStatusPageToken(t *testing.T) {
	const token = "admin-token-page-0123456789"
	t.Setenv("SLUICE_TEST_ADMIN_TOKEN", token)
	be := startBackend(t, fakevllm.Options{Tokens: 1})
	g := startGateway(t, baseConfig(be.URL(), "off", "admin_token_env: SLUICE_TEST_ADMIN_TOKEN"))
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path, auth string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, g.AdminURL+path, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if strings.Contains(string(b), token) {
			t.Errorf("GET %s: the answer holds the token", path)
		}
		return res.StatusCode, string(b)
	}
	login := func(tok string) *http.Response {
		t.Helper()
		res, err := client.PostForm(g.AdminURL+"/ui/login", url.Values{"token": {tok}})
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res
	}

	if code, body := get("/ui", ""); code != http.StatusUnauthorized || !strings.Contains(body, `<form method="post" action="/ui/login">`) {
		t.Fatalf("GET /ui without the token: %d, want 401 and the login form: %s", code, body)
	}
	if code, _ := get("/status/live", ""); code != http.StatusUnauthorized {
		t.Errorf("GET /status/live without the token: %d", code)
	}
	if code, _ := get("/status/live", "Bearer "+token); code != http.StatusOK {
		t.Errorf("GET /status/live with the bearer token: %d", code)
	}
	if res := login("wrong"); res.StatusCode != http.StatusUnauthorized || len(res.Cookies()) != 0 {
		t.Errorf("login with a wrong token: %d, cookies %v", res.StatusCode, res.Cookies())
	}
	res := login(token)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/ui" || len(res.Cookies()) != 1 {
		t.Fatalf("login: %d %v %v", res.StatusCode, res.Header, res.Cookies())
	}
	c := res.Cookies()[0]
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || strings.Contains(c.Value, token) {
		t.Errorf("session cookie %+v: want HttpOnly, SameSite=Strict, without the token", c)
	}
	code, page := get("/ui", "")
	if code != http.StatusOK || !strings.Contains(page, `data-f="generation"`) || !strings.Contains(page, `href="/ui/logout"`) {
		t.Fatalf("GET /ui after the login: %d %s", code, page)
	}
	// Nothing from elsewhere: no element that loads a URL.
	for _, ref := range []string{"src=", "<link", "url(", "@import"} {
		if strings.Contains(page, ref) {
			t.Errorf("the page refers to an external asset (%s)", ref)
		}
	}
	code, live := get("/status/live", "")
	var st struct {
		Generation int64 `json:"generation"`
		Workers    []any `json:"workers"`
	}
	if code != http.StatusOK || json.Unmarshal([]byte(live), &st) != nil || st.Generation != 1 || len(st.Workers) != 2 {
		t.Errorf("GET /status/live with the cookie: %d %s", code, live)
	}
	for _, path := range []string{"/metrics", "/status"} {
		if code, _ := get(path, ""); code != http.StatusUnauthorized {
			t.Errorf("GET %s with the page's cookie alone: %d; want 401", path, code)
		}
	}

	// A forged cookie (another expiry under the same MAC) opens nothing.
	u, _ := url.Parse(g.AdminURL)
	forged := *c
	exp, mac, _ := strings.Cut(c.Value, ".")
	n, _ := strconv.ParseInt(exp, 10, 64)
	forged.Value = strconv.FormatInt(n+86400, 10) + "." + mac
	jar.SetCookies(u, []*http.Cookie{&forged})
	if code, _ := get("/status/live", ""); code != http.StatusUnauthorized {
		t.Errorf("GET /status/live with a forged cookie: %d", code)
	}
	jar.SetCookies(u, []*http.Cookie{c})
	if code, _ := get("/ui/logout", ""); code != http.StatusSeeOther {
		t.Errorf("GET /ui/logout: %d", code)
	}
	if code, _ := get("/ui", ""); code != http.StatusUnauthorized {
		t.Errorf("GET /ui after logging out: %d", code)
	}
}

// findChromium returns Chromium's path, or skips the test without it (CI
// installs it and sets SLUICE_TEST_REQUIRE_CHROMIUM=1: then its absence
// fails the test).
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("SLUICE_TEST_REQUIRE_CHROMIUM") == "1" {
		t.Fatal("chromium is not installed (apt-get install chromium); SLUICE_TEST_REQUIRE_CHROMIUM=1 requires it")
	}
	t.Skip("chromium is not installed (apt-get install chromium): the status page's browser test is skipped")
	return ""
}

// runChromium runs headless Chromium on url with args, in its own process
// group and profile, and returns its standard output. The virtual-time
// budget lets the page's script run (its first poll, and the next) before
// Chromium dumps or draws the page; every process it started is killed when
// it returns.
func runChromium(t *testing.T, chromium, url string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	args = append([]string{"--headless=new", "--disable-gpu", "--no-sandbox", "--disable-dev-shm-usage", "--no-first-run",
		"--user-data-dir=" + t.TempDir(), "--virtual-time-budget=2500"}, args...)
	cmd := exec.CommandContext(ctx, chromium, append(args, url)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // its helpers, if any outlived it
	}
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return stdout.Bytes()
}

// chromiumDOM is the page's DOM once its script has run.
func chromiumDOM(t *testing.T, chromium, url string) string {
	t.Helper()
	return string(runChromium(t, chromium, url, "--dump-dom"))
}

// chromiumScreenshot saves a PNG of the page at path.
func chromiumScreenshot(t *testing.T, chromium, url, path string) {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	runChromium(t, chromium, url, "--hide-scrollbars", "--window-size=1280,760", "--screenshot="+abs)
	t.Logf("screenshot of the status page: %s", abs)
}

// domFigure is one figure as the page shows it: its text, and its value
// as the JSON gave it (data-raw).
type domFigure struct{ text, raw string }

var (
	attrRe  = regexp.MustCompile(`([a-z-]+)="([^"]*)"`)
	tbodyRe = regexp.MustCompile(`(?s)<tbody id="([a-z]+)">(.*?)</tbody>`)
	trRe    = regexp.MustCompile(`(?s)<tr([^>]*)>(.*?)</tr>`)
)

// domFigures returns the figures (elements with data-f) of tag in s.
func domFigures(s, tag string) map[string]domFigure {
	out := map[string]domFigure{}
	re := regexp.MustCompile(`(?s)<` + tag + `((?: [a-z-]+="[^"]*")*)>([^<]*)</` + tag + `>`)
	for _, m := range re.FindAllStringSubmatch(s, -1) {
		attrs := map[string]string{}
		for _, a := range attrRe.FindAllStringSubmatch(m[1], -1) {
			attrs[a[1]] = html.UnescapeString(a[2])
		}
		if f, ok := attrs["data-f"]; ok {
			out[f] = domFigure{text: html.UnescapeString(m[2]), raw: attrs["data-raw"]}
		}
	}
	return out
}

// domRows returns the rows of the table body id, by data-id.
func domRows(t *testing.T, dom, id string) map[string]map[string]domFigure {
	t.Helper()
	for _, b := range tbodyRe.FindAllStringSubmatch(dom, -1) {
		if b[1] != id {
			continue
		}
		rows := map[string]map[string]domFigure{}
		for _, r := range trRe.FindAllStringSubmatch(b[2], -1) {
			if m := regexp.MustCompile(`data-id="([^"]*)"`).FindStringSubmatch(r[1]); m != nil {
				rows[html.UnescapeString(m[1])] = domFigures(r[2], "td")
			}
		}
		return rows
	}
	t.Fatalf("no table body %q in the page", id)
	return nil
}

// checkFigure checks that the page shows v as text and as its raw value.
func checkFigure(t *testing.T, what string, f domFigure, v float64, text string) {
	t.Helper()
	raw, err := strconv.ParseFloat(f.raw, 64)
	if f.text != text || err != nil || raw != v {
		t.Errorf("%s: the page shows %q (raw %q); /metrics has %v (%q)", what, f.text, f.raw, v, text)
	}
}

// familyValue is the value of fam's series with labels (a gauge's or a
// counter's); ok is false when it has none.
func familyValue(fam *dto.MetricFamily, labels map[string]string) (float64, bool) {
	for _, m := range familySeries(fam, labels) {
		switch {
		case m.GetGauge() != nil:
			return m.GetGauge().GetValue(), true
		case m.GetCounter() != nil:
			return m.GetCounter().GetValue(), true
		}
	}
	return 0, false
}

// histogramCount is the sample count of fam's series with labels (0 when
// it has none).
func histogramCount(fam *dto.MetricFamily, labels map[string]string) uint64 {
	for _, m := range familySeries(fam, labels) {
		return m.GetHistogram().GetSampleCount()
	}
	return 0
}

// familySeries is fam's series that have every label of labels.
func familySeries(fam *dto.MetricFamily, labels map[string]string) []*dto.Metric {
	var out []*dto.Metric
next:
	for _, m := range fam.GetMetric() {
		for k, v := range labels {
			found := false
			for _, lp := range m.GetLabel() {
				found = found || lp.GetName() == k && lp.GetValue() == v
			}
			if !found {
				continue next
			}
		}
		out = append(out, m)
	}
	return out
}

// excerpt is s around the first occurrence of sub, for a failure message.
func excerpt(s, sub string) string {
	i := max(strings.Index(s, sub), 0)
	return s[i:min(len(s), i+400)]
}

// launchKey sends a streamed chat completion of model "m" with key,
// held at the backend under hold, and delivers how it ended.
func launchKey(t *testing.T, g *gateway, key, hold, content string) <-chan outcome {
	t.Helper()
	out, cancel := launchAs(g, key, "m", hold, content)
	t.Cleanup(cancel)
	return out
}
