package tests

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// The official Anthropic Go SDK (anthropic-sdk-go v2) against the binary:
// /v1/messages and /v1/messages/count_tokens through the gateway, its
// errors read as the SDK's typed errors.

// anthropicXAPIKey is a client that sends its key as x-api-key only, the
// way Anthropic's API takes it. (v2.17.0's option.WithAPIKey sends
// "Authorization: Bearer", so the header is set here by hand, with no
// credential option and nothing read from the environment.) sent records
// the headers of each request it sends.
func anthropicXAPIKey(g *gateway, key string, sent *[]http.Header, opts ...option.RequestOption) anthropic.Client {
	record := func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		if sent != nil {
			*sent = append(*sent, req.Header.Clone())
		}
		return next(req)
	}
	return anthropic.NewClient(append([]option.RequestOption{option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(g.URL + "/"), option.WithHeader("X-Api-Key", key),
		option.WithMaxRetries(0), option.WithMiddleware(record)}, opts...)...)
}

// anthropicBearer is a client with the SDK's own credential option, which
// sends "Authorization: Bearer KEY".
func anthropicBearer(g *gateway, key string) anthropic.Client {
	return anthropic.NewClient(option.WithBaseURL(g.URL+"/"), option.WithAPIKey(key), option.WithMaxRetries(0))
}

func messageParams(model string, maxTokens int64, text string) anthropic.MessageNewParams {
	return anthropic.MessageNewParams{
		Model:     anthropic.Model(model),
		MaxTokens: maxTokens,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(text))},
	}
}

// streamMessage runs Messages.NewStreaming and accumulates the message;
// it returns the stream's error, if any, and the answer's X-Request-Id.
func streamMessage(client anthropic.Client, params anthropic.MessageNewParams, opts ...option.RequestOption) (anthropic.Message, int, string, error) {
	var res *http.Response
	stream := client.Messages.NewStreaming(context.Background(), params, append(opts, option.WithResponseInto(&res))...)
	defer stream.Close()
	var msg anthropic.Message
	events := 0
	for stream.Next() {
		events++
		if err := msg.Accumulate(stream.Current()); err != nil {
			return msg, events, "", err
		}
	}
	id := ""
	if res != nil {
		id = res.Header.Get("X-Request-Id")
	}
	return msg, events, id, stream.Err()
}

func messageText(m *anthropic.Message) string {
	var b strings.Builder
	for _, c := range m.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// Messages.New, Messages.NewStreaming and Messages.CountTokens work through
// the gateway, with the key as x-api-key or as Authorization: Bearer. The
// backend gets the SDK's anthropic-version, and never the client's key: the
// backend's own (api_key_env) as its Authorization, and no x-api-key.
func TestAnthropicSDK(t *testing.T) {
	words := []string{"alpha", "beta", "gamma", "delta"}
	g, be := newGateway(t, fakevllm.Options{Tokens: 4, Words: words}, "")
	var sent []http.Header
	client := anthropicXAPIKey(g, keyAll, &sent)
	ctx := context.Background()
	params := messageParams("m", 100, "Say four words.")
	want := strings.Join(words, " ")

	msg, err := client.Messages.New(ctx, params)
	if err != nil {
		t.Fatalf("Messages.New: %v", err)
	}
	if messageText(msg) != want || msg.StopReason != anthropic.StopReasonEndTurn ||
		msg.Usage.OutputTokens != 4 || msg.Usage.InputTokens <= 0 {
		t.Fatalf("Messages.New answer: %s", msg.RawJSON())
	}

	acc, events, _, err := streamMessage(client, params)
	if err != nil {
		t.Fatalf("Messages.NewStreaming: %v", err)
	}
	// message_start, content_block_start, 4 deltas, content_block_stop,
	// message_delta, message_stop.
	if events != 9 || messageText(&acc) != want || acc.StopReason != anthropic.StopReasonEndTurn ||
		acc.Usage.OutputTokens != 4 || acc.Usage.InputTokens <= 0 {
		t.Fatalf("streamed %d events, accumulated %s", events, acc.RawJSON())
	}

	count, err := client.Messages.CountTokens(ctx, anthropic.MessageCountTokensParams{
		Model:    "m",
		Messages: params.Messages,
	})
	if err != nil || count.InputTokens <= 0 {
		t.Fatalf("CountTokens: %+v %v", count, err)
	}

	if len(sent) != 3 {
		t.Fatalf("the x-api-key client sent %d requests, want 3 (no retries)", len(sent))
	}
	version := sent[0].Get("Anthropic-Version")
	for i, h := range sent {
		if h.Get("X-Api-Key") != keyAll || h.Get("Authorization") != "" || version == "" || h.Get("Anthropic-Version") != version {
			t.Fatalf("request %d was not sent with x-api-key alone and anthropic-version: %v", i, h)
		}
	}

	// The SDK's own credential option: Authorization: Bearer.
	bearer := anthropicBearer(g, keyAll)
	if msg, err := bearer.Messages.New(ctx, params); err != nil || messageText(msg) != want {
		t.Fatalf("Messages.New with Authorization: Bearer: %v", err)
	}

	recv := be.Received()
	if len(recv) != 4 {
		t.Fatalf("backend received %d requests, want 4", len(recv))
	}
	for _, r := range recv {
		if !strings.HasPrefix(r.Path, "/v1/messages") {
			t.Errorf("backend got %s", r.Path)
		}
		if v := r.Header.Get("Anthropic-Version"); v != version {
			t.Errorf("%s: anthropic-version %q reached the backend, want the SDK's %q", r.Path, v, version)
		}
		if v := r.Header.Values("X-Api-Key"); len(v) != 0 {
			t.Errorf("%s: the client's x-api-key reached the backend: %q", r.Path, v)
		}
		if v := r.Header.Get("Authorization"); v != "Bearer "+backendKey {
			t.Errorf("%s: backend Authorization %q, want the backend's own key", r.Path, v)
		}
	}
}

// anthropicError checks that err is the SDK's API error with status and
// Anthropic error type typ, and returns it.
func anthropicError(t *testing.T, what string, err error, status int, typ string) *anthropic.Error {
	t.Helper()
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("%s: not an *anthropic.Error: %v", what, err)
	}
	if apiErr.StatusCode != status || string(apiErr.Type()) != typ || apiErr.Message == "" {
		t.Fatalf("%s: got %d type %q message %q (%s), want %d %s", what, apiErr.StatusCode, apiErr.Type(),
			apiErr.Message, apiErr.RawJSON(), status, typ)
	}
	return apiErr
}

