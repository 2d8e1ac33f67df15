package fakevllm

import (
	"strings"
	"testing"
)

// Each key gets its answer; an unknown one 401; the answers change while
// the server runs; the record counts the requests per key.
func TestKeyAnswers(t *testing.T) {
	s := start(t, Options{Tokens: 1, Keys: map[string]int{"good": 200, "bad": 401, "banned": 403, "busy": 429}})
	chat := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	for _, c := range []struct {
		key, header string
		status      int
		code        string
	}{
		{"good", "Authorization: Bearer good", 200, ""},
		{"bad", "Authorization: Bearer bad", 401, "invalid_api_key"},
		{"banned", "Authorization: Bearer banned", 403, "forbidden"},
		{"busy", "Authorization: Bearer busy", 429, "rate_limit_exceeded"},
		{"stranger", "Authorization: Bearer stranger", 401, "invalid_api_key"},
		{"", "X-None: 1", 401, "invalid_api_key"},
	} {
		resp, body := call(t, s, "POST", "/v1/chat/completions", chat, c.header)
		if resp.StatusCode != c.status {
			t.Fatalf("%s: %d %s", c.key, resp.StatusCode, body)
		}
		if c.status != 200 {
			e := decode(t, body)["error"].(map[string]any)
			if e["code"] != c.code || e["message"] == "" || strings.Contains(e["message"].(string), "stranger") {
				t.Fatalf("%s: %s", c.key, body)
			}
		}
		if ra := resp.Header.Get("Retry-After"); (c.status == 429) != (ra == "1") {
			t.Fatalf("%s: Retry-After %q", c.key, ra)
		}
	}

	// Flipped while running.
	s.SetKeyAnswer("good", 429, "7")
	s.SetKeyAnswer("bad", 200, "")
	if resp, _ := call(t, s, "POST", "/v1/chat/completions", chat, "Authorization: Bearer good"); resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "7" {
		t.Fatal(resp.Status, resp.Header)
	}
	if resp, _ := call(t, s, "POST", "/v1/responses", `{"model":"m","input":"x"}`, "Authorization: Bearer bad"); resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	// Anthropic's header and error shape on /v1/messages.
	resp, body := call(t, s, "POST", "/v1/messages", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"}]}`, "X-Api-Key: banned")
	if m := decode(t, body); resp.StatusCode != 403 || m["type"] != "error" || m["error"].(map[string]any)["type"] != "permission_error" {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if resp, _ := call(t, s, "POST", "/v1/messages", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"}]}`, "X-Api-Key: bad"); resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	for _, path := range []string{"/v1/embeddings", "/rerank", "/tokenize"} {
		if resp, _ := call(t, s, "POST", path, `{"model":"m","input":"x","query":"q","documents":["a"],"prompt":"p"}`, "Authorization: Bearer banned"); resp.StatusCode != 403 {
			t.Fatalf("%s: %s", path, resp.Status)
		}
	}
	// Health, models and metrics take no key.
	for _, path := range []string{"/health", "/v1/models", "/metrics"} {
		if resp, _ := call(t, s, "GET", path, ""); resp.StatusCode != 200 {
			t.Fatalf("%s: %s", path, resp.Status)
		}
	}

	if s.KeyRequests("good") != 2 || s.KeyRequests("bad") != 3 || s.KeyRequests("banned") != 5 || s.KeyRequests("stranger") != 1 {
		t.Fatalf("counts good %d bad %d banned %d", s.KeyRequests("good"), s.KeyRequests("bad"), s.KeyRequests("banned"))
	}
	perKey := map[string]int{}
	for _, r := range s.Received() {
		perKey[r.Key]++
	}
	if perKey["good"] != 2 || perKey["busy"] != 1 || perKey[""] != 1 {
		t.Fatalf("%v", perKey)
	}

	// Forgetting every key ends the check.
	for _, k := range []string{"good", "bad", "banned", "busy"} {
		s.SetKeyAnswer(k, 0, "")
	}
	if resp, _ := call(t, s, "POST", "/v1/chat/completions", chat); resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
}

// Without keys nothing is checked (the default).
func TestNoKeys(t *testing.T) {
	s := start(t, Options{Tokens: 1})
	if resp, _ := call(t, s, "POST", "/v1/chat/completions", `{"model":"m"}`, "Authorization: Bearer whatever"); resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	if s.KeyRequests("whatever") != 1 {
		t.Fatal("the key is counted")
	}
}
