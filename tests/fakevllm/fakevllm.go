// Package fakevllm is a fake vLLM: a real HTTP server speaking the
// OpenAI-compatible API the way vLLM does (JSON answers, SSE streams with a
// final usage event, /health, /metrics), with a configurable token count,
// pace and start delay, and a record of every request it received. It is a
// mock, not a model: the integration tests, the benchmark rig and `sluice
// demo` put it behind the gateway.
//
// Endpoints, in vLLM's shapes (each newer file says which vLLM source its
// shapes come from):
//
//	POST /v1/chat/completions, /v1/completions, /v1/embeddings
//	POST /v1/responses            the Responses API, JSON or stream ("event:" lines, no [DONE])
//	GET  /v1/responses/{id}       a kept response; 404 vLLM's not-found when unknown
//	POST /v1/responses/{id}/cancel  a background response; 400 for a finished one, 404 unknown
//	DELETE /v1/responses/{id}     405 {"detail":"Method Not Allowed"} (vLLM has no DELETE)
//	POST /v1/messages             the Anthropic Messages API, JSON or stream (no [DONE])
//	POST /v1/messages/count_tokens
//	POST /score, /v1/score, /rerank, /v1/rerank, /v2/rerank
//	POST /tokenize, /detokenize, /pooling, /classify
//	GET  /v1/models, /health, /metrics
//
// Responses created with "store" (the default) are kept by the server that
// made them, as vLLM keeps them in memory (StoredResponses): a
// previous_response_id another server made is unknown there. With
// Options.Keys (or SetKeyAnswer) the inference endpoints answer by the
// request's key (KeyRequests, Received.Key count them).
//
// With Options.PrefixCache the fake simulates vLLM's automatic prefix
// caching at block granularity (prefixcache.go): each chat, completions,
// Responses and Messages prompt, rendered to a canonical text (each
// message's role and content in order, as a chat template would, so a
// shared system prompt is a shared prefix and a conversation's next turn
// extends this one's prompt and answer), is taken as tokens of
// BytesPerToken bytes (default 4) and cut into blocks of BlockTokens
// tokens (default 16); full blocks are chain-hashed (xxh3, each seeded by
// the previous block's hash), the request's hit is its longest run of
// leading cached blocks (at most its tokens less one, as vLLM), and all
// its full blocks, the answer's included, are cached in an LRU of Blocks
// blocks (default 4096). Queried and hit tokens add up in /metrics'
// vllm:prefix_cache_queries_total and vllm:prefix_cache_hits_total
// (PrefixCacheStats), in Received.CachedTokens and QueriedTokens, and in
// the answer's usage: prompt_tokens_details.cached_tokens (chat,
// completions), input_tokens_details.cached_tokens (Responses). Off by
// default: nothing is cached and the answers are as without it.
//
// Per-request overrides, as request headers (the gateway forwards them);
// they apply to every inference endpoint where they make sense (the
// stream ones to the chat, completion, Responses and Messages streams):
//
//	X-Fake-Tokens: N         tokens in the answer
//	X-Fake-Interval-Ms: N    pause between stream events (between tokens)
//	X-Fake-Delay-Ms: N       pause before the response headers
//	X-Fake-Hold: NAME        after the first token's stream event, wait for Release(NAME)
//	                         (a background response stays queued until then)
//	X-Fake-Hold-Headers: NAME  before the response headers, wait for Release(NAME)
//	X-Fake-Hold-End: NAME    after a stream's last event ("data: [DONE]"), wait for Release(NAME) before ending the body
//	X-Fake-Chunked: 1        a JSON answer without Content-Length (vLLM sends one)
//	X-Fake-Break-After: N    a JSON answer broken off after its first N bytes (connection closed)
//	X-Fake-Prompt-Logprobs: N  a chat answer's prompt_logprobs (after its usage, as vLLM puts them): N entries
//	X-Fake-Drop: 1           no answer at all: the connection is closed once the request is read
//	X-Fake-Fail: MODE        the answer fails, after the request was read whole (FailModes):
//	                         reset, reset-after-head, close-after-head, silent-after-head,
//	                         garbage-head, bad-chunk, close-mid
package fakevllm

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"
)

