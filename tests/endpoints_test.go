package tests

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// vLLM's other endpoints that take a model in the body — rerank, score,
// tokenize, detokenize, pooling, classify — through the real binary.

// endpointCase is one path of vLLM's other endpoints and a request to it.
type endpointCase struct {
	path  string
	body  string // with the model as %q
	usage bool   // vLLM's answer reports usage
}

var endpointCases = []endpointCase{
	{"/v1/rerank", `{"model":%q,"query":"what is it","documents":["a cat","a dog","a fish"]}`, true},
	{"/rerank", `{"model":%q,"query":"what is it","documents":["a cat","a dog"],"top_n":1}`, true},
	{"/v2/rerank", `{"model":%q,"query":"what is it","documents":["a cat","a dog"]}`, true},
	{"/v1/score", `{"model":%q,"text_1":"a cat","text_2":["a dog","a fish"]}`, true},
	{"/score", `{"model":%q,"queries":"a cat","documents":["a dog","a fish"]}`, true},
	{"/tokenize", `{"model":%q,"prompt":"hello there, world"}`, false},
	{"/detokenize", `{"model":%q,"tokens":[1000,1001,1002]}`, false},
	{"/pooling", `{"model":%q,"input":"hello there, world"}`, true},
	{"/classify", `{"model":%q,"input":["good","bad"]}`, true},
}

func (c endpointCase) bodyFor(model string) []byte { return []byte(fmt.Sprintf(c.body, model)) }

// rpmKey is the secret of the i-th key with requests_per_minute: 1.
func rpmKey(i int) string { return fmt.Sprintf("sk-test-rpm-%d", i) }

// withRPMKeys adds n keys (rpmKey) that may use "m" once a minute to a
// respConfig.
func withRPMKeys(cfg string, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  - name: rpm-%d\n    sha256: %s\n    models: [\"m\"]\n    requests_per_minute: 1\n", i, sha(rpmKey(i)))
	}
	return strings.Replace(cfg, "\nmodels:\n", "\n"+b.String()+"models:\n", 1)
}

// countLines is the number of usage lines of the request id.
func countLines(g *gateway, requestID string) int {
	n := 0
	for _, l := range g.usageLines() {
		if l["request_id"] == requestID {
			n++
		}
	}
	return n
}

// Each of vLLM's other endpoints is routed by the body's model (unknown:
// 404 model_not_found; a model whose endpoints do not list it: 404
// endpoint_not_served), under the key's limits (requests_per_minute: 1
// → 429 on the second), and written once in the usage log with its path
// and the tokens the answer reports, where vLLM reports them.
func TestOtherEndpoints(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 2})
	usage := filepath.Join(t.TempDir(), "usage.log")
	g := startGateway(t, withRPMKeys(respConfig(usage, []string{be.URL()}, "", ""), len(endpointCases)))
	g.UsageLog = usage
	client := freshClient()
	for i, c := range endpointCases {
		t.Run(strings.TrimPrefix(c.path, "/"), func(t *testing.T) {
			url := g.URL + c.path
			body := c.bodyFor("m")
			res, out := post(t, client, url, keyAll, body, nil)
			if res.StatusCode != 200 {
				t.Fatalf("%d %s", res.StatusCode, out)
			}
			got := be.Received()
			if last := got[len(got)-1]; last.Path != c.path || last.Model != "m" {
				t.Errorf("the backend received %s for model %q", last.Path, last.Model)
			}
			var answer struct {
				Usage *struct {
					PromptTokens float64 `json:"prompt_tokens"`
					TotalTokens  float64 `json:"total_tokens"`
				} `json:"usage"`
			}
			if err := json.Unmarshal(out, &answer); err != nil || (answer.Usage != nil) != c.usage {
				t.Fatalf("answer (usage expected: %v): %s", c.usage, out)
			}
			rid := res.Header.Get("X-Request-Id")
			l := g.usageLineFor(t, rid)
			if l["path"] != c.path || l["model"] != "m" || l["status"] != 200.0 || l["attempts"] != 1.0 || l["key"] != "all" {
				t.Errorf("usage line %v", l)
			}
			if c.usage {
				if answer.Usage.PromptTokens <= 0 || l["prompt_tokens"] != answer.Usage.PromptTokens ||
					l["total_tokens"] != answer.Usage.TotalTokens || l["completion_tokens"] != 0.0 || l["usage_reported"] != true {
					t.Errorf("answer's usage %+v, usage line %v", *answer.Usage, l)
				}
			} else if l["usage_reported"] != false || l["total_tokens"] != 0.0 {
				t.Errorf("no usage in the answer, yet the usage line says %v", l)
			}

			res, out = post(t, client, url, keyAll, c.bodyFor("no-such-model"), nil)
			checkError(t, "unknown model", res.StatusCode, out, 404, "model_not_found", "no-such-model")
			res, out = post(t, client, url, keyAll, c.bodyFor("chat-only"), nil)
			checkError(t, "a model that serves chat only", res.StatusCode, out, 404, "endpoint_not_served", "chat-only")
			res, out = post(t, client, url, keyLimited, c.bodyFor("chat-only"), nil)
			checkError(t, "a model the key may not use", res.StatusCode, out, 403, "model_not_allowed", "chat-only")

			// requests_per_minute: 1 — the second is refused before it is read.
			sent := len(be.Received())
			if res, out := post(t, client, url, rpmKey(i), body, nil); res.StatusCode != 200 {
				t.Fatalf("first request of a key with requests_per_minute 1: %d %s", res.StatusCode, out)
			}
			res, out = post(t, client, url, rpmKey(i), body, nil)
			if typ, code, _ := openError(t, out); res.StatusCode != 429 || typ != "requests" || code != "rate_limit_exceeded" {
				t.Errorf("second request of a key with requests_per_minute 1: %d %s", res.StatusCode, out)
			}
			if n := len(be.Received()) - sent; n != 1 {
				t.Errorf("%d requests of the limited key reached the backend, want 1", n)
			}
			// Every request above has exactly one usage line, with this path.
			await(t, "the usage lines", func() bool {
				n := 0
				for _, l := range g.usageLines() {
					if l["path"] == c.path {
						n++
					}
				}
				return n == 6
			})
			if n := countLines(g, rid); n != 1 {
				t.Errorf("%d usage lines for request %s", n, rid)
			}
		})
	}
	seen := map[string]int{}
	for _, l := range g.usageLines() {
		seen[l["request_id"].(string)]++
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("request %s has %d usage lines", id, n)
		}
	}
}

