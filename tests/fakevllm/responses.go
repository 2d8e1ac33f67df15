package fakevllm

// The OpenAI Responses API as vLLM serves it. The shapes come from vLLM's
// sources (github.com/vllm-project/vllm, main of spring 2026):
//
//   - vllm/entrypoints/openai/responses/api_router.py (commit f6e93254):
//     POST /v1/responses, GET /v1/responses/{id}, POST
//     /v1/responses/{id}/cancel, and no DELETE; a stream is "event:
//     TYPE\ndata: JSON\n\n" per event, with no "data: [DONE]" at the end.
//   - vllm/entrypoints/openai/responses/serving.py (commit 4d89a999):
//     the store is an in-memory dict per server, on only with
//     VLLM_ENABLE_RESPONSES_API_STORE=1 (else "store" is silently dropped);
//     an unknown previous_response_id or id answers 404 {"error":{"message":
//     "Response with id '<id>' not found.","type":"invalid_request_error",
//     "param":"response_id","code":404}}; cancel of a finished response
//     answers 400 "Cannot cancel a synchronous response."; a response whose
//     generation stopped at max_output_tokens is "incomplete"; the stream is
//     response.created, response.in_progress, the item's events,
//     response.completed carrying the whole response (stored first).
//   - vllm/entrypoints/openai/responses/streaming_events.py (commit
//     01e4fce0): the non-harmony path's events (output_item.added with a
//     32-hex id without prefix, content_part.added, output_text.delta per
//     token, output_text.done, content_part.done, output_item.done), all at
//     content_index 0 and output_index 0.
//   - vllm/entrypoints/openai/responses/protocol.py (commit c0bc5965):
//     ResponsesRequest (store defaults to true, the id is "resp_" + 32 hex)
//     and ResponsesResponse, whose fields are written in its order; usage
//     with the per-turn lists vLLM adds.
//   - The output message's id is "msg_" + 32 hex (serving.py
//     _make_response_output_items), different from the streamed item's id,
//     as in vLLM.
//
// DELETE /v1/responses/{id} is not a vLLM route: FastAPI answers 405
// {"detail":"Method Not Allowed"} with "Allow: GET", as the fake does.
// Background requests are kept "queued" until the answer's time has
// passed (Interval per token, X-Fake-Hold), then "completed" unless
// cancelled; background streaming is answered as a plain stream.

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/tidwall/gjson"
)

// maxModelLen is the context length the fake claims (max_output_tokens'
// default is what the prompt leaves of it; /tokenize reports it).
const maxModelLen = 32768

func (s *Server) routeResponses(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/responses", s.createResponse)
	mux.HandleFunc("GET /v1/responses/{id}", s.retrieveResponse)
	mux.HandleFunc("POST /v1/responses/{id}/cancel", s.cancelResponse)
	mux.HandleFunc("DELETE /v1/responses/{id}", s.deleteResponse)
}

// StoredResponses is the number of responses this server keeps (created
// with "store" true, the default), as vLLM keeps them in its memory.
func (s *Server) StoredResponses() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.stored)
}

// HasResponse says whether this server keeps the response id.
func (s *Server) HasResponse(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stored[id] != nil
}

// storedResponse is a kept response; its fields change under s.mu only.
type storedResponse = responseObject

