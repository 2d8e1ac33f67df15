package tests

import (
	"testing"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// A request refused by requests_per_minute (or by tokens_per_minute)
// holds none of its key's max_concurrent places afterwards: with
// max_concurrent 1, a leaked place would lock the key out for good (every
// later request refused as "concurrency"). Requests go one at a time on
// fresh connections, so they spread over both workers: requests too large
// for the token limit are refused as "tokens"; then the key's request rate
// runs out, the refusals say "requests", sluice_key_inflight is back to 0,
// and once the rate allows it a request is served again.
func TestRequestLimitRefusalGivesBackItsPlace(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 1})
	g := startGateway(t, limitedConfig(be.URL(), "off", 2, "requests_per_minute: 30\n    tokens_per_minute: 3000\n    max_concurrent: 1", ""))
	inflight := func() float64 {
		v, ok := g.metric("sluice_key_inflight", map[string]string{"key": "limited"})
		if !ok {
			t.Fatal("no sluice_key_inflight for the key")
		}
		return v
	}
	client := freshClient()
	// send sends one request: true when it was served, false when refused
	// by the request rate; any other answer fails the test.
	send := func(what string) bool {
		res, body := post(t, client, g.URL+"/v1/chat/completions", keyLimited, maxTokensBody(false, 5), nil)
		switch res.StatusCode {
		case 200:
			// Its place is given back as it ends, maybe just after the answer.
			await(t, "the place of a served request given back", func() bool { return inflight() == 0 })
			return true
		case 429:
			if typ, _, _ := openError(t, body); typ != "requests" {
				t.Fatalf("%s: refused as %q, not by the request rate (a place was not given back?): %s", what, typ, body)
			}
			return false
		}
		t.Fatalf("%s: %s %s", what, res.Status, body)
		return false
	}
	for i := 0; i < 3; i++ {
		res, body := post(t, client, g.URL+"/v1/chat/completions", keyLimited, maxTokensBody(false, 5000), nil)
		if typ, _, _ := openError(t, body); res.StatusCode != 429 || typ != "tokens" {
			t.Fatalf("a request reserving 5000 tokens of 3000 a minute: %s %s", res.Status, body)
		}
	}
	await(t, "no place held after the token refusals", func() bool { return inflight() == 0 })
	refused := 0
	for i := 0; refused < 5; i++ {
		if i == 100 {
			t.Fatalf("100 requests against 30 a minute, only %d refused", refused)
		}
		if !send("request " + itoa(i)) {
			refused++
		}
	}
	await(t, "no place held after the refusals", func() bool { return inflight() == 0 })
	await(t, "a request served again (the rate allows one every 2 s)", func() bool { return send("after the refusals") })
}
