package tests

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// One key cannot fill a model's queue for everyone (issue 30, item 3):
// with 2 slots busy and its requests filling its share of the queue
// (queue.max_per_key, half of queue.max by default), a key is refused
// queue_key_full while another key's request still queues and is served.
// Before, the flooding key took all 30 places and the other key's first
// request was a 429 queue_full.
func TestOneKeyCannotFillTheQueue(t *testing.T) {
	g, be := startSlotsGateway(t, 2, "{max: 30, timeout: 120s}")
	served := []<-chan outcome{}
	for i := range 2 {
		c, _ := launchAs(g, keyAll, "m", "flood", fmt.Sprintf("served-%d", i))
		served = append(served, c)
	}
	await(t, "both slots taken", func() bool { return be.Running() == 2 })
	// The flooding key queues until it is refused: at its share, 15.
	var queued []<-chan outcome
	for i := 0; ; i++ {
		if i > 30 {
			t.Fatal("31 requests of one key queued: the queue has 30 places")
		}
		c, _ := launchAs(g, keyAll, "m", "flood", fmt.Sprintf("queued-%d", i))
		var o outcome
		await(t, "the request to queue or be refused", func() bool {
			select {
			case o = <-c:
				return true
			default:
			}
			v, _ := g.metric("sluice_queue_depth", map[string]string{"model": "m"})
			return int(v) == len(queued)+1
		})
		if o.status == 0 && o.err == nil {
			queued = append(queued, c)
			continue
		}
		if o.status != 429 || o.code != "queue_key_full" {
			t.Fatalf("the flooding key's request %d: %d %q %v, want 429 queue_key_full", i, o.status, o.code, o.err)
		}
		break
	}
	if len(queued) != 15 {
		t.Fatalf("the flooding key queued %d requests, want its share of 30 places: 15", len(queued))
	}
	// Another key still gets a place, and is served.
	other, _ := launchAs(g, keyLimited, "m", "flood", "other")
	await(t, "the other key's request to queue", func() bool {
		select {
		case o := <-other:
			t.Fatalf("the other key's request, with 15 of 30 places free: %d %q %v", o.status, o.code, o.err)
		default:
		}
		v, _ := g.metric("sluice_queue_depth", map[string]string{"model": "m"})
		return int(v) == 16
	})
	be.Release("flood")
	expect(t, "", append(append(served, queued...), other)...)
}

// A stream the client cuts before its last event — where the usage comes —
// is billed what was generated (issue 30, item 2): the usage line says the
// gateway counted it (usage_source "gateway"), with the prompt's estimate
// and the content events relayed, and sluice_tokens_total counts it. Before,
// such a stream was a 499 with completion_tokens 0, nothing in the
// counters and nothing settled: a key cutting its streams paid nothing.
// Chat, Responses and Messages streams alike, each cut after a few events.
func TestCutStreamIsBilled(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 200, Interval: 5 * time.Millisecond})
	usage := t.TempDir() + "/usage.log"
	g := startGateway(t, baseConfig(be.URL(), usage, ""))
	g.UsageLog = usage
	billed := 0.0
	for _, c := range []struct{ path, body string }{
		{"/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"count to two hundred"}]}`},
		{"/v1/responses", `{"model":"m","stream":true,"input":"count to two hundred"}`},
		{"/v1/messages", `{"model":"m","stream":true,"max_tokens":500,"messages":[{"role":"user","content":"count to two hundred"}]}`},
	} {
		t.Run(strings.TrimPrefix(c.path, "/v1/"), func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, g.URL+c.path, strings.NewReader(c.body))
			req.Header.Set("Authorization", "Bearer "+keyAll)
			req.Header.Set("Content-Type", "application/json")
			res, err := freshClient().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != 200 {
				t.Fatalf("status %d", res.StatusCode)
			}
			r := bufio.NewReader(res.Body)
			for range 12 { // a few events (the first may carry no content), then the client leaves
				if _, err := nextEvent(r); err != nil {
					t.Fatalf("the stream ended before 12 events: %v", err)
				}
			}
			res.Body.Close()
			l := g.usageLineFor(t, res.Header.Get("X-Request-Id"))
			completion, _ := l["completion_tokens"].(float64)
			prompt, _ := l["prompt_tokens"].(float64)
			if l["status"] != 499.0 || l["usage_source"] != "gateway" || l["usage_reported"] != false {
				t.Fatalf("the cut stream's usage line: status %v usage_source %v usage_reported %v", l["status"], l["usage_source"], l["usage_reported"])
			}
			if completion < 5 || completion >= 200 || prompt < 1 || l["total_tokens"] != prompt+completion {
				t.Fatalf("the cut stream billed prompt %v completion %v total %v: want the prompt's estimate and the events relayed (at least 5 of 12, fewer than the 200 of a whole answer)",
					prompt, completion, l["total_tokens"])
			}
			billed += completion
		})
	}
	await(t, "the cut streams' tokens in sluice_tokens_total", func() bool {
		v, _ := g.metric("sluice_tokens_total", map[string]string{"model": "m", "key": "all", "kind": "completion"})
		return v == billed
	})
}

