package fakevllm

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// chatBody is a chat request of messages given as role, content pairs.
func chatBody(t testing.TB, pairs ...string) string {
	t.Helper()
	type msg struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	var ms []msg
	for i := 0; i+1 < len(pairs); i += 2 {
		ms = append(ms, msg{pairs[i], pairs[i+1]})
	}
	b, err := json.Marshal(map[string]any{"model": "m", "messages": ms})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// text is n bytes of text, different for each seed.
func text(seed string, n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%s-%d ", seed, i)
	}
	return b.String()[:n]
}

// lastCached is the last request's CachedTokens and QueriedTokens.
func lastCached(t *testing.T, s *Server) (int, int) {
	t.Helper()
	rs := s.Received()
	return rs[len(rs)-1].CachedTokens, rs[len(rs)-1].QueriedTokens
}

// A prompt sent twice hits on the second request: all its full blocks
// but those covering its last token, counted in tokens; the answer
// reports them as cached_tokens.
func TestPrefixCacheSharedPrefix(t *testing.T) {
	s := start(t, Options{PrefixCache: &PrefixCacheOptions{}})
	body := chatBody(t, "system", text("sys", 2000), "user", "hello")
	_, first := call(t, s, "POST", "/v1/chat/completions", body)
	if c, q := lastCached(t, s); c != 0 || q == 0 {
		t.Fatalf("first request: cached %d of %d", c, q)
	}
	if !strings.Contains(first, `"prompt_tokens_details":{"cached_tokens":0}`) {
		t.Fatalf("first answer: %s", first)
	}
	_, second := call(t, s, "POST", "/v1/chat/completions", body)
	c, q := lastCached(t, s)
	if want := (q - 1) / 16 * 16; c != want || c == 0 {
		t.Fatalf("second request: cached %d of %d, want %d", c, q, want)
	}
	if !strings.Contains(second, `"cached_tokens":`+strconv.Itoa(c)+"}") {
		t.Fatalf("second answer: %s", second)
	}
	if hits, queries := s.PrefixCacheStats(); hits != int64(c) || queries != int64(2*q) {
		t.Fatalf("stats %d of %d", hits, queries)
	}
}

// A conversation growing turn by turn (the answer sent back as the
// assistant message) hits its earlier turns' blocks, the answer's too.
func TestPrefixCacheConversation(t *testing.T) {
	s := start(t, Options{Tokens: 40, PrefixCache: &PrefixCacheOptions{}})
	conv := []string{"system", text("sys", 1000)}
	prevText := 0
	for turn := range 5 {
		conv = append(conv, "user", text(fmt.Sprint("turn", turn), 300))
		body := chatBody(t, conv...)
		_, answer := call(t, s, "POST", "/v1/chat/completions", body)
		c, q := lastCached(t, s)
		if turn > 0 {
			// The previous prompt (generation prompt included) and its
			// answer are a prefix of this prompt: all their full blocks hit.
			if want := prevText / 64 * 16; c != want || c == 0 {
				t.Fatalf("turn %d: cached %d of %d, want %d", turn, c, q, want)
			}
		}
		p, _ := canonicalPrompts("/v1/chat/completions", []byte(body), "")
		prevText = len(p[0]) + len(s.answerText(40, true))
		conv = append(conv, "assistant", decode(t, answer)["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"].(string))
	}
}

// Two first user messages after the same system prompt share only the
// system prompt's full blocks.
func TestPrefixCacheSharedSystemPrompt(t *testing.T) {
	s := start(t, Options{PrefixCache: &PrefixCacheOptions{}})
	sys := text("sys", 1000)
	call(t, s, "POST", "/v1/chat/completions", chatBody(t, "system", sys, "user", text("alice", 500)))
	call(t, s, "POST", "/v1/chat/completions", chatBody(t, "system", sys, "user", text("bob", 500)))
	c, _ := lastCached(t, s)
	shared := len("<|system|>\n" + sys + apcEnd + "<|user|>\n") // the common text
	if want := shared / 64 * 16; c != want {
		t.Fatalf("cached %d, want %d", c, want)
	}
	// A different system prompt shares nothing.
	call(t, s, "POST", "/v1/chat/completions", chatBody(t, "system", text("other", 1000), "user", text("bob", 500)))
	if c, _ := lastCached(t, s); c != 0 {
		t.Fatalf("cached %d", c)
	}
}

