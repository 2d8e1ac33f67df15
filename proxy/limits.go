package proxy

import (
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/cloudwego/hertz/pkg/app"

	"github.com/sluice-gw/sluice/proxy/admission"
	"github.com/sluice-gw/sluice/proxy/reqscan"
	"github.com/sluice-gw/sluice/proxy/sat"
)

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
	return sat.Add(int64(x.req.scan.PromptBytes/promptBytesPerToken), x.req.priorTokens)
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
		return max(sat.Add(scan.MaxTokens, prompt), 1)
	}
	each := scan.MaxTokens
	if each <= 0 {
		each = m.limits.defaultMaxTokens
		if m.limits.maxContext > 0 {
			each = max(m.limits.maxContext-prompt, 1)
		}
	}
	if m.limits.maxContext > 0 {
		each = min(each, m.limits.maxContext) // the backend refuses more: no answer is longer
	}
	return max(sat.Add(sat.Mul(each, outputsOf(scan)), prompt), 1)
}

// outputsOf is how many answers the request generates, each up to its
// max_tokens: n (or best_of, the larger) for each prompt of a batch.
func outputsOf(scan *reqscan.Request) int64 {
	return sat.Mul(max(scan.N, 1), max(int64(scan.Prompts), 1))
}

// fleetShare is this gateway's share of the key's limits: each divided by
// the number of live replicas in the fleet (fleet.nomad_service; 1 without
// it), so that the replicas together admit what one would.
func (g *Gateway) fleetShare(k *keyRoute) admission.Limits {
	n := int64(1)
	if g.marks.fleet != nil {
		n = atomic.LoadInt64(g.marks.fleet.Scalar(0))
	}
	return k.limits.Share(n)
}

// admitKey applies the key's limits that need nothing of the body —
// max_concurrent, then requests_per_minute — before a byte of the body is
// read, so that a key over them costs the gateway no upload (package
// admission: exact across workers, over the key's shared cell). The
// x-ratelimit-* headers OpenAI sends are set on the response either way.
// The admission returned is released when the request ends, whatever
// happens after.
func (g *Gateway) admitKey(c *app.RequestContext, key *keyRoute) (*admission.Admission, *apiError) {
	lim := admission.Limits{}
	if !key.limits.None() {
		lim = g.fleetShare(key)
	}
	a, no := admission.Admit(&c.Response.Header, admission.Key{Name: key.name, Cell: key.cell, Limits: lim}, g.col, g.region)
	if no != nil {
		return nil, rateLimited(no, no.Message())
	}
	return a, nil
}

// admitTokens applies tokens_per_minute once the body says what the
// request may use (want: tokenReservation, with prompt its
// promptEstimate), reserved until the answer reports the real count. A request refused
// here is given back to the requests limit; its concurrency place goes
// back when it ends. An API that generates nothing (generates false:
// rerank, score, tokenize, pooling… — no output limit in its request)
// reserves its prompt alone.
func (g *Gateway) admitTokens(c *app.RequestContext, a *admission.Admission, want, prompt int64, m *modelRoute, scan *reqscan.Request) *apiError {
	no := a.ReserveTokens(&c.Response.Header, want, g.region)
	switch {
	case no == nil:
		return nil
	case no.TooLarge:
		return rateLimited(no, fmt.Sprintf(
			"Request too large for key `%s`: it reserves %d tokens (its prompt, about %d tokens, and what it may generate: "+
				"max_tokens, or without it %s, for each of its %d outputs) and the limit is %d tokens per minute. Lower max_tokens or the prompt.",
			a.KeyName(), no.Want, prompt, defaultOutputText(m), outputsOf(scan), no.Limit))
	}
	return rateLimited(no, no.Message())
}

// defaultOutputText says what a request without max_tokens reserves to
// generate, for the refusal's message.
func defaultOutputText(m *modelRoute) string {
	if m.limits.maxContext > 0 {
		return fmt.Sprintf("the model's max_context (%d) less the prompt", m.limits.maxContext)
	}
	return fmt.Sprintf("default_max_tokens (%d)", m.limits.defaultMaxTokens)
}

// rateLimited is the 429 of a limit's refusal, in OpenAI's shape: type
// names the limit, Retry-After says when it may fit (none for a request
// that never fits).
func rateLimited(no *admission.Refusal, msg string) *apiError {
	return &apiError{status: http.StatusTooManyRequests, errType: no.Kind, code: "rate_limit_exceeded", message: msg,
		retryAfter: no.RetryAfter()}
}