// Options are the server-wide defaults.
type Options struct {
	Tokens     int           // tokens per answer when the request does not say (default 16)
	Interval   time.Duration // between stream events (default 0: as fast as possible)
	StartDelay time.Duration // before the response headers
	Words      []string      // the answer's words, cycled (default "tok")
	NoRecord   bool          // keep no record of requests (benchmarks: no hashing, no growth)
	FailStatus int           // when set, completions (and the newer endpoints, not embeddings) are answered with this status (a failing backend)
	// MaxModelLen, when set, answers a request whose body passes it (its
	// bytes / 4, as tokens) with vLLM's 400 for a request longer than
	// max_model_len, in the endpoint's error shape.
	MaxModelLen int
	// Keys, when not empty, makes the inference endpoints check the
	// request's key ("Authorization: Bearer KEY", or "x-api-key: KEY") and
	// answer with the status it maps to: 200 serves, any other status is an
	// error in the endpoint's shape (a 429 with "Retry-After: 1"). A key not
	// in the map gets 401. SetKeyAnswer changes it while running.
	Keys map[string]int
	// ResponsesNoStore makes /v1/responses behave as vLLM does without
	// VLLM_ENABLE_RESPONSES_API_STORE=1: "store" is silently ignored (nothing
	// is kept, every previous_response_id is unknown) and "background" is
	// refused. By default the fake keeps responses, as vLLM with the store on.
	ResponsesNoStore bool
	// PrefixCache, when set, simulates vLLM's automatic prefix caching
	// (prefixcache.go): each chat, completions, Responses and Messages
	// request's prompt is cut into blocks, looked up and cached; the hit
	// and queried tokens go to the /metrics counters (PrefixCacheStats),
	// the request's record (Received.CachedTokens) and the answer's usage
	// (prompt_tokens_details.cached_tokens, input_tokens_details.cached_tokens).
	// Off (nil) by default: nothing is cached, answers say nothing of it.
	PrefixCache *PrefixCacheOptions
}

// Received is what the server saw of one request.
type Received struct {
	Path       string
	Header     http.Header
	BodyLen    int
	BodySHA256 [sha256.Size]byte
	Model      string
	Stream     bool
	// IncludeUsage is stream_options.include_usage as received.
	IncludeUsage bool
	// FirstContent is the first message's content, up to 64 bytes (on the
	// newer endpoints: the first input, query or prompt).
	FirstContent string
	// Key is the key the request carried (Authorization: Bearer, or
	// x-api-key), "" for none.
	Key string
	// CachedTokens and QueriedTokens are the request's prefix-cache hit and
	// queried tokens, with Options.PrefixCache (0 without, or when the
	// request was not served).
	CachedTokens, QueriedTokens int
	// CacheSalt and Priority are the body's cache_salt (a string; "" when
	// absent) and priority (its raw JSON; "" when absent).
	CacheSalt, Priority string
}

// Server is a running fake vLLM.
type Server struct {
	opts     Options
	srv      *http.Server
	ln       net.Listener
	running  atomic.Int64
	healthy  atomic.Bool
	checks   atomic.Int64  // GET /health requests answered
	failWith atomic.Int64  // status completions are answered with; 0: answer them
	kvUsage  atomic.Uint64 // math.Float64bits of the KV-cache usage /metrics reports
	metricsN atomic.Int64  // GET /metrics answered
	apcHits  atomic.Int64  // vllm:prefix_cache_hits /metrics reports (SetPrefixCache)
	apcQuery atomic.Int64  // vllm:prefix_cache_queries
	apc      *prefixCache  // Options.PrefixCache's simulation; nil when off
	mu       sync.Mutex
	received []Received
	gates    map[string]chan struct{}
	keys     map[string]keyAnswer // Options.Keys and SetKeyAnswer; empty: no key check
	keysOn   atomic.Bool          // keys is not empty (no lock per request without keys)
	keyUses  map[string]int       // requests per key, served or refused
	stored   map[string]*storedResponse
	closed   chan struct{} // closed by Close: background responses stop
	closeMu  sync.Once
}

