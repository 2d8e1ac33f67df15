package proxy

// Keys from an identity provider (auth.jwt; package jwtauth): a bearer
// token that is no static key but a JWT is verified against the
// provider's key set, and is the request of the key its key_claim names
// (a keys[] entry with jwt: true) — that key's models, narrowed by the
// token's models claim, and its limits in its own cells, the cells a
// static token of that key would use. The token's other claims can name
// its end user (end_user.from: claim:<name>), for limits per caller.

import (
	"fmt"
	"reflect"
	"time"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/jwtauth"
)

// jwtAuth is auth.jwt compiled: its verifier and the loader that keeps
// its key set, carried over a reload that keeps the block.
type jwtAuth struct {
	conf     config.JWT
	verifier *jwtauth.Verifier
	loader   *jwtauth.Loader
}

// newJWTAuth is auth.jwt's verifier, its key set loaded once (a failure
// is logged: tokens are refused until a later load succeeds); nil for no
// auth.jwt. old, when its block is the same, is carried instead, its set
// read again (a reload reads the configuration's files again).
func (g *Gateway) newJWTAuth(j *config.JWT, old *jwtAuth) *jwtAuth {
	if j == nil {
		return nil
	}
	if old != nil && reflect.DeepEqual(old.conf, *j) {
		old.loader.Reload() //nolint:errcheck // logged; the set loaded before is kept
		return old
	}
	v := jwtauth.NewVerifier(jwtauth.Policy{Issuers: j.Issuers, Audiences: j.Audiences, KeyClaim: j.KeyClaim,
		ModelsClaim: j.ModelsClaim, Algorithms: j.AlgorithmsOrDefault(), Leeway: j.LeewayOrDefault()})
	l, _ := jwtauth.NewLoader(jwtauth.Source{File: j.JWKSFile, URL: j.JWKSURL, Refresh: j.RefreshOrDefault()}, v, g.log)
	l.Start()
	return &jwtAuth{conf: *j, verifier: v, loader: l}
}

// close ends a's refresh loop (nil: none).
func (a *jwtAuth) close() {
	if a != nil {
		a.loader.Close()
	}
}

// byJWT returns the key of token, a JWT, and what it says of its caller;
// or the 401 that says why it is refused.
func (t *routeTable) byJWT(a *apiSpec, token []byte) (*keyRoute, *jwtauth.Identity, *apiError) {
	id, err := t.jwt.verifier.Verify(token, time.Now())
	if err != nil {
		return nil, nil, jwtRefused(a, "The token is refused: "+err.Reason+".")
	}
	for _, name := range id.Keys { // a list claim's first that is a key here
		if key := t.jwtKeys[name]; key != nil {
			return key, id, nil
		}
	}
	if len(id.Keys) > 1 {
		return nil, nil, jwtRefused(a, fmt.Sprintf("The token's key claim names %d keys (`%s`, …), none of which takes tokens here.", len(id.Keys), clipID(id.Key, 80)))
	}
	return nil, nil, jwtRefused(a, "The token names the key `"+clipID(id.Key, 80)+"`, which takes no tokens here.")
}

// jwtRefused is a token's 401, in the API's shape (invalid_api_key, as
// for a wrong static key: the SDKs read it as an authentication error).
func jwtRefused(a *apiSpec, msg string) *apiError {
	e := errUnauthorized(a, true)
	e.message = msg
	return e
}

// may reports whether the request's key, and its token if it came with
// one, may use the model m.
func (r *admitted) may(m *modelRoute) bool {
	return r.key.allows(m.name) && r.jwt.Allows(m.name)
}
