package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// The OpenAI Responses API through the real binary: stored responses are
// kept by the vLLM instance that made them, so every request naming one
// must reach it, from any worker.

// keyChat may use only "chat-only", a model that serves chat alone.
const keyChat = "sk-test-chat-only"

// respConfig renders a configuration whose model "m" has the backends
// urls (with modelExtra YAML lines for the model, e.g. its affinity), a
// model "chat-only" (endpoints: [chat]) on the first of them, and the keys
// all ("*"), limited ("m", with keyLimits YAML lines) and chat ("chat-only").
func respConfig(usage string, urls []string, modelExtra, keyLimits string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `listen: 127.0.0.1:0
admin: 127.0.0.1:0
workers: 2
shutdown_timeout: 20s
usage_log: %s
keys:
  - name: all
    sha256: %s
    models: ["*"]
  - name: limited
    sha256: %s
    models: ["m"]
%s
  - name: chat
    sha256: %s
    models: ["chat-only"]
models:
  - name: m
%s
    backends:
`, usage, sha(keyAll), sha(keyLimited), indent(keyLimits, "    "), sha(keyChat), indent(modelExtra, "    "))
	for _, u := range urls {
		fmt.Fprintf(&b, "      - url: %s\n        slots: 64\n", u)
	}
	fmt.Fprintf(&b, `  - name: chat-only
    endpoints: [chat]
    backends:
      - url: %s
        slots: 64
`, urls[0])
	return b.String()
}

