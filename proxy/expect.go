package proxy

import (
	"github.com/cloudwego/hertz/pkg/app"
	"github.com/cloudwego/hertz/pkg/protocol"
)

// A request with "Expect: 100-continue" asks whether to send its body at
// all. hertz answered 100 Continue to every one before a handler ran, so a
// client with a wrong key, or a body over max_body, was invited to upload
// what would be refused (nginx refuses from the head). MayContinue is
// hertz's ContinueHandler: it invites only a body the gateway may read.

// MayContinue reports whether a request that expects 100-continue is
// invited to send its body: not when it declares more than max_body, nor
// when neither its Authorization bearer token nor its x-api-key is a key
// of the running configuration — unless its listener verifies client
// certificates (verifiedClient: every client there presented one the
// CAs signed) and some key is a client certificate's, which the phases
// then look up. It is never stricter than the phases after it (a key it
// lets through may still be refused there, with the body read as usual);
// a request it refuses gets its answer from the phases at once, its body
// unread, and its connection closed (expectRefused).
func (g *Gateway) MayContinue(h *protocol.RequestHeader, verifiedClient bool) bool {
	if int64(h.ContentLength()) > g.bodies.max.Load() {
		return false
	}
	rt := g.routes.current.Load()
	if rt == nil {
		return true
	}
	if verifiedClient && len(rt.certKeys) > 0 {
		return true
	}
	return rt.authenticate(bearerToken(h.Peek("Authorization"))) != nil ||
		rt.authenticate(h.Peek("X-Api-Key")) != nil
}

// expectRefused reports whether the request's 100-continue was refused
// (MayContinue): its body was never asked for, and the client may yet
// send it after its own wait, which would read as a next request — its
// answer must close the connection.
func expectRefused(c *app.RequestContext) bool {
	return c.Request.MayContinue() && !c.Request.IsBodyStream()
}