// The gateway's own refusals on /v1/messages are in Anthropic's error
// shape, so the SDK raises its typed errors: 401 authentication_error, 404
// not_found_error, 429 rate_limit_error with retry-after, 413
// request_too_large, and a full queue as 529 overloaded_error.
func TestAnthropicSDKErrors(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 3})
	usage := t.TempDir() + "/usage.log"
	// Key "limited": one request a minute. Model "m": one slot, no queue.
	cfg := limitedConfig(be.URL(), usage, 2, "requests_per_minute: 1", "max_body: 64KiB")
	cfg = strings.Replace(cfg, "        slots: 64\n        api_key_env: SLUICE_TEST_BACKEND_KEY",
		"        slots: 1\n        api_key_env: SLUICE_TEST_BACKEND_KEY\n    queue: {max: 0}", 1)
	g := startGateway(t, cfg)
	g.UsageLog = usage
	ctx := context.Background()
	params := messageParams("m-alias", 50, "hello")

	badX := anthropicXAPIKey(g, "sk-wrong", nil)
	_, err := badX.Messages.New(ctx, params)
	anthropicError(t, "wrong x-api-key", err, 401, "authentication_error")
	bad := anthropicBearer(g, "sk-wrong")
	_, err = bad.Messages.New(ctx, params)
	anthropicError(t, "wrong bearer key", err, 401, "authentication_error")

	client := anthropicXAPIKey(g, keyAll, nil)
	_, err = client.Messages.New(ctx, messageParams("no-such-model", 50, "hello"))
	e := anthropicError(t, "unknown model", err, 404, "not_found_error")
	if !strings.Contains(e.Message, "no-such-model") {
		t.Errorf("unknown model: message %q does not name it", e.Message)
	}
	_, err = client.Messages.CountTokens(ctx, anthropic.MessageCountTokensParams{Model: "no-such-model", Messages: params.Messages})
	anthropicError(t, "count_tokens of an unknown model", err, 404, "not_found_error")

	_, err = client.Messages.New(ctx, messageParams("m-alias", 50, strings.Repeat("x", 100<<10)))
	e = anthropicError(t, "body over max_body", err, 413, "request_too_large")
	if !strings.Contains(e.Message, "65536") {
		t.Errorf("413 message %q does not give the limit", e.Message)
	}

	limited := anthropicXAPIKey(g, keyLimited, nil)
	if _, err := limited.Messages.New(ctx, messageParams("m", 50, "first")); err != nil {
		t.Fatalf("the limited key's first request: %v", err)
	}
	_, err = limited.Messages.New(ctx, messageParams("m", 50, "second"))
	e = anthropicError(t, "requests_per_minute", err, 429, "rate_limit_error")
	if ra := e.Response.Header.Get("Retry-After"); ra == "" || ra == "0" {
		t.Errorf("429 without a retry-after: %v", e.Response.Header)
	}

	// The one slot of "m" held by a stream; no queue: 529 overloaded_error.
	if res := openStream(t, g, keyAll, "slot", chatBody("m", true, "hold")); res.StatusCode != 200 {
		t.Fatalf("holding stream: %s", res.Status)
	}
	_, err = client.Messages.New(ctx, messageParams("m", 50, "no room"))
	anthropicError(t, "queue full", err, 529, "overloaded_error")
	be.Release("slot")

	if n := countPath(be.Received(), "/v1/messages"); n != 1 {
		t.Errorf("the backend got %d messages requests, want only the limited key's first", n)
	}
	// The usage lines keep the gateway's own codes.
	codes := map[string]int{}
	for _, l := range g.usageLines() {
		if e, _ := l["error"].(string); e != "" {
			codes[e]++
		}
	}
	for _, c := range []string{"invalid_api_key", "model_not_found", "request_too_large", "rate_limit_exceeded", "queue_full"} {
		if codes[c] == 0 {
			t.Errorf("no usage line with error %q: %v", c, codes)
		}
	}
}

