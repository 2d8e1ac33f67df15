package proxy

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/proxy/admission"

	"github.com/cloudwego/hertz/pkg/app"
	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/proxy/sse"
)

// TestAnthropicErrorShape checks the gateway's refusals in Anthropic's
// shape: the status and error type its SDKs map to typed errors.
func TestAnthropicErrorShape(t *testing.T) {
	for _, tc := range []struct {
		e          *apiError
		status     int
		anthropic  string
		openAIType string
	}{
		{errUnauthorized(&apiSpec{xAPIKey: true}, false), 401, "authentication_error", "invalid_request_error"},
		{errInvalid(http.StatusForbidden, "model_not_allowed", "no"), 403, "permission_error", "invalid_request_error"},
		{errInvalid(http.StatusNotFound, "model_not_found", "no"), 404, "not_found_error", "invalid_request_error"},
		{errBodyTooLarge, 413, "request_too_large", "invalid_request_error"},
		{rateLimited(&admission.Refusal{Kind: "requests"}, "slow down"), 429, "rate_limit_error", "requests"},
		{&apiError{status: 429, code: "queue_full", errType: "server_error"}, 529, "overloaded_error", "server_error"},
		{errServer(503, "queue_timeout", "busy"), 529, "overloaded_error", "server_error"},
		{errServer(503, "no_healthy_backend", "none"), 529, "overloaded_error", "server_error"},
		{errUpstream(502, "upstream_unreachable", "down"), 502, "api_error", "server_error"},
		{errUpstream(504, "upstream_timeout", "slow"), 504, "timeout_error", "server_error"},
		{errInvalid(400, "invalid_json", "bad"), 400, "invalid_request_error", "invalid_request_error"},
	} {
		status, typ := anthropicStatus(tc.e)
		if status != tc.status || typ != tc.anthropic {
			t.Errorf("%s: Anthropic %d %s, want %d %s", tc.e.code, status, typ, tc.status, tc.anthropic)
		}
		var a struct {
			Type  string `json:"type"`
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(appendAnthropicError(nil, typ, tc.e.message), &a); err != nil ||
			a.Type != "error" || a.Error.Type != typ || a.Error.Message != tc.e.message {
			t.Errorf("%s: Anthropic body %+v (%v)", tc.e.code, a, err)
		}
		var o struct {
			Error struct {
				Type string `json:"type"`
				Code string `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(appendErrorJSON(nil, tc.e), &o); err != nil || o.Error.Type != tc.openAIType || o.Error.Code != tc.e.code {
			t.Errorf("%s: OpenAI body %+v (%v)", tc.e.code, o, err)
		}
	}
	ev := string(appendErrorEvent(nil, errUpstream(502, "upstream_stream_broken", "broke"), &apiSpec{errors: anthropicErrors, format: sse.Messages}))
	if want := "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"broke\"}}\n\n"; ev != want {
		t.Errorf("Anthropic error event %q, want %q", ev, want)
	}
	ev = string(appendErrorEvent(nil, errUpstream(504, "upstream_timeout", "slow"), &apiSpec{format: sse.Responses}))
	if want := "event: error\ndata: {\"type\":\"error\",\"code\":\"upstream_timeout\",\"message\":\"slow\",\"param\":null}\n\n"; ev != want {
		t.Errorf("Responses error event %q, want %q", ev, want)
	}
}

// TestAPINamesMatchConfig holds the API descriptions' names equal to the
// names models[].endpoints accepts.
func TestAPINamesMatchConfig(t *testing.T) {
	seen := map[string]bool{}
	for _, a := range apis {
		seen[a.name] = true
		if !slices.Contains(config.APIs, a.name) {
			t.Errorf("API %q is not in config.APIs", a.name)
		}
	}
	for _, n := range config.APIs {
		if !seen[n] {
			t.Errorf("config.APIs names %q, which no API description has", n)
		}
	}
}

// The client's credentials and the headers that qualify a key never reach
// a backend the gateway sends its own key to; other headers do.
func TestForwardedHeaders(t *testing.T) {
	c := app.NewContext(0)
	for k, v := range map[string]string{
		"Authorization": "Bearer client", "X-Api-Key": "client", "Cookie": "a=b",
		"OpenAI-Organization": "org-bogus", "OpenAI-Project": "proj", "Api-Key": "azure",
		"Anthropic-Version": "2023-06-01", "X-Fake-Tokens": "3",
	} {
		c.Request.Header.Set(k, v)
	}
	for _, own := range []bool{false, true} {
		got := string(appendRequestHeaders(nil, c, own, false))
		for _, never := range []string{"client", "a=b"} {
			if strings.Contains(got, never) {
				t.Errorf("ownKey %v: forwarded %q:\n%s", own, never, got)
			}
		}
		for _, scoped := range []string{"org-bogus", "proj", "azure"} {
			if strings.Contains(got, scoped) == own {
				t.Errorf("ownKey %v: %q forwarded %v:\n%s", own, scoped, !own, got)
			}
		}
		for _, kept := range []string{"Anthropic-Version: 2023-06-01", "X-Fake-Tokens: 3"} {
			if !strings.Contains(got, kept) {
				t.Errorf("ownKey %v: %q not forwarded:\n%s", own, kept, got)
			}
		}
	}
}
