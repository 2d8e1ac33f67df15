package proxy

import (
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cloudwego/hertz/pkg/app"

	"github.com/sluice-gw/sluice/proxy/sse"
	"github.com/sluice-gw/sluice/proxy/upstream"
)

// This file is phases 9 and 10 — a slot, then the request sent upstream —
// tried on the next candidate while nothing has gone to the client. The
// loop is callUpstream; one try is attempt; what a try's outcome means
// (answer, retry, eject, fail) is classify's alone to decide.

// callUpstream runs phases 9 and 10: attempts, in candidate order, until
// one's answer can go to the client or none is left to try. Each attempt
// takes a slot (waiting in the queue if need be) and gives it back when
// that attempt ends.
func (g *Gateway) callUpstream(ctx context.Context, c *app.RequestContext, x *exchange) *apiError {
	m := x.req.model
	upCtx, cancel := context.WithCancelCause(ctx) // ends the upstream request on every return path
	x.up.upCtx, x.up.cancel = upCtx, cancel
	x.timers.total = time.AfterFunc(m.attempts.total, func() { cancel(errTotalTimeout) })
	x.timers.deadline = time.Now().Add(m.attempts.total)
	if x.req.scan.Stream {
		x.timers.idle = time.AfterFunc(m.attempts.streamIdle, func() { cancel(errStreamIdle) })
		x.timers.idleFor = m.attempts.streamIdle
	}
	x.up.firstTokenArmed = x.req.scan.Stream && m.attempts.firstToken > 0 // opt-in, one retry at most
	for n := 0; ; n++ {
		if done, e := g.attempt(ctx, c, x, n); done {
			return e
		}
	}
}