// responseObject is vLLM's ResponsesResponse, its fields in its order.
// The fields echoed from the request are raw JSON.
type responseObject struct {
	ID                 string          `json:"id"`
	CreatedAt          int64           `json:"created_at"`
	IncompleteDetails  json.RawMessage `json:"incomplete_details"`
	Instructions       json.RawMessage `json:"instructions"`
	Metadata           json.RawMessage `json:"metadata"`
	Model              string          `json:"model"`
	Object             string          `json:"object"`
	Output             []outputMessage `json:"output"`
	ParallelToolCalls  json.RawMessage `json:"parallel_tool_calls"`
	Temperature        json.RawMessage `json:"temperature"`
	ToolChoice         json.RawMessage `json:"tool_choice"`
	Tools              json.RawMessage `json:"tools"`
	TopP               json.RawMessage `json:"top_p"`
	Background         bool            `json:"background"`
	MaxOutputTokens    int             `json:"max_output_tokens"`
	MaxToolCalls       json.RawMessage `json:"max_tool_calls"`
	PreviousResponseID json.RawMessage `json:"previous_response_id"`
	Prompt             json.RawMessage `json:"prompt"`
	Reasoning          json.RawMessage `json:"reasoning"`
	ServiceTier        json.RawMessage `json:"service_tier"`
	Status             string          `json:"status"`
	Text               json.RawMessage `json:"text"`
	TopLogprobs        json.RawMessage `json:"top_logprobs"`
	Truncation         json.RawMessage `json:"truncation"`
	Usage              *responseUsage  `json:"usage"`
	User               json.RawMessage `json:"user"`
	InputMessages      json.RawMessage `json:"input_messages"`
	OutputMessages     json.RawMessage `json:"output_messages"`

	// cached is the prompt's prefix-cache hit tokens (Options.PrefixCache),
	// conv the conversation after this response, for a next turn's prompt.
	cached int
	conv   string
}

// outputMessage is openai's ResponseOutputMessage (Summary: the extra
// "summary":[] vLLM puts on the streamed output_item.done's item).
type outputMessage struct {
	ID      string          `json:"id"`
	Content []outputText    `json:"content"`
	Role    string          `json:"role"`
	Status  string          `json:"status"`
	Type    string          `json:"type"`
	Summary json.RawMessage `json:"summary,omitempty"`
}

// outputText is openai's ResponseOutputText; Text is a JSON string.
type outputText struct {
	Annotations json.RawMessage `json:"annotations"`
	Text        json.RawMessage `json:"text"`
	Type        string          `json:"type"`
	Logprobs    json.RawMessage `json:"logprobs"`
}

