package proxy

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/cloudwego/hertz/pkg/app"

	"github.com/sluice-gw/sluice/proxy/admission"
	"github.com/sluice-gw/sluice/proxy/affinity"
	"github.com/sluice-gw/sluice/proxy/reqscan"
)

// This file is a proxied request's life, top to bottom, in the order its
// phases run (requestPhases lists them; serve runs them):
//
//	1. auth      the client's key → key (401): Authorization: Bearer, or
//	             x-api-key where the API's clients send it so (Anthropic's)
//	2. limits    the key's max_concurrent and requests per minute, exact
//	             across workers, before a byte of the body is read (429 with
//	             x-ratelimit-* headers)
//	3. body      read the body, bounded by max_body (413); past body_memory
//	             into a temporary file (503 body_buffer_failed if it fails)
//	4. scan      read "model" and the other fields the API has as the
//	             backend will, or refuse what it could read differently (400)
//	4b. end user the key's end user (body "user" or a header): its requests
//	             per minute and places in flight, in the shared end-user
//	             table (429 end_user_rate_limit_exceeded)
//	5. route     model → models[] entry (404), key may use it (403)
//	6. tokens    the key's tokens per minute, reserved from max_tokens and
//	             the prompt's size, its quotas and budget, its end user's
//	             tokens per minute and quota (429)
//	7. rewrite   upstream_model replaces "model", stream_options.include_usage
//	             is added to streams that report usage only when asked, in
//	             the bytes
//	8. backend   rendezvous hashing on the affinity key, or where the shared
//	             prefix index says the prompt's longest prefix went, bounded
//	             by load (each attempt records where the prompt went)
//	9. slot      a free slot on the best candidate, else wait in the model's
//	             queue (429 queue_full, 503 queue_timeout)
//	10. upstream send over the keep-alive pool, headers filtered; retried on the
//	             next backend before the first byte reaches the client
//	             (attempt.go: one attempt, and classify, which decides what
//	             its outcome means)
//	11. respond  SSE event by event as it arrives, or the whole answer
//	12. log      one usage line, whatever happened above
//
// What an API changes in this life — where its fields are, how its
// answers report usage, the shape of the gateway's errors, how its clients
// send their key — is its apiSpec (apis.go), not code here.

// phase is one step of a request's life: nil to go on, or the error that
// ends the request (reject answers it, as the request's state allows).
type phase func(g *Gateway, ctx context.Context, c *app.RequestContext, x *exchange) *apiError

// routePhase is requestPhases' index of route (5): where a fallback model
// starts again (fallback.go).
const routePhase = 5

// requestPhases are phases 1–10, in the order they run. The answer's
// head (11) is respond's; its body is relayed by serve.
var requestPhases = [...]phase{
	(*Gateway).authenticate, // 1
	(*Gateway).limitKey,     // 2
	(*Gateway).readRequest,  // 3
	(*Gateway).scanRequest,  // 4
	(*Gateway).limitEndUser, // 4b
	(*Gateway).route,        // 5
	(*Gateway).limitTokens,  // 6
	(*Gateway).rewrite,      // 7
	(*Gateway).pickBackends, // 8
	(*Gateway).callUpstream, // 9 and 10
}

// serve handles one request of the API a.
//
// Phases 1–10 and the head of 11 run in forward; a stream is then relayed
// from here. The split is for memory, not looks: forward's frame is large
// (it holds every phase's locals), and a stream parks its goroutine for
// minutes. Parked in relayStream below serve's small frame, the goroutine
// uses under 4 KiB of stack, so its stack stays at (or the GC shrinks it
// back to) 8 KiB instead of 16 KiB per open stream.
func (g *Gateway) serve(ctx context.Context, c *app.RequestContext, a *apiSpec) {
	x := &exchange{api: a}
	g.startRecord(ctx, &x.rec, c)
	g.startTrace(c, x)
	defer g.end(x)
	if !g.forward(ctx, c, x) {
		return
	}
	prefix := x.up.prefix
	x.up.prefix = nil // dead once the relay has sent it: the collector may take it
	// A relay's writes wait for the client's socket to take them: a client
	// that stops reading must not hold the backend's slot and connection
	// past timeouts.total (and a little grace, for a slow one to get the
	// timeout's error event), so its writes fail then (client_stalled).
	// Each write also gets send_timeout (chunkWriter.bound).
	writeDeadline := x.timers.deadline.Add(writeGrace)
	if x.up.large {
		g.relayLarge(ctx, x.up.upCtx, c, x, prefix, writeDeadline)
		return
	}
	x.rec.Stream = true
	g.relayStream(ctx, x.up.upCtx, c, x, prefix, writeDeadline)
}