// A token limit reserves every byte that becomes prompt tokens and every
// answer a request may generate (issue 30, item 4): tools, an assistant's
// tool-call arguments, n, a completion's batch of prompts, a missing
// max_tokens on a model whose max_context says how far it may generate,
// and the stored conversation a Responses follow-up continues. Each request
// below would cost more than the key's 2,500 tokens a minute, and is told
// "Request too large"; before, each reserved its max_tokens (or 1,024)
// plus its messages' contents and was admitted (one key saw 31k-52k tokens
// served against 2,000 a minute).
func TestTokenReservationCountsWholeRequest(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 4})
	cfg := limitedConfig(be.URL(), "off", 2, "tokens_per_minute: 2500", "")
	cfg = strings.Replace(cfg, "  - name: m\n    backends:", "  - name: m\n    max_context: 4096\n    backends:", 1)
	g := startGateway(t, cfg)
	client := freshClient()
	send := func(path string, body any) (*http.Response, []byte) {
		t.Helper()
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		return post(t, client, g.URL+path, keyLimited, b, nil)
	}
	user := []map[string]any{{"role": "user", "content": "hi"}}
	// Within the limit: admitted, so the refusals below are for their size.
	if res, body := send("/v1/chat/completions", map[string]any{"model": "m", "messages": user, "max_tokens": 100}); res.StatusCode != 200 {
		t.Fatalf("a small request: %s %s", res.Status, body)
	}
	// A conversation of about 1,500 tokens, stored; its follow-up reserves it.
	res, body := send("/v1/responses", map[string]any{"model": "m", "input": strings.Repeat("w ", 3000), "max_output_tokens": 4})
	var stored struct{ ID string }
	if json.Unmarshal(body, &stored); res.StatusCode != 200 || stored.ID == "" {
		t.Fatalf("the first turn: %s %s", res.Status, body)
	}
	tool := []map[string]any{{"type": "function", "function": map[string]any{"name": "f",
		"description": strings.Repeat("d", 12_000), "parameters": map[string]any{"type": "object"}}}}
	call := []map[string]any{{"role": "assistant", "content": nil, "tool_calls": []map[string]any{{"id": "c", "type": "function",
		"function": map[string]any{"name": "f", "arguments": strings.Repeat("a", 12_000)}}}},
		{"role": "tool", "tool_call_id": "c", "content": "ok"}}
	for _, tc := range []struct {
		name, path string
		body       map[string]any
	}{
		{"12 KB of tools", "/v1/chat/completions", map[string]any{"model": "m", "messages": user, "tools": tool, "max_tokens": 10}},
		{"12 KB of tool-call arguments", "/v1/chat/completions", map[string]any{"model": "m", "messages": call, "max_tokens": 10}},
		{"tools on the Responses API", "/v1/responses", map[string]any{"model": "m", "input": "hi", "tools": tool, "max_output_tokens": 10}},
		{"n 9 of 300", "/v1/chat/completions", map[string]any{"model": "m", "messages": user, "n": 9, "max_tokens": 300}},
		{"9 prompts of 300", "/v1/completions", map[string]any{"model": "m", "prompt": []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}, "max_tokens": 300}},
		{"no max_tokens, max_context 4096", "/v1/chat/completions", map[string]any{"model": "m", "messages": user}},
		{"a follow-up of 1,500 tokens", "/v1/responses", map[string]any{"model": "m", "input": "and?", "previous_response_id": stored.ID, "max_output_tokens": 1200}},
	} {
		res, body := send(tc.path, tc.body)
		if res.StatusCode != 429 {
			t.Errorf("%s: %s; want 429 Request too large", tc.name, res.Status)
		} else if _, _, msg := openError(t, body); !strings.Contains(msg, "Request too large") {
			t.Errorf("%s: %s; want Request too large", tc.name, body)
		}
	}
}

// keySibling is a third key, in the cache group of keyAll (cache_group).
const keySibling = "sk-test-sibling"