// attempt is the n-th try: a slot on the first free of the candidates in
// the try's order (attempt n prefers the n-th candidate: backends already
// tried go last), the request sent, the answer's head read (and a
// stream's first bytes, under first_token_deadline). done is false when
// the request is to be tried again; else e is the client's error, or nil
// with x.up.res the answer to relay.
//
// One function, long (about 130 lines), on purpose: its steps share the
// attempt's slot, first-token timer and span, and every return path must
// give them back in order; split up, that order would be spread over
// several functions and their returns.
func (g *Gateway) attempt(ctx context.Context, c *app.RequestContext, x *exchange, n int) (done bool, e *apiError) {
	rec := &x.rec
	var rotated [16]*backendRoute
	k := n % len(x.place.candidates)
	order := append(append(rotated[:0], x.place.candidates[k:]...), x.place.candidates[:k]...)
	if x.place.pinned { // the k-th candidate and no other: it may hold the stored response
		order = order[:1]
	}
	if x.place.owners != nil {
		x.req.model = x.place.owners[k]
		rec.Model = x.req.model.name
	}
	m := x.req.model
	// Until this attempt's send the body is not read: a spilled one's
	// pages leave memory while the request waits for a slot.
	x.req.held.idle()
	var b *backendRoute
	var slotOf *modelRoute // the model whose slot on b this attempt holds; nil: none
	if x.api.byID {
		// A stored response's retrieval or cancel costs the backend
		// little, and a cancel must not wait behind the work it cancels:
		// no slot.
		b = order[0]
	} else {
		var e *apiError
		// The key's fair-queue finish tag is charged once, at the first
		// slot (a retry's slot is the same request's): the prompt's
		// estimate and what the key's requests use beyond it, as a rule.
		charge := int64(0)
		if x.fair.charged == 0 {
			x.fair.chargedPrompt = x.promptEstimate()
			charge = x.fair.chargedPrompt + x.req.key.fair.ExpectedRest()
		}
		if b, e = g.takeSlot(ctx, m, order, rec, x.place.pinned, x.req.key.fair, charge); e != nil {
			return true, e
		}
		x.fair.charged += charge
		slotOf = m
	}
	g.notePrefix(x, b) // this backend is sent the prompt: the index says so from now
	rec.Backend = b.url
	rec.Attempts++
	rec.Tried = append(rec.Tried, b.url)
	// An attempt is ended by closing its response (or by Do's failure);
	// it needs a context of its own only for the first-token deadline.
	actx, acancel := x.up.upCtx, noCancel
	var ft *firstTokenTimer
	if x.up.firstTokenArmed {
		actx, acancel = context.WithCancelCause(x.up.upCtx) // this attempt only
		ft = startFirstTokenTimer(m.attempts.firstToken, acancel)
	}
	span, traceLines := x.trace.StartAttempt(n, b.url, nil)
	sent := time.Now()
	res, err := g.send(actx, c, b, upstreamCall{body: x.req.pieces, trace: traceLines, requestID: x.rec.RequestID})
	var headers time.Duration // to the answer's head: none when it failed
	if err == nil {
		headers = time.Since(sent)
	}
	if err == nil && ft != nil && res.StatusCode == http.StatusOK && isEventStream(res) {
		x.up.prefix, err = readFirst(res.Body, x.api.format)
		if !ft.arrived() {
			err = errFirstToken
		}
		if err != nil {
			// The head came but no first event: this response is done
			// with, whatever comes next (a retry, or an error). Left
			// open, its connection stayed open for good (an fd per
			// request: TestNoLeakOnFailurePaths).
			res.Body.Close()
			res, x.up.prefix = nil, nil
		}
	}
	ft.stop()
	if res != nil {
		rec.UpstreamCode, rec.HeadersAt = res.StatusCode, time.Since(rec.Start)
	}
	keysOut := err == nil && b.keys != nil && !b.keys.UsableNow()
	var tooLong bool
	var tooLongMsg string
	if err == nil && res.StatusCode == http.StatusBadRequest && !x.api.byID && x.fb.left(true) {
		tooLong, tooLongMsg = contextTooLong(res)
	}
	result := attemptResult{
		err:        err,
		res:        res,
		clientGone: ctx.Err() != nil,
		timeout:    timedOut(x.up.upCtx),
		firstToken: ft != nil && (err == errFirstToken || context.Cause(actx) == errFirstToken),
		triesLeft:  n < m.attempts.retries,
		holderLeft: x.place.pinned && n+1 < len(x.place.candidates),
		holderDown: x.place.holderDown,
		keysOut:    keysOut,
		othersUp:   (err != nil || keysOut) && anyHealthy(x.place.candidates, b, time.Now()),
		// A stored response's id names no model to fall back from.
		fallbackLeft:   !x.api.byID && x.fb.left(false),
		contextTooLong: tooLong,
		contextMsg:     tooLongMsg,
	}
	o := classify(x, result)
	failure := failureOf(result)
	g.records.meter.meterAttempt(b, m.name, n, headers, failure, o.eject)
	if span != nil {
		status := 0
		if res != nil {
			status = res.StatusCode
		}
		span.End(status, failureNames[failure])
	}
	if o.answer {
		x.up.res, x.up.acancel, x.up.slotOf, x.place.backend = res, acancel, slotOf, b
		return true, nil
	}
	if o.holderDown != 0 {
		x.place.holderDown = o.holderDown
	}
	if res != nil {
		res.Body.Close()
	}
	acancel(nil)
	if slotOf != nil {
		g.releaseSlot(slotOf, b)
	}
	if o.eject {
		out := b.eject(time.Now())
		g.log.Warn("upstream request failed; backend out of rotation", "backend", b.url,
			"attempt", n+1, "for", out.String(), "err", err)
	}
	switch {
	case o.firstTokenRetry:
		// Nothing went to the client: cancel on this backend (it sees
		// the close) and try the next one, once, without a deadline.
		g.log.Warn("first token deadline passed; retrying on the next backend", "backend", b.url, "deadline", m.attempts.firstToken.String())
		x.up.firstTokenArmed, rec.FirstTokenRetry = false, true
	case o.retry && res != nil && res.StatusCode == http.StatusNotFound:
		g.log.Debug("backend does not hold the stored response; asking the next", "backend", b.url)
	case o.retry && res != nil:
		g.log.Warn("upstream answered with an error; retrying", "backend", b.url, "status", res.StatusCode, "attempt", n+1)
	}
	return !o.retry, o.fail
}

// noCancel is the cancel of an attempt without a context of its own.
func noCancel(error) {}

// readFirst reads a stream's first bytes: for a Responses stream, on to
// its first content event (up to firstMax bytes), since vLLM sends
// response.created and response.in_progress before the model generated
// anything — they are not its first token, and first_token_deadline must
// not take them for one.
func readFirst(body io.Reader, f sse.Format) ([]byte, error) {
	buf := make([]byte, 4<<10)
	n, err := body.Read(buf)
	if n == 0 {
		if err == nil || err == io.EOF {
			err = errReadFirst
		}
		return nil, err
	}
	if f != sse.Responses {
		return buf[:n], nil
	}
	// Each read's bytes are split and inspected once, as they come: a
	// backend trickling a byte a read costs no more than one sending the
	// same bytes at once.
	var split sse.Splitter
	content := false
	inspect := func(p []byte) {
		split.Feed(p, func(event []byte, whole bool) {
			content = content || whole && sse.InspectAs(f, event).HasContent
		})
	}
	inspect(buf[:n])
	for n < firstMax && !content {
		if n == len(buf) {
			buf = append(buf, make([]byte, len(buf))...)
		}
		var m int
		m, err = body.Read(buf[n:])
		inspect(buf[n : n+m])
		n += m
		if err != nil {
			break // the relay meets it again; a deadline that fired is the caller's to see
		}
	}
	return buf[:n], nil
}