// forward runs a request's phases up to its answer: a whole answer is set
// on the response and false returned; true means the answer is relayed as
// it arrives — a stream (relayStream), or with x.up.large an answer too large
// to hold (relayLarge) — and x holds what the relay needs.
func (g *Gateway) forward(ctx context.Context, c *app.RequestContext, x *exchange) (relay bool) {
	x.routes = g.acquireRoutes()
	phases := requestPhases[:]
	if x.api.byID {
		phases = storedPhases[:]
	}
	for i := 0; i < len(phases); i++ {
		e := phases[i](g, ctx, c, x)
		if e == nil {
			continue
		}
		if i >= routePhase && g.fallBack(x, e) {
			i = routePhase - 1 // the fallback's phases 5–10
			continue
		}
		g.reject(c, x, x.fb.answer(c, e))
		return false
	}
	relay, e := g.respond(c, x)
	if e != nil {
		g.reject(c, x, e)
	}
	return relay
}

// writeGrace is how long after timeouts.total a relay's writes to the
// client may still wait: time for the timeout's error event to reach a
// client that reads slowly.
const writeGrace = 5 * time.Second

// 1. auth: the client's key.
func (g *Gateway) authenticate(ctx context.Context, c *app.RequestContext, x *exchange) *apiError {
	key, id, e := x.api.identify(ctx, c, x.routes)
	if e != nil {
		return e
	}
	x.req.key, x.rec.Key = key, key.name
	if id != nil {
		x.req.jwt, x.rec.Subject, x.rec.HasSubject = id, id.Subject, true
	}
	return nil
}

// 2. key limits: max_concurrent and requests_per_minute need nothing of
// the body, so a key over them is refused before its upload is read.
func (g *Gateway) limitKey(_ context.Context, c *app.RequestContext, x *exchange) *apiError {
	adm, e := g.admitKey(c, x.req.key)
	x.req.adm = adm
	return e
}

// 3. body: read whole, bounded, and kept for retries until the answer
// starts flowing to the client (held counts it for as long as it is kept).
func (g *Gateway) readRequest(_ context.Context, c *app.RequestContext, x *exchange) *apiError {
	maxBody := g.bodies.max.Load()
	if expectRefused(c) && int64(c.Request.Header.ContentLength()) <= maxBody {
		// 100-continue was refused (MayContinue) to a key a reload added
		// since: the body was never asked for. (One over max_body is
		// refused below, as ever.)
		x.body = bodyCut
		return errInvalid(http.StatusExpectationFailed, "expectation_failed",
			"The gateway did not invite this request's body (Expect: 100-continue). Send it again.")
	}
	body, held, e := g.bodies.readBody(c, maxBody)
	switch e {
	case errBodyTooLarge:
		x.body = bodyCut
		return errInvalid(e.status, e.code,
			fmt.Sprintf("The request body is larger than the gateway's limit of %d bytes.", maxBody))
	case errBodyBuffer, errBodyTimeout: // the rest of the body is unread
		x.body = bodyCut
		return e
	}
	x.body, x.req.held = bodyRead, held
	if e != nil {
		return e
	}
	if c.Request.IsBodyStream() {
		// The body is in a buffer of ours: hertz's, holding the first bytes
		// it read ahead, goes back to its pool now rather than when the
		// request ends (for a stream, minutes from now).
		c.Request.ResetBody()
	}
	x.req.payload = body
	x.rec.BytesIn = int64(len(body))
	return nil
}

// 4. scan: the fields the gateway acts on, read as the backend will.
func (g *Gateway) scanRequest(_ context.Context, _ *app.RequestContext, x *exchange) *apiError {
	scan, e := scanBody(x.req.payload, x.api.fields)
	if e != nil {
		return e
	}
	if x.api.stored {
		if e := refuseUnservable(&scan); e != nil {
			return e
		}
	}
	x.req.scan = scan
	x.rec.Model = clip(scan.ModelName) // a model that does not exist is the client's string
	return nil
}