// Start listens on addr (use "127.0.0.1:0" for a free port) and serves.
func Start(addr string, o Options) (*Server, error) {
	if o.Tokens <= 0 {
		o.Tokens = 16
	}
	if len(o.Words) == 0 {
		o.Words = []string{"tok"}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: o, ln: ln, gates: map[string]chan struct{}{}, keys: map[string]keyAnswer{},
		keyUses: map[string]int{}, stored: map[string]*storedResponse{}, closed: make(chan struct{})}
	for k, code := range o.Keys {
		s.keys[k] = keyAnswer{status: code, retryAfter: "1"}
	}
	s.keysOn.Store(len(s.keys) > 0)
	if o.PrefixCache != nil {
		s.apc = newPrefixCache(*o.PrefixCache)
	}
	s.healthy.Store(true)
	s.failWith.Store(int64(o.FailStatus))
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.completion)
	mux.HandleFunc("POST /v1/completions", s.completion)
	mux.HandleFunc("POST /v1/embeddings", s.embeddings)
	mux.HandleFunc("GET /v1/models", s.models)
	s.routeResponses(mux)
	s.routeAnthropic(mux)
	s.routePooling(mux)
	mux.HandleFunc("GET /health", s.health)
	mux.HandleFunc("GET /metrics", s.metrics)
	s.srv = &http.Server{Handler: mux}
	go s.srv.Serve(ln) //nolint:errcheck // ends with Close
	return s, nil
}

// URL is the server's base URL, e.g. http://127.0.0.1:41234.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Close stops the server and drops open connections.
func (s *Server) Close() error {
	s.closeMu.Do(func() { close(s.closed) })
	return s.srv.Close()
}

// SetHealthy makes GET /health answer 200 (true) or 503 (false).
func (s *Server) SetHealthy(ok bool) { s.healthy.Store(ok) }

// HealthChecks is the number of GET /health requests answered so far.
func (s *Server) HealthChecks() int { return int(s.checks.Load()) }

// SetFailStatus makes completions (and the newer endpoints) answer with
// status code (an error in the endpoint's shape: OpenAI's, Anthropic's on
// /v1/messages), or normally again with 0, as Options.FailStatus does.
func (s *Server) SetFailStatus(code int) { s.failWith.Store(int64(code)) }

// SetKVUsage sets the KV-cache usage (0-1) /metrics reports.
func (s *Server) SetKVUsage(v float64) { s.kvUsage.Store(math.Float64bits(v)) }

// SetPrefixCache sets the prefix-cache counters /metrics reports, in
// tokens: hits of queries (0 and 0 at start; the fake caches nothing
// unless Options.PrefixCache is set, whose counts are then added to these).
func (s *Server) SetPrefixCache(hits, queries int64) {
	s.apcHits.Store(hits)
	s.apcQuery.Store(queries)
}

// MetricsReads is the number of /metrics pages answered so far: a test
// awaits the next one to know the gateway has read the load of a moment.
func (s *Server) MetricsReads() int64 { return s.metricsN.Load() }

// Running is the number of requests being answered now.
func (s *Server) Running() int { return int(s.running.Load()) }

// Received returns a copy of the record of requests received so far.
func (s *Server) Received() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.received...)
}

// Release lets streams held with "X-Fake-Hold: name" go on.
func (s *Server) Release(name string) {
	close(s.gate(name))
}

