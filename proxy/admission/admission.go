// Package admission applies a key's limits — max_concurrent, requests
// per minute and tokens per minute — exact across workers, over the key's
// cell in the shared region: a gauge for the places in flight, and one
// GCRA theoretical arrival time (TAT) per rate. A request is admitted in
// two steps, as the pipeline learns what it needs: the places and the
// requests rate before its body is read (Admit), its tokens once the body
// says how many it may use (ReserveTokens); Release settles the tokens on
// what the backend reported and gives the place back. A refusal gives
// back what the earlier limit took, so that a refused request counts
// against none.
//
// The package knows nothing of requests, APIs or HTTP: the pipeline
// (package proxy) estimates the tokens, and receives the x-ratelimit-*
// headers through Headers and the refusal as a Refusal.
package admission

import (
	"fmt"
	"strconv"
	"time"

	"github.com/cloudwego/hertz/pkg/common/utils"

	"github.com/sluice-gw/sluice/proxy/sat"
	"github.com/sluice-gw/sluice/shm"
)

// Minute is the limiters' period in nanoseconds.
const Minute = int64(time.Minute)

// MaxDebt bounds what one answer's tokens may push a key's token limiter
// into the future: a day. A backend's usage figures are not trusted to
// stay in range, and a time that wrapped would lift the limit.
const MaxDebt = int64(24 * time.Hour)

// Limits are a key's limits (0: none).
type Limits struct {
	RequestsPerMinute, TokensPerMinute, MaxConcurrent int64
}

// None reports whether l limits nothing.
func (l Limits) None() bool {
	return l.RequestsPerMinute == 0 && l.TokensPerMinute == 0 && l.MaxConcurrent == 0
}

// Share is one replica's share of l among replicas: each limit divided by
// their number, at least 1, so that the replicas together admit what one
// would. An uneven spread of clients over replicas under-admits: the
// price of keeping no shared store between them.
func (l Limits) Share(replicas int64) Limits {
	n := max(replicas, 1)
	share := func(v int64) int64 {
		if v == 0 {
			return 0
		}
		return max(1, v/n)
	}
	return Limits{share(l.RequestsPerMinute), share(l.TokensPerMinute), share(l.MaxConcurrent)}
}

// Clock is the region's clock: nanoseconds on the time base the TATs in
// the cells use (*shm.Region's Now).
type Clock interface{ Now() int64 }

// Headers takes the x-ratelimit-* headers of an answer, by canonical name
// (hertz's ResponseHeader does).
type Headers interface{ SetCanonical(key, value []byte) }

// NoHeaders takes no header: an end user's limits do not speak for the
// key's in the answer's x-ratelimit-* headers.
type NoHeaders struct{}

// SetCanonical drops the header.
func (NoHeaders) SetCanonical(_, _ []byte) {}

// Counter is where a key's limits are kept: its cell of the shared region
// (*shm.Cell), or an end user's entry of the end-user table
// (*enduser.Entry): a gauge of places in flight, and two GCRA limiters
// (shm.RequestTAT, shm.TokenTAT).
type Counter interface {
	Acquire(col int, limit int64) bool
	Release(col int)
	GCRA(i int, now, cost, window int64) (bool, int64)
	Settle(i int, delta int64)
}

// Key is the key being admitted: its name (for the refusal's words), its
// cell, and the limits this gateway enforces for it (its Share).
type Key struct {
	Name   string
	Cell   Counter
	Limits Limits
}

// Admission is what a request took from its key's limits, until Release.
type Admission struct {
	cell       Counter
	col        int
	concurrent bool     // holds a place of max_concurrent
	rpmCost    int64    // what the requests limiter was charged, to give back if a later limit refuses
	tokens     int64    // tokens reserved on the token limiter
	tpm        int64    // the token limit they were reserved against
	name       string   // the key's, for a refusal's words
	scratch    [40]byte // where the limit headers' values are written
}

