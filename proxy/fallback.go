package proxy

// Model fallbacks (models[].fallbacks, context_fallbacks): a request its
// model cannot serve, while nothing has reached the client, goes to the
// next model of the chain, whose phases 5–10 run again — route (the key
// may use it), tokens (reserved again, at its reservation), rewrite (the
// body names it), placement on its own backends, and the upstream call.

import (
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/cloudwego/hertz/pkg/app"
)

// fallbackState is a request's way down its model's chains.
type fallbackState struct {
	requested *modelRoute // the model the client named (nil until routed)
	to        *modelRoute // the fallback being tried now (nil: requested)
	next      int         // the next of the chain to try
	context   bool        // on requested's context chain (a 400 for length)
	first     *apiError   // requested's own refusal: the client's, should every fallback fail
}

// Fallback reasons, the metric's reason label: why a model could not
// serve a request.
const (
	fbUnavailable   = "unavailable"     // no backend in rotation
	fbQueueFull     = "queue_full"      // its queue full (for the key or in all)
	fbQueueTimeout  = "queue_timeout"   // no slot in queue.timeout
	fbUnreachable   = "unreachable"     // every attempt: no connection, no answer, no usable provider key
	fbStatus        = "upstream_status" // every attempt: 429 or 5xx
	fbContextLength = "context_length"  // a 400: longer than the model's context
)

// fallbackReason is why e means the model cannot serve the request ("":
// e is the request's own fault, or a limit of its key, which no other
// model changes), and whether it is for the context chain.
func fallbackReason(e *apiError) (reason string, context bool) {
	switch e.code {
	case "no_healthy_backend":
		return fbUnavailable, false
	case "queue_full", "queue_key_full":
		return fbQueueFull, false
	case "queue_timeout":
		return fbQueueTimeout, false
	case "upstream_unreachable", "provider_keys_unusable":
		return fbUnreachable, false
	case codeUpstreamStatus:
		return fbStatus, false
	case codeContextLength:
		return fbContextLength, true
	}
	return "", false
}

// fallBack decides, after phase 5–10 refused the request with e, whether
// it goes on to a fallback: true when it does (x is ready for route to
// run again), false when e is the answer. A fallback the key may not use
// (403), or that does not serve the API, is skipped; one that fails in
// turn moves on down the same chain. The client's answer when every
// fallback failed is the requested model's own refusal.
func (g *Gateway) fallBack(x *exchange, e *apiError) bool {
	fb := &x.fb
	if fb.requested == nil || x.api.byID {
		return false // not routed yet (an unknown model), or a stored response's id
	}
	// A fallback the key may not use, or that does not serve the API, is
	// skipped for the next of the same chain, and not counted.
	skipped := fb.to != nil && (e.code == "model_not_allowed" || e.code == "endpoint_not_served")
	reason, context := fallbackReason(e)
	if reason == "" && !skipped {
		return false
	}
	if fb.to == nil {
		// The chain is chosen by the requested model's failure; a
		// fallback that fails in turn, for either chain's reason, moves on
		// down it (a busy context fallback tries the next longer model).
		fb.first, fb.context = e, context
	}
	chain := fb.chain(fb.context)
	if fb.next >= len(chain) {
		return false
	}
	from := fb.requested
	if fb.to != nil {
		from = fb.to
	}
	to := chain[fb.next]
	fb.next++
	if !skipped {
		g.records.meter.meterFallback(from.name, to.name, reason)
	}
	g.log.Debug("model cannot serve the request; falling back", "model", from.name, "fallback", to.name, "reason", reason, "code", e.code)
	x.resetUpstream()
	fb.to = to
	return true
}

// left reports whether a fallback remains for a failure of the model
// being tried: of the chain for its kind (context: the context chain) on
// the requested model's first failure, of the chain taken after.
func (fb *fallbackState) left(context bool) bool {
	if fb.requested == nil {
		return false
	}
	if fb.to != nil {
		context = fb.context
	}
	return fb.next < len(fb.chain(context))
}

// chain is the requested model's fallbacks, or with context its context
// fallbacks.
func (fb *fallbackState) chain(context bool) []*modelRoute {
	if context {
		return fb.requested.contextFallbacks
	}
	return fb.requested.fallbacks
}

// answer is the refusal the client gets when the chain ended with e:
// the requested model's own, if a fallback was tried — without the
// header a fallback's quota refusal set (the requested model's refusal is
// never a quota's: quotas are the key's, which no fallback changes).
func (fb *fallbackState) answer(c *app.RequestContext, e *apiError) *apiError {
	if fb.first != nil {
		c.Response.Header.Del(headerResetQuota)
		return fb.first
	}
	return e
}

// resetUpstream gives back what phases 8–10 of the model just tried
// held — its upstream context and timers, its prefix blocks, its
// placement — for the next model's.
func (x *exchange) resetUpstream() {
	x.stopUpstream()
	x.releaseBlocks()
	x.up, x.timers, x.place = upstreamState{}, deadlines{}, placement{}
}

// Codes of the refusals that exist for fallbacks: the last attempt's
// answer, kept from the client because another model may serve it.
const (
	codeUpstreamStatus = "upstream_error"
	codeContextLength  = "context_length_exceeded"
)

// errUpstreamStatus is the refusal of a model whose every attempt was
// answered with 429 or 5xx, when a fallback may serve instead.
func errUpstreamStatus(m *modelRoute, status int) *apiError {
	return errUpstream(status, codeUpstreamStatus, "Every backend of model `"+m.name+"` answered "+http.StatusText(status)+".")
}

// maxErrorBody bounds the 400 answer read to see whether it is a context
// length error (vLLM's are a few hundred bytes).
const maxErrorBody = 16 << 10

// contextTooLong reads a 400 answer's body (at most maxErrorBody) and
// reports whether it says the request is longer than the model's context,
// as vLLM words it ("This model's maximum context length is N tokens.
// However, you requested M tokens …", "… longer than the maximum model
// length …"), with the answer's message. res.Body is replaced by what was
// read, so that the answer can still go to the client whole.
func contextTooLong(res *http.Response) (bool, string) {
	b, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody+1))
	res.Body.Close()
	res.Body = io.NopCloser(bytes.NewReader(b))
	if len(b) > maxErrorBody {
		return false, ""
	}
	var body struct {
		Message string `json:"message"`
		Error   struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	json.Unmarshal(b, &body) //nolint:errcheck // an answer that is not JSON says nothing of its length
	msg := cmp.Or(body.Message, body.Error.Message)
	lower := strings.ToLower(msg)
	if strings.Contains(lower, "maximum context length") || strings.Contains(lower, "maximum model length") {
		return true, msg
	}
	return false, ""
}

// errContextLength is the refusal of a model whose backend said the
// request is longer than its context, when a context fallback may serve.
func errContextLength(msg string) *apiError {
	return errInvalid(http.StatusBadRequest, codeContextLength, msg)
}
