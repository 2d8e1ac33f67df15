package tests

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// Provider keys (backends[].api_keys_env): a hosted API's keys, sent in
// turn, each named by its environment variable and never shown.

// The three provider keys: their variables (the names logs and metrics
// use) and their values (which must appear nowhere but upstream).
var (
	provKeyNames  = []string{"SLUICE_TEST_PK_A", "SLUICE_TEST_PK_B", "SLUICE_TEST_PK_C"}
	provKeyValues = []string{"pk-alpha-7f3a9c21e5", "pk-bravo-0b8d4e6f12", "pk-charlie-5c2e71a9d3"}
)

// withProviderKeys is baseConfig with model "m"'s backend sending the
// three provider keys instead of its one key, which it sets in the
// environment the gateway starts with.
func withProviderKeys(t *testing.T, cfg string) string {
	t.Helper()
	for i, n := range provKeyNames {
		t.Setenv(n, provKeyValues[i])
	}
	return strings.Replace(cfg, "api_key_env: SLUICE_TEST_BACKEND_KEY",
		"api_keys_env: ["+strings.Join(provKeyNames, ", ")+"]", 1)
}

// providerGateway starts a fake provider that knows the three keys
// (answering each with keys[i]) and a gateway whose model "m" uses them.
func providerGateway(t *testing.T, answers [3]int) (*gateway, *fakevllm.Server) {
	t.Helper()
	keys := map[string]int{}
	for i, v := range provKeyValues {
		keys[v] = answers[i]
	}
	be := startBackend(t, fakevllm.Options{Tokens: 2, Keys: keys})
	usage := filepath.Join(t.TempDir(), "usage.log")
	g := startGateway(t, withProviderKeys(t, baseConfig(be.URL(), usage, "")))
	g.UsageLog = usage
	return g, be
}

// keyMetric is a provider key's series of model "m" on backend be.
func (g *gateway) keyMetric(name string, be *fakevllm.Server, key int) float64 {
	g.t.Helper()
	v, ok := g.metric(name, map[string]string{"model": "m", "backend": be.URL(), "key": provKeyNames[key]})
	if !ok {
		g.t.Fatalf("no series %s{key=%q}", name, provKeyNames[key])
	}
	return v
}

// sendMessage posts a non-streamed Messages request on a new connection
// (so requests spread over the workers) with x-api-key.
func sendMessage(t *testing.T, g *gateway, content string) (*http.Response, []byte) {
	t.Helper()
	body := `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"` + content + `"}]}`
	return post(t, freshClient(), g.URL+"/v1/messages", "", []byte(body),
		map[string]string{"X-Api-Key": keyAll, "Anthropic-Version": "2023-06-01"})
}

// mustSend sends n Messages requests, each of which must be answered 200.
func mustSend(t *testing.T, g *gateway, n int, what string) {
	t.Helper()
	for i := 0; i < n; i++ {
		if res, body := sendMessage(t, g, what+" "+itoa(i)); res.StatusCode != 200 {
			t.Fatalf("%s, request %d: %s %s", what, i, res.Status, body)
		}
	}
}

// noKeyValueLogged fails the test if a provider key's value is anywhere in
// the gateway's logs.
func noKeyValueLogged(t *testing.T, g *gateway) {
	t.Helper()
	logs := g.stderr.String()
	for i, v := range provKeyValues {
		if strings.Contains(logs, v) {
			t.Errorf("the value of %s is in the gateway's log", provKeyNames[i])
		}
	}
}

