package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/shm"
)

// outcomesConfig is the configuration every case of TestOutcomes runs on
// (a gateway of its own per case, so that limits and queues start empty).
const outcomesConfig = `listen: 127.0.0.1:0
usage_log: "off"
max_body: 65536
client_body_timeout: 300ms
keys:
  - {name: a, sha256: "{{key a}}", models: ["*"]}
  - {name: b, sha256: "{{key b}}", models: [m1]}
  - {name: rpm, sha256: "{{key rpm}}", models: ["*"], requests_per_minute: 1}
  - {name: tpm, sha256: "{{key tpm}}", models: ["*"], tokens_per_minute: 1000}
  - {name: conc, sha256: "{{key conc}}", models: ["*"], max_concurrent: 1}
  - {name: chatter, sha256: "{{key chatter}}", models: [chatonly]}
models:
  - name: m1
    upstream_model: up-m1
    backends:
      - {url: "http://b1.test:8000", slots: 4}
      - {url: "http://b2.test:8000", slots: 4}
  - name: chatonly
    endpoints: [chat]
    backends: [{url: "http://b3.test:8000", slots: 4}]
  - name: solo
    queue: {max: 0}
    backends: [{url: "http://b4.test:8000", slots: 1}]
  - name: waits
    queue: {max: 4, timeout: 200ms, max_per_key: 1}
    backends: [{url: "http://b5.test:8000", slots: 1}]
  - name: down
    backends: [{url: "http://down.test:8000", slots: 4}]
  - name: slow
    timeouts: {total: 300ms, stream_idle: 200ms}
    backends: [{url: "http://b7.test:8000", slots: 4}]
  - name: firsttoken
    timeouts: {first_token_deadline: 100ms}
    backends: [{url: "http://b9.test:8000", slots: 4}]
  - name: keyed
    backends: [{url: "http://b8.test:8000", slots: 4, api_keys_env: [SLUICE_TEST_K1, SLUICE_TEST_K2]}]
`

// apiCase is one API as a client calls it, for the cases every API has.
type apiCase struct {
	name, path string
	body       string // a valid request; %q is the model
	anthropic  bool   // errors in Anthropic's shape, key in x-api-key
}

var outcomeAPIs = []apiCase{
	{"chat", "/v1/chat/completions", `{"model":%q,"messages":[{"role":"user","content":"hi"}]}`, false},
	{"completions", "/v1/completions", `{"model":%q,"prompt":"hi"}`, false},
	{"embeddings", "/v1/embeddings", `{"model":%q,"input":"hi"}`, false},
	{"responses", "/v1/responses", `{"model":%q,"input":"hi"}`, false},
	{"messages", "/v1/messages", `{"model":%q,"max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`, true},
	{"count_tokens", "/v1/messages/count_tokens", `{"model":%q,"messages":[{"role":"user","content":"hi"}]}`, true},
	{"rerank", "/v1/rerank", `{"model":%q,"query":"q","documents":["a","b"]}`, false},
	{"rerank-v2", "/v2/rerank", `{"model":%q,"query":"q","documents":["a","b"]}`, false},
	{"score", "/v1/score", `{"model":%q,"text_1":"a","text_2":"b"}`, false},
	{"tokenize", "/tokenize", `{"model":%q,"prompt":"hi"}`, false},
	{"detokenize", "/detokenize", `{"model":%q,"tokens":[1,2]}`, false},
	{"pooling", "/pooling", `{"model":%q,"input":"hi"}`, false},
	{"classify", "/classify", `{"model":%q,"input":"hi"}`, false},
}

// clientCase is one request and what its client must see.
type clientCase struct {
	name    string
	req     request
	scripts map[string]backendScript
	// before runs once the gateway is up, before the request (to hold a
	// slot, say); what it returns runs after the answer.
	before func(t *testing.T, p *pipeline) (after func())
	// send, when set, sends the request itself (a client that stalls or
	// leaves) instead of p.do.
	send func(t *testing.T, p *pipeline) answer

	status     int
	code       string // the usage line's error (and the body's code, in OpenAI's shape); "" none
	anthropic  bool   // the gateway's error is in Anthropic's shape
	passed     bool   // the body is the backend's, passed through
	retryAfter string // the Retry-After header; "" none, "*" any
	upstream   int    // requests the backends received in all; -1 not checked
	check      func(t *testing.T, p *pipeline, a answer)
}

