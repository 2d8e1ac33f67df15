package fakevllm

// The Anthropic Messages API as vLLM's anthropic router serves it. The
// shapes come from vLLM's sources (github.com/vllm-project/vllm, main of
// spring 2026):
//
//   - vllm/entrypoints/anthropic/api_router.py (commit 01540b75): POST
//     /v1/messages (JSON answer: model_dump(exclude_none=True), so no
//     "stop_sequence" when null; a stream otherwise) and POST
//     /v1/messages/count_tokens; errors translated to {"type":"error",
//     "error":{"type","message"}} with the status of vLLM's error.
//   - vllm/entrypoints/anthropic/serving.py (commit 0001948b): the request
//     becomes a chat completion; the answer's id is the chat completion's
//     ("chatcmpl-…", not "msg_…"); stop_reason maps stop→end_turn,
//     length→max_tokens; the stream is "event: TYPE\ndata: JSON\n\n" per
//     event (model_dump_json(exclude_unset=True)): message_start (the
//     message without "type" and "role", usage.input_tokens the prompt's),
//     content_block_start, content_block_delta per token, content_block_stop,
//     message_delta (delta.stop_reason, usage with both counts), message_stop.
//     No ping event, and no "data: [DONE]" (removed by vLLM PR #37510,
//     March 2026; older vLLMs sent one after message_stop). count_tokens
//     answers {"input_tokens":N,"context_management":{"original_input_tokens":N}}.
//   - vllm/entrypoints/anthropic/protocol.py (commit 00589e56): the field
//     names and orders; max_tokens is required and positive (a request
//     without it is refused 400 by vLLM's validation, in OpenAI's shape).

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/tidwall/gjson"
)

func (s *Server) routeAnthropic(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/messages", s.messages)
	mux.HandleFunc("POST /v1/messages/count_tokens", s.countTokens)
}

// anthropicError is vLLM's AnthropicErrorResponse, the type of the error
// being vLLM's ErrorResponse's (as writeError's).
func anthropicError(w http.ResponseWriter, status int, msg string) {
	body := fmt.Appendf(nil, `{"type":"error","error":{"type":"BadRequestError","message":%s}}`, quote(msg))
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

type anthropicBlock struct {
	Type string          `json:"type"`
	Text json.RawMessage `json:"text"`
}

type anthropicUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// anthropicMessage is vLLM's AnthropicMessagesResponse as its JSON
// answer writes it (None fields left out).
type anthropicMessage struct {
	ID         string           `json:"id"`
	Type       string           `json:"type"`
	Role       string           `json:"role"`
	Content    []anthropicBlock `json:"content"`
	Model      string           `json:"model"`
	StopReason string           `json:"stop_reason"`
	Usage      anthropicUsage   `json:"usage"`
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	s.running.Add(1)
	defer s.running.Add(-1)
	req, body, ok := s.begin(w, r, false, anthropicError)
	if !ok {
		return
	}
	if mt := gjson.GetBytes(body, "max_tokens"); !mt.Exists() || mt.Int() <= 0 {
		writeError(w, http.StatusBadRequest, "1 validation error: max_tokens: a positive max_tokens is required")
		return
	}
	tokens := s.tokens(r, req)
	s.simulatePrefixCache(r, req, body, tokens, "")
	stop := "end_turn"
	if req.MaxTokens <= headerInt(r, "X-Fake-Tokens", s.opts.Tokens) {
		stop = "max_tokens"
	}
	if !s.await(w, r, req.Stream) {
		return
	}
	id := "chatcmpl-" + randomUUID()
	prompt := len(body) / 4 // a rough token count, as for chat
	if !req.Stream {
		m := anthropicMessage{ID: id, Type: "message", Role: "assistant", Content: []anthropicBlock{}, Model: req.Model,
			StopReason: stop, Usage: anthropicUsage{prompt, tokens}}
		if tokens > 0 {
			m.Content = append(m.Content, anthropicBlock{"text", s.contentJSON(tokens)})
		}
		writeAnswer(w, r, marshal(m))
		return
	}
	out := startSSE(w)
	if !out.event("message_start", fmt.Appendf(nil,
		`{"type":"message_start","message":{"id":%s,"content":[],"model":%s,"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":%d,"output_tokens":0}}}`,
		quote(id), quote(req.Model), prompt)) {
		return
	}
	if !eachToken(r, tokens, s.interval(r), s.holdGate(r), func(i int) bool {
		if i == 0 && !out.event("content_block_start", []byte(`{"type":"content_block_start","content_block":{"type":"text","text":""},"index":0}`)) {
			return false
		}
		return out.event("content_block_delta", fmt.Appendf(nil,
			`{"type":"content_block_delta","delta":{"type":"text_delta","text":%s},"index":0}`, quote(s.word(i))))
	}) {
		return
	}
	if tokens > 0 && !out.event("content_block_stop", []byte(`{"type":"content_block_stop","index":0}`)) {
		return
	}
	if !out.event("message_delta", fmt.Appendf(nil,
		`{"type":"message_delta","delta":{"stop_reason":%q},"usage":{"input_tokens":%d,"output_tokens":%d}}`, stop, prompt, tokens)) {
		return
	}
	out.event("message_stop", []byte(`{"type":"message_stop"}`))
	s.holdEnd(r)
}

func (s *Server) countTokens(w http.ResponseWriter, r *http.Request) {
	s.running.Add(1)
	defer s.running.Add(-1)
	_, body, ok := s.begin(w, r, false, anthropicError)
	if !ok || !s.await(w, r, false) {
		return
	}
	n := len(body) / 4 // the prompt's count as /v1/messages reckons it
	writeAnswer(w, r, fmt.Appendf(nil, `{"input_tokens":%d,"context_management":{"original_input_tokens":%d}}`, n, n))
}
