package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cloudwego/hertz/pkg/app"
	errs "github.com/cloudwego/hertz/pkg/common/errors"

	"github.com/tidwall/gjson"

	"github.com/sluice-gw/sluice/worker/reqscan"
	"github.com/sluice-gw/sluice/worker/sse"
	"github.com/sluice-gw/sluice/worker/upstream"
)

// This file is a proxied request's life, top to bottom, in the order its
// phases run:
//
//	1. auth      Authorization: Bearer → key (401)
//	2. limits    the key's max_concurrent and requests per minute, exact
//	             across workers, before a byte of the body is read (429 with
//	             x-ratelimit-* headers)
//	3. body      read the body, bounded by max_body (413); past body_memory
//	             into a temporary file (503 body_buffer_failed if it fails)
//	4. scan      read "model" and the other fields as the backend will, or
//	             refuse what it could read differently (400)
//	5. route     model → models[] entry (404), key may use it (403)
//	6. tokens    the key's tokens per minute, reserved from max_tokens and
//	             the prompt's size (429)
//	7. rewrite   upstream_model replaces "model", stream_options.include_usage
//	             is added to streams, in the bytes
//	8. backend   rendezvous hashing on the affinity key, bounded by load
//	9. slot      a free slot on the best candidate, else wait in the model's
//	             queue (429 queue_full, 503 queue_timeout)
//	10. upstream send over the keep-alive pool, headers filtered; retried on the
//	             next backend before the first byte reaches the client (502)
//	11. respond  SSE event by event as it arrives, or the whole answer
//	12. log      one usage line, whatever happened above

// proxy handles POST /v1/chat/completions, /v1/completions and /v1/embeddings.
//
// Phases 1–10 and the head of 11 run in forward; a stream is then relayed
// from here. The split is for memory, not looks: forward's frame is large
// (it holds every phase's locals), and a stream parks its goroutine for
// minutes. Parked in relayStream below proxy's small frame, the goroutine
// uses under 4 KiB of stack, so its stack stays at (or the GC shrinks it
// back to) 8 KiB instead of 16 KiB per open stream.
func (g *gateway) proxy(ctx context.Context, c *app.RequestContext) {
	x := &exchange{rec: g.beginRecord(c)}
	defer g.end(x)
	if !g.forward(ctx, c, x) {
		return
	}
	prefix := x.prefix
	x.prefix = nil // dead once the relay has sent it: the collector may take it
	// A relay's writes wait for the client's socket to take them: a client
	// that stops reading must not hold the backend's slot and connection
	// past timeouts.total (and a little grace, for a slow one to get the
	// timeout's error event), so its writes fail then (client_stalled).
	// Each write also gets send_timeout (chunkWriter.bound).
	writeDeadline := x.deadline.Add(writeGrace)
	if x.large {
		g.relayLarge(ctx, x.upCtx, c, x.rec, prefix, x.res, x.idle, x.idleFor, writeDeadline)
		return
	}
	x.rec.stream = true
	g.relayStream(ctx, x.upCtx, c, x.rec, prefix, x.res.Body, x.idle, x.idleFor, writeDeadline)
}

// writeGrace is how long after timeouts.total a relay's writes to the
// client may still wait: time for the timeout's error event to reach a
// client that reads slowly.
const writeGrace = 5 * time.Second

// exchange is what a proxied request holds until it ends, released by end
// in the reverse order of its taking.
type exchange struct {
	rec      *usageRecord
	routes   *routeTable // the table this request finishes on, whatever reloads come
	held     *bodyHold
	adm      *admission
	cancel   context.CancelCauseFunc // ends the upstream request
	upCtx    context.Context
	total    *time.Timer
	deadline time.Time   // when total fires: a relay's writes to the client end then too
	idle     *time.Timer // streams only: silence before the headers counts too
	idleFor  time.Duration
	acancel  context.CancelCauseFunc // the attempt's own context, if it has one
	slot     func()                  // gives the backend slot back
	res      *http.Response
	prefix   []byte // a stream's first bytes, read before committing to its backend; a large answer's
	large    bool   // a whole answer past wholeAnswerMax: relayed as it arrives
}