// A backend answering 503 on these endpoints before anything reached the
// client: the request is served by the next backend.
func TestOtherEndpointsRetried(t *testing.T) {
	bad, ok := startBackend(t, fakevllm.Options{}), startBackend(t, fakevllm.Options{})
	usage := filepath.Join(t.TempDir(), "usage.log")
	g := startGateway(t, respConfig(usage, []string{bad.URL(), ok.URL()}, "affinity: none", ""))
	g.UsageLog = usage
	bad.SetFailStatus(503)
	client := freshClient()
	var ids []string
	for _, c := range endpointCases {
		for j := 0; j < 4; j++ {
			res, out := post(t, client, g.URL+c.path, keyAll, c.bodyFor("m"), nil)
			if res.StatusCode != 200 {
				t.Fatalf("%s: %d %s", c.path, res.StatusCode, out)
			}
			ids = append(ids, res.Header.Get("X-Request-Id"))
		}
	}
	retried := map[string]bool{}
	for _, id := range ids {
		l := g.usageLineFor(t, id)
		tried, _ := l["backends_tried"].([]any)
		switch {
		case l["attempts"] == 1.0 && len(tried) == 1 && tried[0] == ok.URL():
		case l["attempts"] == 2.0 && len(tried) == 2 && tried[0] == bad.URL() && tried[1] == ok.URL():
			retried[l["path"].(string)] = true
		default:
			t.Errorf("usage line %v", l)
		}
	}
	if len(bad.Received()) == 0 || len(retried) == 0 {
		t.Fatalf("nothing was sent to the failing backend first (%d received; retried on %v): the test proves nothing", len(bad.Received()), retried)
	}
	t.Logf("retried on %d of %d paths; the failing backend answered 503 %d times", len(retried), len(endpointCases), len(bad.Received()))
}

// A key's tokens_per_minute on endpoints that generate nothing: a request
// reserves its prompt, not default_max_tokens of output it will never
// produce, and is charged what the answer reports; tokenize and detokenize,
// which generate nothing and report no usage, reserve nothing. 27 small
// requests fit easily in 3000 tokens a minute; reserving 1024 of output
// each, the third was refused.
func TestOtherEndpointsTokenLimit(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 2})
	usage := filepath.Join(t.TempDir(), "usage.log")
	g := startGateway(t, respConfig(usage, []string{be.URL()}, "", "tokens_per_minute: 3000"))
	g.UsageLog = usage
	client := freshClient()
	for _, c := range endpointCases {
		for j := 0; j < 3; j++ {
			res, out := post(t, client, g.URL+c.path, keyLimited, c.bodyFor("m"), nil)
			if res.StatusCode != 200 {
				t.Fatalf("%s, request %d of a key with 3000 tokens a minute: %d %s", c.path, j+1, res.StatusCode, out)
			}
			rem := res.Header.Get("X-Ratelimit-Remaining-Tokens")
			if unbilled := c.path == "/tokenize" || c.path == "/detokenize"; unbilled {
				// No generation and no usage to settle: the token limit
				// does not apply (no reservation, no tokens headers).
				if rem != "" {
					t.Errorf("%s: under the token limit (%q left)", c.path, rem)
				}
			} else if rem == "" || len(rem) < 4 {
				t.Errorf("%s: %q tokens left of 3000 after a few small requests", c.path, rem)
			}
		}
	}
}