func countPath(recv []fakevllm.Received, path string) int {
	n := 0
	for _, r := range recv {
		if r.Path == path {
			n++
		}
	}
	return n
}

// A Messages answer's usage reaches the usage line: input tokens from
// message_start (or the answer's usage), output tokens from message_delta;
// its finish reason is the stop_reason; its first token is timed. A key's
// tokens_per_minute is settled against those counts, and count_tokens is
// neither limited nor billed by it.
func TestAnthropicUsageAndBilling(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 4})
	usage := t.TempDir() + "/usage.log"
	g := startGateway(t, limitedConfig(be.URL(), usage, 2, "tokens_per_minute: 1000", ""))
	g.UsageLog = usage
	client := anthropicXAPIKey(g, keyAll, nil)
	ctx := context.Background()

	check := func(what, id string, prompt, completion int64, finish string, stream bool) map[string]any {
		t.Helper()
		l := g.usageLineFor(t, id)
		if l["status"] != 200.0 || l["prompt_tokens"] != float64(prompt) || l["completion_tokens"] != float64(completion) ||
			l["total_tokens"] != float64(prompt+completion) || l["finish_reason"] != finish || l["usage_reported"] != true ||
			l["stream"] != stream || l["path"] != "/v1/messages" || l["model"] != "m" {
			t.Errorf("%s: usage line %v, want prompt %d completion %d finish %s stream %v", what, l, prompt, completion, finish, stream)
		}
		return l
	}

	// Streamed, ended by the model: the first token comes 50 ms after the
	// request (the backend's delay before its head).
	acc, _, id, err := streamMessage(client, messageParams("m", 100, "count to four"), option.WithHeader("X-Fake-Delay-Ms", "50"))
	if err != nil || id == "" {
		t.Fatalf("stream: %v (request id %q)", err, id)
	}
	l := check("stream, end_turn", id, acc.Usage.InputTokens, 4, "end_turn", true)
	if ttft, _ := l["ttft_ms"].(float64); ttft < 50 {
		t.Errorf("ttft_ms %v, want at least the backend's 50 ms delay", l["ttft_ms"])
	}
	if l["events"] != 9.0 {
		t.Errorf("events %v, want 9", l["events"])
	}
	// Streamed, cut by max_tokens.
	acc, _, id, err = streamMessage(client, messageParams("m", 2, "count to four"))
	if err != nil || acc.StopReason != anthropic.StopReasonMaxTokens {
		t.Fatalf("stream cut by max_tokens: %v %s", err, acc.RawJSON())
	}
	check("stream, max_tokens", id, acc.Usage.InputTokens, 2, "max_tokens", true)
	// Whole answers.
	var res *http.Response
	msg, err := client.Messages.New(ctx, messageParams("m", 3, "count to four"), option.WithResponseInto(&res))
	if err != nil {
		t.Fatal(err)
	}
	check("whole, max_tokens", res.Header.Get("X-Request-Id"), msg.Usage.InputTokens, 3, "max_tokens", false)
	msg, err = client.Messages.New(ctx, messageParams("m", 100, "count to four"), option.WithResponseInto(&res))
	if err != nil {
		t.Fatal(err)
	}
	check("whole, end_turn", res.Header.Get("X-Request-Id"), msg.Usage.InputTokens, 4, "end_turn", false)

	// count_tokens: answered, and no tokens in its usage line.
	_, err = client.Messages.CountTokens(ctx, anthropic.MessageCountTokensParams{Model: "m",
		Messages: messageParams("m", 1, "how many?").Messages}, option.WithResponseInto(&res))
	if err != nil {
		t.Fatalf("count_tokens: %v", err)
	}
	l = g.usageLineFor(t, res.Header.Get("X-Request-Id"))
	if l["status"] != 200.0 || l["total_tokens"] != 0.0 || l["path"] != "/v1/messages/count_tokens" {
		t.Errorf("count_tokens usage line: %v", l)
	}

	// tokens_per_minute: 1000 for key "limited".
	limited := anthropicXAPIKey(g, keyLimited, nil)
	countTokens := func(what string) {
		t.Helper()
		if _, err := limited.Messages.CountTokens(ctx, anthropic.MessageCountTokensParams{Model: "m",
			Messages: messageParams("m", 1, "how many?").Messages}); err != nil {
			t.Fatalf("count_tokens %s: %v", what, err)
		}
	}
	// count_tokens has no max_tokens: it must not reserve (nor keep) the
	// model's default_max_tokens (1024, over the whole limit).
	for i := 0; i < 3; i++ {
		countTokens("with the key's tokens untouched")
	}
	// Reserves 900, uses 4 (+ the prompt): settled, so 900 more fit.
	if _, _, _, err := streamMessage(limited, messageParams("m", 900, "a")); err != nil {
		t.Fatalf("first 900-token reservation: %v", err)
	}
	// Reserves 900 again and uses 800 of them: charged.
	if _, _, _, err := streamMessage(limited, messageParams("m", 900, "b"), option.WithHeader("X-Fake-Tokens", "800")); err != nil {
		t.Fatalf("second 900-token reservation, after the first was settled at its usage: %v", err)
	}
	countTokens("with the key's tokens spent")
	_, err = limited.Messages.New(ctx, messageParams("m", 300, "c"))
	e := anthropicError(t, "300 tokens after 800 were used of 1000", err, 429, "rate_limit_error")
	if !strings.Contains(e.Message, "tokens per minute") {
		t.Errorf("429 message %q", e.Message)
	}
}