// end releases what the request held and writes its usage line.
func (g *gateway) end(x *exchange) {
	if x.res != nil {
		x.res.Body.Close()
	}
	if x.slot != nil {
		x.slot()
	}
	if x.acancel != nil {
		x.acancel(nil)
	}
	if x.idle != nil {
		x.idle.Stop()
	}
	if x.total != nil {
		x.total.Stop()
	}
	if x.cancel != nil {
		x.cancel(nil)
	}
	if x.adm != nil {
		x.adm.release(x.rec.usage.Total, x.rec.usage.Found)
	}
	if x.held != nil {
		x.held.release()
	}
	if x.routes != nil {
		x.routes.refs.Add(-1)
	}
	g.finish(x.rec)
}

// forward runs a request's phases up to its answer: a whole answer is set
// on the response and false returned; true means the answer is relayed as
// it arrives — a stream (relayStream), or with x.large an answer too large
// to hold (relayLarge) — and x holds what the relay needs.
func (g *gateway) forward(ctx context.Context, c *app.RequestContext, x *exchange) (relay bool) {
	rec := x.rec
	routes := g.acquireRoutes()
	x.routes = routes

	// 1. auth
	key := routes.authenticate(c.Request.Header.Peek("Authorization"))
	if key == nil {
		g.refuseUnread(c, rec, errUnauthorized(c))
		return
	}
	rec.key = key.name

	// 2. key limits: max_concurrent and requests_per_minute need nothing of
	// the body, so a key over them is refused before its upload is read.
	adm, aerr := g.admitKey(c, key)
	if aerr != nil {
		g.refuseUnread(c, rec, aerr)
		return
	}
	x.adm = adm

	// 3. body
	maxBody := g.maxBody.Load()
	body, held, aerr := g.readBody(c, maxBody)
	switch aerr {
	case errBodyTooLarge:
		g.refuse(c, rec, errInvalid(aerr.status, aerr.code,
			fmt.Sprintf("The request body is larger than the gateway's limit of %d bytes.", maxBody)))
		return
	case errBodyBuffer, errBodyTimeout: // the rest of the body is unread
		g.refuse(c, rec, aerr)
		return
	}
	// The body is kept for retries until the response starts flowing to the
	// client; held counts it for as long as it is kept.
	x.held = held
	if aerr != nil {
		g.fail(c, rec, aerr)
		return
	}
	if c.Request.IsBodyStream() {
		// The body is in a buffer of ours: hertz's, holding the first bytes
		// it read ahead, goes back to its pool now rather than when the
		// request ends (for a stream, minutes from now).
		c.Request.ResetBody()
	}
	rec.bytesIn = int64(len(body))

	// 4. scan
	scan, aerr := scanBody(body)
	if aerr != nil {
		g.fail(c, rec, aerr)
		return
	}
	rec.model = clip(scan.ModelName) // a model that does not exist is the client's string

	// 5. route
	m := routes.models[scan.ModelName]
	if m == nil {
		g.fail(c, rec, errInvalid(http.StatusNotFound, "model_not_found",
			fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", scan.ModelName)))
		return
	}
	if !key.allows(m.name) {
		g.fail(c, rec, errInvalid(http.StatusForbidden, "model_not_allowed",
			fmt.Sprintf("Your API key may not use the model `%s`.", m.name)))
		return
	}

	// 6. token limit: tokens reserved until the response ends.
	if aerr := g.admitTokens(c, adm, m, &scan); aerr != nil {
		g.fail(c, rec, aerr)
		return
	}

	// The affinity key is read from the body as the client sent it, before
	// the rewrite moves its bytes.
	akey, hasKey := m.affinityKey(body, &scan)
	rec.affinityKey, rec.messages, rec.promptBytes = akey, scan.Messages, scan.PromptBytes
	rec.streamAsked, rec.upstreamModel = scan.Stream, m.name
	if m.upstreamModel != "" {
		rec.upstreamModel = m.upstreamModel
	}
	if u := scan.User; u.Len() > 0 && u.Len() <= 256 {
		rec.userRaw = string(body[u.Start:u.End])
	}

	// 7. rewrite
	// A stream whose client did not ask for usage gets include_usage anyway
	// so the tokens can be counted; the usage-only event is then kept from
	// the client, which sees exactly what it asked for.
	// The edits are pieces between the body's own bytes: nothing is copied.
	pieces, injected := reqscan.RewritePieces(body, &scan, m.upstreamModel)
	rec.usageInjected = injected

	// 8. backend
	var stack, rotated [16]*backendRoute
	candidates := m.candidates(akey, hasKey, stack[:0])
	if len(candidates) == 0 {
		g.fail(c, rec, errServer(http.StatusServiceUnavailable, "no_healthy_backend",
			fmt.Sprintf("No backend of model `%s` is healthy right now.", m.name)))
		return
	}

	// 9. slot and 10. upstream, retried on the next candidate while nothing
	// has gone to the client: connection errors, and 5xx/429 answers. Each
	// attempt takes a slot (waiting in the queue if need be) and gives it
	// back when that attempt ends.
	upCtx, cancel := context.WithCancelCause(ctx) // ends the upstream request on every return path
	x.upCtx, x.cancel = upCtx, cancel
	x.total = time.AfterFunc(m.total, func() { cancel(errTotalTimeout) })
	x.deadline = time.Now().Add(m.total)
	if scan.Stream {
		x.idle = time.AfterFunc(m.streamIdle, func() { cancel(errStreamIdle) })
		x.idleFor = m.streamIdle
	}
	var res *http.Response
	var prefix []byte
	firstTokenArmed := scan.Stream && m.firstToken > 0 // opt-in, one retry at most
	for attempt := 0; ; attempt++ {
		// Attempt k prefers the k-th candidate: backends already tried go last.
		k := attempt % len(candidates)
		order := append(append(rotated[:0], candidates[k:]...), candidates[:k]...)
		// Until this attempt's send the body is not read: a spilled one's
		// pages leave memory while the request waits for a slot.
		held.idle()
		b, serr := g.takeSlot(ctx, m, order, rec)
		if serr != nil {
			if serr == errClientClosed {
				rec.status, rec.errCode = statusClientClosed, "client_closed"
				return
			}
			c.Response.Header.Set("Retry-After", "1")
			g.fail(c, rec, serr)
			return
		}
		rec.backend = b.url
		rec.attempts++
		rec.tried = append(rec.tried, b.url)
		done := func() { g.queues.releaseSlot(m, b) }
		// An attempt is ended by closing its response (or by Do's failure);
		// it needs a context of its own only for the first-token deadline.
		actx, acancel := upCtx, noCancel
		var ft *firstTokenTimer
		if firstTokenArmed {
			actx, acancel = context.WithCancelCause(upCtx) // this attempt only
			ft = startFirstTokenTimer(m.firstToken, acancel)
		}
		var err error
		res, err = g.sendUpstream(actx, c, b, pieces)
		if err == nil && ft != nil && res.StatusCode == http.StatusOK && isEventStream(res) {
			prefix, err = readFirst(res.Body)
			if !ft.arrived() {
				err = errFirstToken
			}
			if err != nil {
				// The head came but no first event: this response is done
				// with, whatever comes next (a retry, or an error). Left
				// open, its connection stayed open for good (an fd per
				// request: TestNoLeakOnFailurePaths).
				res.Body.Close()
				res = nil
			}
		}
		if err != nil {
			acancel(nil)
			done()
			if ctx.Err() != nil { // the client went away first
				rec.status, rec.errCode = statusClientClosed, "client_closed"
				return
			}
			if to := timedOut(upCtx); to != nil { // never retried, never ejects
				g.fail(c, rec, errTimeout(m, to))
				return
			}
			if ft != nil && (err == errFirstToken || context.Cause(actx) == errFirstToken) {
				// Nothing went to the client: cancel on this backend (it sees
				// the close) and try the next one, once, without a deadline.
				g.log.Warn("first token deadline passed; retrying on the next backend", "backend", b.url, "deadline", m.firstToken.String())
				firstTokenArmed, rec.firstTokenRetry = false, true
				continue
			}
			if err == errReadFirst {
				g.fail(c, rec, errServer(http.StatusBadGateway, "upstream_failed",
					"The backend closed the stream before its first event."))
				return
			}
			now := time.Now()
			out := b.eject(now)
			g.log.Warn("upstream request failed; backend out of rotation", "backend", b.url,
				"attempt", attempt+1, "for", out.String(), "err", err)
			// A retry goes to a backend in rotation now: with every candidate
			// out (one backend, say), it would wait in the queue for an
			// ejected one to come back, and try it again.
			if attempt < m.retries && anyHealthy(candidates, now) {
				continue
			}
			g.fail(c, rec, errServer(http.StatusBadGateway, "upstream_unreachable",
				fmt.Sprintf("The backend for model `%s` could not be reached.", m.name)))
			return
		}
		ft.stop()
		rec.upstreamCode, rec.headersAt = res.StatusCode, time.Since(rec.start)
		if retryableStatus(res.StatusCode) && attempt < m.retries {
			g.log.Warn("upstream answered with an error; retrying", "backend", b.url, "status", res.StatusCode, "attempt", attempt+1)
			res.Body.Close()
			acancel(nil)
			done()
			continue
		}
		x.acancel, x.slot = acancel, done
		break
	}
	x.res = res
	// From here the response flows to the client and no retry can need the
	// request body: let it go (for a stream, minutes before the end).
	body, pieces = nil, nil
	held.release()

	// 11. respond
	rec.status = res.StatusCode
	c.Response.SetStatusCode(res.StatusCode)
	copyResponseHeaders(c, res.Header)
	c.Response.Header.Set("X-Request-Id", rec.requestID)
	if isEventStream(res) {
		x.prefix = prefix
		return true
	}
	var data []byte
	var err error
	switch n := res.ContentLength; {
	case n > wholeAnswerMax:
		x.large = true // not read here at all
		return true
	case n > 0: // read into one buffer of its size (ReadFull's last read sees the end: the connection goes back to its pool)
		data = make([]byte, n)
		_, err = io.ReadFull(res.Body, data)
	default: // no length given (or 0: read to see its end): read up to the bound
		data, err = io.ReadAll(io.LimitReader(res.Body, wholeAnswerMax+1))
		if err == nil && len(data) > wholeAnswerMax {
			x.prefix, x.large = data, true
			return true
		}
	}
	if err != nil {
		// Headers have not left yet: the client can still get a clean error.
		c.Response.Header.Reset()
		if to := timedOut(upCtx); to != nil {
			g.fail(c, rec, errTimeout(m, to))
			return
		}
		g.fail(c, rec, errServer(http.StatusBadGateway, "upstream_failed",
			"The backend closed the connection before the response was complete."))
		return
	}
	c.Response.SetBodyRaw(data)
	rec.bytesOut = int64(len(data))
	rec.usage = sse.BodyUsage(data)
	rec.finishReason = gjson.GetBytes(data, "choices.0.finish_reason").Str
	return false
}

// isEventStream reports whether a backend answer is an SSE stream.
func isEventStream(res *http.Response) bool {
	return strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream")
}

// noCancel is the cancel of an attempt without a context of its own.
func noCancel(error) {}

// errFirstToken: a stream's first event did not arrive by first_token_deadline.
var errFirstToken = errors.New("first token deadline")

// errReadFirst: a stream ended before its first byte.
var errReadFirst = errors.New("stream ended before its first byte")

// readFirst reads a stream's first bytes.
func readFirst(body io.Reader) ([]byte, error) {
	buf := make([]byte, 4<<10)
	n, err := body.Read(buf)
	if n > 0 {
		return buf[:n], nil
	}
	if err == nil || err == io.EOF {
		err = errReadFirst
	}
	return nil, err
}

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
		return errServer(http.StatusGatewayTimeout, "upstream_timeout", "The "+what+" was stopped: "+to.Error()+".")
	}
	return broken
}

