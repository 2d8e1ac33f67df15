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
	"slices"
	"strconv"
	"time"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/jwtauth"
)

// jwtAuth is auth.jwt compiled: a verifier per key set (its own, then
// each of its providers') and the loader that keeps the set, carried over
// a reload that keeps the block.
type jwtAuth struct {
	conf config.JWT
	sets []jwtSet
}

// jwtSet is one key set of auth.jwt: the issuers it signs for.
type jwtSet struct {
	issuers  []string
	verifier *jwtauth.Verifier
	loader   *jwtauth.Loader
}

// newJWTAuth is auth.jwt's verifiers, each key set loaded once (a failure
// is logged: that set's tokens are refused until a later load succeeds);
// nil for no auth.jwt. old, when its block is the same, is carried
// instead, its sets read again (a reload reads the configuration's files
// again).
func (g *Gateway) newJWTAuth(j *config.JWT, old *jwtAuth) *jwtAuth {
	if j == nil {
		return nil
	}
	if old != nil && reflect.DeepEqual(old.conf, *j) {
		for _, s := range old.sets {
			s.loader.Reload() //nolint:errcheck // logged; the set loaded before is kept
		}
		return old
	}
	a := &jwtAuth{conf: *j}
	for _, src := range j.Sources() {
		// Each set verifies its own issuers' tokens only: a provider's key
		// can sign for no other.
		v := jwtauth.NewVerifier(jwtauth.Policy{Issuers: src.Issuers, Audiences: j.Audiences, KeyClaim: j.KeyClaim,
			ModelsClaim: j.ModelsClaim, Algorithms: j.AlgorithmsOrDefault(), Leeway: j.LeewayOrDefault()})
		l, _ := jwtauth.NewLoader(jwtauth.Source{File: src.File, URL: src.URL, Refresh: src.Refresh}, v, g.log)
		l.Start()
		a.sets = append(a.sets, jwtSet{issuers: src.Issuers, verifier: v, loader: l})
	}
	return a
}

// close ends a's refresh loops (nil: none).
func (a *jwtAuth) close() {
	if a != nil {
		for _, s := range a.sets {
			s.loader.Close()
		}
	}
}

// verifierOf is the verifier of token's key set: the only one, or the one
// whose issuers hold the issuer its payload names (read unverified, only
// to choose; the verifier checks the verified one); nil: none.
func (a *jwtAuth) verifierOf(token []byte) *jwtauth.Verifier {
	if len(a.sets) == 1 {
		return a.sets[0].verifier
	}
	iss := jwtauth.Issuer(token)
	for _, s := range a.sets {
		if slices.Contains(s.issuers, iss) {
			return s.verifier
		}
	}
	return nil
}

// byJWT returns the key of token, a JWT, and what it says of its caller;
// or the 401 that says why it is refused.
func (t *routeTable) byJWT(a *apiSpec, token []byte) (*keyRoute, *jwtauth.Identity, *apiError) {
	v := t.jwt.verifierOf(token)
	if v == nil {
		return nil, nil, jwtRefused(a, "The token is refused: its issuer "+strconv.Quote(clipID(jwtauth.Issuer(token), 100))+" is not accepted.")
	}
	id, err := v.Verify(token, time.Now())
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