func (s *Server) gate(name string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.gates[name]
	if !ok {
		g = make(chan struct{})
		s.gates[name] = g
	}
	return g
}

// request is the part of a completion request the fake reads.
type request struct {
	Model        string
	Stream       bool
	MaxTokens    int
	IncludeUsage bool
	rec          int // the request's index in Server.received; -1 when not recorded
}

// record reads and records the body, and reads the fields the fake uses
// (with gjson: the fake shares a core with the load driver in benchmarks).
func (s *Server) record(r *http.Request) (request, error) {
	req, _, err := s.recordBody(r, false)
	return req, err
}

// recordBody is record, returning the body too; with allowEmpty a request
// without a body (GET, DELETE) is taken.
func (s *Server) recordBody(r *http.Request, allowEmpty bool) (request, []byte, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return request{}, nil, err
	}
	if (len(body) > 0 || !allowEmpty) && !gjson.ValidBytes(body) {
		return request{}, nil, fmt.Errorf("body is not JSON")
	}
	f := gjson.GetManyBytes(body, "model", "stream", "max_tokens", "stream_options.include_usage", "max_output_tokens")
	req := request{Model: f[0].String(), Stream: f[1].Bool(), MaxTokens: int(f[2].Int()), IncludeUsage: f[3].Bool(), rec: -1}
	if !f[2].Exists() {
		req.MaxTokens = int(f[4].Int()) // the Responses API's name for it
	}
	if s.opts.NoRecord {
		return req, body, nil
	}
	first := firstContent(r.URL.Path, body)
	if len(first) > 64 {
		first = first[:64]
	}
	key := requestKey(r)
	s.mu.Lock()
	req.rec = len(s.received)
	s.received = append(s.received, Received{FirstContent: first, Key: key,
		Path: r.URL.Path, Header: r.Header.Clone(), BodyLen: len(body),
		BodySHA256: sha256.Sum256(body), Model: req.Model, Stream: req.Stream, IncludeUsage: req.IncludeUsage,
		CacheSalt: gjson.GetBytes(body, "cache_salt").String(), Priority: gjson.GetBytes(body, "priority").Raw,
	})
	if key != "" {
		s.keyUses[key]++
	}
	s.mu.Unlock()
	return req, body, nil
}

// firstContent is Received.FirstContent: the first message's content, or
// on the endpoints without messages the first input, query or prompt.
func firstContent(path string, body []byte) string {
	first := gjson.GetBytes(body, "messages.0.content")
	switch path {
	case "/v1/chat/completions", "/v1/completions", "/v1/embeddings":
		return first.String()
	case "/v1/messages", "/v1/messages/count_tokens":
		if first.IsArray() {
			return first.Get("0.text").String()
		}
		return first.String()
	}
	if first.Exists() { // /tokenize, /pooling, /classify with messages
		return first.String()
	}
	for _, p := range []string{"input", "query", "prompt", "text_1", "queries", "data_1"} {
		v := gjson.GetBytes(body, p)
		if v.IsArray() {
			v = v.Get("0")
		}
		if v.IsObject() { // a Responses input item
			v = v.Get("content")
			if v.IsArray() {
				v = v.Get("0.text")
			}
		}
		if v.Exists() {
			return v.String()
		}
	}
	return ""
}