// Refusal is a limit's no.
type Refusal struct {
	// Kind is the limit: "concurrency", "requests" or "tokens" (OpenAI's
	// error type).
	Kind string
	// Wait is how long until the request would fit, in ns; 0 for one
	// that never fits (no Retry-After).
	Wait int64
	// TooLarge: the request reserves Want tokens, more than the whole
	// Limit: it never fits (the pipeline says why in its own words).
	TooLarge bool
	// Want is the tokens asked, Limit the limit that refused.
	Want, Limit int64
	key         string
}

// Message is the refusal in words, as OpenAI words its own; for a
// TooLarge refusal the pipeline's words are better (they say what the
// reservation counted).
func (r *Refusal) Message() string {
	switch {
	case r.Kind == "concurrency":
		return fmt.Sprintf("Too many requests in flight for key `%s`: the limit is %d at a time. Retry when one has finished.",
			r.key, r.Limit)
	case r.Kind == "requests":
		return fmt.Sprintf("Rate limit reached for key `%s` on requests per minute: limit %d. Please try again in %s.",
			r.key, r.Limit, WaitText(r.Wait))
	case r.TooLarge:
		return fmt.Sprintf("Request too large for key `%s`: it reserves %d tokens and the limit is %d tokens per minute.",
			r.key, r.Want, r.Limit)
	}
	return fmt.Sprintf("Rate limit reached for key `%s` on tokens per minute: limit %d, requested %d. Please try again in %s.",
		r.key, r.Limit, r.Want, WaitText(r.Wait))
}

// RetryAfter is the refusal's Retry-After value: whole seconds, "" for
// one that never fits.
func (r *Refusal) RetryAfter() string {
	if r.Wait <= 0 {
		return ""
	}
	return RetryAfterSecs(r.Wait)
}

// Admit applies the limits that need nothing of the body —
// max_concurrent, then requests_per_minute — to k for the worker of
// column col, setting the requests' x-ratelimit-* headers on h either
// way. The admission is released when the request ends, whatever happens
// after; a refusal has taken nothing.
func Admit(h Headers, k Key, col int, clock Clock) (*Admission, *Refusal) {
	a := &Admission{}
	if no := a.Admit(h, k, col, clock); no != nil {
		return nil, no
	}
	return a, nil
}

// Admit is the function Admit into a, an admission of the caller's (one
// a request's own state holds, with no allocation of its own); on a
// refusal a holds nothing.
func (a *Admission) Admit(h Headers, k Key, col int, clock Clock) *Refusal {
	*a = Admission{cell: k.Cell, col: col, name: k.Name, tpm: k.Limits.TokensPerMinute}
	lim := k.Limits
	if lim.MaxConcurrent > 0 {
		if !k.Cell.Acquire(col, lim.MaxConcurrent) {
			return &Refusal{Kind: "concurrency", Wait: int64(time.Second), Limit: lim.MaxConcurrent, key: k.Name}
		}
		a.concurrent = true
	}
	if lim.RequestsPerMinute > 0 {
		now := clock.Now()
		cost := Minute / lim.RequestsPerMinute
		window := cost * lim.RequestsPerMinute
		ok, tat := k.Cell.GCRA(shm.RequestTAT, now, cost, window)
		setLimitHeaders(h, &a.scratch, &requestLimitHeaders, lim.RequestsPerMinute, tat, now, cost, window)
		if !ok {
			a.Release(0, false)
			return &Refusal{Kind: "requests", Wait: tat + cost - window - now, Limit: lim.RequestsPerMinute, key: k.Name}
		}
		a.rpmCost = cost
	}
	return nil
}