// errTimeout is the 504 for a timeout before anything reached the client.
func errTimeout(m *modelRoute, cause error) *apiError {
	limit := m.total
	if cause == errStreamIdle {
		limit = m.streamIdle
	}
	return errServer(http.StatusGatewayTimeout, "upstream_timeout",
		fmt.Sprintf("The backend of model `%s` did not answer in time (%s: %s).", m.name, cause, limit))
}

// retryableStatus: answers worth another backend — overload, and server
// errors (vLLM answers 500/503 while it restarts or runs out of memory).
func retryableStatus(code int) bool {
	return code == http.StatusTooManyRequests || code >= 500
}

// statusClientClosed is nginx's 499: the client closed the connection.
const statusClientClosed = 499

// errUnauthorized distinguishes a missing key from a wrong one, as OpenAI does.
func errUnauthorized(c *app.RequestContext) *apiError {
	if len(c.Request.Header.Peek("Authorization")) == 0 {
		return errInvalid(http.StatusUnauthorized, "missing_api_key",
			"You didn't provide an API key. Send it as 'Authorization: Bearer YOUR_KEY'.")
	}
	return errInvalid(http.StatusUnauthorized, "invalid_api_key", "Incorrect API key provided.")
}

// scanBody validates the body as JSON in one pass and finds its fields.
func scanBody(body []byte) (reqscan.Request, *apiError) {
	r, err := reqscan.Scan(body)
	var fe *reqscan.FieldError
	switch {
	case errors.As(err, &fe):
		// Valid JSON the backend could read differently (a duplicated or
		// escaped key, a value it would coerce): acting on it would let
		// the key's authorisation, limits or billing apply to another
		// value than the one served.
		e := errInvalid(http.StatusBadRequest, "invalid_field",
			fmt.Sprintf("The request body's `%s` cannot be read unambiguously: %v.", fe.Field, err))
		e.param = fe.Field
		return r, e
	case err != nil:
		return r, errInvalid(http.StatusBadRequest, "invalid_json",
			fmt.Sprintf("The request body is not valid JSON: %v.", err))
	}
	if r.Model.Len() == 0 || r.ModelName == "" {
		return r, errInvalid(http.StatusBadRequest, "missing_model",
			"You must provide a model parameter (a string).")
	}
	return r, nil
}