// indent puts prefix before every line of s ("" stays "").
func indent(s, prefix string) string {
	if s == "" {
		return ""
	}
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

// respGateway starts n fake backends and a gateway (respConfig) in front
// of them.
func respGateway(t *testing.T, n int, o fakevllm.Options, modelExtra, keyLimits string) (*gateway, []*fakevllm.Server) {
	t.Helper()
	var bes []*fakevllm.Server
	var urls []string
	for i := 0; i < n; i++ {
		be := startBackend(t, o)
		bes, urls = append(bes, be), append(urls, be.URL())
	}
	usage := filepath.Join(t.TempDir(), "usage.log")
	g := startGateway(t, respConfig(usage, urls, modelExtra, keyLimits))
	g.UsageLog = usage
	return g, bes
}

// sdk is an openai-go client of the gateway with key, a new connection per
// request (so requests spread over the workers) and no retries of its own.
func sdk(g *gateway, key string) openai.Client {
	return openai.NewClient(option.WithBaseURL(g.URL+"/v1/"), option.WithAPIKey(key),
		option.WithMaxRetries(0), option.WithHTTPClient(freshClient()))
}

// holders returns the indexes of the backends that keep the response id.
func holders(bes []*fakevllm.Server, id string) []int {
	var in []int
	for i, be := range bes {
		if be.HasResponse(id) {
			in = append(in, i)
		}
	}
	return in
}

// received counts the requests every backend received.
func receivedAll(bes []*fakevllm.Server) int {
	n := 0
	for _, be := range bes {
		n += len(be.Received())
	}
	return n
}

// The acceptance test. 3 backends round robin (affinity none: a
// follow-up would start anywhere), 2 workers, 50 conversations of 4 chained
// turns through openai-go, streamed and not: every follow-up is answered,
// each on its first attempt — the shared map sent it straight to the
// backend holding its previous response, whichever worker made that one.
func TestResponsesChainsAcrossWorkers(t *testing.T) {
	g, bes := respGateway(t, 3, fakevllm.Options{Tokens: 3}, "affinity: none", "")
	client := sdk(g, keyAll)
	ctx := context.Background()
	const conversations, turns = 50, 4
	type turn struct{ id, requestID string }
	chains := make([][turns]turn, conversations)
	errs := make(chan error, conversations)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for c := 0; c < conversations; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			prev := ""
			for k := 0; k < turns; k++ {
				params := responses.ResponseNewParams{
					Model: "m",
					Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(fmt.Sprintf("conversation %d turn %d", c, k))},
				}
				if prev != "" {
					params.PreviousResponseID = openai.String(prev)
				}
				var raw *http.Response
				id := ""
				if (c+k)%2 == 0 {
					stream := client.Responses.NewStreaming(ctx, params, option.WithResponseInto(&raw))
					for stream.Next() {
						if ev := stream.Current(); ev.Type == "response.completed" {
							id = ev.Response.ID
						}
					}
					if err := stream.Err(); err != nil {
						errs <- fmt.Errorf("conversation %d turn %d (stream): %v", c, k, err)
						return
					}
				} else {
					res, err := client.Responses.New(ctx, params, option.WithResponseInto(&raw))
					if err != nil {
						errs <- fmt.Errorf("conversation %d turn %d: %v", c, k, err)
						return
					}
					id = res.ID
				}
				if id == "" || raw == nil {
					errs <- fmt.Errorf("conversation %d turn %d: no response id", c, k)
					return
				}
				chains[c][k] = turn{id, raw.Header.Get("X-Request-Id")}
				prev = id
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}

	// Each conversation lives on one backend: the one that made its first
	// response made (and keeps) every later one.
	spread := map[int]int{}
	for c, chain := range chains {
		home := holders(bes, chain[0].id)
		if len(home) != 1 {
			t.Fatalf("conversation %d: first response kept by backends %v", c, home)
		}
		spread[home[0]]++
		for k, tr := range chain {
			if h := holders(bes, tr.id); len(h) != 1 || h[0] != home[0] {
				t.Errorf("conversation %d turn %d kept by backends %v, its first turn by %d", c, k, h, home[0])
			}
		}
	}
	if len(spread) != 3 {
		t.Errorf("conversations started on backends %v: round robin should use all 3", spread)
	}
	// No request was sent to a backend that did not hold its previous
	// response: not one 404 along the way.
	if n := receivedAll(bes); n != conversations*turns {
		t.Errorf("backends received %d requests for %d turns: follow-ups were sent where their previous response is not", n, conversations*turns)
	}
	await(t, "a usage line per turn", func() bool { return len(g.usageLines()) >= conversations*turns })
	byID := map[string]map[string]any{}
	for _, l := range g.usageLines() {
		byID[l["request_id"].(string)] = l
	}
	crossed, workers, wrong := 0, map[float64]bool{}, 0
	for c, chain := range chains {
		for k, tr := range chain {
			l := byID[tr.requestID]
			if l == nil {
				t.Fatalf("conversation %d turn %d: no usage line for %q", c, k, tr.requestID)
			}
			if l["status"] != 200.0 || l["attempts"] != 1.0 || l["path"] != "/v1/responses" {
				if wrong++; wrong <= 3 {
					t.Errorf("conversation %d turn %d: usage line %v", c, k, l)
				}
			}
			workers[l["worker"].(float64)] = true
			if k > 0 && l["worker"] != byID[chain[k-1].requestID]["worker"] {
				crossed++
			}
		}
	}
	if wrong > 0 {
		t.Errorf("%d of %d turns not answered at once by the first backend asked", wrong, conversations*turns)
	}
	if len(workers) < 2 || crossed == 0 {
		t.Fatalf("the turns never crossed workers (workers %v, follow-ups on another worker than their previous turn: %d): the test proves nothing", workers, crossed)
	}
	t.Logf("conversations per backend %v; %d follow-ups made on another worker than their previous turn", spread, crossed)
}