// The cache holds Blocks blocks: the least recently used go first, and
// a prompt's tail blocks before its head.
func TestPrefixCacheLRU(t *testing.T) {
	c := newPrefixCache(PrefixCacheOptions{BlockTokens: 4, Blocks: 10, BytesPerToken: 1})
	a, b := []byte(text("a", 20)), []byte(text("b", 20)) // 5 blocks each
	if _, h := c.lookup("m", "", a, nil); h != 0 {
		t.Fatal(h)
	}
	c.lookup("m", "", b, nil)
	if c.len() != 10 {
		t.Fatal(c.len())
	}
	if _, h := c.lookup("m", "", a, nil); h != 16 { // 4 of 5 blocks: the last token is computed
		t.Fatal(h)
	}
	// a is now the most recent; 3 new blocks evict b's 3 tail blocks.
	c.lookup("m", "", []byte(text("c", 12)), nil)
	if c.len() != 10 {
		t.Fatal(c.len())
	}
	if _, h := c.lookup("m", "", append(a, 'x'), nil); h != 20 { // a's 5 blocks survived
		t.Fatalf("a hit %d", h)
	}
	if _, h := c.lookup("m", "", append(b, 'x'), nil); h != 8 { // b's first 2 blocks survived
		t.Fatalf("b hit %d", h)
	}
	// Another model shares nothing.
	if _, h := c.lookup("other", "", a, nil); h != 0 {
		t.Fatal(h)
	}
	// Nor does another cache_salt (vLLM: an extra key of the first block).
	if _, h := c.lookup("m", "salt", a, nil); h != 0 {
		t.Fatalf("another salt hit %d", h)
	}
	if c.len() != 10 {
		t.Fatal(c.len())
	}
}

// The counters on /metrics are PrefixCacheStats, SetPrefixCache's values
// included; the other APIs are simulated too, and report cached tokens
// where vLLM's usage has them.
func TestPrefixCacheMetricsAndAPIs(t *testing.T) {
	s := start(t, Options{PrefixCache: &PrefixCacheOptions{}})
	s.SetPrefixCache(5, 10)
	long := text("doc", 3000)
	for range 2 {
		call(t, s, "POST", "/v1/completions", `{"model":"m","prompt":"`+long+`"}`)
	}
	_, ans := call(t, s, "POST", "/v1/completions", `{"model":"m","prompt":"`+long+`"}`)
	if c, _ := lastCached(t, s); c == 0 || !strings.Contains(ans, `"cached_tokens":`+strconv.Itoa(c)) {
		t.Fatalf("completions: cached %d: %s", c, ans)
	}
	respBody := `{"model":"m","instructions":"` + long + `","input":"hi"}`
	call(t, s, "POST", "/v1/responses", respBody)
	_, ans = call(t, s, "POST", "/v1/responses", respBody)
	c, _ := lastCached(t, s)
	details := decode(t, ans)["usage"].(map[string]any)["input_tokens_details"].(map[string]any)
	if c == 0 || details["cached_tokens"] != float64(c) {
		t.Fatalf("responses: cached %d: %v", c, details)
	}
	// A continued response hits its predecessor's prompt and answer.
	id := decode(t, ans)["id"].(string)
	call(t, s, "POST", "/v1/responses", `{"model":"m","instructions":"`+long+`","input":"more","previous_response_id":"`+id+`"}`)
	if c2, _ := lastCached(t, s); c2 <= c {
		t.Fatalf("continued response: cached %d, the first %d", c2, c)
	}
	msgBody := `{"model":"m","max_tokens":5,"system":"` + long + `","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`
	call(t, s, "POST", "/v1/messages", msgBody)
	call(t, s, "POST", "/v1/messages", msgBody)
	if c, _ := lastCached(t, s); c == 0 {
		t.Fatal("messages: no hit")
	}
	hits, queries := s.PrefixCacheStats()
	var sumC, sumQ int64 = 5, 10
	for _, r := range s.Received() {
		sumC += int64(r.CachedTokens)
		sumQ += int64(r.QueriedTokens)
	}
	if hits != sumC || queries != sumQ {
		t.Fatalf("stats %d of %d, records %d of %d", hits, queries, sumC, sumQ)
	}
	_, page := call(t, s, "GET", "/metrics", "")
	for _, line := range []string{
		fmt.Sprintf("vllm:prefix_cache_queries_total{model_name=\"fake\"} %d\n", queries),
		fmt.Sprintf("vllm:prefix_cache_hits_total{model_name=\"fake\"} %d\n", hits),
	} {
		if !strings.Contains(page, line) {
			t.Fatalf("the page lacks %q:\n%s", line, page)
		}
	}
}

// Off by default: nothing counted, the usage as before.
func TestPrefixCacheOff(t *testing.T) {
	s := start(t, Options{})
	body := chatBody(t, "system", text("sys", 2000), "user", "hello")
	call(t, s, "POST", "/v1/chat/completions", body)
	_, ans := call(t, s, "POST", "/v1/chat/completions", body)
	if !strings.Contains(ans, `"prompt_tokens_details":null`) {
		t.Fatal(ans)
	}
	if c, q := lastCached(t, s); c != 0 || q != 0 {
		t.Fatal(c, q)
	}
	if h, q := s.PrefixCacheStats(); h != 0 || q != 0 {
		t.Fatal(h, q)
	}
}

// The simulation's cost for a 100 KB chat prompt (system prompt and a
// user message), the canonical text, lookup and insert: what each request
// costs the benchmark rig's fake.
func BenchmarkPrefixCache100KB(b *testing.B) {
	s := &Server{opts: Options{Words: []string{"tok"}}, apc: newPrefixCache(PrefixCacheOptions{Blocks: 1 << 16})}
	body := []byte(chatBody(b, "system", text("sys", 50_000), "user", text("user", 50_000)))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		prompts, chat := canonicalPrompts("/v1/chat/completions", body, "")
		s.apc.lookup("m", "", prompts[0], s.answerText(16, chat))
	}
}
