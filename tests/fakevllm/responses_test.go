package fakevllm

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

func sdk(s *Server) openai.Client {
	return openai.NewClient(option.WithBaseURL(s.URL()+"/v1/"), option.WithAPIKey("k"), option.WithMaxRetries(0))
}

// A whole answer parses as the OpenAI SDK's Response, with vLLM's usage,
// and is kept by the server that made it.
func TestResponsesJSON(t *testing.T) {
	s := start(t, Options{Tokens: 5, Words: []string{"a", "b"}})
	c := sdk(s)
	r, err := c.Responses.New(context.Background(), responses.ResponseNewParams{
		Model: "m", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hello there")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.ID, "resp_") || len(r.ID) != len("resp_")+32 || r.Object != "response" || r.Model != "m" {
		t.Fatalf("id %q object %q model %q", r.ID, r.Object, r.Model)
	}
	if r.Status != "completed" || r.OutputText() != "a b a b a" {
		t.Fatalf("status %q text %q", r.Status, r.OutputText())
	}
	if len(r.Output) != 1 || !strings.HasPrefix(r.Output[0].ID, "msg_") || r.Output[0].Type != "message" {
		t.Fatalf("output %+v", r.Output)
	}
	u := r.Usage
	if u.OutputTokens != 5 || u.InputTokens <= 0 || u.TotalTokens != u.InputTokens+5 ||
		!u.InputTokensDetails.JSON.CachedTokens.Valid() || !u.OutputTokensDetails.JSON.ReasoningTokens.Valid() {
		t.Fatalf("usage %s", u.RawJSON())
	}
	if s.StoredResponses() != 1 || !s.HasResponse(r.ID) {
		t.Fatalf("stored %d", s.StoredResponses())
	}
	got, err := c.Responses.Get(context.Background(), r.ID, responses.ResponseGetParams{})
	if err != nil || got.ID != r.ID || got.OutputText() != r.OutputText() || got.Usage.TotalTokens != u.TotalTokens {
		t.Fatalf("get: %v %+v", err, got)
	}
	rec := s.Received()
	if len(rec) != 2 || rec[0].Path != "/v1/responses" || rec[0].Model != "m" || rec[0].FirstContent != "hello there" ||
		rec[1].Path != "/v1/responses/"+r.ID || rec[0].Key != "k" {
		t.Fatalf("received %+v", rec)
	}

	// Fields vLLM writes that the SDK does not check.
	_, body := call(t, s, "POST", "/v1/responses", `{"model":"m","input":"x","max_output_tokens":3,"store":false}`)
	m := decode(t, body)
	if m["status"] != "incomplete" || m["incomplete_details"].(map[string]any)["reason"] != "max_output_tokens" ||
		m["max_output_tokens"] != 3.0 || m["previous_response_id"] != nil || m["tool_choice"] != "auto" ||
		m["truncation"] != "disabled" || m["service_tier"] != "auto" || m["background"] != false {
		t.Fatalf("answer %s", body)
	}
	usage := m["usage"].(map[string]any)
	if usage["output_tokens"] != 3.0 || usage["input_tokens_details"].(map[string]any)["cached_tokens"] != 0.0 ||
		usage["output_tokens_details"].(map[string]any)["reasoning_tokens"] != 0.0 {
		t.Fatalf("usage %v", usage)
	}
	if s.StoredResponses() != 1 {
		t.Fatal("store false kept the response")
	}
}

// The stream is vLLM's: event and data lines, sequence numbers from 0,
// a delta per token, response.completed with the whole response, and no
// [DONE]; the SDK reads it.
func TestResponsesStream(t *testing.T) {
	s := start(t, Options{Tokens: 3})
	resp, body := call(t, s, "POST", "/v1/responses", `{"model":"m","input":"hi","stream":true}`)
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatal(resp.Header)
	}
	if strings.Contains(body, "[DONE]") {
		t.Fatal("a Responses stream ends without [DONE]")
	}
	evs := readSSE(t, body)
	want := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
		"response.output_text.delta", "response.output_text.delta", "response.output_text.delta",
		"response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"}
	if len(evs) != len(want) {
		t.Fatalf("%d events: %s", len(evs), body)
	}
	var text strings.Builder
	for i, ev := range evs {
		m := decode(t, ev.Data)
		if ev.Event != want[i] || m["type"] != want[i] || m["sequence_number"] != float64(i) {
			t.Fatalf("event %d: %s %s", i, ev.Event, ev.Data)
		}
		if ev.Event == "response.output_text.delta" {
			text.WriteString(m["delta"].(string))
			if m["content_index"] != 0.0 || m["output_index"] != 0.0 || len(m["item_id"].(string)) != 32 {
				t.Fatal(ev.Data)
			}
		}
	}
	if text.String() != "tok tok tok" {
		t.Fatalf("deltas %q", text.String())
	}
	created := decode(t, evs[0].Data)["response"].(map[string]any)
	done := decode(t, evs[len(evs)-1].Data)["response"].(map[string]any)
	if created["status"] != "in_progress" || created["usage"] != nil || done["status"] != "completed" ||
		done["id"] != created["id"] || done["usage"].(map[string]any)["output_tokens"] != 3.0 {
		t.Fatalf("created %v\ncompleted %v", created, done)
	}
	if !s.HasResponse(done["id"].(string)) {
		t.Fatal("the streamed response is not kept")
	}

	c := sdk(s)
	st := c.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{
		Model: "m", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")},
	})
	var n int
	var last responses.ResponseStreamEventUnion
	for st.Next() {
		last = st.Current()
		n++
	}
	if st.Err() != nil || n != len(want) || last.Type != "response.completed" || last.Response.Usage.OutputTokens != 3 ||
		last.Response.OutputText() != "tok tok tok" {
		t.Fatalf("sdk stream: %v, %d events, last %s", st.Err(), n, last.RawJSON())
	}
}

