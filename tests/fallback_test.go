package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// Model fallbacks, each trigger with the real binary: every attempt
// answered 503, a 400 for a prompt longer than the model's context (the
// context chain), the model's queue full or timed out, no answer on any
// attempt, and no backend in rotation. The
// fallback serves; the usage line says which model served and which was
// asked for; the metric counts each by reason; the body upstream names the
// fallback. A key that may not use the fallback, or whose tokens per
// minute or quota the fallback's reservation passes, gets the requested
// model's own refusal; a request the model can serve goes nowhere else.
func TestModelFallbacks(t *testing.T) {
	const keyTPM, keyQuota = "sk-test-tpm", "sk-test-quota"
	primary := startBackend(t, fakevllm.Options{Tokens: 2, MaxModelLen: 300})
	good := startBackend(t, fakevllm.Options{Tokens: 2})
	// A backend that passes its health check and drops every request.
	dropper := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			return
		}
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
	}))
	t.Cleanup(dropper.Close)
	usage := filepath.Join(t.TempDir(), "usage.log")
	cfg := fmt.Sprintf(`listen: 127.0.0.1:0
admin: 127.0.0.1:0
workers: 2
usage_log: %s
keys:
  - name: all
    sha256: %s
    models: ["*"]
  - name: narrow
    sha256: %s
    models: [primary, dead]
  - name: tpm
    sha256: %s
    models: ["*"]
    tokens_per_minute: 500
  - name: quota
    sha256: %s
    models: ["*"]
    quotas: {day: 500}
models:
  - name: primary
    fallbacks: [m]
    context_fallbacks: [long]
    retries: 0
    default_max_tokens: 10
    queue: {max: 0}
    backends:
      - url: %s
        slots: 1
  - name: slow
    fallbacks: [m]
    queue: {max: 4, timeout: 300ms}
    backends:
      - url: %s
        slots: 1
  - name: gone
    fallbacks: [m]
    retries: 0
    backends:
      - url: %s
        slots: 4
  - name: dead
    fallbacks: [m]
    backends:
      - url: http://127.0.0.1:1
        slots: 4
  - name: m
    backends:
      - url: %s
        slots: 64
  - name: long
    upstream_model: long-context-model
    backends:
      - url: %s
        slots: 64
`, usage, sha(keyAll), sha(keyLimited), sha(keyTPM), sha(keyQuota), primary.URL(), good.URL(), dropper.URL, good.URL(), good.URL())
	g := startGateway(t, cfg)
	g.UsageLog = usage

	ask := func(key, model, content string, hdr map[string]string) (*http.Response, []byte, map[string]any) {
		t.Helper()
		res, body := post(t, freshClient(), g.URL+"/v1/chat/completions", key, chatBody(model, false, content), hdr)
		return res, body, g.usageLineFor(t, res.Header.Get("X-Request-Id"))
	}
	served := func(what string, line map[string]any, model, requested string) {
		t.Helper()
		var want any = requested
		if requested == "" {
			want = nil
		}
		if line["status"] != 200.0 || line["model"] != model || line["model_requested"] != want {
			t.Fatalf("%s: status %v model %v model_requested %v, want 200 %s %v", what, line["status"], line["model"], line["model_requested"], model, requested)
		}
	}
	fallbacks := func(from, to, reason string) float64 {
		v, _ := g.metric("sluice_model_fallbacks_total", map[string]string{"from": from, "to": to, "reason": reason})
		return v
	}

	// Served by the model asked for: no fallback, model_requested null.
	_, _, line := ask(keyAll, "primary", "short", nil)
	served("a request primary serves", line, "primary", "")

	// Every attempt 503: m serves, and is sent a body that names it.
	primary.SetFailStatus(http.StatusServiceUnavailable)
	before := len(good.Received())
	_, _, line = ask(keyAll, "primary", "while primary fails", nil)
	served("primary answering 503", line, "m", "primary")
	if got := good.Received()[before:]; len(got) != 1 || got[0].Model != "m" {
		t.Fatalf("the fallback's backend got %+v, want one request for model m", got)
	}
	// The key may not use m: primary's own refusal, in OpenAI's shape.
	res, body, _ := ask(keyLimited, "primary", "narrow key", nil)
	var e struct{ Error struct{ Code string } }
	json.Unmarshal(body, &e)
	if res.StatusCode != http.StatusServiceUnavailable || e.Error.Code != "upstream_error" {
		t.Fatalf("a key that may not use the fallback: %d %s", res.StatusCode, body)
	}
	// Its tokens per minute are checked again for m, at m's reservation
	// (default_max_tokens 1024, over the key's 500): refused there, so
	// primary's refusal.
	if res, body, _ := ask(keyTPM, "primary", "tpm key", nil); res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a key whose tokens per minute the fallback passes: %d %s", res.StatusCode, body)
	}
	// Its day's quota likewise (500 tokens: primary's reservation fits,
	// m's does not): primary's refusal, with no header of m's quota.
	res, body, _ = ask(keyQuota, "primary", "quota key", nil)
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("X-Ratelimit-Reset-Quota") != "" {
		t.Fatalf("a key whose quota the fallback passes: %d, X-Ratelimit-Reset-Quota %q, %s",
			res.StatusCode, res.Header.Get("X-Ratelimit-Reset-Quota"), body)
	}
	primary.SetFailStatus(0)
	for _, key := range []string{keyTPM, keyQuota} {
		if res, body, _ := ask(key, "primary", "the key on primary serving", nil); res.StatusCode != 200 {
			t.Fatalf("the key on primary itself: %d %s", res.StatusCode, body)
		}
	}

	// Longer than primary's context: the context chain, to long, under its
	// upstream_model.
	before = len(good.Received())
	_, _, line = ask(keyAll, "primary", strings.Repeat("a long prompt ", 200), nil)
	served("a prompt over primary's context", line, "long", "primary")
	if got := good.Received()[before:]; len(got) != 1 || got[0].Model != "long-context-model" {
		t.Fatalf("the context fallback's backend got %+v", got)
	}

	// holdSlot opens a stream to model that the backend holds after its
	// first event, until Release(name): the model's one slot taken.
	holdSlot := func(model, name string) io.Closer {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/chat/completions", bytes.NewReader(chatBody(model, true, "hold")))
		req.Header.Set("Authorization", "Bearer "+keyAll)
		req.Header.Set("X-Fake-Hold", name)
		res, err := freshClient().Do(req)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("the stream that holds %s's slot: %v %v", model, err, res)
		}
		return res.Body
	}

	// primary's one slot held, no queue: m serves the next.
	held := holdSlot("primary", "fallback-hold")
	_, _, line = ask(keyAll, "primary", "while the slot is held", nil)
	served("primary's queue full", line, "m", "primary")
	primary.Release("fallback-hold")
	held.Close()
	// The held stream ended, and the fallback took nothing of primary's:
	// its one slot serves primary's requests again (a slot leaked by the
	// fallback would send every one to m).
	await(t, "primary serving again once its slot is free", func() bool {
		_, _, line := ask(keyAll, "primary", "after the hold", nil)
		return line["model"] == "primary"
	})

	// slow's one slot held: the next waits queue.timeout, then m serves.
	held = holdSlot("slow", "fallback-hold-slow")
	_, _, line = ask(keyAll, "slow", "while slow's slot is held", nil)
	served("slow's queue timing out", line, "m", "slow")
	good.Release("fallback-hold-slow")
	held.Close()

	// Every attempt on gone without an answer.
	_, _, line = ask(keyAll, "gone", "to a backend that drops it", nil)
	served("no answer from gone", line, "m", "gone")

	// No backend of dead in rotation.
	_, _, line = ask(keyAll, "dead", "to a dead model", nil)
	served("no backend of dead in rotation", line, "m", "dead")

	for _, c := range []struct{ from, to, reason string }{
		{"primary", "m", "upstream_status"}, {"primary", "long", "context_length"},
		{"primary", "m", "queue_full"}, {"dead", "m", "unavailable"},
		{"slow", "m", "queue_timeout"}, {"gone", "m", "unreachable"},
	} {
		await(t, "sluice_model_fallbacks_total "+c.reason, func() bool { return fallbacks(c.from, c.to, c.reason) >= 1 })
	}
}