// Requests go round robin over the keys, across both workers: 30
// requests, 10 with each key (the turn is shared by all workers). The
// backend sees a provider key as its Authorization, never the client's.
func TestProviderKeysRoundRobin(t *testing.T) {
	g, be := providerGateway(t, [3]int{200, 200, 200})
	mustSend(t, g, 30, "round robin")
	for i, v := range provKeyValues {
		if n := be.KeyRequests(v); n != 10 {
			t.Errorf("%s sent %d times of 30, want 10", provKeyNames[i], n)
		}
		if n := g.keyMetric("sluice_backend_key_requests_total", be, i); n != 10 {
			t.Errorf("sluice_backend_key_requests_total{key=%s} = %v, want 10", provKeyNames[i], n)
		}
		if up := g.keyMetric("sluice_backend_key_up", be, i); up != 1 {
			t.Errorf("sluice_backend_key_up{key=%s} = %v", provKeyNames[i], up)
		}
	}
	workers := map[float64]int{}
	await(t, "30 usage lines", func() bool { return len(g.usageLines()) == 30 })
	for _, l := range g.usageLines() {
		workers[l["worker"].(float64)]++
	}
	if len(workers) != 2 {
		t.Errorf("requests served by workers %v, want both", workers)
	}
	for _, r := range be.Received() {
		if r.Header.Get("X-Api-Key") != "" || !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer pk-") {
			t.Fatalf("backend got x-api-key %q, Authorization %q", r.Header.Get("X-Api-Key"), r.Header.Get("Authorization"))
		}
	}
	noKeyValueLogged(t, g)
}

// A key the provider refuses (401) is out of rotation, for every worker,
// after its first refusal — which the client never sees: the request goes
// again with the next key. It is named, not shown, in the log. A reload
// brings it back.
func TestProviderKeyRejectedUntilReload(t *testing.T) {
	g, be := providerGateway(t, [3]int{200, 401, 200})
	mustSend(t, g, 12, "with B refused")
	if n := be.KeyRequests(provKeyValues[1]); n != 1 {
		t.Errorf("the refused key was sent %d times, want once", n)
	}
	if n := be.KeyRequests(provKeyValues[0]) + be.KeyRequests(provKeyValues[2]); n != 12 {
		t.Errorf("the other keys were sent %d times for 12 requests", n)
	}
	if up := g.keyMetric("sluice_backend_key_up", be, 1); up != 0 {
		t.Errorf("sluice_backend_key_up of the refused key = %v", up)
	}
	if up := g.keyMetric("sluice_backend_key_up", be, 0); up != 1 {
		t.Errorf("sluice_backend_key_up of a good key = %v", up)
	}
	if n := g.keyMetric("sluice_backend_key_rejected_total", be, 1); n != 1 {
		t.Errorf("sluice_backend_key_rejected_total = %v", n)
	}
	l := g.awaitLog("provider key rejected: out of rotation until the next reload")
	if l["key"] != provKeyNames[1] || l["status"] != 401.0 {
		t.Errorf("log line: %v", l)
	}
	await(t, "12 usage lines", func() bool { return len(g.usageLines()) == 12 })
	for _, l := range g.usageLines() {
		// The key's retry is within the attempt: one backend, one attempt.
		if l["status"] != 200.0 || l["attempts"] != 1.0 || l["upstream_status"] != 200.0 {
			t.Errorf("usage line: %v", l)
		}
	}
	noKeyValueLogged(t, g)

	// The provider takes the key again; a reload puts it back in rotation.
	be.SetKeyAnswer(provKeyValues[1], 200, "")
	cfg, err := os.ReadFile(g.Config)
	if err != nil {
		t.Fatal(err)
	}
	g.reloadWith(string(cfg))
	if up := g.keyMetric("sluice_backend_key_up", be, 1); up != 1 {
		t.Errorf("sluice_backend_key_up after the reload = %v", up)
	}
	mustSend(t, g, 3, "after the reload")
	if n := be.KeyRequests(provKeyValues[1]); n != 2 {
		t.Errorf("the key was sent %d times in all after the reload, want once more (one of three)", n)
	}
}