// 5. route: the model, and the key's right to it (a fallback's, when the
// model named cannot serve: fallback.go).
func (g *Gateway) route(_ context.Context, _ *app.RequestContext, x *exchange) *apiError {
	name := x.req.scan.ModelName
	m := x.routes.models[name]
	if x.fb.to != nil {
		m, name = x.fb.to, x.fb.to.name
		x.rec.Model, x.rec.ModelRequested = m.name, x.fb.requested.name
	}
	if m == nil {
		return errInvalid(http.StatusNotFound, "model_not_found",
			fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", name))
	}
	if !x.req.may(m) {
		return errInvalid(http.StatusForbidden, "model_not_allowed",
			fmt.Sprintf("Your API key may not use the model `%s`.", m.name))
	}
	if !m.serves(x.api) {
		return errInvalid(http.StatusNotFound, "endpoint_not_served",
			fmt.Sprintf("The model `%s` is not served on %s.", m.name, clip(x.rec.Path)))
	}
	x.req.model = m
	if x.fb.requested == nil {
		x.fb.requested = m
	}
	return nil
}

// 6. token limit: tokens reserved until the response ends (and, for a
// follow-up, the size of the conversation it continues, which its prompt's
// estimate counts).
func (g *Gateway) limitTokens(_ context.Context, c *app.RequestContext, x *exchange) *apiError {
	if id := x.req.scan.PreviousResponseID; x.api.stored && id != "" {
		// A follow-up: the backend prepends the conversation it continues.
		if _, tokens, ok := g.recalled(id); ok {
			x.req.priorTokens = tokens
		}
	}
	if x.api.unbilled {
		return nil
	}
	if x.fb.to != nil {
		// A fallback reserves at its own reservation (its max_context,
		// default_max_tokens) and prices: the model it replaces gives its
		// back.
		x.req.adm.ReturnTokens()
		g.releaseQuotas(x, false)
		x.returnEndUserTokens()
	}
	prompt := x.promptTokens()
	want := tokenReservation(x.req.model, &x.req.scan, prompt, x.api.generates())
	x.req.reserved = want
	if e := g.admitTokens(c, x.req.adm, want, prompt, x.req.model, &x.req.scan); e != nil {
		x.refuseEndUser()
		return e
	}
	if e := g.admitQuotas(c, x, want, prompt); e != nil {
		x.refuseEndUser()
		return e
	}
	if e := g.admitEndUserTokens(x, want); e != nil {
		x.req.adm.Refused()
		g.releaseQuotas(x, false)
		x.refuseEndUser()
		return e
	}
	return nil
}

// 7. rewrite: the body as it goes upstream. The edits are pieces between
// the body's own bytes: nothing is copied.
func (g *Gateway) rewrite(_ context.Context, _ *app.RequestContext, x *exchange) *apiError {
	rec, m, body, scan := &x.rec, x.req.model, x.req.payload, &x.req.scan
	rec.Messages, rec.PromptBytes = scan.Messages, scan.PromptBytes
	rec.StreamAsked, rec.UpstreamModel = scan.Stream, m.name
	if m.rewrite.upstreamModel != "" {
		rec.UpstreamModel = m.rewrite.upstreamModel
	}
	if u := scan.User; u.Len() > 0 && u.Len() <= 256 {
		rec.UserRaw = string(body[u.Start:u.End])
	}
	// A stream whose client did not ask for usage gets include_usage anyway
	// so the tokens can be counted; the usage-only event is then kept from
	// the client, which sees exactly what it asked for.
	// The cache_salt of the key's group (cachegroup.go), mixed with the
	// client's own if it sent one; it seeds placement too (pickBackends).
	x.req.salt = x.req.key.cacheSalt
	if cs := scan.CacheSalt; cs.Len() > 0 {
		client, _ := reqscan.DecodeString(string(body[cs.Start+1 : cs.End-1]))
		x.req.salt = requestSalt(x.req.salt, client)
	}
	w := reqscan.Rewrites{UpstreamModel: m.rewrite.upstreamModel}
	if x.fb.to != nil && w.UpstreamModel == "" {
		w.UpstreamModel = m.name // a fallback: the body names it, not the model it replaces
	}
	if m.rewrite.sendCacheSalt {
		w.CacheSalt = x.req.salt
	}
	x.req.pieces, rec.UsageInjected = reqscan.RewritePieces(body, scan, w)
	return nil
}

// 8. backend: the candidates in order of preference. The affinity key is
// read from the body as the client sent it.
func (g *Gateway) pickBackends(_ context.Context, _ *app.RequestContext, x *exchange) *apiError {
	m := x.req.model
	// Both seeded with the request's cache group (cachegroup.go): a prompt
	// is placed by what its own group sent, never by another's.
	seed := saltSeed(x.req.salt)
	akey, hasKey := m.affinityKey(x.req.payload, &x.req.scan)
	if hasKey {
		akey ^= seed
	}
	x.rec.AffinityKey = akey
	// Blocks are recorded for every request of a prefix model (the index
	// then knows what each backend was sent), but a request with "user"
	// is placed by its user alone.
	x.place.blocks = m.prefixBlocks(x.req.payload, &x.req.scan, seed)
	// A conversation (a request of a prefix model placed by its key, not
	// by "user") is remembered where each of its turns goes, from its
	// first, however short (the recall table; notePrefix).
	if hasKey && m.place.prefixMax > 0 && x.req.scan.User.Len() == 0 {
		x.place.conv = affinity.ConversationEntry(akey)
	}
	var q *prefixQuery
	if x.place.blocks != nil {
		x.rec.PrefixBlocks = len(*x.place.blocks)
		if x.req.scan.User.Len() == 0 {
			q = &prefixQuery{blocks: *x.place.blocks, conv: x.place.conv}
			q.shared, q.history = m.conversationShape(x.req.payload, &x.req.scan, len(q.blocks))
		}
	}
	x.place.candidates = m.candidates(akey, hasKey, q, x.place.stack[:0])
	if q != nil {
		x.rec.PrefixMatched = q.matched
	}
	if len(x.place.candidates) == 0 {
		e := errServer(http.StatusServiceUnavailable, "no_healthy_backend",
			fmt.Sprintf("No backend of model `%s` is healthy right now.", m.name))
		if wait, ok := m.keysRest(g.region.Now()); ok {
			// Out because its provider keys rest after 429s: say when one
			// may be used again, as the provider said.
			e.retryAfter = admission.RetryAfterSecs(int64(wait))
		}
		return e
	}
	if id := x.req.scan.PreviousResponseID; x.api.stored && id != "" {
		g.holderFirst(id, x, m.lists)
		x.place.pinned = true
	}
	return nil
}

// 11. respond: the answer's head, and a whole answer's body. A stream, or
// an answer too large to hold, is relayed by serve (relay true).
func (g *Gateway) respond(c *app.RequestContext, x *exchange) (relay bool, _ *apiError) {
	rec, res := &x.rec, x.up.res
	// From here the response flows to the client and no retry can need the
	// request body: let it go (for a stream, minutes before the end).
	x.req.payload, x.req.pieces = nil, nil
	x.req.held.release()
	x.releaseBlocks()

	rec.Status = res.StatusCode
	c.Response.SetStatusCode(res.StatusCode)
	copyResponseHeaders(c, res.Header)
	c.Response.Header.Set("X-Request-Id", rec.RequestID)
	stream := isEventStream(res)
	// Copied: the backend's header map (~0.5 KiB with its values) is not
	// read again, and a stream would keep it for its whole life.
	res.Header = nil
	if stream {
		return true, nil
	}
	var data []byte
	var err error
	switch n := res.ContentLength; {
	case n > wholeAnswerMax:
		x.up.large = true // not read here at all
		return true, nil
	case n > 0: // read into one buffer of its size (ReadFull's last read sees the end: the connection goes back to its pool)
		data = make([]byte, n)
		_, err = io.ReadFull(res.Body, data)
	default: // no length given (or 0: read to see its end): read up to the bound
		data, err = io.ReadAll(io.LimitReader(res.Body, wholeAnswerMax+1))
		if err == nil && len(data) > wholeAnswerMax {
			x.up.prefix, x.up.large = data, true
			return true, nil
		}
	}
	if err != nil {
		// Headers have not left yet: the client can still get a clean error.
		c.Response.Header.Reset()
		if to := timedOut(x.up.upCtx); to != nil {
			return false, errTimeout(x.req.model, to)
		}
		return false, errUpstream(http.StatusBadGateway, "upstream_failed",
			"The backend closed the connection before the response was complete.")
	}
	c.Response.SetBodyRaw(data)
	rec.BytesOut = int64(len(data))
	switch {
	case !x.api.byID: // a stored response fetched again is not billed again
		if id := x.api.readAnswer(rec, data); x.stores() {
			x.place.storedID = id // remembered by end, with its usage
		}
	case methodOf(c) == http.MethodDelete && res.StatusCode/100 == 2:
		g.region.Forget(storedKey(c.Param("id"))) // deleted: nothing to route to
	}
	return false, nil
}