// respBody is a Responses request's JSON.
func respBody(fields map[string]any) []byte {
	m := map[string]any{"model": "m", "input": "hello"}
	for k, v := range fields {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return b
}

// postResp sends a Responses request with key keyAll and returns its answer.
func postResp(t *testing.T, g *gateway, body []byte, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	return post(t, freshClient(), g.URL+"/v1/responses", keyAll, body, hdr)
}

// responseID is the "id" of a Responses answer.
func responseID(t *testing.T, body []byte) string {
	t.Helper()
	var r struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(body, &r) != nil || !strings.HasPrefix(r.ID, "resp_") {
		t.Fatalf("not a response: %s", body)
	}
	return r.ID
}

// homeOf is the backend (index) user's requests go to first under
// affinity user: a response made with store false is sent there.
func homeOf(t *testing.T, g *gateway, bes []*fakevllm.Server, user string) int {
	t.Helper()
	before := make([]int, len(bes))
	for i, be := range bes {
		before[i] = len(be.Received())
	}
	if res, out := postResp(t, g, respBody(map[string]any{"user": user, "store": false}), nil); res.StatusCode != 200 {
		t.Fatalf("probe of %s: %d %s", user, res.StatusCode, out)
	}
	for i, be := range bes {
		if len(be.Received()) > before[i] {
			return i
		}
	}
	t.Fatal("the probe reached no backend")
	return -1
}

// The map forgets — a response made on a backend directly, or a gateway
// restarted since (its shared region is new): the follow-up still
// succeeds, asking the backends in turn (404 → the next), with no
// ejection: the backend that said 404 keeps serving.
func TestResponsesFollowUpMapForgot(t *testing.T) {
	be0, be1 := startBackend(t, fakevllm.Options{Tokens: 2}), startBackend(t, fakevllm.Options{Tokens: 2})
	bes := []*fakevllm.Server{be0, be1}
	dir := t.TempDir()
	usage := filepath.Join(dir, "usage.log")
	cfg := respConfig(usage, []string{be0.URL(), be1.URL()}, "affinity: user", "")
	g := startGateway(t, cfg)
	g.UsageLog = usage

	// Two users whose requests go first to different backends.
	homes := map[int]string{}
	for i := 0; len(homes) < 2; i++ {
		if i == 40 {
			t.Fatalf("40 users, all on one backend: %v", homes)
		}
		u := fmt.Sprintf("user-%d", i)
		if h := homeOf(t, g, bes, u); homes[h] == "" {
			homes[h] = u
		}
	}

	followUp := func(g *gateway, user, prev string, holder int) {
		t.Helper()
		res, out := postResp(t, g, respBody(map[string]any{"user": user, "previous_response_id": prev}), nil)
		if res.StatusCode != 200 {
			t.Fatalf("follow-up of %s: %d %s", prev, res.StatusCode, out)
		}
		if h := holders(bes, responseID(t, out)); len(h) != 1 || h[0] != holder {
			t.Errorf("follow-up of a response on backend %d made on %v", holder, h)
		}
		l := g.usageLineFor(t, res.Header.Get("X-Request-Id"))
		tried, _ := l["backends_tried"].([]any)
		if l["attempts"] != 2.0 || len(tried) != 2 || tried[0] != bes[1-holder].URL() || tried[1] != bes[holder].URL() {
			t.Errorf("follow-up: want 2 attempts, the user's home (404) then the holder: %v", l)
		}
		if l["status"] != 200.0 || l["upstream_status"] != 200.0 {
			t.Errorf("follow-up's usage line: %v", l)
		}
	}
	notEjected := func(g *gateway, home int) {
		t.Helper()
		if line := g.findLog("upstream request failed; backend out of rotation", 0); line != nil {
			t.Errorf("a 404 ejected a backend: %v", line)
		}
		// The backend that answered 404 still gets its user's requests.
		if h := homeOf(t, g, bes, homes[home]); h != home {
			t.Errorf("after its 404, backend %d no longer gets its user's requests (they went to %d)", home, h)
		}
	}

	t.Run("made on a backend directly", func(t *testing.T) {
		// On backend 1, bypassing the gateway; the follow-up comes from
		// the user whose home is backend 0.
		res, out := post(t, http.DefaultClient, be1.URL()+"/v1/responses", "", respBody(nil), nil)
		if res.StatusCode != 200 {
			t.Fatalf("direct: %d %s", res.StatusCode, out)
		}
		followUp(g, homes[0], responseID(t, out), 1)
		notEjected(g, 0)
	})

	t.Run("gateway restarted", func(t *testing.T) {
		// Made through the gateway by the user whose home is backend 0.
		res, out := postResp(t, g, respBody(map[string]any{"user": homes[0]}), nil)
		if res.StatusCode != 200 {
			t.Fatalf("first turn: %d %s", res.StatusCode, out)
		}
		id := responseID(t, out)
		if h := holders(bes, id); len(h) != 1 || h[0] != 0 {
			t.Fatalf("first turn kept by %v, want backend 0", h)
		}
		// Before the restart the map sends the other user's follow-up
		// straight to backend 0.
		res, out = postResp(t, g, respBody(map[string]any{"user": homes[1], "previous_response_id": id}), nil)
		if l := g.usageLineFor(t, res.Header.Get("X-Request-Id")); res.StatusCode != 200 || l["attempts"] != 1.0 {
			t.Fatalf("follow-up before the restart: %d %s; usage line %v", res.StatusCode, out, l)
		}
		g.stop()
		usage2 := filepath.Join(t.TempDir(), "usage.log")
		g2 := startGateway(t, strings.Replace(cfg, usage, usage2, 1))
		g2.UsageLog = usage2
		followUp(g2, homes[1], id, 0)
		notEjected(g2, 1)
	})
}

// getResp sends method to /v1/responses/{id}[suffix] with key.
func byIDRequest(t *testing.T, g *gateway, method, key, id, suffix string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, g.URL+"/v1/responses/"+id+suffix, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := freshClient().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, id, err)
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(res.Body)
	return res, buf.Bytes()
}