// responseUsage is vLLM's ResponseUsage.
type responseUsage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens        int   `json:"cached_tokens"`
		InputTokensPerTurn  []int `json:"input_tokens_per_turn"`
		CachedTokensPerTurn []int `json:"cached_tokens_per_turn"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens         int   `json:"reasoning_tokens"`
		ToolOutputTokens        int   `json:"tool_output_tokens"`
		OutputTokensPerTurn     []int `json:"output_tokens_per_turn"`
		ToolOutputTokensPerTurn []int `json:"tool_output_tokens_per_turn"`
	} `json:"output_tokens_details"`
	TotalTokens int `json:"total_tokens"`
}

func newResponseUsage(prompt, output, cached int) *responseUsage {
	u := &responseUsage{InputTokens: prompt, OutputTokens: output, TotalTokens: prompt + output}
	cached = min(cached, prompt)
	u.InputTokensDetails.CachedTokens = cached
	u.InputTokensDetails.InputTokensPerTurn = []int{prompt}
	u.InputTokensDetails.CachedTokensPerTurn = []int{cached}
	u.OutputTokensDetails.OutputTokensPerTurn = []int{output}
	u.OutputTokensDetails.ToolOutputTokensPerTurn = []int{0}
	return u
}

// rawOr is the request's field at path as raw JSON, def when absent or null.
func rawOr(body []byte, path, def string) json.RawMessage {
	if v := gjson.GetBytes(body, path); v.Exists() && v.Type != gjson.Null {
		return json.RawMessage(v.Raw)
	}
	return json.RawMessage(def)
}

// members is a request's top-level members, read in one pass over the
// body: a lookup each (twenty, most of them absent) went over the whole
// 100 KB input twenty times, and made the fake the rig's bottleneck.
type members map[string]gjson.Result

func membersOf(body []byte) members {
	m := members{}
	gjson.ParseBytes(body).ForEach(func(k, v gjson.Result) bool {
		if _, seen := m[k.String()]; !seen { // the first, as a lookup finds
			m[k.String()] = v
		}
		return true
	})
	return m
}

// rawOr is the member name as raw JSON, def when absent or null.
func (m members) rawOr(name, def string) json.RawMessage {
	if v, ok := m[name]; ok && v.Type != gjson.Null {
		return json.RawMessage(v.Raw)
	}
	return json.RawMessage(def)
}

// newResponse is the response to a request, in progress (no output, no
// usage): what response.created carries.
func newResponse(req request, body members, prompt int) *responseObject {
	model := req.Model
	if model == "" {
		model = "fake"
	}
	maxOut := maxModelLen - prompt
	if req.MaxTokens > 0 && req.MaxTokens < maxOut {
		maxOut = req.MaxTokens
	}
	topLogprobs := json.RawMessage("null")
	for _, inc := range body["include"].Array() {
		if inc.String() == "message.output_text.logprobs" {
			topLogprobs = body.rawOr("top_logprobs", "0")
		}
	}
	return &responseObject{
		ID:                 "resp_" + randomUUID(),
		CreatedAt:          time.Now().Unix(),
		IncompleteDetails:  json.RawMessage("null"),
		Instructions:       body.rawOr("instructions", "null"),
		Metadata:           body.rawOr("metadata", "null"),
		Model:              model,
		Object:             "response",
		Output:             []outputMessage{},
		ParallelToolCalls:  body.rawOr("parallel_tool_calls", "true"),
		Temperature:        body.rawOr("temperature", "1.0"),
		ToolChoice:         body.rawOr("tool_choice", `"auto"`),
		Tools:              body.rawOr("tools", "[]"),
		TopP:               body.rawOr("top_p", "1.0"),
		Background:         body["background"].Bool(),
		MaxOutputTokens:    maxOut,
		MaxToolCalls:       body.rawOr("max_tool_calls", "null"),
		PreviousResponseID: body.rawOr("previous_response_id", "null"),
		Prompt:             json.RawMessage("null"),
		Reasoning:          body.rawOr("reasoning", "null"),
		ServiceTier:        body.rawOr("service_tier", `"auto"`),
		Status:             "in_progress",
		Text:               body.rawOr("text", "null"),
		TopLogprobs:        topLogprobs,
		Truncation:         body.rawOr("truncation", `"disabled"`),
		User:               body.rawOr("user", "null"),
		InputMessages:      json.RawMessage("null"),
		OutputMessages:     json.RawMessage("null"),
	}
}

// completed is r finished with tokens tokens of output: "incomplete"
// (with incomplete_details) when max_output_tokens cut it, as vLLM says
// for a finish by length.
func (s *Server) completed(r responseObject, tokens, prompt int, cut bool) *responseObject {
	r.Status = "completed"
	if cut {
		r.Status = "incomplete"
		r.IncompleteDetails = json.RawMessage(`{"reason":"max_output_tokens"}`)
	}
	r.Output = []outputMessage{}
	if tokens > 0 {
		r.Output = []outputMessage{{ID: "msg_" + randomUUID(), Role: "assistant", Status: "completed", Type: "message",
			Content: []outputText{{Annotations: json.RawMessage("[]"), Text: s.contentJSON(tokens), Type: "output_text"}}}}
	}
	r.Usage = newResponseUsage(prompt, tokens, r.cached)
	return &r
}

// notFound is vLLM's answer for a response id it does not keep.
func notFound(w http.ResponseWriter, id string) {
	vllmError(w, http.StatusNotFound, "invalid_request_error", "Response with id '"+id+"' not found.", "response_id")
}

func (s *Server) createResponse(w http.ResponseWriter, r *http.Request) {
	s.running.Add(1)
	defer s.running.Add(-1)
	req, body, ok := s.begin(w, r, false, writeError)
	if !ok {
		return
	}
	m := membersOf(body)
	store := !s.opts.ResponsesNoStore && m["store"].Type != gjson.False
	background := m["background"].Bool()
	if background && s.opts.ResponsesNoStore && m["store"].Type != gjson.False {
		vllmError(w, http.StatusBadRequest, "invalid_request_error", "This vLLM engine does not support `store=True` and "+
			"therefore does not support the background mode. To enable these features, set the environment variable "+
			"`VLLM_ENABLE_RESPONSES_API_STORE=1` when launching the vLLM server.", "background")
		return
	}
	prompt := len(body) / 4 // a rough token count, as for chat
	var conv string         // the conversation continued (Options.PrefixCache)
	if prev := m["previous_response_id"]; prev.Type == gjson.String {
		s.mu.Lock()
		p := s.stored[prev.String()]
		if p != nil && p.Usage != nil { // the conversation so far is part of the prompt
			prompt += p.Usage.InputTokens + p.Usage.OutputTokens
		}
		if p != nil {
			conv = p.conv
		}
		s.mu.Unlock()
		if p == nil {
			notFound(w, prev.String())
			return
		}
	}
	tokens := s.tokens(r, req)
	cached, conv := s.simulatePrefixCache(r, req, body, tokens, conv)
	cut := req.MaxTokens > 0 && req.MaxTokens <= headerInt(r, "X-Fake-Tokens", s.opts.Tokens)
	if !s.await(w, r, req.Stream) {
		return
	}
	resp := newResponse(req, m, prompt)
	resp.cached, resp.conv = cached, conv
	if background && !req.Stream {
		resp.Status = "queued"
		s.mu.Lock()
		s.stored[resp.ID] = resp
		answer := marshal(resp)
		s.mu.Unlock()
		go s.runBackground(resp.ID, s.completed(*resp, tokens, prompt, cut), tokens, s.interval(r), s.holdGate(r))
		writeAnswer(w, r, answer)
		return
	}
	if !req.Stream {
		final := s.completed(*resp, tokens, prompt, cut)
		if store {
			s.keep(final)
		}
		writeAnswer(w, r, marshal(final))
		return
	}
	s.streamResponse(w, r, resp, tokens, prompt, cut, store)
	s.holdEnd(r)
}

// keep stores a finished response, unless it was cancelled meanwhile.
func (s *Server) keep(final *responseObject) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.stored[final.ID]; old == nil || old.Status != "cancelled" {
		s.stored[final.ID] = final
	}
}

// runBackground finishes a background response after the time its answer
// takes (and X-Fake-Hold's release), as running a request.
func (s *Server) runBackground(id string, final *responseObject, tokens int, interval time.Duration, hold chan struct{}) {
	s.running.Add(1)
	defer s.running.Add(-1)
	if hold != nil && tokens > 0 {
		select {
		case <-hold:
		case <-s.closed:
			return
		}
	}
	if tokens > 1 && interval > 0 {
		select {
		case <-time.After(time.Duration(tokens-1) * interval):
		case <-s.closed:
			return
		}
	}
	s.keep(final)
}

// Events of the Responses stream, each with openai's fields in its order.
type (
	eventResponse struct {
		Response       *responseObject `json:"response"`
		SequenceNumber int             `json:"sequence_number"`
		Type           string          `json:"type"`
	}
	eventItem struct {
		Item           outputMessage `json:"item"`
		OutputIndex    int           `json:"output_index"`
		SequenceNumber int           `json:"sequence_number"`
		Type           string        `json:"type"`
	}
	eventPart struct {
		ContentIndex   int        `json:"content_index"`
		ItemID         string     `json:"item_id"`
		OutputIndex    int        `json:"output_index"`
		Part           outputText `json:"part"`
		SequenceNumber int        `json:"sequence_number"`
		Type           string     `json:"type"`
	}
	eventTextDelta struct {
		ContentIndex   int             `json:"content_index"`
		Delta          string          `json:"delta"`
		ItemID         string          `json:"item_id"`
		Logprobs       json.RawMessage `json:"logprobs"`
		OutputIndex    int             `json:"output_index"`
		SequenceNumber int             `json:"sequence_number"`
		Type           string          `json:"type"`
	}
	eventTextDone struct {
		ContentIndex   int             `json:"content_index"`
		ItemID         string          `json:"item_id"`
		Logprobs       json.RawMessage `json:"logprobs"`
		OutputIndex    int             `json:"output_index"`
		SequenceNumber int             `json:"sequence_number"`
		Text           json.RawMessage `json:"text"`
		Type           string          `json:"type"`
	}
)

// streamResponse writes the Responses stream of vLLM's non-harmony path:
// one response.output_text.delta per token, Interval apart, held after
// the first by X-Fake-Hold.
func (s *Server) streamResponse(w http.ResponseWriter, r *http.Request, resp *responseObject, tokens, prompt int, cut, store bool) {
	out := startSSE(w)
	seq := 0
	send := func(typ string, ev any) bool {
		defer func() { seq++ }()
		return out.event(typ, marshal(ev))
	}
	if !send("response.created", eventResponse{resp, seq, "response.created"}) ||
		!send("response.in_progress", eventResponse{resp, seq, "response.in_progress"}) {
		return
	}
	itemID := randomUUID()
	empty := json.RawMessage("[]")
	if !eachToken(r, tokens, s.interval(r), s.holdGate(r), func(i int) bool {
		if i == 0 {
			item := outputMessage{ID: itemID, Content: []outputText{}, Role: "assistant", Status: "in_progress", Type: "message"}
			part := outputText{Annotations: empty, Text: quote(""), Type: "output_text", Logprobs: empty}
			if !send("response.output_item.added", eventItem{item, 0, seq, "response.output_item.added"}) ||
				!send("response.content_part.added", eventPart{0, itemID, 0, part, seq, "response.content_part.added"}) {
				return false
			}
		}
		return send("response.output_text.delta", eventTextDelta{0, s.word(i), itemID, empty, 0, seq, "response.output_text.delta"})
	}) {
		return
	}
	if tokens > 0 {
		text := s.contentJSON(tokens)
		part := outputText{Annotations: empty, Text: text, Type: "output_text"}
		item := outputMessage{ID: itemID, Content: []outputText{part}, Role: "assistant", Status: "completed", Type: "message", Summary: empty}
		if !send("response.output_text.done", eventTextDone{0, itemID, empty, 0, seq, text, "response.output_text.done"}) ||
			!send("response.content_part.done", eventPart{0, itemID, 0, part, seq, "response.content_part.done"}) ||
			!send("response.output_item.done", eventItem{item, 0, seq, "response.output_item.done"}) {
			return
		}
	}
	final := s.completed(*resp, tokens, prompt, cut)
	if store {
		s.keep(final)
	}
	send("response.completed", eventResponse{final, seq, "response.completed"})
}

func (s *Server) retrieveResponse(w http.ResponseWriter, r *http.Request) {
	s.running.Add(1)
	defer s.running.Add(-1)
	if _, _, ok := s.begin(w, r, true, writeError); !ok {
		return
	}
	id := r.PathValue("id")
	s.mu.Lock()
	var answer []byte
	if st := s.stored[id]; st != nil {
		answer = marshal(st)
	}
	s.mu.Unlock()
	if answer == nil {
		notFound(w, id)
		return
	}
	writeAnswer(w, r, answer)
}

func (s *Server) cancelResponse(w http.ResponseWriter, r *http.Request) {
	s.running.Add(1)
	defer s.running.Add(-1)
	if _, _, ok := s.begin(w, r, true, writeError); !ok {
		return
	}
	id := r.PathValue("id")
	s.mu.Lock()
	st := s.stored[id]
	var answer []byte
	cancellable := st != nil && (st.Status == "queued" || st.Status == "in_progress")
	if cancellable {
		st.Status = "cancelled"
		answer = marshal(st)
	}
	s.mu.Unlock()
	switch {
	case st == nil:
		notFound(w, id)
	case !cancellable:
		vllmError(w, http.StatusBadRequest, "invalid_request_error", "Cannot cancel a synchronous response.", "response_id")
	default:
		writeAnswer(w, r, answer)
	}
}

// deleteResponse is FastAPI's answer to a method the route lacks: vLLM
// has no DELETE /v1/responses/{id}.
func (s *Server) deleteResponse(w http.ResponseWriter, r *http.Request) {
	s.running.Add(1)
	defer s.running.Add(-1)
	if _, _, ok := s.begin(w, r, true, writeError); !ok {
		return
	}
	w.Header().Set("Allow", "GET")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusMethodNotAllowed)
	w.Write([]byte(`{"detail":"Method Not Allowed"}`))
}
