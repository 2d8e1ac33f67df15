package proxy

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/cloudwego/hertz/pkg/app"
	"github.com/zeebo/xxh3"
)

// Stored responses. vLLM keeps the Responses API's answers in its own
// memory (with VLLM_ENABLE_RESPONSES_API_STORE=1), so a request that names
// one — a follow-up turn's previous_response_id, or GET/DELETE
// /v1/responses/{id} and POST /v1/responses/{id}/cancel — is served only
// by the backend that made it. Every worker records, in the shared
// region's bounded map (shm Remember/Recall), which backend answered each
// response id it relayed; a request naming an id goes there first. The map
// forgets (it is bounded, a region is new after a restart, another gateway
// replica made the response): so a backend that answers 404 for the id,
// before anything reached the client, passes the request on to the next
// candidate, until one has it or all were asked (classify).

// holderHash is how the shared map names a backend: by its URL, so that the
// same server listed under two models, or after a reload, is the same
// holder. It takes the low holderBits of the map's value (odd: never 0).
func holderHash(url string) uint64 { return xxh3.HashString(url)&holderMask | 1 }

// A value of the shared map is the holder's hash in its low holderBits and,
// above them, the tokens of the stored response's conversation (its usage's
// total: prompt, which holds every earlier turn, and output), which a
// follow-up's token reservation counts — vLLM prepends that conversation to
// the follow-up's input (issue 30, item 4). 24 bits: 16.7 million tokens,
// saturated past them.
const (
	holderBits = 40
	holderMask = 1<<holderBits - 1
	maxStored  = 1<<(64-holderBits) - 1
)

// storedValue is the map's value for a response held by the backend of
// hash holder whose conversation is tokens long (0: not known yet).
func storedValue(holder uint64, tokens int64) uint64 {
	return uint64(min(max(tokens, 0), maxStored))<<holderBits | holder&holderMask
}

// storedKey is the shared map's key of a stored response's id.
func storedKey(id string) uint64 { return xxh3.HashString(id) }

// remember records that backend b holds the response id, whose
// conversation is tokens long (0: not known yet).
func (g *Gateway) remember(id string, b *backendRoute, tokens int64) {
	if id != "" && b != nil {
		g.region.Remember(storedKey(id), storedValue(b.urlHash, tokens))
	}
}

// recalled returns, for a follow-up of the stored response id, the backend
// hash of its holder and the tokens of the conversation it continues (0
// when not known); ok is false when the map does not know the id.
func (g *Gateway) recalled(id string) (holder uint64, tokens int64, ok bool) {
	v, ok := g.region.Recall(storedKey(id))
	return v & holderMask, int64(v >> holderBits), ok
}

// holderFirst moves the candidate the shared map names as the holder of
// id to the front of x.place.candidates (and its owner with it, when x.place.owners is
// not nil), leaving the others in their order. A holder that listed says
// is configured but that is not a candidate — out of rotation now — may
// hold the response all the same: the others' 404 must then not be the
// client's answer (x.place.holderDown; classify).
func (g *Gateway) holderFirst(id string, x *exchange, listed func(holder uint64) bool) {
	h, _, ok := g.recalled(id)
	if !ok {
		return
	}
	cands, owners := x.place.candidates, x.place.owners
	for i, b := range cands {
		if b.urlHash == h {
			copy(cands[1:i+1], cands[:i])
			cands[0] = b
			if owners != nil {
				o := owners[i]
				copy(owners[1:i+1], owners[:i])
				owners[0] = o
			}
			return
		}
	}
	if listed(h) {
		x.place.holderDown = http.StatusServiceUnavailable
	}
}

// storedPhases are the phases of a request on a stored response by its id:
// no model in a body, so the route is to where the id is held.
var storedPhases = [...]phase{
	(*Gateway).authenticate, // 1
	(*Gateway).limitKey,     // 2
	(*Gateway).readRequest,  // 3 (a cancel may carry a body; usually none)
	(*Gateway).routeStored,  // 5 and 8
	(*Gateway).callUpstream, // 10
}

// routeStored makes the candidates of a request on the stored response
// named in the path: every healthy backend of the models the key may use
// (each server once), the one the shared map names first.
func (g *Gateway) routeStored(_ context.Context, c *app.RequestContext, x *exchange) *apiError {
	id := c.Param("id")
	seen := map[uint64]bool{}   // each server once
	listed := map[uint64]bool{} // every backend that could hold it, in rotation or not
	now := time.Now()
	eligible := false
	for _, m := range x.routes.order {
		if !x.req.may(m) || !m.serves(x.api) {
			continue
		}
		eligible = true
		for _, b := range m.backends {
			listed[b.urlHash] = true
			if !seen[b.urlHash] && b.healthy(now) {
				seen[b.urlHash] = true
				x.place.candidates = append(x.place.candidates, b)
				x.place.owners = append(x.place.owners, m)
			}
		}
	}
	if !eligible {
		// No model the key may use serves Responses: no backend could
		// hold the response for this key (not a health problem: a 503
		// would invite retries that can never succeed).
		e := errInvalid(http.StatusNotFound, "response_not_found",
			fmt.Sprintf("Response with id '%s' not found.", clip(id)))
		e.param = "response_id"
		return e
	}
	if len(x.place.candidates) == 0 {
		return errServer(http.StatusServiceUnavailable, "no_healthy_backend",
			fmt.Sprintf("No backend that could hold response `%s` is healthy right now.", clip(id)))
	}
	g.holderFirst(id, x, func(h uint64) bool { return listed[h] })
	x.req.model, x.place.pinned = x.place.owners[0], true
	x.req.pieces = [][]byte{x.req.payload}
	if len(x.req.payload) == 0 {
		x.req.pieces = nil
	}
	return nil
}
