package proxy

// What an attempt's outcome means (classify), and the timeouts and
// failures it reads.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// attemptResult is what one attempt came to, as classify reads it.
type attemptResult struct {
	err        error          // sending, or reading a stream's first bytes, failed
	res        *http.Response // the backend's answer (nil when err)
	clientGone bool           // the client went away
	timeout    error          // the gateway's own timeout that ended the request, if one did
	firstToken bool           // first_token_deadline passed before the stream's first bytes
	triesLeft  bool           // the model's retries allow another attempt
	holderLeft bool           // a candidate not asked yet may hold the stored response the request needs
	holderDown int            // a candidate asked before failed otherwise than with a 404 (its status; 502: no answer): it may hold the stored response
	keysOut    bool           // the backend answered, and has no provider key usable now (its last one was rate limited)
	othersUp   bool           // another candidate is in rotation (read only when the attempt failed, or keysOut)
	// fallbackLeft: a fallback model may serve the request when this one
	// cannot (fallback.go); contextTooLong: the answer is a 400 saying the
	// request is longer than the model's context, and a context fallback
	// may serve it (contextMsg its message).
	fallbackLeft   bool
	contextTooLong bool
	contextMsg     string
}

// outcome is what an attempt's result means. answer: the backend's
// answer goes to the client, whatever its status. Else retry says whether
// another attempt follows, eject whether this backend leaves rotation
// (passive health), and fail is the client's error when none follows.
type outcome struct {
	answer          bool
	retry           bool
	firstTokenRetry bool
	eject           bool
	fail            *apiError
	// holderDown: a request that needs a stored response moves on from a
	// candidate that failed without saying it lacks the response (its
	// status; 502: no answer): that candidate may be the holder, and the
	// others' 404 must not be the client's answer.
	holderDown int
}

// classify decides what an attempt's result means: the one place where a
// failure's status, code and source (client, upstream, gateway) are set,
// and whether it may be retried or eject the backend (pingora-error's
// ErrorSource and retry flag, as one function).
//
//   - The client left while the attempt failed: nothing more (499).
//   - The gateway's own timeout (total, stream idle): 504, never retried —
//     the time is spent — and never an ejection: the backend is slow, not
//     down.
//   - first_token_deadline passed: retried once on the next backend,
//     beyond retries; no ejection.
//   - A stream that ended before its first byte: 502; not retried (the
//     backend took the request; running it twice could bill twice).
//   - No connection or no answer's head: the backend is ejected, and the
//     request retried while retries last and a candidate is in rotation
//     (else it would wait for the ejected one); else 502.
//   - No provider key of the backend usable (api_keys_env: every key
//     refused, or resting after a 429): the next backend while retries
//     last, without an ejection; else 502.
//   - A 404 to a request that needs a stored response (recall.go): the
//     next candidate may hold it, beyond retries, until all were asked;
//     no ejection. The last 404 goes to the client — unless a candidate
//     failed otherwise (429, 5xx, no answer): it may be the holder, so
//     the client gets that status (stored_response_unavailable), which
//     says to try again, not that the response does not exist.
//   - An answer of 429 or 5xx (retryableStatus): retried while retries
//     last, else relayed as the backend gave it. From a backend left
//     without a usable provider key (a last 429), only on another
//     candidate in rotation: the same backend is out of candidacy, and
//     the retry would wait in the queue until its keys' rest ends.
//   - A retryable answer with no retries left, or a 400 saying the
//     request is longer than the model's context, when a fallback model
//     may serve it (models[].fallbacks, context_fallbacks): the model's
//     refusal, for fallBack, not the answer.
//   - Any other answer goes to the client.
func classify(x *exchange, r attemptResult) outcome {
	o := meaning(x, r)
	if x.place.pinned && o.retry && (r.res == nil || r.res.StatusCode != http.StatusNotFound) {
		o.holderDown = http.StatusBadGateway
		if r.res != nil {
			o.holderDown = r.res.StatusCode
		}
	}
	return o
}

