package proxy

// A request: its state from phase to phase, released at its end.

import (
	"context"
	"net/http"
	"time"

	"github.com/cloudwego/hertz/pkg/app"

	"github.com/sluice-gw/sluice/jwtauth"
	"github.com/sluice-gw/sluice/proxy/admission"
	"github.com/sluice-gw/sluice/proxy/reqscan"
	"github.com/sluice-gw/sluice/proxy/tracing"
	"github.com/sluice-gw/sluice/proxy/usage"
)

// exchange is what a proxied request holds until it ends, released by end
// in the reverse order of its taking, and what its phases hand on to the
// next.
type exchange struct {
	api    *apiSpec
	rec    usage.Record // in the exchange: one allocation a request, not two
	routes *routeTable  // the table this request finishes on, whatever reloads come
	body   bodyState    // how much of the request body was read: how a refusal must treat the rest
	// What the phases find, in order: the request admitted (1–7), where
	// it may go (8), what the fair queue charged it, its upstream exchange
	// and the timeouts that bound it (9–11).
	req    admitted
	place  placement
	fair   fairCharge
	up     upstreamState
	timers deadlines
	fb     fallbackState    // its way down the model's fallback chains (fallback.go)
	quota  quotaHold        // what it reserved on its key's quotas and budget (quotas.go)
	trace  *tracing.Request // its span; nil: tracing off
}

// admitted is the request as phases 1–7 found it: its key and what its
// limits took, its body, what the scan read, its model, the body as it
// goes upstream.
type admitted struct {
	key     *keyRoute
	jwt     *jwtauth.Identity // the token's caller, if its key came from a JWT (jwt.go); nil: none
	adm     *admission.Admission
	held    *bodyHold
	payload []byte // the request body, until the answer starts flowing
	scan    reqscan.Request
	model   *modelRoute
	pieces  [][]byte // the body as sent upstream: its own bytes and the edits between them
	salt    string   // its cache_salt: its key's cache group's, with the client's mixed in
	// priorTokens is, for a follow-up of a stored response, the tokens of
	// the conversation it continues (the shared map's); 0 if unknown.
	priorTokens int64
	// reserved is the request's token reservation (phase 6): its worst
	// case, billed for a large answer cut before its usage was read.
	reserved int64
	endUser  endUserHold // what it took of its end user's limits (endusers.go)
	calNow   time.Time   // its moment on the quotas' calendar (calendarNow)
}

// placement is where the request may go (phase 8) and where it went.
type placement struct {
	candidates []*backendRoute
	stack      [16]*backendRoute // candidates' storage, for the usual few backends
	// blocks are the prompt's block hashes for the prefix index (prefix.go),
	// pooled; nil when the model does not use it. Released with the body.
	blocks *[]uint64
	// conv is its conversation's entry in the prefix index
	// (affinity.ConversationEntry), recorded with blocks; 0: none (a
	// request placed by its user, or without a key).
	conv uint64
	// owners are the candidates' models, for a request that names no
	// model (a stored response's id): each attempt runs under its
	// backend's model. nil: every candidate is x.req.model's.
	owners []*modelRoute
	// pinned: the request needs the one backend that holds a stored
	// response; each attempt asks one candidate, the next after a 404.
	pinned bool
	// holderDown: of a pinned request, the status of a candidate that
	// failed otherwise than with a 404 (502: no answer), 0 if none did.
	holderDown int
	backend    *backendRoute // the backend whose answer goes to the client
	// storedID is the id under which backend stored the answer (Responses
	// with store), for the shared map; "" if none.
	storedID string
}

// fairCharge is what the key's fair-queue finish tag was charged when the
// request took its first slot (prompt: its prompt's estimate; charged: it
// and the key's usual rest), settled against its usage at the end; 0:
// none yet.
type fairCharge struct {
	charged, chargedPrompt int64
}

// upstreamState is the request's upstream exchange.
type upstreamState struct {
	cancel  context.CancelCauseFunc // ends the upstream request
	upCtx   context.Context
	acancel context.CancelCauseFunc // the attempt's own context, if it has one
	slotOf  *modelRoute             // the model whose slot on backend the request holds; nil: none
	res     *http.Response
	prefix  []byte // a stream's first bytes, read before committing to its backend; a large answer's
	large   bool   // a whole answer past wholeAnswerMax: relayed as it arrives
	// firstTokenArmed: this attempt runs under first_token_deadline (one
	// retry at most: it is disarmed once it fired).
	firstTokenArmed bool
}

