package proxy

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/cloudwego/hertz/pkg/app"
	"github.com/cloudwego/hertz/pkg/common/utils"

	"github.com/sluice-gw/sluice/proxy/reqscan"
	"github.com/sluice-gw/sluice/shm"
)

// minute is the limiters' period in nanoseconds.
const minute = int64(time.Minute)

// promptBytesPerToken estimates a prompt's tokens from its bytes when a
// token limit reserves them (English text runs ~4 bytes per token).
const promptBytesPerToken = 4

// promptEstimate is the request's prompt in tokens as the gateway
// estimates it before the backend says: its prompt bytes / 4, and for a
// follow-up of a stored response the conversation it continues (its
// tokens, as the shared map recalls them), at least 1. The token
// reservation, the fair queue's charge and the gateway's own count of a
// request whose usage never came all start from it.
func (x *exchange) promptEstimate() int64 { return max(x.promptTokens(), 1) }

// promptTokens is promptEstimate without its floor: what the token
// reservation adds to the output it reserves.
func (x *exchange) promptTokens() int64 {
	return satAdd(int64(x.scan.PromptBytes/promptBytesPerToken), x.priorTokens)
}

// tokenReservation is what a request reserves on its key's token limit:
// its prompt's estimate and, for an API that generates, the most each of
// its outputs may generate — max_tokens (or max_completion_tokens,
// max_output_tokens); without one, the model's max_context less the
// prompt when max_context is set (what the backend will generate at most),
// else default_max_tokens — times its outputs. Saturating: max_tokens may
// be as large as the client likes (it is read saturated at MaxInt64); a
// sum that wrapped would go negative and pass every limit.
func tokenReservation(m *modelRoute, scan *reqscan.Request, prompt int64, generates bool) int64 {
	if !generates {
		return max(satAdd(scan.MaxTokens, prompt), 1)
	}
	each := scan.MaxTokens
	if each <= 0 {
		each = m.defaultMaxTokens
		if m.maxContext > 0 {
			each = max(m.maxContext-prompt, 1)
		}
	}
	if m.maxContext > 0 {
		each = min(each, m.maxContext) // the backend refuses more: no answer is longer
	}
	return max(satAdd(satMul(each, outputsOf(scan)), prompt), 1)
}

// outputsOf is how many answers the request generates, each up to its
// max_tokens: n (or best_of, the larger) for each prompt of a batch.
func outputsOf(scan *reqscan.Request) int64 {
	return satMul(max(scan.N, 1), max(int64(scan.Prompts), 1))
}

// admission is what a request took from its key's limits; release gives
// back the concurrency place and settles the token reservation.
type admission struct {
	key        *keyRoute
	col        int
	concurrent bool     // holds a place of max_concurrent
	rpmCost    int64    // what the requests limiter was charged, to give back if a later limit refuses
	tokens     int64    // tokens reserved on the token limiter
	tpm        int64    // the token limit they were reserved against
	scratch    [40]byte // where the limit headers' values are written
}

// limits is a key's limits as this gateway enforces them.
type limits struct{ rpm, tpm, maxConcurrent int64 }

// fleetShare is this gateway's share of the key's limits: each divided by
// the number of live replicas in the fleet (fleet.nomad_service; 1 without
// it), at least 1, so that the replicas together admit what one would.
// An uneven spread of clients over replicas under-admits: the price of
// keeping no shared store between them.
func (g *Gateway) fleetShare(k *keyRoute) limits {
	n := int64(1)
	if g.marks.fleet != nil {
		n = max(1, atomic.LoadInt64(g.marks.fleet.Scalar(0)))
	}
	share := func(v int64) int64 {
		if v == 0 {
			return 0
		}
		return max(1, v/n)
	}
	return limits{share(k.rpm), share(k.tpm), share(k.maxConcurrent)}
}

