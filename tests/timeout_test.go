package tests

import (
	"bufio"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// withModelExtra inserts YAML lines into model "m" of baseConfig.
func withModelExtra(cfg, extra string) string {
	return strings.Replace(cfg, "        api_key_env: SLUICE_TEST_BACKEND_KEY",
		"        api_key_env: SLUICE_TEST_BACKEND_KEY\n"+extra, 1)
}

func timeoutGateway(t *testing.T) (*gateway, *fakevllm.Server) {
	be := startBackend(t, fakevllm.Options{Tokens: 3})
	usage := filepath.Join(t.TempDir(), "u.log")
	g := startGateway(t, withModelExtra(baseConfig(be.URL(), usage, ""), "    timeouts: {stream_idle: 400ms, total: 3s}"))
	g.UsageLog = usage
	return g, be
}

// total: a 504 in OpenAI's shape, no retry, and the backend stays in
// rotation (a slow answer is not a broken backend). stream_idle does not
// apply without streaming: a silent non-streamed answer is fine.
func TestTotalTimeoutAndNoIdleLimitWithoutStreaming(t *testing.T) {
	g, be := timeoutGateway(t)
	res, body := post(t, http.DefaultClient, g.URL+"/v1/chat/completions", keyAll, chatBody("m", false, "x"),
		map[string]string{"X-Fake-Delay-Ms": "8000"})
	checkError(t, "slow answer", res.StatusCode, body, 504, "upstream_timeout", "total")
	if n := len(be.Received()); n != 1 {
		t.Errorf("a timed-out request was sent %d times", n)
	}
	// Silent for longer than stream_idle (1 s), well within total: answered.
	res, body = post(t, http.DefaultClient, g.URL+"/v1/chat/completions", keyAll, chatBody("m", false, "x"),
		map[string]string{"X-Fake-Delay-Ms": "1000"})
	if res.StatusCode != 200 {
		t.Fatalf("non-streamed answer after 1 s of silence: %d %s", res.StatusCode, body)
	}
}

// stream_idle: a stream that goes silent mid-way ends with an SSE error
// event and a clean end of the body, and the usage line says why.
func TestStreamIdleTimeout(t *testing.T) {
	g, _ := timeoutGateway(t)
	res := postStream(t, g, "X-Fake-Interval-Ms", "3000")
	events := readEvents(t, bufio.NewReader(res.Body)) // EOF: the chunked body ended cleanly
	if len(events) != 2 || !strings.Contains(events[0], `"content":"tok"`) || !strings.Contains(events[1], `"code":"upstream_timeout"`) {
		t.Fatalf("events: %q", events)
	}
	await(t, "usage line", func() bool { return len(g.usageLines()) == 1 })
	if l := g.usageLines()[0]; l["error"] != "upstream_timeout" {
		t.Errorf("usage line: %v", l)
	}
}

// A backend that dies mid-stream: the client gets a clean error event, and
// the usage line keeps what was known.
func TestBackendDiesMidStream(t *testing.T) {
	g, be := newGateway(t, fakevllm.Options{Tokens: 5}, "")
	r, _, _ := openHeldStream(t, g, "die")
	be.Close() // drops the held stream's connection
	events := readEvents(t, r)
	if len(events) != 1 || !strings.Contains(events[0], `"code":"upstream_stream_broken"`) {
		t.Fatalf("events after the backend died: %q", events)
	}
	await(t, "usage line", func() bool { return len(g.usageLines()) == 1 })
	if l := g.usageLines()[0]; l["error"] != "upstream_stream_broken" || l["events"] != 1.0 || l["ttft_ms"] == nil {
		t.Errorf("usage line: %v", l)
	}
}

// first_token_deadline (opt-in): a stream whose first event is late, while
// nothing has reached the client, is cancelled on its backend (which sees
// the close) and retried once on the next; the usage line says so.
func TestFirstTokenDeadline(t *testing.T) {
	slow := startBackend(t, fakevllm.Options{Tokens: 3, StartDelay: 5 * time.Second})
	fast := startBackend(t, fakevllm.Options{Tokens: 3})
	cfg, usage := twoBackendConfig(t, slow.URL(), fast.URL(), "\n    timeouts: {first_token_deadline: 300ms}")
	g := startGateway(t, cfg)
	g.UsageLog = usage
	// Round robin starts at the slow backend in the worker that takes this connection.
	events, id := streamEvents(t, g, `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if len(events) != 5 || events[4] != "[DONE]" {
		t.Fatalf("events: %q", events)
	}
	line := g.usageLineFor(t, id)
	if line["first_token_retry"] != true || line["attempts"] != 2.0 || line["backend"] != fast.URL() {
		t.Fatalf("usage line: %v", line)
	}
	await(t, "the slow backend to see the cancel", func() bool { return slow.Running() == 0 })
}

// stream_idle is the longest silence, not the longest stream: a stream whose
// events keep coming, every 200 ms for three times stream_idle (1 s), ends
// whole — every event, no error event — and so does its usage line.
func TestStreamOutlivesIdleWhileEventsFlow(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 15, Interval: 200 * time.Millisecond})
	usage := filepath.Join(t.TempDir(), "u.log")
	g := startGateway(t, withModelExtra(baseConfig(be.URL(), usage, ""), "    timeouts: {stream_idle: 1s}"))
	g.UsageLog = usage
	start := time.Now()
	res := postStream(t, g, "X-Fake-Tokens", "15")
	if res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
	events := readEvents(t, bufio.NewReader(res.Body))
	took := time.Since(start)
	content := 0
	for _, ev := range events {
		if strings.Contains(ev, `"error"`) {
			t.Fatalf("error event after %v, %d content events: %s", took, content, ev)
		}
		if strings.Contains(ev, `tok"`) {
			content++
		}
	}
	if content != 15 || events[len(events)-1] != "[DONE]" {
		t.Fatalf("%d content events of 15 in %v; last event %q", content, took, events[len(events)-1])
	}
	if took < 2800*time.Millisecond {
		t.Fatalf("the stream took %v: its events did not come 200 ms apart", took)
	}
	await(t, "usage line", func() bool { return len(g.usageLines()) == 1 })
	if l := g.usageLines()[0]; l["error"] != nil && l["error"] != "" || l["completion_tokens"] != 15.0 {
		t.Errorf("usage line: %v", l)
	}
}