func headerInt(r *http.Request, name string, def int) int {
	if v, err := strconv.Atoi(r.Header.Get(name)); err == nil && v >= 0 {
		return v
	}
	return def
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"message":%q,"type":"BadRequestError","param":null,"code":%d}}`, msg, status)
}

// errorWriter writes an error answer in an endpoint's shape.
type errorWriter func(w http.ResponseWriter, status int, msg string)

// begin is how every inference endpoint starts: it reads and records the
// request, then answers in its place where the request's key, X-Fake-Drop
// or the fail status (SetFailStatus) say so, the error in the shape fail
// writes. ok is false when the request is answered.
func (s *Server) begin(w http.ResponseWriter, r *http.Request, allowEmpty bool, fail errorWriter) (request, []byte, bool) {
	req, body, err := s.recordBody(r, allowEmpty)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
		return req, nil, false
	}
	if !s.keyServed(w, r) {
		return req, nil, false
	}
	if r.Header.Get("X-Fake-Drop") != "" {
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
		return req, nil, false
	}
	if code := int(s.failWith.Load()); code != 0 {
		fail(w, code, "the fake backend is set to fail")
		return req, nil, false
	}
	if n := s.opts.MaxModelLen; n > 0 && len(body)/4 > n {
		fail(w, http.StatusBadRequest, fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens in the messages. "+
			"Please reduce the length of the messages.", n, len(body)/4))
		return req, nil, false
	}
	return req, body, true
}

// await is what comes before an answer's head: the failure X-Fake-Fail
// asks for (then false), X-Fake-Hold-Headers and the start delay (false
// when the client leaves meanwhile).
func (s *Server) await(w http.ResponseWriter, r *http.Request, stream bool) bool {
	if mode := r.Header.Get("X-Fake-Fail"); mode != "" {
		s.fail(w, mode, stream)
		return false
	}
	if name := r.Header.Get("X-Fake-Hold-Headers"); name != "" {
		select {
		case <-s.gate(name):
		case <-r.Context().Done():
			return false
		}
	}
	if delay := time.Duration(headerInt(r, "X-Fake-Delay-Ms", int(s.opts.StartDelay/time.Millisecond))) * time.Millisecond; delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return false
		}
	}
	return true
}

// interval is the pause between stream events for r.
func (s *Server) interval(r *http.Request) time.Duration {
	return time.Duration(headerInt(r, "X-Fake-Interval-Ms", int(s.opts.Interval/time.Millisecond))) * time.Millisecond
}

// tokens is the number of tokens of r's answer: X-Fake-Tokens or
// Options.Tokens, at most the request's max_tokens (max_output_tokens).
func (s *Server) tokens(r *http.Request, req request) int {
	tokens := headerInt(r, "X-Fake-Tokens", s.opts.Tokens)
	if req.MaxTokens > 0 && req.MaxTokens < tokens {
		tokens = req.MaxTokens
	}
	return tokens
}

// writeAnswer writes a whole JSON answer as vLLM does (with its
// Content-Length), or as X-Fake-Chunked and X-Fake-Break-After ask.
func writeAnswer(w http.ResponseWriter, r *http.Request, answer []byte) {
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("X-Fake-Chunked") == "" {
		w.Header().Set("Content-Length", strconv.Itoa(len(answer)))
	}
	if n := headerInt(r, "X-Fake-Break-After", -1); n >= 0 && n < len(answer) {
		w.Write(answer[:n])
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
		panic(http.ErrAbortHandler) // net/http closes the connection mid-body
	}
	w.Write(answer)
}

// holdEnd waits for X-Fake-Hold-End's release after a stream's last event.
func (s *Server) holdEnd(r *http.Request) {
	if name := r.Header.Get("X-Fake-Hold-End"); name != "" {
		select {
		case <-s.gate(name):
		case <-r.Context().Done():
		}
	}
}

// holdGate is the gate of X-Fake-Hold, nil without one.
func (s *Server) holdGate(r *http.Request) chan struct{} {
	if name := r.Header.Get("X-Fake-Hold"); name != "" {
		return s.gate(name)
	}
	return nil
}

// eachToken calls send for tokens 0 to n-1, pausing interval between two
// and, after the first, waiting for hold when it is not nil. False when
// send fails or the client leaves.
func eachToken(r *http.Request, n int, interval time.Duration, hold chan struct{}, send func(i int) bool) bool {
	for i := 0; i < n; i++ {
		if i > 0 && interval > 0 {
			select {
			case <-time.After(interval):
			case <-r.Context().Done():
				return false
			}
		}
		if !send(i) {
			return false
		}
		if i == 0 && hold != nil {
			select {
			case <-hold:
			case <-r.Context().Done():
				return false
			}
		}
	}
	return true
}

func (s *Server) completion(w http.ResponseWriter, r *http.Request) {
	s.running.Add(1)
	defer s.running.Add(-1)
	req, body, ok := s.begin(w, r, false, writeError)
	if !ok {
		return
	}
	tokens := s.tokens(r, req)
	cached, _ := s.simulatePrefixCache(r, req, body, tokens, "")
	if !s.await(w, r, req.Stream) {
		return
	}
	chat := r.URL.Path == "/v1/chat/completions"
	id := fmt.Sprintf("cmpl-%d", time.Now().UnixNano())
	created := time.Now().Unix()
	prompt := int(r.ContentLength) / 4 // a rough token count, like a tokenizer would give
	if !req.Stream {
		writeAnswer(w, r, s.answerJSON(chat, id, created, req.Model, tokens, prompt, s.cachedUsage(cached), headerInt(r, "X-Fake-Prompt-Logprobs", 0)))
		return
	}
	s.answerStream(w, r, chat, id, created, req, tokens, prompt, s.cachedUsage(cached), s.interval(r), s.holdGate(r))
	s.holdEnd(r)
}

// FailModes are the values of X-Fake-Fail: the ways a backend can break
// an answer, each at a different point of the exchange.
var FailModes = []string{
	"reset",             // the connection is reset (RST) before anything is sent
	"reset-after-head",  // the response head, then a reset
	"close-after-head",  // the response head, then a clean close (FIN): the body ends early
	"silent-after-head", // the response head, then nothing until the client closes
	"garbage-head",      // a response head that is not HTTP, then nothing until the client closes
	"bad-chunk",         // a chunked head, then a chunk size that is not hex, then nothing until the client closes
	"close-mid",         // part of the answer (a stream's first event, half a JSON body), then a clean close
}

// fail answers with a broken exchange (X-Fake-Fail: mode), on the raw
// connection: the head is what vLLM would send for this request (an event
// stream, or JSON with its Content-Length). Modes that wait for the client
// hold until it closes the connection (at most a minute): the gateway must
// be the one to let go.
func (s *Server) fail(w http.ResponseWriter, mode string, stream bool) {
	hj, ok := w.(http.Hijacker)
	if !ok || !slices.Contains(FailModes, mode) {
		writeError(w, http.StatusBadRequest, "unknown X-Fake-Fail mode "+strconv.Quote(mode))
		return
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	body := `{"id":"cmpl-fail","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"tok tok tok"},"finish_reason":"length"}],"usage":{"prompt_tokens":1,"total_tokens":4,"completion_tokens":3}}`
	event := "data: " + `{"id":"cmpl-fail","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"tok"},"finish_reason":null}]}` + "\n\n"
	head := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
	if stream {
		head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n"
	}
	reset := func() {
		if tc, ok := conn.(*net.TCPConn); ok {
			tc.SetLinger(0) //nolint:errcheck // a plain close is still a failure
		}
	}
	waitClose := func() {
		conn.SetReadDeadline(time.Now().Add(time.Minute)) //nolint:errcheck
		io.Copy(io.Discard, conn)                         //nolint:errcheck // until the client closes
	}
	switch mode {
	case "reset":
		reset()
	case "reset-after-head":
		io.WriteString(conn, head) //nolint:errcheck
		reset()
	case "close-after-head":
		io.WriteString(conn, head) //nolint:errcheck
	case "silent-after-head":
		io.WriteString(conn, head) //nolint:errcheck
		waitClose()
	case "garbage-head":
		io.WriteString(conn, "SPDY/9 bogus\r\n\x00\x01 not a header\r\n\r\n") //nolint:errcheck
		waitClose()
	case "bad-chunk":
		io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Type: "+map[bool]string{true: "text/event-stream", false: "application/json"}[stream]+
			"\r\nTransfer-Encoding: chunked\r\n\r\nzz-not-hex\r\n"+event+"\r\n") //nolint:errcheck
		waitClose()
	case "close-mid":
		if stream {
			io.WriteString(conn, head+fmt.Sprintf("%x\r\n%s\r\n", len(event), event)) //nolint:errcheck
		} else {
			io.WriteString(conn, head+body[:len(body)/2]) //nolint:errcheck
		}
	}
}

