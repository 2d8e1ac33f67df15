package tests

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// twoBackendConfig is a config whose model "m" has backends a and b, round
// robin (affinity none) so both are tried first in turn.
func twoBackendConfig(t *testing.T, a, b, extra string) (string, string) {
	usage := filepath.Join(t.TempDir(), "usage.log")
	cfg := strings.Replace(baseConfig(a, usage, ""),
		"        api_key_env: SLUICE_TEST_BACKEND_KEY",
		"      - url: "+b+"\n        slots: 8\n    affinity: none"+extra, 1)
	return cfg, usage
}

// A backend that is down, or answers 503, before anything reached the
// client: the request is retried on the other backend and the client sees
// no error. The usage line says how many attempts it took.
func TestRetryBeforeFirstByte(t *testing.T) {
	ok := startBackend(t, fakevllm.Options{Tokens: 2})
	for _, name := range []string{"backend died", "503 backend"} {
		t.Run(name, func(t *testing.T) {
			// Both backends pass their health check; then one dies (its port
			// refuses connections) or answers every completion with a 503.
			badBackend := startBackend(t, fakevllm.Options{FailStatus: 503})
			bad := badBackend.URL()
			cfg, usage := twoBackendConfig(t, bad, ok.URL(), "")
			g := startGateway(t, cfg)
			g.UsageLog = usage
			if name == "backend died" {
				badBackend.Close()
			}
			for i := 0; i < 6; i++ {
				stream := i%2 == 0
				sent := chatBody("m", stream, fmt.Sprint(i))
				res, out := post(t, http.DefaultClient, g.URL+"/v1/chat/completions", keyAll, sent, nil)
				if res.StatusCode != 200 {
					t.Fatalf("request %d (stream %v): %d %s", i, stream, res.StatusCode, out)
				}
				// A retried request carries the whole body: the copy kept for
				// retries must live until the response starts.
				if !stream && !receivedBody(ok, asSent("all", sent)) {
					t.Fatalf("request %d reached the healthy backend without its exact body", i)
				}
			}
			retried := 0
			await(t, "6 usage lines", func() bool { return len(g.usageLines()) == 6 })
			for _, l := range g.usageLines() {
				if l["attempts"].(float64) == 2 {
					retried++
					if tried := l["backends_tried"].([]any); tried[0] != bad || tried[1] != ok.URL() {
						t.Errorf("backends tried: %v", tried)
					}
				}
			}
			if retried == 0 {
				t.Error("no request was retried, yet half of them went to the bad backend first")
			}
		})
	}
}

// retries: 0 turns retrying off: the failing backend's answer is passed on.
func TestRetriesOff(t *testing.T) {
	failing := startBackend(t, fakevllm.Options{FailStatus: 503})
	cfg, _ := twoBackendConfig(t, failing.URL(), failing.URL()+"/", "\n    retries: 0")
	g := startGateway(t, cfg)
	res, _ := post(t, http.DefaultClient, g.URL+"/v1/chat/completions", keyAll, chatBody("m", false, "x"), nil)
	if res.StatusCode != 503 {
		t.Fatalf("status %d, want the backend's 503", res.StatusCode)
	}
	if n := len(failing.Received()); n != 1 {
		t.Fatalf("backend received %d requests, want 1", n)
	}
}

// receivedBody reports whether be received exactly body.
func receivedBody(be *fakevllm.Server, body []byte) bool {
	want := sha256.Sum256(body)
	for _, r := range be.Received() {
		if r.BodySHA256 == want {
			return true
		}
	}
	return false
}

// Which backend answers are retried, through the real binary: 429 and 5xx
// go on to the next backend (the client sees the healthy one's 200); any
// other 4xx is the client's own error, which every backend would repeat,
// and is passed on as it is, without trying another backend.
func TestRetryClassification(t *testing.T) {
	bad := startBackend(t, fakevllm.Options{Tokens: 1})
	ok := startBackend(t, fakevllm.Options{Tokens: 1})
	cfg, _ := twoBackendConfig(t, bad.URL(), ok.URL(), "")
	g := startGateway(t, cfg)
	client := freshClient()
	for _, tc := range []struct {
		code  int
		retry bool
	}{{400, false}, {404, false}, {422, false}, {429, true}, {500, true}, {502, true}, {503, true}} {
		bad.SetFailStatus(tc.code)
		// affinity none: round robin, so one of two requests in a row on
		// one connection (one worker) goes to the failing backend first.
		hit := 0
		for i := 0; i < 4; i++ {
			badBefore, okBefore := len(bad.Received()), len(ok.Received())
			res, body := post(t, client, g.URL+"/v1/chat/completions", keyAll, chatBody("m", false, fmt.Sprint(tc.code, i)), nil)
			toBad, toOK := len(bad.Received())-badBefore, len(ok.Received())-okBefore
			switch {
			case toBad == 0: // the healthy backend first: served
				if res.StatusCode != 200 || toOK != 1 {
					t.Fatalf("%d: request %d went to the healthy backend (%d times): %d %s", tc.code, i, toOK, res.StatusCode, body)
				}
			case tc.retry:
				hit++
				if res.StatusCode != 200 || toBad != 1 || toOK != 1 {
					t.Fatalf("%d is retried: request %d got %d %s after %d tries on the failing backend and %d on the other",
						tc.code, i, res.StatusCode, body, toBad, toOK)
				}
			default:
				hit++
				if res.StatusCode != tc.code || toBad != 1 || toOK != 0 {
					t.Fatalf("%d is not retried: request %d got %d %s after %d tries on the failing backend and %d on the other",
						tc.code, i, res.StatusCode, body, toBad, toOK)
				}
				if !strings.Contains(string(body), "the fake backend is set to fail") {
					t.Fatalf("%d: the backend's error was not passed on as it was: %s", tc.code, body)
				}
			}
		}
		if hit == 0 {
			t.Fatalf("%d: no request of 4 went to the failing backend first", tc.code)
		}
	}
}