// A key the provider rate limits (429) rests for its Retry-After, and the
// request goes again with the next key before anything reaches the client;
// when the rest ends the key is back.
func TestProviderKeyRateLimited(t *testing.T) {
	g, be := providerGateway(t, [3]int{200, 200, 200})
	a, b := provKeyValues[0], provKeyValues[1]

	// A long rest: A must not be sent while it lasts.
	be.SetKeyAnswer(a, 429, "600")
	for i := 0; be.KeyRequests(a) == 0; i++ {
		if i == 3 {
			t.Fatal("three requests and A was not sent once")
		}
		if res, body := sendMessage(t, g, "until A"); res.StatusCode != 200 {
			t.Fatalf("a request sent first with the rate-limited key: %s %s", res.Status, body)
		}
	}
	mustSend(t, g, 6, "with A resting")
	if n := be.KeyRequests(a); n != 1 {
		t.Errorf("the resting key was sent %d times, want once", n)
	}
	if up := g.keyMetric("sluice_backend_key_up", be, 0); up != 0 {
		t.Errorf("sluice_backend_key_up of the resting key = %v", up)
	}
	if n := g.keyMetric("sluice_backend_key_rate_limited_total", be, 0); n != 1 {
		t.Errorf("sluice_backend_key_rate_limited_total = %v", n)
	}
	for _, l := range g.usageLines() {
		if l["status"] != 200.0 || l["attempts"] != 1.0 {
			t.Errorf("usage line: %v", l)
		}
	}

	// Retry-After: 2 — B rests 2 s, then is sent again.
	be.SetKeyAnswer(b, 429, "2")
	before := be.KeyRequests(b)
	for i := 0; be.KeyRequests(b) == before; i++ {
		if i == 3 {
			t.Fatal("three requests and B was not sent once")
		}
		if res, body := sendMessage(t, g, "until B"); res.StatusCode != 200 {
			t.Fatalf("a request sent first with a rate-limited key: %s %s", res.Status, body)
		}
	}
	if n := g.keyMetric("sluice_backend_key_rate_limited_total", be, 1); n != 1 {
		t.Fatalf("sluice_backend_key_rate_limited_total of B = %v", n)
	}
	be.SetKeyAnswer(b, 200, "")
	await(t, "B back in rotation after its Retry-After", func() bool {
		return g.keyMetric("sluice_backend_key_up", be, 1) == 1
	})
	before = be.KeyRequests(b)
	mustSend(t, g, 2, "B rested") // A still rests: B and C take turns
	if n := be.KeyRequests(b) - before; n != 1 {
		t.Errorf("B was sent %d times of 2 after its rest, want once", n)
	}
	noKeyValueLogged(t, g)
}

// Every key refused: the request that finds it out gets 502
// provider_keys_unusable (in Anthropic's shape: api_error), not the
// provider's 401 — which would tell the client its own key is wrong.
func TestProviderKeysAllRejected(t *testing.T) {
	g, be := providerGateway(t, [3]int{401, 401, 401})
	client := anthropicXAPIKey(g, keyAll, nil)
	_, err := client.Messages.New(context.Background(), messageParams("m", 10, "hello"))
	e := anthropicError(t, "every key refused", err, 502, "api_error")
	if !strings.Contains(e.Message, "provider key") {
		t.Errorf("502 message %q", e.Message)
	}
	for i, v := range provKeyValues {
		if n := be.KeyRequests(v); n != 1 {
			t.Errorf("%s sent %d times, want once", provKeyNames[i], n)
		}
		if up := g.keyMetric("sluice_backend_key_up", be, i); up != 0 {
			t.Errorf("sluice_backend_key_up{key=%s} = %v", provKeyNames[i], up)
		}
	}
	if l := g.usageLineFor(t, e.Response.Header.Get("X-Request-Id")); l["error"] != "provider_keys_unusable" || l["status"] != 502.0 {
		t.Errorf("usage line: %v", l)
	}
	// With no usable key the backend is out of candidacy, like a failed
	// one: the model has no backend to take the request.
	_, err = client.Messages.New(context.Background(), messageParams("m", 10, "again"))
	anthropicError(t, "the model's only backend without a key", err, 529, "overloaded_error")
	if n := len(be.Received()); n != 3 {
		t.Errorf("the provider got %d requests, want the 3 of the first", n)
	}
	noKeyValueLogged(t, g)
}

