package proxy

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/cloudwego/hertz/pkg/app"
	errs "github.com/cloudwego/hertz/pkg/common/errors"

	"github.com/sluice-gw/sluice/proxy/sse"
)

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
// body). On the way it reads each event, as the API's format says, for the
// usage line (tokens, finish reason, time to the first content event) and
// a stored response's id, and drops the usage-only event when the gateway,
// not the client, asked for it.
//
// A stream that breaks or times out after its headers went out ends with an
// SSE error event in the API's shape (appendErrorEvent) and a clean end of
// the chunked body.
//
// Long (about 135 lines) on purpose: this loop runs once per event of
// every open stream, and its state (buffers, the splitter, the idle
// timer, the usage seen) lives in its locals; split into calls, that state
// would move to a struct on the heap or through arguments on every event,
// and the stack of a parked stream would grow (see serve).
func (g *Gateway) relayStream(ctx, upCtx context.Context, c *app.RequestContext, x *exchange, prefix []byte, deadline time.Time) {
	rec, body, idle, idleFor := &x.rec, x.up.res.Body, x.timers.idle, x.timers.idleFor
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
	format, stored := x.api.format, x.stores()
	var large *sse.LargeEvent // made for the first event past sse.MaxEvent
	keep := func(event []byte, whole bool) {
		var ev sse.Event
		if whole {
			ev = sse.InspectAs(format, event)
		} else {
			// A piece of an event past sse.MaxEvent, passed on as it comes;
			// read on the way where its format says so (a Responses event
			// repeating the response, with the stream's usage).
			bufs.out = append(bufs.out, event...)
			if large == nil {
				large = sse.NewLargeEvent(format)
			}
			var end bool
			if ev, end = large.Feed(event); !end {
				return
			}
		}
		rec.Events++
		if ev.HasContent {
			rec.Generated++
			if rec.TTFT == 0 {
				rec.TTFT = time.Since(rec.Start)
			}
		}
		if ev.FinishReason != "" {
			rec.FinishReason = ev.FinishReason
		}
		if ev.Usage.Found && !x.api.byID {
			rec.Usage.Merge(ev.Usage)
		}
		if stored && ev.ResponseID != "" {
			// Its holder at once (end records its conversation's size).
			x.place.storedID = ev.ResponseID
			g.remember(ev.ResponseID, x.place.backend, 0)
			stored = false // once: its later events repeat the id
		}
		if !whole {
			return // its bytes went out above
		}
		if ev.UsageOnly && rec.UsageInjected {
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
				rec.Status, rec.ErrCode = statusClientClosed, w.gone()
				bufs = nil // netpoll may still be sending from it: not back to the pool
				return
			}
			rec.BytesOut += int64(len(out))
			return
		}
		if rerr == nil && done && len(bufs.out) > 0 && waiter != nil && waiter.WaitDataFor(doneWait) {
			continue // the end of the body (or more) has arrived: read it first
		}
		if out := bufs.out; len(out) > 0 {
			// Write through w, not c.Write: only w reports a client that left.
			if _, err := w.Write(out); err != nil || w.Flush() != nil {
				rec.Status, rec.ErrCode = statusClientClosed, w.gone()
				bufs = nil // netpoll may still be sending from it: not back to the pool
				return
			}
			rec.BytesOut += int64(len(out))
			bufs.out, done = bufs.out[:0], false
		}
		if rerr != nil {
			if ctx.Err() != nil {
				rec.Status, rec.ErrCode = statusClientClosed, "client_closed"
				return
			}
			e := brokenOff(upCtx, "stream", errUpstream(http.StatusBadGateway, "upstream_stream_broken",
				"The backend stopped the stream before it was complete."))
			rec.ErrCode, rec.ErrSource = e.code, e.source
			g.log.Warn("stream ended early", "backend", rec.Backend, "reason", e.code, "err", rerr)
			ev := appendErrorEvent(nil, e, x.api)
			if _, err := w.Write(ev); err == nil && w.Flush() == nil {
				rec.BytesOut += int64(len(ev))
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
//
// Long (about 80 lines) for relayStream's reason: one loop per read, its
// state in locals.
func (g *Gateway) relayLarge(ctx, upCtx context.Context, c *app.RequestContext, x *exchange, prefix []byte, deadline time.Time) {
	rec, res, idle, idleFor := &x.rec, x.up.res, x.timers.idle, x.timers.idleFor
	var w *chunkWriter // made with the first bytes: until then a clean error can still go out
	answer := sse.NewAnswerReaderAs(x.api.format)
	writeFailed := false
	send := func(p []byte) bool {
		if w == nil {
			w = newAnswerWriter(c, res.ContentLength)
			w.bound(c.GetConn(), deadline, time.Duration(g.client.send.Load()))
		}
		if _, err := w.Write(p); err != nil {
			rec.Status, rec.ErrCode = statusClientClosed, w.gone()
			w.abort(errAnswerCut)
			writeFailed = true
			return false
		}
		rec.BytesOut += int64(len(p))
		answer.Feed(p)
		return true
	}
	defer func() {
		// Cut after its first bytes (the client gone, the backend broken
		// off) and before its usage was read: the backend generated the
		// whole answer before sending any of it, so the request is billed
		// its reservation's worst case rather than its prompt alone.
		if w != nil && !rec.Usage.Found && !x.api.byID {
			rec.Generated = max(x.req.reserved-x.promptTokens(), rec.Generated)
		}
	}()
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
			rec.Status, rec.ErrCode = statusClientClosed, "client_closed"
			if w != nil {
				w.abort(errAnswerCut)
			}
			return
		}
		// (An end before any byte is a broken answer too: it was announced
		// past wholeAnswerMax.)
		e := brokenOff(upCtx, "answer", errUpstream(http.StatusBadGateway, "upstream_failed",
			"The backend closed the connection before the response was complete."))
		g.log.Warn("large answer ended early", "backend", rec.Backend, "reason", e.code, "sent", rec.BytesOut, "err", err)
		if w == nil {
			c.Response.Header.Reset()
			g.fail(c, rec, e, x.api.errors)
			return
		}
		rec.ErrCode, rec.ErrSource = e.code, e.source
		w.abort(errAnswerCut)
		return
	}
	if !x.api.byID { // a stored response fetched again is not billed again
		rec.Usage = answer.Usage()
		rec.FinishReason = answer.FinishReason()
		if x.stores() {
			x.place.storedID = answer.ResponseID() // remembered by end, with its usage
		}
	}
	// The end of the body, here under the write deadline rather than by
	// hertz's Finalize after it.
	if w.WriteLast(nil) != nil {
		rec.Status, rec.ErrCode = statusClientClosed, w.gone()
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