// A stream the backend breaks after its head ends with Anthropic's error
// event, and the SDK's stream reports it.
func TestAnthropicStreamBroken(t *testing.T) {
	g, _ := newGateway(t, fakevllm.Options{Tokens: 4}, "")
	client := anthropicXAPIKey(g, keyAll, nil)
	for _, mode := range []string{"close-mid", "close-after-head", "reset-after-head"} {
		t.Run(mode, func(t *testing.T) {
			_, _, id, err := streamMessage(client, messageParams("m", 100, "break"), option.WithHeader("X-Fake-Fail", mode))
			if err == nil {
				t.Fatal("the SDK's stream ended without an error")
			}
			var apiErr *anthropic.Error
			if errors.As(err, &apiErr) {
				if apiErr.Type() != "api_error" || !strings.Contains(apiErr.Message, "stopped the stream") {
					t.Errorf("stream error: %v", err)
				}
			} else if !strings.Contains(err.Error(), `"type":"api_error"`) {
				t.Errorf("stream error is not the gateway's error event: %v", err)
			}
			if l := g.usageLineFor(t, id); l["error"] != "upstream_stream_broken" || l["error_source"] != "upstream" {
				t.Errorf("usage line: %v", l)
			}

			// On the wire: the last event is "event: error" with the error
			// in Anthropic's shape, and the body ends cleanly.
			req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/messages",
				strings.NewReader(`{"model":"m","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"x"}]}`))
			req.Header.Set("X-Api-Key", keyAll)
			req.Header.Set("X-Fake-Fail", mode)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var body bytes.Buffer
			if _, err := body.ReadFrom(bufio.NewReader(res.Body)); err != nil {
				t.Fatalf("the body did not end cleanly: %v", err)
			}
			const last = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"The backend stopped the stream before it was complete.\"}}\n\n"
			if res.StatusCode != 200 || !strings.HasSuffix(body.String(), last) {
				t.Errorf("status %d, body %q: want it to end with %q", res.StatusCode, body.String(), last)
			}
		})
	}
}