func (s *Server) word(i int) string {
	w := s.opts.Words[i%len(s.opts.Words)]
	if i > 0 {
		w = " " + w
	}
	return w
}

// usageJSON is a usage object; cached is prompt_tokens_details'
// cached_tokens, or -1 for "prompt_tokens_details":null (the simulation off).
func usageJSON(prompt, completion, cached int) string {
	details := "null"
	if cached >= 0 {
		details = fmt.Sprintf(`{"cached_tokens":%d}`, min(cached, prompt))
	}
	return fmt.Sprintf(`{"prompt_tokens":%d,"total_tokens":%d,"completion_tokens":%d,"prompt_tokens_details":%s}`,
		prompt, prompt+completion, completion, details)
}

// cachedUsage is the cached_tokens an answer reports: cached with
// Options.PrefixCache, -1 (none) without.
func (s *Server) cachedUsage(cached int) int {
	if s.apc == nil {
		return -1
	}
	return cached
}

// contentJSON is the text of an answer of tokens tokens as a JSON string:
// the words cycled, built a cycle at a time (answers of millions of tokens
// are built in milliseconds, even under the race detector).
func (s *Server) contentJSON(tokens int) []byte {
	var text strings.Builder
	for i := 0; i < min(tokens, len(s.opts.Words)); i++ {
		text.WriteString(s.word(i))
	}
	first, _ := json.Marshal(text.String()) // the first cycle (no leading space)
	if tokens <= len(s.opts.Words) {
		return first
	}
	var cycle, rest strings.Builder
	for i := len(s.opts.Words); i < 2*len(s.opts.Words); i++ {
		cycle.WriteString(s.word(i))
	}
	n := tokens - len(s.opts.Words)
	for i := 0; i < n%len(s.opts.Words); i++ {
		rest.WriteString(s.word(i + len(s.opts.Words)))
	}
	c, _ := json.Marshal(cycle.String())
	r, _ := json.Marshal(rest.String())
	// JSON escapes each character on its own, so the escaped cycles join.
	out := append([]byte(nil), first[:len(first)-1]...)
	out = append(out, bytes.Repeat(c[1:len(c)-1], n/len(s.opts.Words))...)
	out = append(out, r[1:]...)
	return out
}