// sendUpstream sends the request to backend b and returns once the
// response headers have arrived. body is sent as it is, in its pieces.
func (g *gateway) sendUpstream(ctx context.Context, c *app.RequestContext, b *backendRoute, body [][]byte) (*http.Response, error) {
	hdr := headerPool.Get().(*[]byte)
	defer headerPool.Put(hdr)
	h := appendRequestHeaders((*hdr)[:0], c)
	if b.authHeader != "" {
		h = append(append(append(h, "Authorization: "...), b.authHeader...), "\r\n"...)
	}
	*hdr = h
	return b.pool.Do(ctx, &upstream.Request{Method: http.MethodPost, Target: string(c.Request.RequestURI()), Header: h, Body: body})
}

// headerPool holds the buffers the forwarded header lines are built in.
var headerPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// streamBufPool holds the buffers SSE is relayed through. 8 KiB holds many
// ~330-byte events. A stream takes one only when the backend has sent
// something and gives it back before it waits again: an open stream, idle
// between events almost all of its life, holds none.
var streamBufPool = sync.Pool{New: func() any { return new(relayBufs) }}

type relayBufs struct {
	in  [8 << 10]byte
	out []byte // the events of one read that go to the client
}

// put gives b back to streamBufPool, without what a giant event (up to
// sse.MaxEvent) grew its out to.
func (b *relayBufs) put() {
	if cap(b.out) > 64<<10 {
		b.out = nil
	}
	streamBufPool.Put(b)
}

