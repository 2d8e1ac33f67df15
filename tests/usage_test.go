package tests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// usageLineFor waits for the usage line of the request with this id.
func (g *gateway) usageLineFor(t *testing.T, requestID string) map[string]any {
	t.Helper()
	var line map[string]any
	await(t, "usage line of "+requestID, func() bool {
		for _, l := range g.usageLines() {
			if l["request_id"] == requestID {
				line = l
				return true
			}
		}
		return false
	})
	return line
}

// streamEvents sends a streamed request and returns its events and request id.
func streamEvents(t *testing.T, g *gateway, body string) ([]string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+keyAll)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	return readEvents(t, bufio.NewReader(res.Body)), res.Header.Get("X-Request-Id")
}

// A stream is billed even when the client did not ask for usage: the
// gateway asks the backend for it, counts it, and keeps the usage-only
// event from the client, which sees exactly what it asked for.
func TestStreamUsageCountedAndHiddenUnlessAsked(t *testing.T) {
	g, be := newGateway(t, fakevllm.Options{Tokens: 4}, "")

	events, id := streamEvents(t, g, `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	for _, ev := range events {
		if strings.Contains(ev, `"usage"`) {
			t.Errorf("client that did not ask got a usage event: %s", ev)
		}
	}
	if len(events) != 6 || events[5] != "[DONE]" { // 4 tokens, finish, [DONE]
		t.Fatalf("events: %q", events)
	}
	if !be.Received()[0].IncludeUsage {
		t.Error("the backend was not asked for usage")
	}
	line := g.usageLineFor(t, id)
	if line["completion_tokens"] != 4.0 || line["prompt_tokens"].(float64) <= 0 || line["finish_reason"] != "length" || line["usage_reported"] != true {
		t.Errorf("usage line: %v", line)
	}

	// A client that asks gets the usage event.
	events, id = streamEvents(t, g, `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`)
	if len(events) != 7 || !strings.Contains(events[5], `"completion_tokens":4`) {
		t.Fatalf("events for a client asking for usage: %q", events)
	}
	if line := g.usageLineFor(t, id); line["completion_tokens"] != 4.0 {
		t.Errorf("usage line: %v", line)
	}
}

// Tokens of non-streamed answers of any size reach the usage line (reading
// only the tail of a long answer once lost them).
func TestLargeAnswerUsage(t *testing.T) {
	g, _ := newGateway(t, fakevllm.Options{}, "")
	for _, tokens := range []int{3000, 300000} { // ~12 KiB and ~1.2 MiB answers
		body, _ := json.Marshal(map[string]any{"model": "m", "messages": []map[string]string{{"role": "user", "content": "x"}}})
		res, out := post(t, http.DefaultClient, g.URL+"/v1/chat/completions", keyAll, body,
			map[string]string{"X-Fake-Tokens": itoa(tokens)})
		if res.StatusCode != 200 || !bytes.Contains(out, []byte(`"completion_tokens":`+itoa(tokens))) {
			t.Fatalf("%d tokens: status %d, %d bytes", tokens, res.StatusCode, len(out))
		}
		line := g.usageLineFor(t, res.Header.Get("X-Request-Id"))
		if line["completion_tokens"] != float64(tokens) || line["bytes_out"].(float64) < float64(len(out)) {
			t.Errorf("%d tokens (%d bytes): usage line %v", tokens, len(out), line)
		}
	}
}
