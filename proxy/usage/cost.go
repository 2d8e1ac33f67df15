package usage

import (
	"strconv"

	"github.com/sluice-gw/sluice/proxy/sat"
	"github.com/sluice-gw/sluice/proxy/sse"
)

// Price is a model's price in pico-USD per token (config.Price's
// PicoPerToken): integers, so that costs add up exactly, which a sum of
// float64 dollars does not.
type Price struct{ Input, Cached, Output int64 }

// Of is the cost of u in pico-USD: the prompt tokens the backend's prefix
// cache did not serve at the input price, those it did (u.Cached) at the
// cached price, the completion at the output price. Cached tokens are
// part of u.Prompt in every API's usage as sse reads it; a count that
// says more were cached than prompted is held to the prompt.
func (p Price) Of(u sse.Usage) int64 {
	prompt, cached := max(u.Prompt, 0), min(max(u.Cached, 0), max(u.Prompt, 0))
	cost := sat.Mul(prompt-cached, p.Input)
	cost = sat.Add(cost, sat.Mul(cached, p.Cached))
	return sat.Add(cost, sat.Mul(max(u.Completion, 0), p.Output))
}

// appendUSD writes pico-USD as a JSON number of dollars, exactly: the
// whole dollars, then the twelve decimals without their trailing zeros.
func appendUSD(b []byte, pico int64) []byte {
	u := uint64(pico)
	if pico < 0 { // never from Of (sat keeps costs at 0 or more); written right all the same
		b, u = append(b, '-'), uint64(-(pico+1))+1
	}
	const perUSD = 1_000_000_000_000
	b = strconv.AppendUint(b, u/perUSD, 10)
	frac := u % perUSD
	if frac == 0 {
		return b
	}
	digits := strconv.AppendUint(make([]byte, 0, 12), frac, 10)
	b = append(b, '.')
	for i := len(digits); i < 12; i++ {
		b = append(b, '0')
	}
	end := len(digits)
	for digits[end-1] == '0' { // frac > 0: a digit is not 0
		end--
	}
	return append(b, digits[:end]...)
}

// MaxBilledTokens bounds each count of one request's usage as it is billed
// (cost_usd, quotas, budgets): more than any model's context window (10M
// tokens is the largest served today), so that no real answer is cut, and
// few enough that a backend's nonsense — a count of 1e18 — costs one
// request's worth rather than saturating a key's lifetime total
// (quota.Saturated) in a single answer.
const MaxBilledTokens = 1 << 24

// Billable is u as it is billed: each count within 0 and MaxBilledTokens,
// the cached tokens within the prompt, and the total at least the prompt
// and the completion together (a backend whose total says less bills what
// its parts say).
func Billable(u sse.Usage) sse.Usage {
	clamp := func(n int64) int64 { return min(max(n, 0), MaxBilledTokens) }
	b := u
	b.Prompt, b.Completion = clamp(u.Prompt), clamp(u.Completion)
	b.Cached = min(clamp(u.Cached), b.Prompt)
	b.Total = max(clamp(u.Total), b.Prompt+b.Completion)
	return b
}