// No key learns another's prompts from the prefix cache (issue 30, item
// 7): each request goes to the backends with its key's cache group's
// cache_salt, which vLLM (here the fake's simulation of its block cache)
// mixes into every block, and the gateway's prefix index matches prompts
// only within a group. A key that sends another key's exact prompt sees
// no cached token, while the key itself, and a key sharing its group
// deliberately, hit. A client's own cache_salt is mixed in, never sent as
// it came; its "priority" reaches vLLM as 0, its X-Request-Id as the
// gateway's (item 8). Before, the guess was routed to the backend holding
// the prompt and saw its cached tokens.
func TestNoCrossKeyCacheOracle(t *testing.T) {
	var bes []*fakevllm.Server
	var urls []string
	for range 3 {
		be := startBackend(t, fakevllm.Options{Tokens: 2, PrefixCache: &fakevllm.PrefixCacheOptions{}})
		bes = append(bes, be)
		urls = append(urls, fmt.Sprintf("      - url: %s\n        slots: 8", be.URL()))
	}
	cfg := strings.Replace(baseConfig(bes[0].URL(), "off", ""),
		"      - url: "+bes[0].URL()+"\n        slots: 64\n        api_key_env: SLUICE_TEST_BACKEND_KEY",
		strings.Join(urls, "\n")+"\n    load_interval: 0s", 1)
	cfg = strings.Replace(cfg, "models:\n  - name: m\n", fmt.Sprintf(
		"  - name: sibling\n    sha256: %s\n    models: [\"m\"]\n    cache_group: all\nmodels:\n  - name: m\n", sha(keySibling)), 1)
	g := startGateway(t, cfg)
	client := freshClient()
	secret := strings.Repeat("The victim's confidential system prompt, which no other tenant should confirm. ", 30)
	body := func(extra string) []byte {
		return []byte(fmt.Sprintf(`{"model":"m","messages":[{"role":"system","content":%q},{"role":"user","content":"hello"}]%s}`, secret, extra))
	}
	// send returns the cached tokens the answer reports and the request as
	// the backend received it.
	send := func(key string, b []byte) (int, fakevllm.Received) {
		t.Helper()
		before := make([]int, len(bes))
		for i, be := range bes {
			before[i] = len(be.Received())
		}
		res, out := post(t, client, g.URL+"/v1/chat/completions", key, b, nil)
		if res.StatusCode != 200 {
			t.Fatalf("status %d: %s", res.StatusCode, out)
		}
		var answer struct {
			Usage struct {
				Details *struct {
					Cached int `json:"cached_tokens"`
				} `json:"prompt_tokens_details"`
			}
		}
		if err := json.Unmarshal(out, &answer); err != nil || answer.Usage.Details == nil {
			t.Fatalf("answer without prompt_tokens_details: %s", out)
		}
		for i, be := range bes {
			if rec := be.Received(); len(rec) != before[i] {
				return answer.Usage.Details.Cached, rec[len(rec)-1]
			}
		}
		t.Fatal("no backend received the request")
		return 0, fakevllm.Received{}
	}
	_, victim := send(keyAll, body(""))
	if cached, _ := send(keyAll, body("")); cached == 0 {
		t.Fatal("the key's own repeated prompt hit nothing: the test cannot tell a blocked oracle from a cold cache")
	}
	cached, attacker := send(keyLimited, body(""))
	if cached != 0 {
		t.Errorf("another key's exact guess of the prompt saw %d cached tokens; want 0", cached)
	}
	if victim.CacheSalt == "" || attacker.CacheSalt == "" || victim.CacheSalt == attacker.CacheSalt {
		t.Errorf("cache_salt sent: %q for one key, %q for the other; want two different salts", victim.CacheSalt, attacker.CacheSalt)
	}
	if cached, sibling := send(keySibling, body("")); cached == 0 || sibling.CacheSalt != victim.CacheSalt {
		t.Errorf("a key of the same cache_group: %d cached tokens, salt %q (the group's: %q); want a hit", cached, sibling.CacheSalt, victim.CacheSalt)
	}
	// The client's own salt and priority do not go upstream as sent.
	cached, own := send(keyLimited, body(`,"cache_salt":"`+victim.CacheSalt+`","priority":-100`))
	if cached != 0 || own.CacheSalt == victim.CacheSalt || own.CacheSalt == attacker.CacheSalt || own.Priority != "0" {
		t.Errorf("a client sending the victim's salt and priority -100: %d cached, salt %q, priority %q; want 0, a salt of its own, 0",
			cached, own.CacheSalt, own.Priority)
	}
	// Nor its X-Request-Id, which vLLM makes its own request id: the
	// gateway's goes, the one its answer and usage line carry.
	res, out := post(t, client, g.URL+"/v1/chat/completions", keyLimited, body(""), map[string]string{"X-Request-Id": "chosen-by-client"})
	var got string
	for _, be := range bes {
		for _, r := range be.Received() {
			if r.Header.Get("X-Request-Id") == "chosen-by-client" {
				t.Error("the client's X-Request-Id reached the backend")
			}
			if r.Header.Get("X-Request-Id") == res.Header.Get("X-Request-Id") {
				got = r.Header.Get("X-Request-Id")
			}
		}
	}
	if res.StatusCode != 200 || got == "" {
		t.Errorf("%s %s: no backend received the gateway's X-Request-Id %q", res.Status, out, res.Header.Get("X-Request-Id"))
	}
	res, out = post(t, client, g.URL+"/v1/chat/completions", keyLimited, body(`,"cache_salt":""`), nil)
	if _, code, _ := openError(t, out); res.StatusCode != 400 || code != "invalid_field" {
		t.Errorf("an empty cache_salt (vLLM refuses it): %s %s", res.Status, out)
	}
}
