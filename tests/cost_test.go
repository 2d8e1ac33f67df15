package tests

import (
	"bufio"
	"encoding/json"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// cost_usd, differential: for every request of a priced model — chat
// whole and streamed, Responses, Messages, a repeated prompt the backend's
// prefix cache serves in part, a stream the client cuts (the gateway's
// count) — the usage line's cost is exactly the hand computation from the
// same line's tokens at the configured prices; an unpriced model's is null.
func TestCostUSDFromUsage(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 7, Interval: 5 * time.Millisecond, PrefixCache: &fakevllm.PrefixCacheOptions{}})
	usage := filepath.Join(t.TempDir(), "usage.log")
	cfg := strings.Replace(baseConfig(be.URL(), usage, ""), "  - name: m\n    backends:\n",
		"  - name: m\n    price: {input_per_mtok: 0.15, output_per_mtok: 0.6, cached_input_per_mtok: 0.075}\n    backends:\n", 1)
	g := startGateway(t, cfg)
	g.UsageLog = usage

	long := strings.Repeat("a shared system prompt that the prefix cache keeps. ", 40)
	var ids []string
	send := func(path string, body string, hdr map[string]string) {
		t.Helper()
		res, out := post(t, http.DefaultClient, g.URL+path, keyAll, []byte(body), hdr)
		if res.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, res.StatusCode, out)
		}
		ids = append(ids, res.Header.Get("X-Request-Id"))
	}
	chat := func(model string, stream bool) string {
		b, _ := json.Marshal(map[string]any{"model": model, "stream": stream, "messages": []map[string]string{{"role": "user", "content": long}}})
		return string(b)
	}
	send("/v1/chat/completions", chat("m", false), nil)
	send("/v1/chat/completions", chat("m", false), nil) // the same prompt: cached in part
	send("/v1/chat/completions", chat("m", true), nil)
	send("/v1/responses", `{"model":"m","input":"`+long+`","store":false}`, nil)
	send("/v1/messages", `{"model":"m","max_tokens":7,"messages":[{"role":"user","content":"`+long+`"}]}`, map[string]string{"anthropic-version": "2023-06-01"})
	send("/v1/chat/completions", chat("m-alias", false), nil) // unpriced

	// A stream the client cuts after a few events: billed as the gateway
	// counted it.
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/chat/completions", strings.NewReader(chat("m", true)))
	req.Header.Set("Authorization", "Bearer "+keyAll)
	req.Header.Set("X-Fake-Tokens", "200")
	res, err := freshClient().Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("the stream to cut: %v %v", err, res)
	}
	r := bufio.NewReader(res.Body)
	for range 5 {
		if _, err := nextEvent(r); err != nil {
			t.Fatal(err)
		}
	}
	res.Body.Close()
	cut := res.Header.Get("X-Request-Id")
	if l := g.usageLineFor(t, cut); l["usage_source"] != "gateway" {
		t.Fatalf("the cut stream's usage_source: %v", l["usage_source"])
	}
	ids = append(ids, cut)

	priced := map[string]bool{}
	usageOf(t, g, ids...) // every line written
	lines := exactUsageLines(t, g)
	for _, id := range ids {
		priced[id] = checkCost(t, lines[id])
	}
	if !priced[ids[0]] || priced[ids[5]] || !priced[cut] {
		t.Errorf("priced: %v", priced)
	}
	cached := false
	for _, id := range ids {
		cached = cached || lines[id]["cached_tokens"] != json.Number("0") && lines[id]["model"] == "m"
	}
	if !cached {
		t.Error("no request of m had cached tokens: the cached price was not exercised")
	}
}

// exactUsageLines reads the usage log with its numbers as written
// (json.Number), by request id.
func exactUsageLines(t *testing.T, g *gateway) map[string]map[string]any {
	t.Helper()
	data, err := os.ReadFile(g.UsageLog)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		d := json.NewDecoder(strings.NewReader(line))
		d.UseNumber()
		var m map[string]any
		if d.Decode(&m) == nil {
			out[m["request_id"].(string)] = m
		}
	}
	return out
}

// checkCost compares a usage line's cost_usd with its tokens at m's
// prices (USD per million: 0.15 input, 0.075 cached, 0.6 output), exactly;
// it reports whether the line was priced.
func checkCost(t *testing.T, l map[string]any) bool {
	t.Helper()
	if l["model"] != "m" {
		if l["cost_usd"] != nil {
			t.Errorf("%v of the unpriced %v: cost_usd %v", l["request_id"], l["model"], l["cost_usd"])
		}
		return false
	}
	tok := func(k string) *big.Rat { r, _ := new(big.Rat).SetString(string(l[k].(json.Number))); return r }
	perM := func(s string) *big.Rat { r, _ := new(big.Rat).SetString(s); return r.Quo(r, big.NewRat(1_000_000, 1)) }
	prompt, cached, completion := tok("prompt_tokens"), tok("cached_tokens"), tok("completion_tokens")
	want := new(big.Rat).Mul(new(big.Rat).Sub(prompt, cached), perM("0.15"))
	want.Add(want, new(big.Rat).Mul(cached, perM("0.075")))
	want.Add(want, new(big.Rat).Mul(completion, perM("0.6")))
	raw, isNumber := l["cost_usd"].(json.Number)
	if !isNumber {
		t.Errorf("%v: cost_usd %v", l["request_id"], l["cost_usd"])
		return false
	}
	got, ok := new(big.Rat).SetString(string(raw)) // the line's digits, exactly
	if !ok || got.Cmp(want) != 0 {
		t.Errorf("%v (%v tokens %v/%v/%v): cost_usd %s, want %s", l["request_id"], l["usage_source"], prompt, cached, completion,
			raw, want.FloatString(12))
	}
	return true
}