// firstMax bounds what readFirst reads looking for a first content event.
const firstMax = 64 << 10

// firstTokenTimer cancels an attempt whose stream has not started by the
// deadline. Whichever comes first — the first bytes or the deadline — wins,
// exactly once, so a stream is never cancelled after it began.
type firstTokenTimer struct {
	state atomic.Int32 // 0 waiting, 1 arrived, 2 deadline passed
	t     *time.Timer
}

func startFirstTokenTimer(d time.Duration, cancel context.CancelCauseFunc) *firstTokenTimer {
	ft := &firstTokenTimer{}
	ft.t = time.AfterFunc(d, func() {
		if ft.state.CompareAndSwap(0, 2) {
			cancel(errFirstToken)
		}
	})
	return ft
}

// arrived records the first bytes; false when the deadline won.
func (ft *firstTokenTimer) arrived() bool {
	ft.t.Stop()
	return ft.state.CompareAndSwap(0, 1) || ft.state.Load() == 1
}

func (ft *firstTokenTimer) stop() {
	if ft != nil {
		ft.t.Stop()
		ft.state.CompareAndSwap(0, 1)
	}
}

// send sends the attempt's request to b. A backend with provider keys
// (api_keys_env) gets the next key in rotation; one the provider refuses
// (401/403) or rate limits (429) is reported, and the request goes again
// with the next key — nothing has reached the client. With no key left it
// fails with errNoProviderKey, except that a last 429 is returned as the
// answer (classify retries it on the next backend, or relays it with the
// provider's Retry-After).
func (g *Gateway) send(ctx context.Context, c *app.RequestContext, b *backendRoute, call upstreamCall) (*http.Response, error) {
	if b.keys == nil {
		return g.sendUpstream(ctx, c, b, b.authHeader, call)
	}
	for {
		k, ok := b.keys.Pick(g.region.Now())
		if !ok {
			return nil, errNoProviderKey
		}
		res, err := g.sendUpstream(ctx, c, b, k.Header(), call)
		if err != nil {
			return res, err
		}
		if !b.keys.Report(k, res.StatusCode, res.Header.Get("Retry-After"), g.region.Now()) {
			// Served; or refused with no key left. The provider's 401 or
			// 403 is about its key, not the client's: never relayed.
			if res.StatusCode == http.StatusUnauthorized || res.StatusCode == http.StatusForbidden {
				res.Body.Close()
				return nil, errNoProviderKey
			}
			return res, nil
		}
		if !b.keys.UsableNow() {
			if res.StatusCode == http.StatusTooManyRequests {
				return res, nil
			}
			res.Body.Close()
			return nil, errNoProviderKey
		}
		g.log.Warn("provider key refused or rate limited; sending with the next", "backend", b.url, "key", k.Name(), "status", res.StatusCode)
		res.Body.Close()
	}
}

// upstreamCall is what one attempt sends besides the client's headers.
type upstreamCall struct {
	body [][]byte // sent as it is, in its pieces
	// trace, when not nil, is the attempt's trace context header lines,
	// sent in place of the client's (nil: the client's traceparent, if
	// any, goes as it came).
	trace []byte
	// requestID is the gateway's id of the request, sent as X-Request-Id
	// in place of the client's: vLLM makes that header its own request id
	// (the answer's id), which one client could set to another's.
	requestID string
}

// sendUpstream sends the request to backend b and returns once the
// response headers have arrived, with auth ("": none) as its
// Authorization.
func (g *Gateway) sendUpstream(ctx context.Context, c *app.RequestContext, b *backendRoute, auth string, call upstreamCall) (*http.Response, error) {
	hdr := headerPool.Get().(*[]byte)
	defer headerPool.Put(hdr)
	h := appendRequestHeaders((*hdr)[:0], c, auth != "", call.trace != nil)
	if auth != "" {
		h = append(append(append(h, "Authorization: "...), auth...), "\r\n"...)
	}
	h = append(append(append(h, "X-Request-Id: "...), call.requestID...), "\r\n"...)
	h = append(h, call.trace...)
	*hdr = h
	// The target is the path the gateway routed on (hertz's normalised
	// one: "//v1/…", "/x/../v1/…" and needless escapes resolved) with the
	// query: never another reading of the client's raw path.
	return b.pool.Do(ctx, &upstream.Request{Method: methodOf(c), Target: string(c.Request.URI().RequestURI()), Header: h, Body: call.body})
}

// methodOf is the request's method among those the gateway routes, as a
// constant string (no allocation per request).
func methodOf(c *app.RequestContext) string {
	switch string(c.Method()) {
	case http.MethodGet:
		return http.MethodGet
	case http.MethodDelete:
		return http.MethodDelete
	}
	return http.MethodPost
}

// headerPool holds the buffers the forwarded header lines are built in.
var headerPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}
