package proxy

import (
	"crypto/sha256"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudwego/hertz/pkg/app"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/proxy/admission"
	"github.com/sluice-gw/sluice/proxy/queue"
	"github.com/sluice-gw/sluice/proxy/reqscan"
	"github.com/sluice-gw/sluice/shm"
)

// limitedGateway is a gateway over a private region with one key.
func limitedGateway(t *testing.T, k config.Key) (*Gateway, *keyRoute, *modelRoute) {
	t.Helper()
	k.Name, k.SHA256, k.Models = "k", hashOf("sk"), []string{"*"}
	cfg := &config.Config{Keys: []config.Key{k}, Models: []config.Model{{Name: "m", DefaultMaxTokens: 100,
		Backends: []config.Backend{{URL: "http://h:1", Slots: 1}}}}}
	r, err := PrivateRegion(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	g := &Gateway{region: r, queues: queue.NewSet[*backendRoute](0, r, nil)}
	rt, err := compileRoutes(cfg, r, g.queues, Backends{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return g, rt.keys[sha256.Sum256([]byte("sk"))], rt.models["m"]
}

// admit runs both limit phases as forward does, releasing what the
// request held when the token limit refuses it (end does that in forward).
func (g *Gateway) admit(c *app.RequestContext, key *keyRoute, m *modelRoute, scan *reqscan.Request) (*admission.Admission, *apiError) {
	a, err := g.admitKey(c, key)
	if err != nil {
		return nil, err
	}
	prompt := (&exchange{req: admitted{scan: *scan}}).promptTokens()
	if err := g.admitTokens(c, a, tokenReservation(m, scan, prompt, true), prompt, m, scan); err != nil {
		a.Release(0, false)
		return nil, err
	}
	return a, nil
}

// The remaining-requests header counts down through a burst; a refused
// request gives back what the earlier limits took.
func TestAdmitHeadersAndGiveBack(t *testing.T) {
	g, key, m := limitedGateway(t, config.Key{RequestsPerMinute: 3, MaxConcurrent: 10, TokensPerMinute: 250})
	scan := &reqscan.Request{PromptBytes: 40} // 10 tokens by the estimate, + 100 default
	var remaining []string
	for i := 0; i < 3; i++ {
		c := &app.RequestContext{}
		_, err := g.admit(c, key, m, scan)
		if err != nil {
			if i < 2 {
				t.Fatalf("request %d refused: %v", i, err)
			}
			if err.errType != "tokens" {
				t.Fatalf("third request refused by %s, want tokens (3 × 110 > 250)", err.errType)
			}
			// Its request and its concurrency place were given back.
			if key.cell.Total() != 2 {
				t.Errorf("concurrency places held: %d, want 2", key.cell.Total())
			}
			break
		}
		remaining = append(remaining, string(c.Response.Header.Peek("x-ratelimit-remaining-requests")))
	}
	if len(remaining) != 2 || remaining[0] != "2" || remaining[1] != "1" {
		t.Errorf("remaining-requests through the burst: %v", remaining)
	}
	// The refused request's RPM share came back: one more fits.
	if ok, _ := key.cell.GCRA(shm.RequestTAT, g.region.Now(), admission.Minute/3, admission.Minute/3*3); !ok {
		t.Error("the refused request's request-limit share was not given back")
	}
}

// Settling refunds what a request reserved and did not use.
func TestSettleRefundsTokens(t *testing.T) {
	g, key, m := limitedGateway(t, config.Key{TokensPerMinute: 300})
	scan := &reqscan.Request{MaxTokens: 200}
	a, err := g.admit(&app.RequestContext{}, key, m, scan)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.admit(&app.RequestContext{}, key, m, scan); err == nil {
		t.Fatal("400 tokens reserved against 300")
	}
	a.Release(20, true)
	if _, err := g.admit(&app.RequestContext{}, key, m, scan); err != nil {
		t.Fatalf("after settling 200 reserved to 20 used: %v", err)
	}
}

// Token counts of any size never wrap a reservation: a max_tokens at the
// top of the int64 range (what the scanner saturates larger ones to), with
// a prompt on top, is "never fits"; the key's limit holds (issue 18: 2^63-1
// was admitted every time against 1,000 tokens per minute).
func TestAdmitTokensSaturates(t *testing.T) {
	g, key, m := limitedGateway(t, config.Key{TokensPerMinute: 1000})
	for _, scan := range []*reqscan.Request{
		{MaxTokens: math.MaxInt64},
		{MaxTokens: math.MaxInt64, PromptBytes: 400},
		{MaxTokens: math.MaxInt64 - 50, PromptBytes: 400},
		{MaxTokens: math.MaxInt64 / 60_000_000},
		{MaxTokens: 1001},
	} {
		a, err := g.admit(&app.RequestContext{}, key, m, scan)
		if err == nil {
			a.Release(0, false)
			t.Errorf("max_tokens %d admitted against 1,000 tokens per minute", scan.MaxTokens)
		} else if !strings.Contains(err.message, "Request too large") {
			t.Errorf("max_tokens %d: %v; want the never-fits refusal", scan.MaxTokens, err)
		}
	}
	// The limit still works: ten requests of 100 fit, the eleventh does not.
	for i := range 11 {
		_, err := g.admit(&app.RequestContext{}, key, m, &reqscan.Request{MaxTokens: 100})
		if (err == nil) != (i < 10) {
			t.Fatalf("request %d of 100 tokens: %v", i, err)
		}
	}
}

// A backend's usage figures settle within bounds: an absurd count pushes
// the key's limiter at most a day ahead, a negative one refunds at most the
// reservation; neither wraps the limiter's time into the past.
func TestSettleBounded(t *testing.T) {
	g, key, m := limitedGateway(t, config.Key{TokensPerMinute: 1000})
	for _, used := range []int64{-math.MaxInt64, math.MinInt64, math.MaxInt64} {
		a, err := g.admit(&app.RequestContext{}, key, m, &reqscan.Request{MaxTokens: 10})
		if err != nil {
			t.Fatal(err)
		}
		before := atomic.LoadInt64(key.cell.Scalar(shm.TokenTAT))
		a.Release(used, true)
		after := atomic.LoadInt64(key.cell.Scalar(shm.TokenTAT))
		if d := after - before; d > admission.MaxDebt || d < -10*(admission.Minute/1000) {
			t.Errorf("usage %d moved the limiter by %v", used, time.Duration(d))
		}
	}
}