// TestOutcomes drives one request through every phase of the pipeline,
// in this process, for each seen a client can see: every status and
// error code of docs/api.md's table, per API where an API changes it.
func TestOutcomes(t *testing.T) {
	t.Setenv("SLUICE_TEST_K1", "pk-1")
	t.Setenv("SLUICE_TEST_K2", "pk-2")
	cases := append(apiOutcomes(), outcomes()...)
	if len(cases) < 100 {
		t.Fatalf("%d cases: the table lost some", len(cases))
	}
	for _, oc := range cases {
		t.Run(oc.name, func(t *testing.T) {
			p := newPipeline(t, outcomesConfig, oc.scripts)
			after := func() {}
			if oc.before != nil {
				after = oc.before(t, p)
			}
			var a answer
			if oc.send != nil {
				a = oc.send(t, p)
			} else {
				a = p.do(oc.req)
			}
			after()
			oc.verify(t, p, a)
		})
	}
}

// verify checks what every answer must show: its status, its error in
// the API's shape, Retry-After, the request id and a usage line that
// agrees, and how many requests went upstream.
func (oc clientCase) verify(t *testing.T, p *pipeline, a answer) {
	t.Helper()
	if a.res.StatusCode != oc.status {
		t.Fatalf("status %d, want %d: %s", a.res.StatusCode, oc.status, a.body)
	}
	if got := a.res.Header.Get("Retry-After"); got != oc.retryAfter && (oc.retryAfter != "*" || got == "") {
		t.Errorf("Retry-After %q, want %q", got, oc.retryAfter)
	}
	if oc.code != "" && !oc.passed && oc.status != statusClientClosed { // a client that left reads nothing
		checkErrorShape(t, a.body, oc.code, oc.anthropic)
	}
	if a.line == nil {
		t.Fatalf("no usage line for X-Request-Id %q (lines: %v)", a.res.Header.Get("X-Request-Id"), p.lines.lines)
	}
	if got := a.line["error"]; got != oc.code {
		t.Errorf("usage line error %q, want %q", got, oc.code)
	}
	if got := int(a.line["status"].(float64)); got != oc.status && !(oc.anthropic && got != 0) {
		t.Errorf("usage line status %d, want %d", got, oc.status)
	}
	if oc.upstream >= 0 {
		n := 0
		for _, b := range p.backends {
			n += len(b.received())
		}
		if n != oc.upstream {
			t.Errorf("%d requests upstream, want %d", n, oc.upstream)
		}
	}
	if oc.check != nil {
		oc.check(t, p, a)
	}
}