// A chain of responses works on the server that keeps them; another
// server answers vLLM's 404 for the previous id, as it does for GET and
// cancel; vLLM has no DELETE.
func TestResponsesStoreAcrossInstances(t *testing.T) {
	a, b := start(t, Options{Tokens: 2}), start(t, Options{Tokens: 2})
	_, body := call(t, a, "POST", "/v1/responses", `{"model":"m","input":"first"}`)
	first := decode(t, body)
	id := first["id"].(string)
	_, body = call(t, a, "POST", "/v1/responses", `{"model":"m","input":"second","previous_response_id":"`+id+`"}`)
	second := decode(t, body)
	if second["previous_response_id"] != id || second["status"] != "completed" ||
		second["usage"].(map[string]any)["input_tokens"].(float64) <= first["usage"].(map[string]any)["total_tokens"].(float64) {
		t.Fatalf("second %s", body)
	}
	if a.StoredResponses() != 2 || b.StoredResponses() != 0 {
		t.Fatalf("stored %d %d", a.StoredResponses(), b.StoredResponses())
	}

	notFound := `{"error":{"message":"Response with id '` + id + `' not found.","type":"invalid_request_error","param":"response_id","code":404}}`
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/v1/responses", `{"model":"m","input":"second","previous_response_id":"` + id + `"}`},
		{"POST", "/v1/responses", `{"model":"m","input":"second","previous_response_id":"` + id + `","stream":true}`},
		{"GET", "/v1/responses/" + id, ""},
		{"POST", "/v1/responses/" + id + "/cancel", ""},
	} {
		resp, body := call(t, b, c.method, c.path, c.body)
		if resp.StatusCode != 404 || body != notFound || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s %s: %d %s", c.method, c.path, resp.StatusCode, body)
		}
	}
	var apiErr *openai.Error
	cb := sdk(b)
	_, err := cb.Responses.Get(context.Background(), id, responses.ResponseGetParams{})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 || apiErr.Type != "invalid_request_error" || apiErr.Param != "response_id" {
		t.Fatalf("sdk: %v", err)
	}

	resp, body := call(t, a, "DELETE", "/v1/responses/"+id, "")
	if resp.StatusCode != 405 || body != `{"detail":"Method Not Allowed"}` || resp.Header.Get("Allow") != "GET" || !a.HasResponse(id) {
		t.Fatalf("delete: %d %s %v", resp.StatusCode, body, resp.Header)
	}
	resp, body = call(t, a, "POST", "/v1/responses/"+id+"/cancel", "")
	if resp.StatusCode != 400 || body != `{"error":{"message":"Cannot cancel a synchronous response.","type":"invalid_request_error","param":"response_id","code":400}}` {
		t.Fatalf("cancel of a finished response: %d %s", resp.StatusCode, body)
	}
}