// deadlines are the timeouts of the upstream exchange.
type deadlines struct {
	total    *time.Timer
	deadline time.Time   // when total fires: a relay's writes to the client end then too
	idle     *time.Timer // streams only: silence before the headers counts too
	idleFor  time.Duration
}

// stores reports whether the backend keeps this request's answer for
// follow-ups (the Responses API, store not false): only those ids go in the
// shared map, so that answers nobody can follow up (store: false) do not
// push other clients' ids out of it (issue 30, item 8).
func (x *exchange) stores() bool { return x.api.stored && x.req.scan.Store }

// bodyState is how much of a request's body the gateway has read, which
// decides how a refusal goes out (reject).
type bodyState uint8

const (
	bodyUnread bodyState = iota // not a byte read: drained if small, else the connection closes
	bodyCut                     // read in part (too large, too slow): the connection closes
	bodyRead                    // read whole: the connection is kept
)

// end releases what the request held and writes its usage line.
func (g *Gateway) end(x *exchange) {
	if x.up.res != nil {
		x.up.res.Body.Close()
	}
	if x.up.slotOf != nil {
		g.releaseSlot(x.up.slotOf, x.place.backend)
		x.up.slotOf = nil // a slot is given back once, whatever calls end again
	}
	x.releaseBlocks()
	if x.up.acancel != nil {
		x.up.acancel(nil)
	}
	x.stopUpstream()
	if x.place.backend != nil && !x.api.byID && !x.api.unbilled {
		x.rec.CountUsage(x.promptEstimate())
	}
	if m := x.req.model; m != nil && m.limits.price != nil && x.rec.Usage.Found && !x.api.byID && !x.api.unbilled {
		// What the model that served it charges for the usage as billed
		// (the backend's, or the gateway's count of a cut stream); a
		// stored response fetched again is not generated again.
		x.rec.Priced, x.rec.CostPico = true, m.limits.price.Of(usage.Billable(x.rec.Usage))
	}
	if x.place.storedID != "" {
		// Where the response is held, and how long its conversation is: a
		// follow-up reserves that much (limitTokens).
		g.remember(x.place.storedID, x.place.backend, x.rec.Usage.Total)
	}
	if x.req.adm != nil {
		x.req.adm.Release(x.rec.Usage.Total, x.rec.Usage.Found)
	}
	if x.req.key != nil {
		g.releaseQuotas(x, true)
		x.releaseEndUser(usage.Billable(x.rec.Usage).Total, x.rec.Usage.Found)
	}
	if x.fair.charged > 0 && x.rec.Usage.Found {
		x.req.key.fair.Settle(x.fair.chargedPrompt, x.fair.charged, x.rec.Usage.Total)
	}
	if x.req.held != nil {
		x.req.held.release()
	}
	if x.routes != nil {
		x.routes.refs.Add(-1)
	}
	if x.trace != nil {
		g.endTrace(x, time.Now())
	}
	g.finish(&x.rec)
}

// stopUpstream stops the upstream exchange's timers and ends its context
// (end, and a model that gives way to a fallback: resetUpstream).
func (x *exchange) stopUpstream() {
	if x.timers.idle != nil {
		x.timers.idle.Stop()
	}
	if x.timers.total != nil {
		x.timers.total.Stop()
	}
	if x.up.cancel != nil {
		x.up.cancel(nil)
	}
}

// reject answers the request with e, the one way every phase's failure
// goes out: in the API's error shape, with e's Retry-After, and as the
// body's state allows — a body not read yet is drained or left unread
// (refuseUnread), one read in part closes the connection (refuse). A
// client that left gets nothing, only its usage line (499).
func (g *Gateway) reject(c *app.RequestContext, x *exchange, e *apiError) {
	rec := &x.rec
	if e.status == statusClientClosed {
		rec.Failed(e.status, e.code, e.source)
		return
	}
	if e.retryAfter != "" {
		c.Response.Header.Set("Retry-After", e.retryAfter)
	}
	switch x.body {
	case bodyUnread:
		g.refuseUnread(c, rec, e, x.api.errors)
	case bodyCut:
		g.refuse(c, rec, e, x.api.errors)
	default:
		g.fail(c, rec, e, x.api.errors)
	}
}