// meaning is classify's table, one case per row of its comment.
func meaning(x *exchange, r attemptResult) outcome {
	switch {
	case r.clientGone && r.err != nil:
		return outcome{fail: errClientClosed}
	case r.timeout != nil && r.err != nil:
		return outcome{fail: errTimeout(x.req.model, r.timeout)}
	case r.firstToken:
		return outcome{retry: true, firstTokenRetry: true}
	case r.err == errReadFirst:
		return outcome{fail: errUpstream(http.StatusBadGateway, "upstream_failed",
			"The backend closed the stream before its first event.")}
	case r.err == errNoProviderKey:
		// Not the backend's failure: its keys are out (it is out of
		// rotation for as long, by healthy), so no ejection.
		if r.triesLeft && r.othersUp {
			return outcome{retry: true}
		}
		return outcome{fail: errUpstream(http.StatusBadGateway, "provider_keys_unusable",
			fmt.Sprintf("Every provider key of the backend for model `%s` was refused or is rate limited.", x.req.model.name))}
	case r.err != nil:
		if r.triesLeft && r.othersUp {
			return outcome{retry: true, eject: true}
		}
		return outcome{eject: true, fail: errUpstream(http.StatusBadGateway, "upstream_unreachable",
			fmt.Sprintf("The backend for model `%s` could not be reached.", x.req.model.name))}
	case r.res.StatusCode == http.StatusNotFound && r.holderLeft:
		return outcome{retry: true}
	case r.res.StatusCode == http.StatusNotFound && r.holderDown != 0:
		return outcome{fail: errUpstream(r.holderDown, "stored_response_unavailable",
			fmt.Sprintf("A backend that may hold the stored response is unavailable (%d) and no other holds it; try again later.", r.holderDown))}
	case retryableStatus(r.res.StatusCode) && r.triesLeft && (!r.keysOut || r.othersUp):
		return outcome{retry: true}
	case retryableStatus(r.res.StatusCode) && r.fallbackLeft:
		// No retry left, and another model may serve: the answer is not
		// the client's (fallBack decides).
		return outcome{fail: errUpstreamStatus(x.req.model, r.res.StatusCode)}
	case r.contextTooLong:
		return outcome{fail: errContextLength(r.contextMsg)}
	}
	return outcome{answer: true}
}

// isEventStream reports whether a backend answer is an SSE stream.
func isEventStream(res *http.Response) bool {
	return strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream")
}

// errFirstToken: a stream's first event did not arrive by first_token_deadline.
var errFirstToken = errors.New("first token deadline")

// errReadFirst: a stream ended before its first byte.
var errReadFirst = errors.New("stream ended before its first byte")

// Causes of an upstream request ended by the gateway's own timeouts.
var (
	errTotalTimeout = errors.New("total timeout")
	errStreamIdle   = errors.New("stream idle timeout")
)

// timedOut returns which timeout ended the upstream request, if one did.
func timedOut(upCtx context.Context) error {
	switch c := context.Cause(upCtx); c {
	case errTotalTimeout, errStreamIdle:
		return c
	}
	return nil
}

// brokenOff is the error of an answer (what: "stream", "answer") that ended
// after it began: the gateway's timeout if one ended it, else broken.
func brokenOff(upCtx context.Context, what string, broken *apiError) *apiError {
	if to := timedOut(upCtx); to != nil {
		return errUpstream(http.StatusGatewayTimeout, "upstream_timeout", "The "+what+" was stopped: "+to.Error()+".")
	}
	return broken
}

// errTimeout is the 504 for a timeout before anything reached the client.
func errTimeout(m *modelRoute, cause error) *apiError {
	limit := m.attempts.total
	if cause == errStreamIdle {
		limit = m.attempts.streamIdle
	}
	return errUpstream(http.StatusGatewayTimeout, "upstream_timeout",
		fmt.Sprintf("The backend of model `%s` did not answer in time (%s: %s).", m.name, cause, limit))
}

// retryableStatus: answers worth another backend — overload, and server
// errors (vLLM answers 500/503 while it restarts or runs out of memory).
func retryableStatus(code int) bool {
	return code == http.StatusTooManyRequests || code >= 500
}

// statusClientClosed is nginx's 499: the client closed the connection.
const statusClientClosed = 499

// errNoProviderKey: none of a backend's provider keys can be used now.
var errNoProviderKey = errors.New("no provider key usable")

// anyHealthy reports whether one of bs other than but is in rotation at now.
func anyHealthy(bs []*backendRoute, but *backendRoute, now time.Time) bool {
	for _, b := range bs {
		if b != but && b.healthy(now) {
			return true
		}
	}
	return false
}