// Every key of one backend refused, another backend without keys: the
// requests go there, and none fails.
func TestProviderKeysAllRejectedNextBackend(t *testing.T) {
	keys := map[string]int{}
	for _, v := range provKeyValues {
		keys[v] = 401
	}
	provider := startBackend(t, fakevllm.Options{Tokens: 2, Keys: keys})
	other := startBackend(t, fakevllm.Options{Tokens: 2})
	usage := filepath.Join(t.TempDir(), "usage.log")
	cfg := withProviderKeys(t, baseConfig(provider.URL(), usage, ""))
	cfg = strings.Replace(cfg, "api_keys_env: ["+strings.Join(provKeyNames, ", ")+"]\n",
		"api_keys_env: ["+strings.Join(provKeyNames, ", ")+"]\n      - url: "+other.URL()+"\n        slots: 64\n", 1)
	g := startGateway(t, cfg)
	g.UsageLog = usage
	for i := 0; provider.KeyRequests(provKeyValues[0])+provider.KeyRequests(provKeyValues[1])+provider.KeyRequests(provKeyValues[2]) < 3; i++ {
		if i == 60 {
			t.Fatal("60 requests and the provider's keys were not all tried")
		}
		if res, body := sendMessage(t, g, "spread "+itoa(i)); res.StatusCode != 200 {
			t.Fatalf("request %d: %s %s", i, res.Status, body)
		}
	}
	mustSend(t, g, 5, "the provider out")
	for _, l := range g.usageLines() {
		if l["backend"] != other.URL() {
			t.Errorf("answered by %v: %v", l["backend"], l)
		}
	}
	noKeyValueLogged(t, g)
}

// Every key rate limited, one backend: the provider's last 429 goes to
// the client at once, with the provider's Retry-After — not retried on the
// same backend, which, its keys all resting, is out of candidacy: that
// retry waited in the queue for the whole queue timeout, then 503.
func TestProviderKeysAllRateLimited(t *testing.T) {
	g, be := providerGateway(t, [3]int{200, 200, 200})
	for _, v := range provKeyValues {
		be.SetKeyAnswer(v, 429, "30")
	}
	client := anthropicXAPIKey(g, keyAll, nil)
	_, err := client.Messages.New(context.Background(), messageParams("m", 10, "hello"))
	e := anthropicError(t, "every key rate limited", err, 429, "rate_limit_error")
	if ra := e.Response.Header.Get("Retry-After"); ra != "30" {
		t.Errorf("Retry-After %q, want the provider's 30", ra)
	}
	for i, v := range provKeyValues {
		if n := be.KeyRequests(v); n != 1 {
			t.Errorf("%s sent %d times, want once", provKeyNames[i], n)
		}
	}
	l := g.usageLineFor(t, e.Response.Header.Get("X-Request-Id"))
	if l["status"] != 429.0 || l["attempts"] != 1.0 || l["queued"] != false {
		t.Errorf("usage line: %v", l)
	}
	// While every key rests the backend is out: the next request is told
	// when to come back, from the keys' rest (30 s, less what has passed).
	_, err = client.Messages.New(context.Background(), messageParams("m", 10, "hello"))
	e = anthropicError(t, "every key resting", err, 529, "overloaded_error")
	if ra, _ := strconv.Atoi(e.Response.Header.Get("Retry-After")); ra < 1 || ra > 30 {
		t.Errorf("Retry-After %q while every key rests 30 s", e.Response.Header.Get("Retry-After"))
	}
	noKeyValueLogged(t, g)
}