// ReserveTokens reserves want tokens (at least 1) on the key's tokens per
// minute, setting the tokens' x-ratelimit-* headers on h unless want can
// never fit. A refused request is given back to the requests limit; its
// place goes back with Release.
func (a *Admission) ReserveTokens(h Headers, want int64, clock Clock) *Refusal {
	if a.tpm == 0 {
		return nil
	}
	tpm := a.tpm
	want = max(want, 1) // a reservation of none would not be settled (Release)
	perToken := max(Minute/tpm, 1)
	window := perToken * tpm
	if want > tpm { // checked before want*perToken, which could overflow
		a.giveBackRequest()
		return &Refusal{Kind: "tokens", TooLarge: true, Want: want, Limit: tpm, key: a.name}
	}
	now := clock.Now()
	ok, tat := a.cell.GCRA(shm.TokenTAT, now, want*perToken, window)
	setLimitHeaders(h, &a.scratch, &tokenLimitHeaders, tpm, tat, now, perToken, window)
	if !ok {
		a.giveBackRequest()
		return &Refusal{Kind: "tokens", Wait: tat + want*perToken - window - now, Want: want, Limit: tpm, key: a.name}
	}
	a.tokens = want
	return nil
}

// ReturnTokens gives the whole token reservation back, unused (a model
// that will not serve the request: a fallback reserves its own), and
// keeps the requests-per-minute charge and the concurrency place.
func (a *Admission) ReturnTokens() {
	if a == nil || a.tokens == 0 {
		return
	}
	a.cell.Settle(shm.TokenTAT, -a.tokens*max(Minute/a.tpm, 1))
	a.tokens = 0
}

// Refused gives back what a request refused by a later limit (a quota,
// a budget) took of the key's tokens and requests per minute, so that it
// counts against neither; its concurrency place goes back with Release.
func (a *Admission) Refused() {
	if a == nil {
		return
	}
	a.ReturnTokens()
	a.giveBackRequest()
}

// KeyName is the name of the key admitted.
func (a *Admission) KeyName() string { return a.name }

// giveBackRequest undoes the requests-per-minute charge of a request
// refused by a later limit, so that it counts against neither.
func (a *Admission) giveBackRequest() {
	if a.rpmCost > 0 {
		a.cell.Settle(shm.RequestTAT, -a.rpmCost)
		a.rpmCost = 0
	}
}

// Release settles the token reservation against the tokens really used,
// when the backend reported them (else the reservation stands: it is the
// safe guess), then gives back the concurrency place — in that order, so
// that a key seen with nothing in flight has nothing left to settle. A
// nil admission, or one released already, does nothing.
func (a *Admission) Release(usedTokens int64, reported bool) {
	if a == nil {
		return
	}
	if a.tokens > 0 && reported {
		perToken := max(Minute/a.tpm, 1)
		used := max(usedTokens, 0)
		var delta int64
		if used >= a.tokens {
			delta = min(sat.Mul(used-a.tokens, perToken), MaxDebt)
		} else {
			delta = -(a.tokens - used) * perToken // at most the reservation: no overflow
		}
		a.cell.Settle(shm.TokenTAT, delta)
		a.tokens = 0
	}
	if a.concurrent {
		a.cell.Release(a.col)
		a.concurrent = false
	}
}

// setLimitHeaders sets OpenAI's x-ratelimit-limit/remaining/reset headers
// of one limiter (names: requestLimitHeaders or tokenLimitHeaders) from
// its TAT.
func setLimitHeaders(h Headers, scratch *[40]byte, names *[3][]byte, limit, tat, now, cost, window int64) {
	remaining := limit
	if used := tat - now; used > 0 {
		remaining = max(0, min(limit, (window-used)/cost))
	}
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
		utils.NormalizeHeaderKey(names[i], false) // as hertz's h.Set would
	}
	return names
}

// RetryAfterSecs is a wait (ns) as a Retry-After value: whole seconds,
// rounded up, at least 1.
func RetryAfterSecs(wait int64) string {
	return strconv.FormatInt(max(1, (wait+int64(time.Second)-1)/int64(time.Second)), 10)
}

// WaitText formats a wait the way OpenAI's reset headers do ("1s",
// "6m0s", "20ms"); a wait in the past is "0s".
func WaitText(ns int64) string { return string(appendWait(nil, ns)) }

// appendWait appends WaitText(ns): the wait rounded to the millisecond
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