// A background response is queued until its answer's time is over, and
// can be cancelled meanwhile.
func TestResponsesBackground(t *testing.T) {
	s := start(t, Options{Tokens: 2})
	_, body := call(t, s, "POST", "/v1/responses", `{"model":"m","input":"x","background":true}`, "X-Fake-Hold: bg1")
	q := decode(t, body)
	id := q["id"].(string)
	if q["status"] != "queued" || q["usage"] != nil || q["background"] != true {
		t.Fatal(body)
	}
	eventually(t, "the background request to count as running", func() bool { return s.Running() == 1 })
	_, body = call(t, s, "POST", "/v1/responses/"+id+"/cancel", "")
	if decode(t, body)["status"] != "cancelled" {
		t.Fatal(body)
	}
	s.Release("bg1")
	eventually(t, "the background request to end", func() bool { return s.Running() == 0 })
	if _, body = call(t, s, "GET", "/v1/responses/"+id, ""); decode(t, body)["status"] != "cancelled" {
		t.Fatal(body)
	}

	_, body = call(t, s, "POST", "/v1/responses", `{"model":"m","input":"x","background":true}`, "X-Fake-Hold: bg2")
	id = decode(t, body)["id"].(string)
	s.Release("bg2")
	eventually(t, "the background response to complete", func() bool {
		_, body = call(t, s, "GET", "/v1/responses/"+id, "")
		return decode(t, body)["status"] == "completed"
	})
	if decode(t, body)["usage"].(map[string]any)["output_tokens"] != 2.0 {
		t.Fatal(body)
	}
}

// Without vLLM's store (ResponsesNoStore), nothing is kept and background
// is refused.
func TestResponsesNoStore(t *testing.T) {
	s := start(t, Options{ResponsesNoStore: true})
	_, body := call(t, s, "POST", "/v1/responses", `{"model":"m","input":"x"}`)
	id := decode(t, body)["id"].(string)
	if s.StoredResponses() != 0 {
		t.Fatal("kept")
	}
	if resp, _ := call(t, s, "POST", "/v1/responses", `{"model":"m","input":"x","previous_response_id":"`+id+`"}`); resp.StatusCode != 404 {
		t.Fatal(resp.Status)
	}
	resp, body := call(t, s, "POST", "/v1/responses", `{"model":"m","input":"x","background":true}`)
	if m := decode(t, body); resp.StatusCode != 400 || m["error"].(map[string]any)["param"] != "background" {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}

// The controls the chat endpoints honour work on /v1/responses too.
func TestResponsesControls(t *testing.T) {
	s := start(t, Options{Tokens: 4})
	done := make(chan string)
	go func() {
		_, body := call(t, s, "POST", "/v1/responses", `{"model":"m","input":"x","stream":true}`, "X-Fake-Hold: h")
		done <- body
	}()
	eventually(t, "the held stream", func() bool { return s.Running() == 1 })
	if _, metrics := call(t, s, "GET", "/metrics", ""); !strings.Contains(metrics, `vllm:num_requests_running{model_name="fake"} 1`) {
		t.Fatal(metrics)
	}
	s.Release("h")
	if evs := readSSE(t, <-done); len(evs) != 12 {
		t.Fatalf("%d events", len(evs))
	}
	s.SetFailStatus(503)
	resp, body := call(t, s, "POST", "/v1/responses", `{"model":"m","input":"x"}`)
	if resp.StatusCode != 503 || !strings.Contains(body, `"code":503`) {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	s.SetFailStatus(0)
	if resp, _ := call(t, s, "POST", "/v1/responses", `{"model":"m","input":"x"}`, "X-Fake-Tokens: 1"); resp.StatusCode != http.StatusOK {
		t.Fatal(resp.Status)
	}
	req, _ := http.NewRequest("POST", s.URL()+"/v1/responses", strings.NewReader(`{"model":"m","input":"x","stream":true}`))
	req.Header.Set("X-Fake-Fail", "close-after-head")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	if resp, _ := call(t, s, "POST", "/v1/responses", `not json`); resp.StatusCode != 400 {
		t.Fatal(resp.Status)
	}
}