// answerJSON is a whole (non-streamed) answer of tokens tokens.
func (s *Server) answerJSON(chat bool, id string, created int64, model string, tokens, prompt, cached, promptLogprobs int) []byte {
	content := s.contentJSON(tokens)
	if chat {
		lp := "null"
		if promptLogprobs > 0 {
			lp = "[null" + strings.Repeat(`,{"1":{"logprob":-0.25,"rank":1,"decoded_token":"usage"}}`, promptLogprobs) + "]"
		}
		return fmt.Appendf(nil, `{"id":"chat%s","object":"chat.completion","created":%d,"model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":%s,"tool_calls":[]},"logprobs":null,"finish_reason":"length","stop_reason":null}],"usage":%s,"prompt_logprobs":%s}`,
			id, created, model, content, usageJSON(prompt, tokens, cached), lp)
	}
	return fmt.Appendf(nil, `{"id":"%s","object":"text_completion","created":%d,"model":%q,"choices":[{"index":0,"text":%s,"logprobs":null,"finish_reason":"length","stop_reason":null}],"usage":%s}`,
		id, created, model, content, usageJSON(prompt, tokens, cached))
}

// answerStream writes one SSE event per token, like vLLM: each event is a
// complete "data: {…}\n\n" written and flushed on its own, then a finish
// event, a usage-only event when stream_options.include_usage is set, and
// "data: [DONE]".
func (s *Server) answerStream(w http.ResponseWriter, r *http.Request, chat bool, id string, created int64,
	req request, tokens, prompt, cached int, interval time.Duration, hold chan struct{}) {
	fl, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	send := func(payload string) bool {
		if _, err := io.WriteString(w, "data: "+payload+"\n\n"); err != nil {
			return false
		}
		if fl != nil {
			fl.Flush()
		}
		return true
	}
	chunk := func(delta string, finish string) string {
		fin := "null"
		if finish != "" {
			fin = `"` + finish + `"`
		}
		d, _ := json.Marshal(delta)
		if chat {
			return fmt.Sprintf(`{"id":"chat%s","object":"chat.completion.chunk","created":%d,"model":%q,"choices":[{"index":0,"delta":{"role":"assistant","content":%s},"logprobs":null,"finish_reason":%s,"stop_reason":null}]}`,
				id, created, req.Model, d, fin)
		}
		return fmt.Sprintf(`{"id":"%s","object":"text_completion","created":%d,"model":%q,"choices":[{"index":0,"text":%s,"logprobs":null,"finish_reason":%s,"stop_reason":null}]}`,
			id, created, req.Model, d, fin)
	}
	if !eachToken(r, tokens, interval, hold, func(i int) bool { return send(chunk(s.word(i), "")) }) {
		return
	}
	if !send(chunk("", "length")) {
		return
	}
	if req.IncludeUsage {
		object := "text_completion"
		if chat {
			object = "chat.completion.chunk"
		}
		send(fmt.Sprintf(`{"id":"chat%s","object":"%s","created":%d,"model":%q,"choices":[],"usage":%s}`,
			id, object, created, req.Model, usageJSON(prompt, tokens, cached)))
	}
	send("[DONE]")
}

