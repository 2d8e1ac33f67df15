package fakevllm

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var chatID = regexp.MustCompile(`^chatcmpl-[0-9a-f]{32}$`)

// A whole Messages answer is vLLM's: the chat completion's id, no
// stop_sequence, stop_reason by max_tokens.
func TestMessagesJSON(t *testing.T) {
	s := start(t, Options{Tokens: 4})
	req := `{"model":"claude-x","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":"hello"}]}]}`
	resp, body := call(t, s, "POST", "/v1/messages", req)
	m := decode(t, body)
	if resp.StatusCode != 200 || !chatID.MatchString(m["id"].(string)) || m["type"] != "message" || m["role"] != "assistant" ||
		m["model"] != "claude-x" || m["stop_reason"] != "end_turn" || len(m) != 7 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if _, ok := m["stop_sequence"]; ok {
		t.Fatal("vLLM leaves a null stop_sequence out")
	}
	content := m["content"].([]any)
	if len(content) != 1 || content[0].(map[string]any)["type"] != "text" || content[0].(map[string]any)["text"] != "tok tok tok tok" {
		t.Fatal(body)
	}
	usage := m["usage"].(map[string]any)
	if usage["input_tokens"] != float64(len(req)/4) || usage["output_tokens"] != 4.0 || len(usage) != 2 {
		t.Fatal(body)
	}
	if rec := s.Received(); len(rec) != 1 || rec[0].Path != "/v1/messages" || rec[0].Model != "claude-x" || rec[0].FirstContent != "hello" {
		t.Fatalf("%+v", rec)
	}

	_, body = call(t, s, "POST", "/v1/messages", `{"model":"m","max_tokens":2,"messages":[{"role":"user","content":"hi"}]}`)
	if m := decode(t, body); m["stop_reason"] != "max_tokens" || m["usage"].(map[string]any)["output_tokens"] != 2.0 {
		t.Fatal(body)
	}
	resp, body = call(t, s, "POST", "/v1/messages", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != 400 {
		t.Fatalf("no max_tokens: %d %s", resp.StatusCode, body)
	}
	s.SetFailStatus(500)
	resp, body = call(t, s, "POST", "/v1/messages", `{"model":"m","max_tokens":2,"messages":[{"role":"user","content":"hi"}]}`)
	if m := decode(t, body); resp.StatusCode != 500 || m["type"] != "error" || m["error"].(map[string]any)["message"] == nil {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}

// The Messages stream is vLLM's, event by event, without ping or [DONE].
func TestMessagesStream(t *testing.T) {
	s := start(t, Options{Tokens: 2, Words: []string{"x", "y"}})
	req := `{"model":"m","max_tokens":2,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
	resp, body := call(t, s, "POST", "/v1/messages", req)
	if resp.Header.Get("Content-Type") != "text/event-stream" || strings.Contains(body, "[DONE]") || strings.Contains(body, "ping") {
		t.Fatalf("%v\n%s", resp.Header, body)
	}
	evs := readSSE(t, body)
	p := len(req) / 4
	id := decode(t, evs[0].Data)["message"].(map[string]any)["id"].(string)
	if !chatID.MatchString(id) {
		t.Fatal(id)
	}
	want := []sseEvent{
		{"message_start", `{"type":"message_start","message":{"id":"` + id + `","content":[],"model":"m","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":` + strconv.Itoa(p) + `,"output_tokens":0}}}`},
		{"content_block_start", `{"type":"content_block_start","content_block":{"type":"text","text":""},"index":0}`},
		{"content_block_delta", `{"type":"content_block_delta","delta":{"type":"text_delta","text":"x"},"index":0}`},
		{"content_block_delta", `{"type":"content_block_delta","delta":{"type":"text_delta","text":" y"},"index":0}`},
		{"content_block_stop", `{"type":"content_block_stop","index":0}`},
		{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"input_tokens":` + strconv.Itoa(p) + `,"output_tokens":2}}`},
		{"message_stop", `{"type":"message_stop"}`},
	}
	if len(evs) != len(want) {
		t.Fatalf("%d events:\n%s", len(evs), body)
	}
	for i := range want {
		if evs[i] != want[i] {
			t.Fatalf("event %d:\n%+v\nwant\n%+v", i, evs[i], want[i])
		}
	}
}

// count_tokens answers vLLM's count, the same rough count as the prompt's.
func TestCountTokens(t *testing.T) {
	s := start(t, Options{})
	req := `{"model":"m","messages":[{"role":"user","content":"how many tokens is this"}]}`
	resp, body := call(t, s, "POST", "/v1/messages/count_tokens", req)
	n := strconv.Itoa(len(req) / 4)
	if resp.StatusCode != 200 || body != `{"input_tokens":`+n+`,"context_management":{"original_input_tokens":`+n+`}}` {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if rec := s.Received(); len(rec) != 1 || rec[0].Path != "/v1/messages/count_tokens" || rec[0].FirstContent != "how many tokens is this" {
		t.Fatalf("%+v", rec)
	}
}