// admitKey applies the key's limits that need nothing of the body —
// max_concurrent, then requests_per_minute — before a byte of the body is
// read, so that a key over them costs the gateway no upload. Each is exact
// across workers (one shared cell per key); a refusal gives back what the
// earlier limit took. The x-ratelimit-* headers OpenAI sends are set on
// the response either way. The admission returned is released when the
// request ends, whatever happens after.
func (g *Gateway) admitKey(c *app.RequestContext, key *keyRoute) (*admission, *apiError) {
	a := &admission{key: key, col: g.col}
	if key.rpm == 0 && key.tpm == 0 && key.maxConcurrent == 0 {
		return a, nil
	}
	lim := g.fleetShare(key)
	a.tpm = lim.tpm
	cell := key.cell
	if lim.maxConcurrent > 0 {
		if !cell.Acquire(g.col, lim.maxConcurrent) {
			c.Response.Header.Set("Retry-After", "1")
			return nil, rateLimited("concurrency", fmt.Sprintf(
				"Too many requests in flight for key `%s`: the limit is %d at a time. Retry when one has finished.",
				key.name, lim.maxConcurrent))
		}
		a.concurrent = true
	}
	if lim.rpm > 0 {
		now := g.region.Now()
		cost := minute / lim.rpm
		window := cost * lim.rpm
		ok, tat := cell.GCRA(shm.RequestTAT, now, cost, window)
		setLimitHeaders(c, &a.scratch, &requestLimitHeaders, lim.rpm, tat, now, cost, window)
		if !ok {
			a.release(0, false)
			retryAfter(c, tat+cost-window-now)
			return nil, rateLimited("requests", fmt.Sprintf(
				"Rate limit reached for key `%s` on requests per minute: limit %d. Please try again in %s.",
				key.name, lim.rpm, waitText(tat+cost-window-now)))
		}
		a.rpmCost = cost
	}
	return a, nil
}

// admitTokens applies tokens_per_minute once the body says what the
// request may use (tokenReservation, with prompt its promptEstimate),
// reserved until the answer reports the real count. A request refused
// here is given back to the requests limit; its concurrency place goes
// back when it ends. An API that generates nothing (generates false:
// rerank, score, tokenize, pooling… — no output limit in its request)
// reserves its prompt alone.
func (g *Gateway) admitTokens(c *app.RequestContext, a *admission, m *modelRoute, scan *reqscan.Request, prompt int64, generates bool) *apiError {
	if a.tpm == 0 {
		return nil
	}
	key, cell, tpm := a.key, a.key.cell, a.tpm
	// At least one: a reservation of none would not be settled against
	// the usage reported (release).
	want := tokenReservation(m, scan, prompt, generates)
	perToken := max(minute/tpm, 1)
	window := perToken * tpm
	if want > tpm { // checked before want*perToken, which could overflow
		a.giveBackRequest()
		return rateLimited("tokens", fmt.Sprintf(
			"Request too large for key `%s`: it reserves %d tokens (its prompt, about %d tokens, and what it may generate: "+
				"max_tokens, or without it %s, for each of its %d outputs) and the limit is %d tokens per minute. Lower max_tokens or the prompt.",
			key.name, want, prompt, defaultOutputText(m), outputsOf(scan), tpm))
	}
	now := g.region.Now()
	ok, tat := cell.GCRA(shm.TokenTAT, now, want*perToken, window)
	setLimitHeaders(c, &a.scratch, &tokenLimitHeaders, tpm, tat, now, perToken, window)
	if !ok {
		a.giveBackRequest()
		wait := tat + want*perToken - window - now
		retryAfter(c, wait)
		return rateLimited("tokens", fmt.Sprintf(
			"Rate limit reached for key `%s` on tokens per minute: limit %d, requested %d. Please try again in %s.",
			key.name, tpm, want, waitText(wait)))
	}
	a.tokens = want
	return nil
}

// defaultOutputText says what a request without max_tokens reserves to
// generate, for the refusal's message.
func defaultOutputText(m *modelRoute) string {
	if m.maxContext > 0 {
		return fmt.Sprintf("the model's max_context (%d) less the prompt", m.maxContext)
	}
	return fmt.Sprintf("default_max_tokens (%d)", m.defaultMaxTokens)
}

// giveBackRequest undoes the requests-per-minute charge of a request
// refused by a later limit, so that it counts against neither.
func (a *admission) giveBackRequest() {
	if a.rpmCost > 0 {
		a.key.cell.Settle(shm.RequestTAT, -a.rpmCost)
		a.rpmCost = 0
	}
}

// maxDebt bounds what one answer's tokens may push a key's token limiter
// into the future: a day. A backend's usage figures are not trusted to
// stay in range, and a time that wrapped would lift the limit.
const maxDebt = int64(24 * time.Hour)

// release settles the token reservation against the tokens really used,
// when the backend reported them (else the reservation stands: it is the
// safe guess), then gives back the concurrency place — in that order, so
// that a key seen with nothing in flight has nothing left to settle.
func (a *admission) release(usedTokens int64, reported bool) {
	if a == nil {
		return
	}
	if a.tokens > 0 && reported {
		perToken := max(minute/a.tpm, 1)
		used := max(usedTokens, 0)
		var delta int64
		if used >= a.tokens {
			delta = min(satMul(used-a.tokens, perToken), maxDebt)
		} else {
			delta = -(a.tokens - used) * perToken // at most the reservation: no overflow
		}
		a.key.cell.Settle(shm.TokenTAT, delta)
		a.tokens = 0
	}
	if a.concurrent {
		a.key.cell.Release(a.col)
		a.concurrent = false
	}
}