func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	s.running.Add(1)
	defer s.running.Add(-1)
	req, err := s.record(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
		return
	}
	if !s.keyServed(w, r) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"embd-%d","object":"list","created":%d,"model":%q,"data":[{"index":0,"object":"embedding","embedding":[0.1,-0.2,0.3,0.05]}],"usage":{"prompt_tokens":4,"total_tokens":4,"completion_tokens":0}}`,
		time.Now().UnixNano(), time.Now().Unix(), req.Model)
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"object":"list","data":[{"id":"fake","object":"model","created":%d,"owned_by":"vllm"}]}`, time.Now().Unix())
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	defer s.checks.Add(1)
	if !s.healthy.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
}

func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	fmt.Fprintf(w, "# HELP vllm:num_requests_running Number of requests in model execution batches.\n"+
		"# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"fake\"} %d\n"+
		"# HELP vllm:num_requests_waiting Number of requests waiting to be processed.\n"+
		"# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{model_name=\"fake\"} 0\n"+
		"# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.\n"+
		"# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc{model_name=\"fake\"} %g\n"+
		"# HELP vllm:prefix_cache_queries_total Prefix cache queries, in terms of number of queried tokens.\n"+
		"# TYPE vllm:prefix_cache_queries_total counter\nvllm:prefix_cache_queries_total{model_name=\"fake\"} %d\n"+
		"# HELP vllm:prefix_cache_hits_total Prefix cache hits, in terms of number of cached tokens.\n"+
		"# TYPE vllm:prefix_cache_hits_total counter\nvllm:prefix_cache_hits_total{model_name=\"fake\"} %d\n",
		s.running.Load(), math.Float64frombits(s.kvUsage.Load()), s.apcQuery.Load(), s.apcHits.Load())
	s.metricsN.Add(1)
}