// GET /v1/responses/{id} and POST /v1/responses/{id}/cancel reach the
// backend holding the response from either worker, at once; DELETE is
// relayed (vLLM has none: 405); an unknown id is asked of every backend
// and gets vLLM's 404; a key that may use no model serving responses is
// told the response does not exist (for it).
func TestResponsesByID(t *testing.T) {
	g, bes := respGateway(t, 3, fakevllm.Options{Tokens: 2}, "affinity: none", "")
	client := sdk(g, keyAll)
	ctx := context.Background()
	var ids []string
	for i := 0; i < 6; i++ {
		r, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "m",
			Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(fmt.Sprint("q", i))}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	base := receivedAll(bes)
	workers := map[float64]bool{}
	asked := 0
	for _, id := range ids {
		holder := holders(bes, id)
		if len(holder) != 1 {
			t.Fatalf("%s kept by %v", id, holder)
		}
		for j := 0; j < 4; j++ {
			var raw *http.Response
			r, err := client.Responses.Get(ctx, id, responses.ResponseGetParams{}, option.WithResponseInto(&raw))
			asked++
			if err != nil || r.ID != id || r.Status != "completed" {
				t.Fatalf("GET %s: %v %+v", id, err, r)
			}
			l := g.usageLineFor(t, raw.Header.Get("X-Request-Id"))
			if l["attempts"] != 1.0 || l["backend"] != bes[holder[0]].URL() || l["path"] != "/v1/responses/"+id {
				t.Errorf("GET %s (on backend %d): usage line %v", id, holder[0], l)
			}
			workers[l["worker"].(float64)] = true
		}
		// Cancel: vLLM refuses to cancel a finished response (400), which
		// only the holder can say (the others would say 404).
		var raw *http.Response
		_, err := client.Responses.Cancel(ctx, id, option.WithResponseInto(&raw))
		asked++
		var apiErr *openai.Error
		if !asError(err, &apiErr) || apiErr.StatusCode != 400 || !strings.Contains(apiErr.Message, "Cannot cancel a synchronous response") {
			t.Errorf("cancel %s: %v", id, err)
		} else if l := g.usageLineFor(t, raw.Header.Get("X-Request-Id")); l["attempts"] != 1.0 || l["backend"] != bes[holder[0]].URL() {
			t.Errorf("cancel %s (on backend %d): usage line %v", id, holder[0], l)
		}
	}
	if len(workers) < 2 {
		t.Errorf("every GET came through one worker (%v): the test proves nothing", workers)
	}
	if n := receivedAll(bes) - base; n != asked {
		t.Errorf("%d GETs and cancels sent %d requests to backends: some went elsewhere first", asked, n)
	}

	// DELETE: relayed to the holder, whose answer (vLLM's 405) the client gets.
	res, out := byIDRequest(t, g, http.MethodDelete, keyAll, ids[0], "")
	if res.StatusCode != 405 || !strings.Contains(string(out), `"detail":"Method Not Allowed"`) {
		t.Errorf("DELETE: %d %s", res.StatusCode, out)
	}
	if l := g.usageLineFor(t, res.Header.Get("X-Request-Id")); l["attempts"] != 1.0 || l["backend"] != bes[holders(bes, ids[0])[0]].URL() {
		t.Errorf("DELETE: usage line %v", l)
	}

	// An unknown id: every backend asked, the last one's 404 relayed as vLLM wrote it.
	before := receivedAll(bes)
	_, err := client.Responses.Get(ctx, "resp_unknown0000", responses.ResponseGetParams{})
	var apiErr *openai.Error
	if !asError(err, &apiErr) || apiErr.StatusCode != 404 || apiErr.Message != "Response with id 'resp_unknown0000' not found." {
		t.Errorf("unknown id: %v", err)
	}
	if n := receivedAll(bes) - before; n != 3 {
		t.Errorf("unknown id: %d backends asked, want all 3", n)
	}

	// A key whose models serve no Responses: nothing could hold the
	// response for it.
	res, out = byIDRequest(t, g, http.MethodGet, keyChat, ids[0], "")
	checkError(t, "GET with a key of a chat-only model", res.StatusCode, out, 404, "response_not_found", ids[0])
	res, out = byIDRequest(t, g, http.MethodPost, keyChat, ids[0], "/cancel")
	checkError(t, "cancel with a key of a chat-only model", res.StatusCode, out, 404, "response_not_found", ids[0])
	// And a POST /v1/responses to that model is not served.
	res, out = post(t, freshClient(), g.URL+"/v1/responses", keyChat, []byte(`{"model":"chat-only","input":"x"}`), nil)
	checkError(t, "create on a chat-only model", res.StatusCode, out, 404, "endpoint_not_served", "chat-only")
}