// checkErrorShape checks an error answer's body: OpenAI's
// {"error":{"message","type","param","code"}} with code, or Anthropic's
// {"type":"error","error":{"type","message"}}.
func checkErrorShape(t *testing.T, body []byte, code string, anthropic bool) {
	t.Helper()
	var e struct {
		Type  string `json:"type"`
		Error *struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Code    *string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error == nil || e.Error.Message == "" || e.Error.Type == "" {
		t.Fatalf("not an error in the API's shape (%v): %s", err, body)
	}
	switch {
	case anthropic && (e.Type != "error" || e.Error.Code != nil):
		t.Errorf("not Anthropic's shape: %s", body)
	case !anthropic && (e.Error.Code == nil || *e.Error.Code != code):
		t.Errorf("code in the body: %s, want %q", body, code)
	}
}

// apiOutcomes are the outcomes every API has: served, no key, a wrong
// key, no such model, a model the key may not use, a model that does not
// serve the API.
func apiOutcomes() []clientCase {
	var cs []clientCase
	for _, api := range outcomeAPIs {
		body := fmt.Sprintf(api.body, "m1")
		ok := request{path: api.path, key: "a", body: body}
		if api.anthropic {
			ok = request{path: api.path, header: map[string]string{"X-Api-Key": testKey("a"), "Anthropic-Version": "2023-06-01"}, body: body}
		}
		cs = append(cs, clientCase{name: api.name + "/served", req: ok, status: 200, upstream: 1,
			check: func(t *testing.T, p *pipeline, a answer) { checkForwarded(t, p, a, api.path) }})
		cs = append(cs, clientCase{name: api.name + "/missing_api_key", req: request{path: api.path, body: body},
			status: 401, code: "missing_api_key", anthropic: api.anthropic})
		wrong := ok
		wrong.key, wrong.header = "nobody", nil
		cs = append(cs, clientCase{name: api.name + "/invalid_api_key", req: wrong,
			status: 401, code: "invalid_api_key", anthropic: api.anthropic})
		unknown := ok
		unknown.body = fmt.Sprintf(api.body, "no-such-model")
		cs = append(cs, clientCase{name: api.name + "/model_not_found", req: unknown,
			status: 404, code: "model_not_found", anthropic: api.anthropic})
		notAllowed := request{path: api.path, key: "b", body: fmt.Sprintf(api.body, "solo")}
		cs = append(cs, clientCase{name: api.name + "/model_not_allowed", req: notAllowed,
			status: 403, code: "model_not_allowed", anthropic: api.anthropic})
		if api.name != "chat" {
			notServed := request{path: api.path, key: "chatter", body: fmt.Sprintf(api.body, "chatonly")}
			cs = append(cs, clientCase{name: api.name + "/endpoint_not_served", req: notServed,
				status: 404, code: "endpoint_not_served", anthropic: api.anthropic})
		}
	}
	for i := range cs {
		if cs[i].status != 200 {
			cs[i].upstream = 0
		}
	}
	return cs
}

// checkForwarded checks what a served request sent upstream: the path,
// the configured upstream model, the gateway's request id, none of the
// client's credentials; and what the client got.
func checkForwarded(t *testing.T, p *pipeline, a answer, path string) {
	t.Helper()
	var got []call
	for _, b := range p.backends {
		got = append(got, b.received()...)
	}
	if len(got) != 1 {
		t.Fatalf("%d requests upstream", len(got))
	}
	c := got[0]
	if c.Target != path {
		t.Errorf("upstream path %q, want %q", c.Target, path)
	}
	if !strings.Contains(string(c.Body), `"model":"up-m1"`) {
		t.Errorf("upstream body does not name up-m1: %s", c.Body)
	}
	if c.Header.Get("Authorization") != "" || c.Header.Get("X-Api-Key") != "" {
		t.Errorf("the client's key went upstream: %v", c.Header)
	}
	if id := a.res.Header.Get("X-Request-Id"); id == "" || c.Header.Get("X-Request-Id") != id {
		t.Errorf("X-Request-Id upstream %q, to the client %q", c.Header.Get("X-Request-Id"), id)
	}
	if a.line["key"] != "a" || a.line["model"] != "m1" || a.line["backend"] == "" {
		t.Errorf("usage line: %v", a.line)
	}
}

const chatPath = "/v1/chat/completions"

// chatReq is a chat completion request of key to model, with extra members.
func chatReq(key, model, extra string) request {
	return request{path: chatPath, key: key, body: `{"model":"` + model + `"` + extra + `,"messages":[{"role":"user","content":"hi"}]}`}
}

// outcomes are the rest of docs/api.md's table, and what a backend's
// failures become.
func outcomes() []clientCase {
	cs := []clientCase{
		// 400s: bodies the gateway cannot read as the backend would.
		{name: "invalid_json/empty", req: request{path: chatPath, key: "a"}, status: 400, code: "invalid_json"},
		{name: "invalid_json/not_json", req: request{path: chatPath, key: "a", body: `{"model":`}, status: 400, code: "invalid_json"},
		{name: "invalid_json/array", req: request{path: chatPath, key: "a", body: `[{"model":"m1"}]`}, status: 400, code: "invalid_json"},
		{name: "invalid_json/trailing", req: request{path: chatPath, key: "a", body: `{"model":"m1"} {}`}, status: 400, code: "invalid_json"},
		{name: "invalid_json/deep", req: request{path: chatPath, key: "a", body: `{"model":"m1","x":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`}, status: 400, code: "invalid_json"},
		{name: "invalid_json/messages", req: request{path: "/v1/messages", key: "a", body: `{"model":`}, status: 400, code: "invalid_json", anthropic: true},
		{name: "invalid_field/duplicate_model", req: request{path: chatPath, key: "b", body: `{"model":"m1","model":"solo"}`}, status: 400, code: "invalid_field",
			check: wantParam("model")},
		{name: "invalid_field/escaped_key", req: request{path: chatPath, key: "b", body: `{"mod\u0065l":"m1"}`}, status: 400, code: "invalid_field"},
		{name: "invalid_field/model_number", req: request{path: chatPath, key: "a", body: `{"model":7}`}, status: 400, code: "invalid_field"},
		{name: "invalid_field/stream_string", req: chatReq("a", "m1", `,"stream":"yes"`), status: 400, code: "invalid_field"},
		{name: "missing_model/absent", req: request{path: chatPath, key: "a", body: `{"messages":[]}`}, status: 400, code: "missing_model"},
		{name: "missing_model/null", req: request{path: chatPath, key: "a", body: `{"model":null}`}, status: 400, code: "missing_model"},
		{name: "missing_model/empty", req: request{path: chatPath, key: "a", body: `{"model":""}`}, status: 400, code: "missing_model"},
		{name: "unsupported_field/request_id", req: request{path: "/v1/responses", key: "a", body: `{"model":"m1","input":"hi","request_id":"mine"}`},
			status: 400, code: "unsupported_field", check: wantParam("request_id")},
		{name: "unsupported_field/background", req: request{path: "/v1/responses", key: "a", body: `{"model":"m1","input":"hi","background":true}`},
			status: 400, code: "unsupported_field", check: wantParam("background")},
		// (Past the first 8 KiB, which hertz reads with the head: a body
		// that ends or stalls within them never reaches a handler, and the
		// worker's client_header_timeout closes its connection.)
		{name: "incomplete_body/short", send: func(t *testing.T, p *pipeline) answer {
			r := bigChat(20000)
			raw := r.bytes()
			return p.serve(context.Background(), newMemConn(raw[:len(raw)-8000], false))
		}, status: 400, code: "incomplete_body", check: wantClosed},
		{name: "incomplete_body/chunked_framing", send: func(t *testing.T, p *pipeline) answer {
			raw := "POST " + chatPath + " HTTP/1.1\r\nHost: gw.test\r\nAuthorization: Bearer " + testKey("a") +
				"\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"mod"
			return p.serve(context.Background(), newMemConn([]byte(raw), false))
		}, status: 400, code: "incomplete_body"},

		// Paths and methods.
		{name: "unknown_url", req: request{path: "/v1/nothing", key: "a", body: `{}`}, status: 404, code: "unknown_url"},
		{name: "unknown_url/trailing_slash", req: request{method: "GET", path: "/v1/models/", key: "a"}, status: 404, code: "unknown_url"},
		{name: "method_not_allowed/get_chat", req: request{method: "GET", path: chatPath, key: "a"}, status: 405, code: "method_not_allowed"},
		{name: "method_not_allowed/put_messages", req: request{method: "PUT", path: "/v1/messages", key: "a", body: `{}`}, status: 405, code: "method_not_allowed", anthropic: true},
		{name: "models/list", req: request{method: "GET", path: "/v1/models", key: "b"}, status: 200, check: func(t *testing.T, _ *pipeline, a answer) {
			var l struct{ Data []struct{ ID string } }
			if err := json.Unmarshal(a.body, &l); err != nil || len(l.Data) != 1 || l.Data[0].ID != "m1" {
				t.Errorf("key b's models: %s", a.body)
			}
		}},
		{name: "models/missing_api_key", req: request{method: "GET", path: "/v1/models"}, status: 401, code: "missing_api_key"},

		// Sizes and times of the client's request.
		{name: "request_too_large/declared", req: request{path: chatPath, key: "a", body: `{"model":"m1","x":"` + strings.Repeat("x", 70000) + `"}`},
			status: 413, code: "request_too_large", check: wantClosed},
		{name: "request_too_large/chunked", req: request{path: chatPath, key: "a", chunked: true, body: `{"model":"m1","x":"` + strings.Repeat("x", 70000) + `"}`},
			status: 413, code: "request_too_large", check: wantClosed},
		{name: "request_too_large/messages", req: request{path: "/v1/messages", key: "a", body: `{"model":"m1","x":"` + strings.Repeat("x", 70000) + `"}`},
			status: 413, code: "request_too_large", anthropic: true},
		{name: "request_timeout/stalled_body", send: func(t *testing.T, p *pipeline) answer {
			raw := bigChat(20000).bytes()
			// The head and most of the body, then nothing: the client stalls.
			conn := newMemConn(raw[:len(raw)-8000], true)
			t.Cleanup(conn.shut)
			return p.serve(context.Background(), conn)
		}, status: 408, code: "request_timeout", check: wantClosed},
		{name: "uri_too_long", req: request{method: "GET", path: "/v1/models?x=" + strings.Repeat("a", 9000), key: "a"}, status: 414, code: "uri_too_long", check: wantClosed},
		{name: "header_too_large", req: request{path: chatPath, key: "a", header: map[string]string{"X-Big": strings.Repeat("b", 9000)}, body: `{"model":"m1"}`},
			status: 431, code: "header_too_large", check: wantClosed},
		{name: "client_closed", send: clientLeaves, status: statusClientClosed, code: "client_closed", upstream: 1},
	}
	cs = append(cs, limitOutcomes()...)
	cs = append(cs, queueOutcomes()...)
	cs = append(cs, backendOutcomes()...)
	return cs
}

// bigChat is a chat request of key a to m1 whose body is n bytes.
func bigChat(n int) request {
	r := chatReq("a", "m1", `,"x":"`)
	r.body = strings.Replace(r.body, `"x":"`, `"x":"`+strings.Repeat("x", n-len(r.body)-1)+`"`, 1)
	return r
}

// wantParam checks the OpenAI error's param.
func wantParam(param string) func(t *testing.T, _ *pipeline, a answer) {
	return func(t *testing.T, _ *pipeline, a answer) {
		if !strings.Contains(string(a.body), `"param":"`+param+`"`) {
			t.Errorf("param is not %q: %s", param, a.body)
		}
	}
}

// wantClosed checks that the answer says the connection closes.
func wantClosed(t *testing.T, _ *pipeline, a answer) {
	if !a.res.Close {
		t.Errorf("the connection stays open after %d: %q", a.res.StatusCode, a.raw)
	}
}

// clientLeaves sends a request whose backend never answers, and leaves
// once it went upstream: a usage line with 499, nothing more.
func clientLeaves(t *testing.T, p *pipeline) answer {
	b := p.backends["http://b1.test:8000"]
	b.script = func(ctx context.Context, _ int, _ call) (*http.Response, error) {
		<-ctx.Done()
		return nil, context.Cause(ctx)
	}
	p.backends["http://b2.test:8000"].script = b.script
	ctx, leave := context.WithCancel(context.Background())
	conn := newMemConn(chatReq("a", "m1", "").bytes(), false)
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.engine.Serve(ctx, conn) //nolint:errcheck // the client left
	}()
	waitFor(t, "the request to reach its backend", func() bool { return len(b.received())+len(p.backends["http://b2.test:8000"].received()) > 0 })
	leave()
	conn.Close()
	<-done
	if w := conn.written(); len(w) > 0 {
		t.Errorf("a client that left was answered: %q", w)
	}
	var line map[string]any
	waitFor(t, "the usage line", func() bool {
		p.lines.mu.Lock()
		defer p.lines.mu.Unlock()
		if len(p.lines.lines) > 0 {
			line = p.lines.lines[0]
		}
		return line != nil
	})
	return answer{res: &http.Response{StatusCode: statusClientClosed, Header: http.Header{}}, line: line}
}

