package tests

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// A backend that listens but fails GET /health (vLLM loading its model) is
// kept out of rotation, and comes in once its check passes.
func TestBackendInRotationOnlyAfterHealthPasses(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 1})
	be.SetHealthy(false)
	cfg := strings.Replace(baseConfig(be.URL(), filepath.Join(t.TempDir(), "u.log"), ""),
		"        api_key_env: SLUICE_TEST_BACKEND_KEY", "        api_key_env: SLUICE_TEST_BACKEND_KEY\n    health: {path: /health, interval: 200ms}", 1)
	g := startGateway(t, cfg)
	res, body := post(t, http.DefaultClient, g.URL+"/v1/chat/completions", keyAll, chatBody("m", false, "x"), nil)
	checkError(t, "loading backend", res.StatusCode, body, 503, "no_healthy_backend", "healthy")
	if n := len(be.Received()); n != 0 {
		t.Fatalf("an unhealthy backend got %d requests", n)
	}
	be.SetHealthy(true)
	client := freshClient()
	await(t, "the backend in rotation in both workers", func() bool {
		for i := 0; i < 10; i++ {
			res, _ := post(t, client, g.URL+"/v1/chat/completions", keyAll, chatBody("m", false, "x"), nil)
			if res.StatusCode != 200 {
				return false
			}
		}
		return true
	})
}

// ejectConfig: model "m" alone on backend url, one worker (ejection is
// each worker's own view), active checks every interval, no retries (a
// retry would wait for the ejected backend and fail on it again).
func ejectConfig(url, interval string) string {
	cfg := baseConfig(url, "off", "")
	cfg = cfg[:strings.Index(cfg, "  - name: m-alias")]
	cfg = strings.Replace(cfg, "workers: 2", "workers: 1", 1)
	return withModelExtra(cfg, "    retries: 0\n    health: {path: /health, interval: "+interval+"}")
}

// ejectionLog is the log line of a backend taken out of rotation.
const ejectionLog = "upstream request failed; backend out of rotation"

// dropAndEject sends a request the backend drops without an answer (a
// connection failure: the client gets 502) and returns how long the
// backend is out of rotation for, from the nth ejection's log line.
func dropAndEject(t *testing.T, g *gateway, nth int) string {
	t.Helper()
	res, body := post(t, freshClient(), g.URL+"/v1/chat/completions", keyAll, chatBody("m", false, "x"),
		map[string]string{"X-Fake-Drop": "1"})
	checkError(t, "dropped request", res.StatusCode, body, 502, "upstream_unreachable", "reached")
	var line map[string]any
	await(t, "ejection "+itoa(nth+1)+" logged", func() bool { line = g.findLog(ejectionLog, nth); return line != nil })
	return fmt.Sprint(line["for"])
}

// awaitServed waits until the backend serves requests again: meanwhile
// they are refused at once as having no healthy backend.
func awaitServed(t *testing.T, g *gateway, what string) {
	t.Helper()
	client := freshClient()
	await(t, what, func() bool {
		res, body := post(t, client, g.URL+"/v1/chat/completions", keyAll, chatBody("m", false, "x"), nil)
		if res.StatusCode != 200 {
			checkError(t, "request while ejected", res.StatusCode, body, 503, "no_healthy_backend", "healthy")
		}
		return res.StatusCode == 200
	})
}

// Passive ejection is nginx's max_fails/fail_timeout: a backend whose
// connection failed is out of rotation for a time (1 s, doubling with each
// further failure) and comes back when that time is up, on time alone.
// With checks an hour apart, none runs between the ejections: the backend
// is back after each, and the second ejection is twice the first.
func TestEjectedBackendReturnsOnTime(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 1})
	g := startGateway(t, ejectConfig(be.URL(), "1h"))
	checks := be.HealthChecks() // the first round, before the worker was ready
	if d := dropAndEject(t, g, 0); d != "1s" {
		t.Fatalf("first ejection for %s, want 1s", d)
	}
	awaitServed(t, g, "the backend back after its first ejection, with no check since")
	if d := dropAndEject(t, g, 1); d != "2s" {
		t.Fatalf("second ejection for %s, want 2s (no check passed in between)", d)
	}
	awaitServed(t, g, "the backend back after its second ejection, with no check since")
	if n := be.HealthChecks(); n != checks {
		t.Fatalf("%d health checks ran during the test: it needs none", n-checks)
	}
}

// A passing active check resets the doubling: an ejection after a check
// passed is for 1 s again.
func TestPassingCheckResetsEjection(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 1})
	g := startGateway(t, ejectConfig(be.URL(), "200ms"))
	if d := dropAndEject(t, g, 0); d != "1s" {
		t.Fatalf("first ejection for %s, want 1s", d)
	}
	awaitServed(t, g, "the backend back after its ejection")
	n := be.HealthChecks()
	await(t, "a check passed after the ejection", func() bool { return be.HealthChecks() > n })
	if d := dropAndEject(t, g, 1); d != "1s" {
		t.Fatalf("ejection after a passing check for %s, want 1s", d)
	}
}