// dataWaiter is a response body that can wait for the backend's next bytes
// without a buffer to read them into, and tell how many have arrived
// (upstream's bodies can).
type dataWaiter interface {
	WaitData() error
	WaitDataFor(d time.Duration) bool
	Buffered() int
}

// doneWait is how long [DONE] is held for the end of the body to go out
// with it. vLLM ends the body right after [DONE] (a separate write of the
// last chunk, arriving microseconds later): together they are one write to
// the client instead of two. A backend that does not end in time gets its
// [DONE] forwarded anyway.
const doneWait = 5 * time.Millisecond

// relayStream forwards an SSE body to the client as it arrives: the whole
// events of every read from the backend are written and flushed at once,
// never collected (except [DONE], held up to doneWait for the end of the
// body). On the way it reads each event for the usage line (tokens, finish
// reason, time to the first content event) and drops the usage-only event
// when the gateway, not the client, asked for it.
//
// A stream that breaks or times out after its headers went out ends with an
// SSE error event in OpenAI's shape and a clean end of the chunked body.
func (g *gateway) relayStream(ctx, upCtx context.Context, c *app.RequestContext, rec *usageRecord, prefix []byte,
	body io.Reader, idle *time.Timer, idleFor time.Duration, deadline time.Time) {
	w := newChunkWriter(c)
	w.bound(c.GetConn(), deadline, time.Duration(g.client.send.Load()))
	waiter, _ := body.(dataWaiter)
	var bufs *relayBufs
	defer func() {
		if bufs != nil {
			bufs.put()
		}
	}()
	var split sse.Splitter
	done := false // [DONE] is in bufs.out
	keep := func(event []byte, whole bool) {
		if !whole { // a piece of an event past sse.MaxEvent: passed on unread
			bufs.out = append(bufs.out, event...)
			return
		}
		ev := sse.Inspect(event)
		rec.events++
		if ev.HasContent && rec.ttft == 0 {
			rec.ttft = time.Since(rec.start)
		}
		if ev.FinishReason != "" {
			rec.finishReason = ev.FinishReason
		}
		if ev.Usage.Found {
			rec.usage = ev.Usage
		}
		if ev.UsageOnly && rec.usageInjected {
			return
		}
		done = done || ev.Done
		bufs.out = append(bufs.out, event...)
	}
	for {
		if !done && len(prefix) == 0 && waiter != nil {
			if bufs != nil { // no buffer held while the stream is idle
				bufs.put()
				bufs = nil
			}
			waiter.WaitData() //nolint:errcheck // Read below returns the same error
		}
		if bufs == nil {
			bufs = streamBufPool.Get().(*relayBufs)
			bufs.out = bufs.out[:0]
		}
		buf := bufs.in[:]
		var n int
		var rerr error
		if len(prefix) > 0 { // bytes read while the first-token deadline ran
			n = copy(buf, prefix)
			prefix = prefix[n:]
		} else {
			n, rerr = body.Read(buf)
			// What the backend sent in one burst goes to the client in one
			// write: read on while its bytes are already here.
			for rerr == nil && n < len(buf) && waiter != nil && waiter.Buffered() > 0 {
				var m int
				m, rerr = body.Read(buf[n:])
				n += m
			}
		}
		if n > 0 {
			if idle != nil {
				idle.Reset(idleFor)
			}
			split.Feed(buf[:n], keep)
		}
		if rerr == io.EOF {
			// The last events (and an unterminated one) and the end of the
			// body: one write.
			out := append(bufs.out, split.Rest()...)
			if w.WriteLast(out) != nil {
				rec.status, rec.errCode = statusClientClosed, w.gone()
				bufs = nil // netpoll may still be sending from it: not back to the pool
				return
			}
			rec.bytesOut += int64(len(out))
			return
		}
		if rerr == nil && done && len(bufs.out) > 0 && waiter != nil && waiter.WaitDataFor(doneWait) {
			continue // the end of the body (or more) has arrived: read it first
		}
		if out := bufs.out; len(out) > 0 {
			// Write through w, not c.Write: only w reports a client that left.
			if _, err := w.Write(out); err != nil || w.Flush() != nil {
				rec.status, rec.errCode = statusClientClosed, w.gone()
				bufs = nil // netpoll may still be sending from it: not back to the pool
				return
			}
			rec.bytesOut += int64(len(out))
			bufs.out, done = bufs.out[:0], false
		}
		if rerr != nil {
			if ctx.Err() != nil {
				rec.status, rec.errCode = statusClientClosed, "client_closed"
				return
			}
			e := brokenOff(upCtx, "stream", errServer(http.StatusBadGateway, "upstream_stream_broken",
				"The backend stopped the stream before it was complete."))
			rec.errCode = e.code
			g.log.Warn("stream ended early", "backend", rec.backend, "reason", e.code, "err", rerr)
			ev := appendErrorEvent(nil, e)
			if _, err := w.Write(ev); err == nil && w.Flush() == nil {
				rec.bytesOut += int64(len(ev))
			}
			return
		}
	}
}