// satAdd is a+b for non-negative a and b, at most math.MaxInt64.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// satMul is a×b for non-negative a and b, at most math.MaxInt64.
func satMul(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}

// rateLimited is a 429 in OpenAI's shape: type names the limit.
func rateLimited(kind, msg string) *apiError {
	return &apiError{status: http.StatusTooManyRequests, errType: kind, code: "rate_limit_exceeded", message: msg}
}

// setLimitHeaders sets OpenAI's x-ratelimit-limit/remaining/reset headers
// of one limiter (names: requestLimitHeaders or tokenLimitHeaders) from
// its TAT.
func setLimitHeaders(c *app.RequestContext, scratch *[40]byte, names *[3][]byte, limit, tat, now, cost, window int64) {
	remaining := limit
	if used := tat - now; used > 0 {
		remaining = max(0, min(limit, (window-used)/cost))
	}
	h := &c.Response.Header
	// The values are written into scratch, which the header copies: no
	// string each (a local array would escape into SetCanonical).
	h.SetCanonical(names[0], strconv.AppendInt(scratch[:0], limit, 10))
	h.SetCanonical(names[1], strconv.AppendInt(scratch[:0], remaining, 10))
	h.SetCanonical(names[2], appendWait(scratch[:0], tat-now))
}

// Canonical names of the limit headers, made once (h.Set would make them
// from "x-ratelimit-limit-"+kind at every request).
var (
	requestLimitHeaders = canonicalLimitHeaders("requests")
	tokenLimitHeaders   = canonicalLimitHeaders("tokens")
)

func canonicalLimitHeaders(kind string) [3][]byte {
	var names [3][]byte
	for i, name := range []string{"x-ratelimit-limit-", "x-ratelimit-remaining-", "x-ratelimit-reset-"} {
		names[i] = []byte(name + kind)
		utils.NormalizeHeaderKey(names[i], false) // as h.Set would
	}
	return names
}

// retryAfter sets Retry-After: whole seconds, rounded up, at least 1.
func retryAfter(c *app.RequestContext, wait int64) {
	c.Response.Header.Set("Retry-After", retryAfterSecs(wait))
}

// retryAfterSecs is a wait (ns) as a Retry-After value: whole seconds,
// rounded up, at least 1.
func retryAfterSecs(wait int64) string {
	return strconv.FormatInt(max(1, (wait+int64(time.Second)-1)/int64(time.Second)), 10)
}

// waitText formats a wait the way OpenAI's reset headers do ("1s",
// "6m0s", "20ms"); a wait in the past is "0s".
func waitText(ns int64) string { return string(appendWait(nil, ns)) }

// appendWait appends waitText(ns): the wait rounded to the millisecond
// under a second, to 10 ms from one second on, written as
// time.Duration.String writes it (FuzzAppendWait holds it to that). Written
// out, not through String, because the reset header is set on every
// limited request and String's result is an allocation.
func appendWait(b []byte, ns int64) []byte {
	if ns <= 0 {
		return append(b, "0s"...)
	}
	d := time.Duration(ns)
	if d < time.Second {
		d = d.Round(time.Millisecond)
	} else {
		d = d.Round(10 * time.Millisecond)
	}
	if d < time.Second { // whole milliseconds, none to 999
		if d == 0 {
			return append(b, "0s"...)
		}
		b = strconv.AppendInt(b, int64(d/time.Millisecond), 10)
		return append(b, "ms"...)
	}
	h, m := d/time.Hour, d/time.Minute%60
	s, frac := d/time.Second%60, int64(d%time.Second)
	if h > 0 {
		b = strconv.AppendInt(b, int64(h), 10)
		b = append(b, 'h')
	}
	if h > 0 || m > 0 {
		b = strconv.AppendInt(b, int64(m), 10)
		b = append(b, 'm')
	}
	b = strconv.AppendInt(b, int64(s), 10)
	if frac > 0 { // nine digits, trailing zeros dropped
		var digits [10]byte
		n := len(strconv.AppendInt(digits[:0], 1e9+frac, 10)) // "1" and nine digits
		for digits[n-1] == '0' {
			n--
		}
		b = append(append(b, '.'), digits[1:n]...)
	}
	return append(b, 's')
}