// waitFor polls cond until it holds, failing the test after 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// holdSlot sends r and keeps the backend of model it goes to from
// answering it until
// the returned release: the request holds its slot (and the key's
// concurrency) meanwhile. Its own answer is checked to be a 200.
func holdSlot(t *testing.T, p *pipeline, model string, r request) (release func()) {
	t.Helper()
	gate := make(chan struct{})
	var held atomic.Bool
	hold := func(ctx context.Context, n int, c call) (*http.Response, error) {
		if held.CompareAndSwap(false, true) {
			select {
			case <-gate:
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		}
		return answerOK(ctx, n, c)
	}
	var bs []*scriptedBackend
	for _, m := range p.g.routes.current.Load().models[model].backends {
		b := p.backends[m.url]
		b.mu.Lock()
		b.script = hold
		b.mu.Unlock()
		bs = append(bs, b)
	}
	done := make(chan answer, 1)
	go func() { done <- p.serve(context.Background(), newMemConn(r.bytes(), false)) }()
	waitFor(t, "the held request to reach a backend of "+model, func() bool { return held.Load() })
	return func() {
		close(gate)
		if a := <-done; a.res.StatusCode != 200 {
			t.Errorf("the held request: %d %s", a.res.StatusCode, a.body)
		}
	}
}

// limitOutcomes are the key limits' refusals.
func limitOutcomes() []clientCase {
	return []clientCase{
		{name: "rate_limit_exceeded/requests", before: func(t *testing.T, p *pipeline) func() {
			if a := p.do(chatReq("rpm", "m1", "")); a.res.StatusCode != 200 {
				t.Fatalf("first request: %d", a.res.StatusCode)
			}
			return func() {}
		}, req: chatReq("rpm", "m1", ""), status: 429, code: "rate_limit_exceeded", retryAfter: "60", upstream: 1,
			check: func(t *testing.T, _ *pipeline, a answer) {
				if a.res.Header.Get("X-Ratelimit-Limit-Requests") != "1" || a.res.Header.Get("X-Ratelimit-Remaining-Requests") != "0" {
					t.Errorf("x-ratelimit headers: %v", a.res.Header)
				}
				wantType(t, a, "requests")
			}},
		// The region's clock is the test's: the limit refills when it is
		// moved on, and not before.
		{name: "rate_limit_exceeded/requests_refill", send: func(t *testing.T, p *pipeline) answer {
			if a := p.do(chatReq("rpm", "m1", "")); a.res.StatusCode != 200 {
				t.Fatalf("first request: %d", a.res.StatusCode)
			}
			p.clock.advance(59 * time.Second)
			a := p.do(chatReq("rpm", "m1", ""))
			if a.res.StatusCode != 429 || a.res.Header.Get("Retry-After") != "1" || a.res.Header.Get("X-Ratelimit-Reset-Requests") != "1s" {
				t.Fatalf("59 s later: %d, Retry-After %q, reset %q", a.res.StatusCode, a.res.Header.Get("Retry-After"), a.res.Header.Get("X-Ratelimit-Reset-Requests"))
			}
			p.clock.advance(time.Second)
			return p.do(chatReq("rpm", "m1", ""))
		}, status: 200, upstream: 2, check: func(t *testing.T, _ *pipeline, a answer) {
			if a.res.Header.Get("X-Ratelimit-Remaining-Requests") != "0" || a.res.Header.Get("X-Ratelimit-Reset-Requests") != "1m0s" {
				t.Errorf("headers after the refill: %v", a.res.Header)
			}
		}},
		{name: "rate_limit_exceeded/requests_messages", before: func(t *testing.T, p *pipeline) func() {
			p.do(chatReq("rpm", "m1", ""))
			return func() {}
		}, req: request{path: "/v1/messages", key: "rpm", body: `{"model":"m1","max_tokens":5,"messages":[]}`},
			status: 429, code: "rate_limit_exceeded", anthropic: true, retryAfter: "*", upstream: 1},
		{name: "rate_limit_exceeded/tokens_never_fit", req: chatReq("tpm", "m1", `,"max_tokens":5000`),
			status: 429, code: "rate_limit_exceeded", upstream: 0, check: func(t *testing.T, _ *pipeline, a answer) { wantType(t, a, "tokens") }},
		{name: "rate_limit_exceeded/tokens_spent", before: func(t *testing.T, p *pipeline) func() {
			return holdSlot(t, p, "m1", chatReq("tpm", "m1", `,"max_tokens":900`))
		}, req: chatReq("tpm", "m1", `,"max_tokens":500`), status: 429, code: "rate_limit_exceeded", upstream: 1,
			check: func(t *testing.T, _ *pipeline, a answer) {
				wantType(t, a, "tokens")
				if a.res.Header.Get("Retry-After") == "" || a.res.Header.Get("X-Ratelimit-Limit-Tokens") != "1000" {
					t.Errorf("headers: %v", a.res.Header)
				}
			}, retryAfter: "*"},
		{name: "rate_limit_exceeded/concurrency", before: func(t *testing.T, p *pipeline) func() {
			return holdSlot(t, p, "m1", chatReq("conc", "m1", ""))
		}, req: chatReq("conc", "m1", ""), status: 429, code: "rate_limit_exceeded", retryAfter: "1", upstream: 1,
			check: func(t *testing.T, _ *pipeline, a answer) { wantType(t, a, "concurrency") }},
		{name: "rate_limit_exceeded/concurrency_released", before: func(t *testing.T, p *pipeline) func() {
			holdSlot(t, p, "m1", chatReq("conc", "m1", ""))()
			return func() {}
		}, req: chatReq("conc", "m1", ""), status: 200, upstream: 2},
	}
}

// wantType checks a rate limit error's type (requests, tokens or
// concurrency).
func wantType(t *testing.T, a answer, typ string) {
	t.Helper()
	if !strings.Contains(string(a.body), typ) {
		t.Errorf("not a %s limit: %s", typ, a.body)
	}
}

// queueOutcomes are the queue's refusals.
func queueOutcomes() []clientCase {
	queued := func(model string, n int64) func(t *testing.T, p *pipeline) bool {
		return func(t *testing.T, p *pipeline) bool { return p.g.region.Lookup(shm.QueueCell(model)).Total() >= n }
	}
	return []clientCase{
		{name: "queue/other_model_served", before: func(t *testing.T, p *pipeline) func() {
			return holdSlot(t, p, "solo", chatReq("a", "solo", ""))
		}, req: chatReq("b", "m1", ""), status: 200, upstream: 2},
		{name: "queue_full/no_queue", before: func(t *testing.T, p *pipeline) func() {
			return holdSlot(t, p, "solo", chatReq("a", "solo", ""))
		}, req: chatReq("a", "solo", ""), status: 429, code: "queue_full", retryAfter: "1", upstream: 1},
		{name: "queue_full/messages_overloaded", before: func(t *testing.T, p *pipeline) func() {
			return holdSlot(t, p, "solo", chatReq("a", "solo", ""))
		}, req: request{path: "/v1/messages", key: "a", body: `{"model":"solo","max_tokens":5,"messages":[]}`},
			status: 529, code: "queue_full", anthropic: true, retryAfter: "1", upstream: 1},
		{name: "queue_timeout/waited", before: func(t *testing.T, p *pipeline) func() {
			return holdSlot(t, p, "waits", chatReq("a", "waits", ""))
		}, req: chatReq("conc", "waits", ""), status: 503, code: "queue_timeout", retryAfter: "1", upstream: 1},
		{name: "queue_key_full", send: func(t *testing.T, p *pipeline) answer {
			release := holdSlot(t, p, "waits", chatReq("a", "waits", ""))
			defer release()
			// One of key a's waits in the queue (its one place, max_per_key 1) ...
			waiting := make(chan answer, 1)
			go func() { waiting <- p.do(chatReq("a", "waits", "")) }()
			waitFor(t, "a waiter in the queue", func() bool { return queued("waits", 1)(t, p) })
			// ... so its next is refused while another key still finds a place.
			a := p.do(chatReq("a", "waits", ""))
			if w := <-waiting; w.res.StatusCode != 503 {
				t.Errorf("the waiter: %d %s", w.res.StatusCode, w.body)
			}
			return a
		}, status: 429, code: "queue_key_full", retryAfter: "1", upstream: 1},
		{name: "queue/served_after_wait", send: func(t *testing.T, p *pipeline) answer {
			release := holdSlot(t, p, "waits", chatReq("a", "waits", ""))
			waiting := make(chan answer, 1)
			go func() { waiting <- p.do(chatReq("conc", "waits", "")) }()
			waitFor(t, "a waiter in the queue", func() bool { return queued("waits", 1)(t, p) })
			release()
			return <-waiting
		}, status: 200, upstream: 2, check: func(t *testing.T, _ *pipeline, a answer) {
			if a.line["queued"] != true {
				t.Errorf("usage line does not say it queued: %v", a.line)
			}
		}},
	}
}

// failWith is a backend that fails every request with err.
func failWith(err error) backendScript {
	return func(context.Context, int, call) (*http.Response, error) { return nil, err }
}

// answerWith is a backend that answers every request with status and body.
func answerWith(status int, body string) backendScript {
	return func(context.Context, int, call) (*http.Response, error) { return jsonResponse(status, body), nil }
}

// cutBody is an answer whose body ends before its declared length.
type cutBody struct{ sent bool }

func (b *cutBody) Read(p []byte) (int, error) {
	if b.sent {
		return 0, io.ErrUnexpectedEOF
	}
	b.sent = true
	return copy(p, `{"id":"x",`), nil
}

func (b *cutBody) Close() error { return nil }

// backendOutcomes are what the backends' answers and failures become.
func backendOutcomes() []clientCase {
	refused := syscall.ECONNREFUSED
	both := func(s backendScript) map[string]backendScript {
		return map[string]backendScript{"http://b1.test:8000": s, "http://b2.test:8000": s}
	}
	firstFails := func(status int) map[string]backendScript {
		// Whichever backend is asked first fails; the other answers.
		var asked atomic.Int32
		return both(func(ctx context.Context, n int, c call) (*http.Response, error) {
			if asked.Add(1) == 1 {
				return jsonResponse(status, `{"error":"busy"}`), nil
			}
			return answerOK(ctx, n, c)
		})
	}
	blocked := func(ctx context.Context, _ int, _ call) (*http.Response, error) {
		<-ctx.Done()
		return nil, context.Cause(ctx)
	}
	return []clientCase{
		{name: "no_healthy_backend", req: chatReq("a", "down", ""), status: 503, code: "no_healthy_backend", upstream: 0},
		{name: "no_healthy_backend/messages_overloaded", req: request{path: "/v1/messages", key: "a", body: `{"model":"down","max_tokens":5,"messages":[]}`},
			status: 529, code: "no_healthy_backend", anthropic: true, upstream: 0},
		{name: "upstream_unreachable", scripts: both(failWith(refused)), req: chatReq("a", "m1", ""), status: 502, code: "upstream_unreachable", upstream: 2,
			check: func(t *testing.T, _ *pipeline, a answer) {
				if a.line["attempts"] != 2.0 {
					t.Errorf("attempts: %v", a.line["attempts"])
				}
			}},
		{name: "upstream_unreachable/retried", scripts: map[string]backendScript{"http://b1.test:8000": failWith(refused), "http://b2.test:8000": failWith(refused)},
			req: chatReq("a", "m1", `,"stream":true`), status: 502, code: "upstream_unreachable", upstream: 2},
		{name: "upstream_failed/cut_answer", scripts: both(func(context.Context, int, call) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: &cutBody{}, ContentLength: 100}, nil
		}), req: chatReq("a", "m1", ""), status: 502, code: "upstream_failed", upstream: 1},
		{name: "upstream_failed/stream_before_first_event", scripts: map[string]backendScript{"http://b9.test:8000": func(context.Context, int, call) (*http.Response, error) {
			return sseResponse(), nil
		}}, req: chatReq("a", "firsttoken", `,"stream":true`), status: 502, code: "upstream_failed", upstream: 1},
		{name: "first_token_deadline/retried", scripts: map[string]backendScript{"http://b9.test:8000": func(ctx context.Context, n int, c call) (*http.Response, error) {
			if n == 0 {
				<-ctx.Done() // no first event: the deadline ends this attempt, and the next is asked
				return nil, context.Cause(ctx)
			}
			return answerOK(ctx, n, c)
		}}, req: chatReq("a", "firsttoken", `,"stream":true`), status: 200, upstream: 2, check: func(t *testing.T, _ *pipeline, a answer) {
			if a.line["first_token_retry"] != true {
				t.Errorf("usage line: %v", a.line)
			}
		}},
		{name: "upstream_timeout/total", scripts: map[string]backendScript{"http://b7.test:8000": blocked}, req: chatReq("a", "slow", ""),
			status: 504, code: "upstream_timeout", upstream: 1},
		{name: "upstream_timeout/stream_idle", scripts: map[string]backendScript{"http://b7.test:8000": blocked}, req: chatReq("a", "slow", `,"stream":true`),
			status: 504, code: "upstream_timeout", upstream: 1},
		{name: "retried/500_then_served", scripts: firstFails(500), req: chatReq("a", "m1", ""), status: 200, upstream: -1,
			check: wantRetried},
		{name: "retried/429_then_served", scripts: firstFails(429), req: chatReq("a", "m1", ""), status: 200, upstream: -1,
			check: wantRetried},
		// retries: 2 is three attempts: over two backends, the first is
		// asked again last.
		{name: "passed/429_everywhere", scripts: both(answerWith(429, `{"error":{"message":"busy","code":"busy"}}`)), req: chatReq("a", "m1", ""),
			status: 429, passed: true, upstream: 3, check: wantBody(`"busy"`)},
		{name: "passed/400_not_retried", scripts: both(answerWith(400, `{"error":{"message":"bad prompt"}}`)), req: chatReq("a", "m1", ""),
			status: 400, passed: true, upstream: 1, check: wantBody("bad prompt")},
		{name: "passed/503_everywhere", scripts: both(answerWith(503, `{"error":"down"}`)), req: chatReq("a", "m1", ""),
			status: 503, passed: true, upstream: 3},
		{name: "provider_keys_unusable", scripts: map[string]backendScript{"http://b8.test:8000": answerWith(401, `{"error":"bad key"}`)},
			req: chatReq("a", "keyed", ""), status: 502, code: "provider_keys_unusable", upstream: 2, check: func(t *testing.T, p *pipeline, _ answer) {
				seen := map[string]bool{}
				for _, c := range p.backends["http://b8.test:8000"].received() {
					seen[c.Header.Get("Authorization")] = true
				}
				if !seen["Bearer pk-1"] || !seen["Bearer pk-2"] {
					t.Errorf("provider keys tried: %v", seen)
				}
			}},
		{name: "provider_key/second_served", scripts: map[string]backendScript{"http://b8.test:8000": func(ctx context.Context, n int, c call) (*http.Response, error) {
			if c.Header.Get("Authorization") == "Bearer pk-1" {
				return jsonResponse(401, `{"error":"bad key"}`), nil
			}
			return answerOK(ctx, n, c)
		}}, req: chatReq("a", "keyed", ""), status: 200, upstream: -1},
		{name: "stream/served", req: chatReq("a", "m1", `,"stream":true`), status: 200, upstream: 1, check: func(t *testing.T, _ *pipeline, a answer) {
			if !strings.HasSuffix(string(a.body), "data: [DONE]\n\n") || strings.Contains(string(a.body), `"usage"`) {
				t.Errorf("stream as the client asked it (no usage event): %q", a.body)
			}
			if a.line["completion_tokens"] != 2.0 || a.line["stream"] != true {
				t.Errorf("usage line: %v", a.line)
			}
		}},
		{name: "stream/messages", req: request{path: "/v1/messages", key: "a", body: `{"model":"m1","max_tokens":5,"stream":true,"messages":[]}`},
			status: 200, upstream: 1, check: wantBody("message_stop")},
		{name: "stream/responses", req: request{path: "/v1/responses", key: "a", body: `{"model":"m1","input":"hi","stream":true}`},
			status: 200, upstream: 1, check: wantBody("response.completed")},
		{name: "response_not_found", req: request{method: "GET", path: "/v1/responses/resp_1", key: "chatter"},
			status: 404, code: "response_not_found", upstream: 0},
		{name: "stored/get", req: request{method: "GET", path: "/v1/responses/resp_1", key: "a"}, status: 200, upstream: -1},
	}
}

// wantRetried checks that the answer came from the second backend tried.
func wantRetried(t *testing.T, _ *pipeline, a answer) {
	tried, _ := a.line["backends_tried"].([]any)
	if a.line["attempts"] != 2.0 || len(tried) != 2 || tried[0] == tried[1] || a.line["backend"] != tried[1] {
		t.Errorf("not retried on the other backend: attempts %v, tried %v, served by %v", a.line["attempts"], tried, a.line["backend"])
	}
}

// wantBody checks that the answer's body contains s.
func wantBody(s string) func(t *testing.T, _ *pipeline, a answer) {
	return func(t *testing.T, _ *pipeline, a answer) {
		if !strings.Contains(string(a.body), s) {
			t.Errorf("body lacks %q: %s", s, a.body)
		}
	}
}