// wholeAnswerMax is the largest non-streamed answer read whole before it
// goes to the client (with a Content-Length, and a clean 502 when the
// backend breaks off): a worker holds at most this much of any one answer.
// A larger one — embeddings of a large batch, a backend gone wrong — is
// relayed as it arrives (relayLarge). Until then every answer was held
// whole, whatever its size.
const wholeAnswerMax = 1 << 20

// largeBufPool holds the buffers large answers are relayed through.
var largeBufPool = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// errAnswerCut ends a large answer's chunked body without its last chunk.
// hertz then closes the connection (quietly: it is one of hertz's "short
// connection" errors; the worker logs why): the client sees an incomplete
// answer, never a short one that looks whole.
var errAnswerCut = fmt.Errorf("%w: the answer was cut", errs.ErrShortConnection)

// relayLarge forwards a non-streamed answer too large to hold (past
// wholeAnswerMax) as it arrives (with the backend's Content-Length, else
// chunked; newAnswerWriter): first prefix (what forward read), then each
// read from the backend as it comes. Usage and finish reason are read on
// the way (sse.AnswerReader). If the backend breaks off before anything was
// sent, the client gets a clean error; after that, the body is cut
// (errAnswerCut). idle, if the client asked for a stream, is reset by every
// read, as relayStream does.
func (g *gateway) relayLarge(ctx, upCtx context.Context, c *app.RequestContext, rec *usageRecord, prefix []byte,
	res *http.Response, idle *time.Timer, idleFor time.Duration, deadline time.Time) {
	var w *chunkWriter // made with the first bytes: until then a clean error can still go out
	answer := sse.NewAnswerReader()
	writeFailed := false
	send := func(p []byte) bool {
		if w == nil {
			w = newAnswerWriter(c, res.ContentLength)
			w.bound(c.GetConn(), deadline, time.Duration(g.client.send.Load()))
		}
		if _, err := w.Write(p); err != nil {
			rec.status, rec.errCode = statusClientClosed, w.gone()
			w.abort(errAnswerCut)
			writeFailed = true
			return false
		}
		rec.bytesOut += int64(len(p))
		answer.Feed(p)
		return true
	}
	if len(prefix) > 0 && !send(prefix) {
		return
	}
	bufp := largeBufPool.Get().(*[]byte)
	defer func() {
		// After a failed write netpoll may still be sending from the buffer
		// (it links large pieces, it does not copy them): never reuse it then.
		if !writeFailed {
			largeBufPool.Put(bufp)
		}
	}()
	for {
		n, err := res.Body.Read(*bufp)
		if n > 0 {
			if idle != nil {
				idle.Reset(idleFor)
			}
			if !send((*bufp)[:n]) {
				return
			}
		}
		if err == io.EOF && w != nil {
			break
		}
		if err == nil {
			continue
		}
		if ctx.Err() != nil {
			rec.status, rec.errCode = statusClientClosed, "client_closed"
			if w != nil {
				w.abort(errAnswerCut)
			}
			return
		}
		// (An end before any byte is a broken answer too: it was announced
		// past wholeAnswerMax.)
		e := brokenOff(upCtx, "answer", errServer(http.StatusBadGateway, "upstream_failed",
			"The backend closed the connection before the response was complete."))
		g.log.Warn("large answer ended early", "backend", rec.backend, "reason", e.code, "sent", rec.bytesOut, "err", err)
		if w == nil {
			c.Response.Header.Reset()
			g.fail(c, rec, e)
			return
		}
		rec.errCode = e.code
		w.abort(errAnswerCut)
		return
	}
	rec.usage = answer.Usage()
	rec.finishReason = answer.FinishReason()
	// The end of the body, here under the write deadline rather than by
	// hertz's Finalize after it.
	if w.WriteLast(nil) != nil {
		rec.status, rec.errCode = statusClientClosed, w.gone()
		writeFailed = true
	}
}