// respEvents sends a streamed Responses request and returns its SSE
// events (type and data) and its request id.
func respEvents(t *testing.T, g *gateway, key string, body []byte, hdr map[string]string) ([][2]string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/responses", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := freshClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream: %s %s", res.Status, res.Header.Get("Content-Type"))
	}
	var events [][2]string
	r := bufio.NewReader(res.Body)
	var typ, data string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			break
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case strings.HasPrefix(line, "event: "):
			typ = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		case line == "" && data != "":
			events = append(events, [2]string{typ, data})
			typ, data = "", ""
		}
	}
	return events, res.Header.Get("X-Request-Id")
}

// answerUsage is the usage a Responses answer reports.
type answerUsage struct {
	Status            string `json:"status"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Usage struct {
		InputTokens        float64 `json:"input_tokens"`
		OutputTokens       float64 `json:"output_tokens"`
		TotalTokens        float64 `json:"total_tokens"`
		InputTokensDetails struct {
			CachedTokens float64 `json:"cached_tokens"`
		} `json:"input_tokens_details"`
	} `json:"usage"`
}

// checkBilled compares a usage line with the usage and finish the answer reported.
func checkBilled(t *testing.T, what string, l map[string]any, a answerUsage, finish string) {
	t.Helper()
	if a.Usage.InputTokens <= 0 || a.Usage.OutputTokens <= 0 {
		t.Fatalf("%s: the answer reports no usage: %+v", what, a)
	}
	if l["prompt_tokens"] != a.Usage.InputTokens || l["completion_tokens"] != a.Usage.OutputTokens ||
		l["total_tokens"] != a.Usage.TotalTokens || l["cached_tokens"] != a.Usage.InputTokensDetails.CachedTokens ||
		l["usage_reported"] != true || l["finish_reason"] != finish || l["status"] != 200.0 {
		t.Errorf("%s: answer %+v (finish %s), usage line %v", what, a.Usage, finish, l)
	}
}

// A Responses request's usage line has the tokens the answer reports (the
// whole answer's usage, or response.completed's), its finish reason
// (completed, or max_output_tokens when it was cut) and, for a stream, the
// time to the first token. A key's tokens_per_minute is charged with
// them; fetching a stored response again is not charged.
func TestResponsesUsageAndBilling(t *testing.T) {
	g, bes := respGateway(t, 1, fakevllm.Options{Tokens: 5}, "", "tokens_per_minute: 3000")
	be := bes[0]

	for _, cut := range []bool{false, true} {
		finish, fields, hdr := "completed", map[string]any{}, map[string]string{"X-Fake-Delay-Ms": "30"}
		if cut {
			finish, fields["max_output_tokens"], hdr["X-Fake-Tokens"] = "max_output_tokens", 3, "10"
		}
		// Whole.
		res, out := postResp(t, g, respBody(fields), hdr)
		var a answerUsage
		if res.StatusCode != 200 || json.Unmarshal(out, &a) != nil {
			t.Fatalf("whole (cut %v): %d %s", cut, res.StatusCode, out)
		}
		checkBilled(t, fmt.Sprint("whole, cut ", cut), g.usageLineFor(t, res.Header.Get("X-Request-Id")), a, finish)
		// Streamed: the usage of response.completed.
		fields["stream"] = true
		events, rid := respEvents(t, g, keyAll, respBody(fields), hdr)
		last := events[len(events)-1]
		var done struct {
			Response answerUsage `json:"response"`
		}
		if last[0] != "response.completed" || json.Unmarshal([]byte(last[1]), &done) != nil {
			t.Fatalf("stream (cut %v) ended with %q", cut, last)
		}
		l := g.usageLineFor(t, rid)
		checkBilled(t, fmt.Sprint("stream, cut ", cut), l, done.Response, finish)
		if l["stream"] != true || l["ttft_ms"].(float64) < 30 || l["events"].(float64) != float64(len(events)) {
			t.Errorf("stream (cut %v): usage line %v (%d events)", cut, l, len(events))
		}
	}

	// tokens_per_minute: 3000. The first answer uses ~2000 of them.
	res, out := post(t, freshClient(), g.URL+"/v1/responses", keyLimited, respBody(map[string]any{"max_output_tokens": 2000}),
		map[string]string{"X-Fake-Tokens": "2000"})
	if res.StatusCode != 200 {
		t.Fatalf("first request: %d %s", res.StatusCode, out)
	}
	id := responseID(t, out)
	l := g.usageLineFor(t, res.Header.Get("X-Request-Id"))
	if l["total_tokens"].(float64) < 2000 || l["key"] != "limited" {
		t.Fatalf("first request's usage line: %v", l)
	}
	// Fetched again, three times: each a 200 with the whole usage in it,
	// none billed.
	for i := 0; i < 3; i++ {
		res, out = byIDRequest(t, g, http.MethodGet, keyLimited, id, "")
		if res.StatusCode != 200 || !strings.Contains(string(out), `"output_tokens":2000`) {
			t.Fatalf("GET: %d %s", res.StatusCode, out)
		}
		if l := g.usageLineFor(t, res.Header.Get("X-Request-Id")); l["total_tokens"] != 0.0 || l["usage_reported"] != false || l["key"] != "limited" {
			t.Errorf("GET of a stored response billed: %v", l)
		}
	}
	// What is left (~1000) takes a request of 500 tokens: the GETs took none.
	res, out = post(t, freshClient(), g.URL+"/v1/responses", keyLimited, respBody(map[string]any{"max_output_tokens": 500}),
		map[string]string{"X-Fake-Tokens": "500"})
	if res.StatusCode != 200 {
		t.Fatalf("a request within what the first left (after GETs that must not be billed): %d %s", res.StatusCode, out)
	}
	// And not one of 1000 more.
	sent := len(be.Received())
	res, out = post(t, freshClient(), g.URL+"/v1/responses", keyLimited, respBody(map[string]any{"max_output_tokens": 1000}), nil)
	typ, code, _ := openError(t, out)
	if res.StatusCode != 429 || typ != "tokens" || code != "rate_limit_exceeded" {
		t.Errorf("over the token budget: %d %s", res.StatusCode, out)
	}
	if len(be.Received()) != sent {
		t.Error("a request over the token budget reached the backend")
	}
}

// Requests the gateway cannot serve safely are refused before they reach
// a backend: request_id and background (400 unsupported_field, with the
// field as param), and a previous_response_id the backend could read
// otherwise than the gateway (400 invalid_field).
func TestResponsesRefusedFields(t *testing.T) {
	g, bes := respGateway(t, 2, fakevllm.Options{Tokens: 2}, "affinity: none", "")
	cases := []struct {
		name, body, code, param string
	}{
		{"request_id", `{"model":"m","input":"x","request_id":"mine"}`, "unsupported_field", "request_id"},
		{"background", `{"model":"m","input":"x","background":true}`, "unsupported_field", "background"},
		{"background stream", `{"model":"m","input":"x","stream":true,"background":true}`, "unsupported_field", "background"},
		{"previous_response_id twice", `{"model":"m","input":"x","previous_response_id":"resp_a","previous_response_id":"resp_b"}`, "invalid_field", "previous_response_id"},
		{"previous_response_id escaped key", `{"model":"m","input":"x","previous_respons\u0065_id":"resp_a"}`, "invalid_field", "previous_response_id"},
		{"previous_response_id a lone surrogate", `{"model":"m","input":"x","previous_response_id":"resp_\ud800"}`, "invalid_field", "previous_response_id"},
		{"previous_response_id a number", `{"model":"m","input":"x","previous_response_id":5}`, "invalid_field", "previous_response_id"},
	}
	for _, c := range cases {
		res, out := postResp(t, g, []byte(c.body), nil)
		var e openAIError
		if json.Unmarshal(out, &e) != nil || e.Error == nil {
			t.Errorf("%s: %d %s", c.name, res.StatusCode, out)
			continue
		}
		if res.StatusCode != 400 || e.Error.Code != c.code || e.Error.Param == nil || *e.Error.Param != c.param || e.Error.Type != "invalid_request_error" {
			t.Errorf("%s: %d %s", c.name, res.StatusCode, out)
		}
	}
	if n := receivedAll(bes); n != 0 {
		t.Errorf("refused requests reached the backend: %d", n)
	}
	// background false is not refused.
	res, out := postResp(t, g, []byte(`{"model":"m","input":"x","background":false}`), nil)
	if res.StatusCode != 200 {
		t.Fatalf("background false: %d %s", res.StatusCode, out)
	}
	// An escaped value is no ambiguity: read as the backend reads it, it
	// routes to the holder like the plain one (round robin would start
	// half of these elsewhere).
	id := responseID(t, out)
	escaped := `resp_\u00` + fmt.Sprintf("%x", id[5]) + id[6:]
	for i := 0; i < 8; i++ {
		res, out := postResp(t, g, []byte(`{"model":"m","input":"x","store":false,"previous_response_id":"`+escaped+`"}`), nil)
		if res.StatusCode != 200 {
			t.Fatalf("follow-up with an escaped id: %d %s", res.StatusCode, out)
		}
		if l := g.usageLineFor(t, res.Header.Get("X-Request-Id")); l["attempts"] != 1.0 {
			t.Errorf("follow-up with an escaped id went elsewhere first: %v", l)
		}
	}
}

// A Responses stream the backend breaks after its head ends with the
// Responses API's error event ("event: error", {"type":"error","code":…}),
// which openai-go hands over as an error event.
func TestResponsesStreamBroken(t *testing.T) {
	g, _ := respGateway(t, 1, fakevllm.Options{Tokens: 4}, "", "")
	for _, mode := range []string{"close-mid", "reset-after-head", "close-after-head"} {
		events, rid := respEvents(t, g, keyAll, respBody(map[string]any{"stream": true}), map[string]string{"X-Fake-Fail": mode})
		if len(events) == 0 {
			t.Fatalf("%s: no event", mode)
		}
		last := events[len(events)-1]
		var e struct {
			Type, Code, Message string
		}
		if last[0] != "error" || json.Unmarshal([]byte(last[1]), &e) != nil || e.Type != "error" || e.Code != "upstream_stream_broken" || e.Message == "" {
			t.Errorf("%s: last event %q", mode, last)
		}
		if l := g.usageLineFor(t, rid); l["error"] != "upstream_stream_broken" || l["error_source"] != "upstream" {
			t.Errorf("%s: usage line %v", mode, l)
		}
	}

	client := sdk(g, keyAll)
	stream := client.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{Model: "m",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("x")}}, option.WithHeader("X-Fake-Fail", "close-mid"))
	var got *responses.ResponseErrorEvent
	for stream.Next() {
		if ev := stream.Current(); ev.Type == "error" {
			e := ev.AsError()
			got = &e
		} else if ev.Type == "response.completed" {
			t.Error("a broken stream completed")
		}
	}
	if err := stream.Err(); err != nil {
		t.Logf("openai-go's stream error: %v", err)
	}
	if got == nil || got.Code != "upstream_stream_broken" || got.Message == "" {
		t.Errorf("openai-go saw no error event: %+v (stream err %v)", got, stream.Err())
	}
}

// The backend holding a response fails for a while (503): a request on
// the response asks the others, which do not have it — and the client is
// told the response is unavailable (503, try again), not that it does not
// exist (their 404). Once the holder is back, it is served there at once.
func TestResponsesHolderFailing(t *testing.T) {
	g, bes := respGateway(t, 3, fakevllm.Options{Tokens: 2}, "affinity: none", "")
	res, out := postResp(t, g, respBody(nil), nil)
	if res.StatusCode != 200 {
		t.Fatalf("first turn: %d %s", res.StatusCode, out)
	}
	id := responseID(t, out)
	holder := bes[holders(bes, id)[0]]
	holder.SetFailStatus(503)
	res, out = postResp(t, g, respBody(map[string]any{"previous_response_id": id}), nil)
	checkError(t, "follow-up while its holder fails", res.StatusCode, out, 503, "stored_response_unavailable", "try again")
	if l := g.usageLineFor(t, res.Header.Get("X-Request-Id")); l["attempts"] != 3.0 || l["backends_tried"].([]any)[0] != holder.URL() {
		t.Errorf("follow-up while its holder fails: usage line %v", l)
	}
	res, out = byIDRequest(t, g, http.MethodGet, keyAll, id, "")
	checkError(t, "GET while its holder fails", res.StatusCode, out, 503, "stored_response_unavailable", "try again")

	holder.SetFailStatus(0)
	res, out = postResp(t, g, respBody(map[string]any{"previous_response_id": id}), nil)
	if l := g.usageLineFor(t, res.Header.Get("X-Request-Id")); res.StatusCode != 200 || l["attempts"] != 1.0 {
		t.Errorf("follow-up once the holder is back: %d %s; usage line %v", res.StatusCode, out, l)
	}
}

// An answer too large to hold (past 1 MiB, relayed as it arrives) is
// remembered and billed like any other: its follow-ups go to its holder
// at once, and its usage line has its tokens.
func TestResponsesLargeAnswer(t *testing.T) {
	g, _ := respGateway(t, 3, fakevllm.Options{}, "affinity: none", "")
	res, out := postResp(t, g, respBody(nil), map[string]string{"X-Fake-Tokens": "300000"})
	if res.StatusCode != 200 || len(out) < 1<<20 {
		t.Fatalf("large answer: %d, %d bytes", res.StatusCode, len(out))
	}
	id := responseID(t, out)
	if l := g.usageLineFor(t, res.Header.Get("X-Request-Id")); l["completion_tokens"] != 300000.0 || l["finish_reason"] != "completed" {
		t.Errorf("large answer's usage line: %v", l)
	}
	for i := 0; i < 6; i++ {
		res, out := postResp(t, g, respBody(map[string]any{"previous_response_id": id, "store": false}), nil)
		if l := g.usageLineFor(t, res.Header.Get("X-Request-Id")); res.StatusCode != 200 || l["attempts"] != 1.0 {
			t.Fatalf("follow-up of a large answer: %d %.200s; usage line %v", res.StatusCode, out, l)
		}
	}
}

// A streamed response whose events the client pushed past 1 MiB (vLLM
// repeats the request's metadata in response.created and .completed) is
// billed all the same, and its id remembered: the events pass through in
// pieces and are read on the way. Before, the completed event went by
// unread — a small prompt with large metadata was served unbilled.
func TestResponsesLargeEventsBilled(t *testing.T) {
	g, bes := respGateway(t, 3, fakevllm.Options{}, "affinity: none", "")
	pad := strings.Repeat("m", 1<<20+1<<18)
	body := respBody(map[string]any{"stream": true, "metadata": map[string]string{"k": pad}})
	events, reqID := respEvents(t, g, keyAll, body, map[string]string{"X-Fake-Tokens": "50"})
	var completed answerUsage
	var id string
	for _, e := range events {
		if e[0] == "response.completed" {
			var ev struct {
				Response json.RawMessage `json:"response"`
			}
			if err := json.Unmarshal([]byte(e[1]), &ev); err != nil {
				t.Fatal(err)
			}
			json.Unmarshal(ev.Response, &completed) //nolint:errcheck // checked below
			id = gjsonString(ev.Response, "id")
		}
	}
	if len(events) == 0 || completed.Usage.OutputTokens != 50 || id == "" {
		t.Fatalf("the stream's completed event: usage %+v, id %q (%d events)", completed.Usage, id, len(events))
	}
	l := g.usageLineFor(t, reqID)
	checkBilled(t, "padded stream", l, completed, completed.Status)
	if l["usage_reported"] != true {
		t.Errorf("padded stream not billed: %v", l)
	}
	if h := holders(bes, id); len(h) != 1 {
		t.Fatalf("response %s held by %v", id, h)
	}
	res, out := postResp(t, g, respBody(map[string]any{"previous_response_id": id, "store": false}), nil)
	if fl := g.usageLineFor(t, res.Header.Get("X-Request-Id")); res.StatusCode != 200 || fl["attempts"] != 1.0 {
		t.Fatalf("follow-up of the padded stream: %d %.200s; usage line %v", res.StatusCode, out, fl)
	}
}

// gjsonString is the string at path in a JSON document.
func gjsonString(doc []byte, path string) string {
	var m map[string]any
	json.Unmarshal(doc, &m) //nolint:errcheck // "" when not a string
	s, _ := m[path].(string)
	return s
}
