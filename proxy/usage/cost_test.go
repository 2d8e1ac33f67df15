package usage

import (
	"math/big"
	"strconv"
	"testing"

	"github.com/sluice-gw/sluice/proxy/sse"
)

// A request's cost: uncached prompt tokens at the input price, cached at
// the cached price, completion at the output price, exactly, in pico-USD.
func TestPriceOf(t *testing.T) {
	p := Price{Input: 150_000, Cached: 75_000, Output: 600_000} // $0.15, $0.075, $0.60 per Mtok
	for _, c := range []struct {
		u    sse.Usage
		want int64
	}{
		{sse.Usage{Prompt: 1000, Completion: 200}, 1000*150_000 + 200*600_000},
		{sse.Usage{Prompt: 1000, Cached: 400, Completion: 200}, 600*150_000 + 400*75_000 + 200*600_000},
		{sse.Usage{Prompt: 10, Cached: 50}, 10 * 75_000}, // more cached than prompted: held to the prompt
		{sse.Usage{Prompt: -5, Completion: -1}, 0},
		{sse.Usage{Prompt: 1 << 62, Completion: 1 << 62}, 1<<63 - 1}, // saturates, never wraps
	} {
		if got := p.Of(c.u); got != c.want {
			t.Errorf("%+v: %d, want %d", c.u, got, c.want)
		}
	}
}

// Usage as billed: each count within 0 and MaxBilledTokens, cached within
// the prompt, the total at least its parts; a sane usage unchanged.
func TestBillable(t *testing.T) {
	const m = MaxBilledTokens
	for _, c := range []struct{ in, want sse.Usage }{
		{sse.Usage{Prompt: 100, Completion: 20, Total: 120, Cached: 40, Found: true}, sse.Usage{Prompt: 100, Completion: 20, Total: 120, Cached: 40, Found: true}},
		{sse.Usage{Prompt: 100, Completion: 20, Total: 1}, sse.Usage{Prompt: 100, Completion: 20, Total: 120}},
		{sse.Usage{Prompt: -7, Completion: -1, Total: -8, Cached: -3}, sse.Usage{}},
		{sse.Usage{Prompt: 1 << 60, Completion: 1 << 62, Total: 1<<63 - 1, Cached: 1 << 61}, sse.Usage{Prompt: m, Completion: m, Total: 2 * m, Cached: m}},
		{sse.Usage{Prompt: 5, Cached: 9, Total: 5}, sse.Usage{Prompt: 5, Cached: 5, Total: 5}},
	} {
		if got := Billable(c.in); got != c.want {
			t.Errorf("Billable(%+v) = %+v, want %+v", c.in, got, c.want)
		}
	}
	// At the largest price the config allows, one request's worst bill
	// stays far below a lifetime's total: no single answer saturates it.
	p := Price{Input: 10_000 * 1_000_000, Cached: 10_000 * 1_000_000, Output: 10_000 * 1_000_000}
	if worst := p.Of(Billable(sse.Usage{Prompt: 1 << 62, Completion: 1 << 62})); worst > (1<<63-1)/16 {
		t.Fatalf("one request may bill %d pico-USD", worst)
	}
}

// cost_usd is the pico-USD count as dollars, exact: the same digits as
// big.Rat's, without trailing zeros, and valid JSON.
func TestAppendUSD(t *testing.T) {
	for _, pico := range []int64{0, 1, 10, 999_999_999_999, 1_000_000_000_000, 1_234_500_000_000, 150_000_000, 1<<63 - 1, -1, -1 << 63} {
		got := string(appendUSD(nil, pico))
		want := new(big.Rat).SetFrac(big.NewInt(pico), big.NewInt(1_000_000_000_000)).FloatString(12)
		for want[len(want)-1] == '0' {
			want = want[:len(want)-1]
		}
		if want[len(want)-1] == '.' {
			want = want[:len(want)-1]
		}
		if got != want {
			t.Errorf("%d: %s, want %s", pico, got, want)
		}
		if _, err := strconv.ParseFloat(got, 64); err != nil {
			t.Errorf("%d: %s is not a number: %v", pico, got, err)
		}
	}
}