// newAnswerWriter is the writer of a large answer relayed to c: with the
// backend's Content-Length when it gave one, else chunked, or for an
// HTTP/1.0 client (no chunked encoding) a body that ends with the
// connection.
func newAnswerWriter(c *app.RequestContext, contentLength int64) *chunkWriter {
	switch {
	case contentLength >= 0:
		return newLengthWriter(c, int(contentLength))
	case !c.Request.Header.IsHTTP11():
		return newLengthWriter(c, -2)
	}
	return newChunkWriter(c)
}

// models handles GET /v1/models: the models the caller's key may use, in
// OpenAI's list shape.
func (g *gateway) models(ctx context.Context, c *app.RequestContext) {
	rec := g.beginRecord(c)
	defer g.finish(rec)
	routes := g.acquireRoutes()
	defer routes.refs.Add(-1)
	key := routes.authenticate(c.Request.Header.Peek("Authorization"))
	if key == nil {
		g.refuseUnread(c, rec, errUnauthorized(c))
		return
	}
	rec.key = key.name
	b := append(make([]byte, 0, 256), `{"object":"list","data":[`...)
	first := true
	for _, m := range routes.order {
		if !key.allows(m.name) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, `{"id":`...)
		b = appendJSONString(b, m.name)
		b = append(b, `,"object":"model","created":`...)
		b = appendInt(b, g.started.Unix())
		b = append(b, `,"owned_by":"sluice"}`...)
	}
	b = append(b, "]}\n"...)
	rec.status = http.StatusOK
	c.Response.Header.Set("X-Request-Id", rec.requestID)
	c.Response.Header.SetContentType("application/json")
	c.Response.SetBodyRaw(b)
	rec.bytesOut = int64(len(b))
}

// notFound answers every path the gateway does not serve (with a request
// id and a usage line, like every other answer).
func (g *gateway) notFound(ctx context.Context, c *app.RequestContext) {
	rec := g.beginRecord(c)
	defer g.finish(rec)
	g.refuseUnread(c, rec, errInvalid(http.StatusNotFound, "unknown_url",
		fmt.Sprintf("Unknown request URL: %s %s.", c.Method(), c.Path())))
}

// methodNotAllowed answers a known path with the wrong method.
func (g *gateway) methodNotAllowed(ctx context.Context, c *app.RequestContext) {
	rec := g.beginRecord(c)
	defer g.finish(rec)
	g.refuseUnread(c, rec, errInvalid(http.StatusMethodNotAllowed, "method_not_allowed",
		fmt.Sprintf("Method %s is not allowed on %s.", c.Method(), c.Path())))
}

// maxLoggedField bounds the copy a record keeps of a client-chosen string
// (path, User-Agent, an unknown model's name; "user" is kept only up to
// 256 bytes): no more than the largest budget of a usage line, which clips
// each string after escaping (usage.go) so that a line fits one write(2)
// to a pipe whatever a client sends.
const maxLoggedField = logPathMax

// clip returns s as a string of at most maxLoggedField bytes.
func clip[T ~string | ~[]byte](s T) string {
	return string(s[:min(len(s), maxLoggedField)])
}

// beginRecord starts the usage record of a request.
func (g *gateway) beginRecord(c *app.RequestContext) *usageRecord {
	rec := &usageRecord{start: time.Now(), requestID: g.nextRequestID(), path: clip(c.Path()),
		userAgent: clip(c.Request.Header.UserAgent())}
	rec.clientAddr = c.RemoteAddr().String()
	return rec
}

// fail answers with a gateway error and records it.
func (g *gateway) fail(c *app.RequestContext, rec *usageRecord, e *apiError) {
	rec.status, rec.errCode = e.status, e.code
	c.Response.Header.Set("X-Request-Id", rec.requestID)
	writeError(c, e)
	rec.bytesOut = int64(len(c.Response.Body()))
}

// anyHealthy reports whether one of bs is in rotation at now.
func anyHealthy(bs []*backendRoute, now time.Time) bool {
	for _, b := range bs {
		if b.healthy(now) {
			return true
		}
	}
	return false
}

// refuseUnread answers a request refused before its body was read. A
// request without a body keeps its connection; a body of up to drainMax
// with its length declared is read and dropped, within lingerTime (drain),
// so the connection can serve the next request (what nginx does); any
// other is left unread and the connection closed (refuse), so that a
// refused client costs no upload.
func (g *gateway) refuseUnread(c *app.RequestContext, rec *usageRecord, e *apiError) {
	if !c.Request.IsBodyStream() {
		g.fail(c, rec, e)
		return
	}
	n := int64(c.Request.Header.ContentLength())
	if n >= 0 && n <= drainMax && g.drain(c, n) {
		g.fail(c, rec, e)
		return
	}
	g.refuse(c, rec, e)
}

// drain reads and drops the n bytes of an unread body, within lingerTime
// in all (each wait alone is bounded by client_body_timeout: a client
// trickling a byte a minute would hold the connection, unanswered, for
// days). It reports whether the whole body came.
func (g *gateway) drain(c *app.RequestContext, n int64) bool {
	conn, body := c.GetConn(), c.Request.BodyStream()
	defer conn.SetReadTimeout(time.Duration(g.client.body.Load())) //nolint:errcheck // back to client_body_timeout
	until := time.Now().Add(lingerTime)
	var buf [4 << 10]byte
	for n > 0 {
		left := time.Until(until)
		if left <= 0 || conn.SetReadTimeout(left) != nil {
			return false
		}
		k, err := body.Read(buf[:min(n, int64(len(buf)))])
		n -= int64(k)
		if err != nil && n > 0 {
			return false
		}
	}
	return true
}

// drainMax is the largest unread body refuseUnread reads to keep a
// connection: a request's worth of a chat turn, not an upload.
const drainMax = 64 << 10

// refuse is fail for a request whose body is left unread: the answer goes
// out at once and the connection is closed (refuseAndClose).
func (g *gateway) refuse(c *app.RequestContext, rec *usageRecord, e *apiError) {
	rec.status, rec.errCode = e.status, e.code
	c.Response.Header.Set("X-Request-Id", rec.requestID)
	refuseAndClose(c, e)
	rec.bytesOut = int64(len(c.Response.Body()))
}

// finish writes the usage line.
func (g *gateway) finish(rec *usageRecord) {
	g.usage.write(rec, time.Now())
}
