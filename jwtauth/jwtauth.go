// Package jwtauth admits callers by the JSON Web Tokens their identity
// provider signs (auth.jwt): it verifies a bearer JWT's signature against
// the provider's key set (a JWKS, from a file or a URL, refreshed in the
// background and kept when a refresh fails), checks its issuer, audience
// and times, and reads from its claims which of the gateway's keys it
// stands for and which models it narrows that key to.
//
// Verification is go-jose's (jwt.ParseSigned with the algorithms allowed,
// then the signature against the set's keys): nothing here reads a
// signature by hand. What is ours is the policy around it: only
// asymmetric algorithms (RS256, ES256, EdDSA by default; never "none" or
// HMAC, so a public key can never serve as an HMAC secret), only the
// set's public keys of the type the algorithm needs, an expiry required,
// and a bounded cache of verified tokens so that a caller that sends the
// same token with each request pays for its signature once.
package jwtauth

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Limits on what a token and a key set may be.
const (
	// MaxToken bounds a token's length: real ones are a few hundred bytes
	// to a few KiB; anything longer is refused unread.
	MaxToken = 16 << 10
	// MaxSetBytes bounds a key set's document (file or URL).
	MaxSetBytes = 1 << 20
	// MaxSetKeys bounds the keys a set may hold: a token without a "kid"
	// is tried against each key of its algorithm's type.
	MaxSetKeys = 64
	// MinRSABits is the smallest RSA modulus a set's key may have.
	MinRSABits = 2048
	// MaxKeyClaimValues bounds a key claim that is a list (a "groups"
	// claim): its values are tried in order for a key that takes tokens.
	MaxKeyClaimValues = 256
	// cacheMax bounds the verified tokens a Verifier remembers.
	cacheMax = 8192
)

// DefaultAlgorithms are the signature algorithms accepted when the
// configuration names none.
var DefaultAlgorithms = []string{"RS256", "ES256", "EdDSA"}

// Allowed are the algorithms that may be configured: asymmetric ones
// only.
var Allowed = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// Policy is what a token must be to be admitted, and where its claims
// name the key and the models.
type Policy struct {
	Issuers     []string // "iss" must be one of them
	Audiences   []string // "aud" must hold one of them
	KeyClaim    string   // the claim naming the key (keys[].name) the token stands for
	ModelsClaim string   // the claim narrowing the key's models; "": none
	Algorithms  []string // accepted "alg"s (of Allowed); nil: DefaultAlgorithms
	Leeway      time.Duration
}

// Identity is what a verified token says of its caller.
type Identity struct {
	Key string // the key it stands for: KeyClaim's value (its first, of a list)
	// Keys are KeyClaim's values, in the token's order (one, for a
	// string): the gateway takes the first that names a key of its.
	Keys    []string
	Subject string    // its "sub" ("" if none)
	Expiry  time.Time // its "exp"
	// Models are ModelsClaim's values: the only models the token may use
	// (within its key's); nil when the claim is not configured or absent.
	Models []string
	claims map[string]json.RawMessage
}

// Allows reports whether the token lets its caller use model (its key's
// models are checked apart). A nil Identity (a static key) allows all.
func (id *Identity) Allows(model string) bool {
	return id == nil || id.Models == nil || slices.Contains(id.Models, model)
}

// Claim is the value of the claim name as a string: a JSON string's
// value, a number's literal; ok false when the token lacks it or it is of
// another type (bad true).
func (id *Identity) Claim(name string) (v string, ok, bad bool) {
	if id == nil {
		return "", false, false
	}
	raw, found := id.claims[name]
	if !found || string(raw) == "null" {
		return "", false, false
	}
	switch raw[0] {
	case '"':
		if json.Unmarshal(raw, &v) != nil {
			return "", false, true
		}
		return v, true, false
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return string(raw), true, false
	}
	return "", false, true
}

// Error is a refused token: Reason says why, in words a caller can act on
// (it is sent back in the 401).
type Error struct{ Reason string }

func (e *Error) Error() string { return "jwt: " + e.Reason }

func refused(format string, args ...any) *Error { return &Error{Reason: fmt.Sprintf(format, args...)} }

// ErrNoKeys is Verify's error while the key set has never loaded.
var ErrNoKeys = &Error{Reason: "the gateway has not loaded its identity provider's keys (JWKS) yet"}

// LooksLikeJWT reports whether token has a JWS compact serialization's
// shape (three base64url parts, a JSON header first): a static key never
// does, so only such tokens are verified.
func LooksLikeJWT(token []byte) bool {
	if len(token) < 8 || token[0] != 'e' || token[1] != 'y' {
		return false
	}
	dots := 0
	for _, c := range token {
		switch {
		case c == '.':
			dots++
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_':
		default:
			return false
		}
	}
	return dots == 2
}

// Issuer is the "iss" token's payload names, unverified: only for
// choosing which identity provider's key set verifies it (the verifier
// then checks the verified "iss" against its own issuers: a payload read
// otherwise here is refused there). "" when it cannot be read.
func Issuer(token []byte) string {
	if len(token) > MaxToken {
		return ""
	}
	_, rest, _ := bytes.Cut(token, []byte{'.'})
	payload, _, ok := bytes.Cut(rest, []byte{'.'})
	if !ok {
		return ""
	}
	b := make([]byte, base64.RawURLEncoding.DecodedLen(len(payload)))
	n, err := base64.RawURLEncoding.Decode(b, payload)
	if err != nil {
		return ""
	}
	var c struct {
		Iss string `json:"iss"`
	}
	if json.Unmarshal(b[:n], &c) != nil {
		return ""
	}
	return c.Iss
}

// keySet is one loaded JWKS: its usable public keys.
type keySet struct {
	keys []jose.JSONWebKey
	gen  uint64 // which load it is: the cache holds tokens of one set only
}

// ParseSet reads a JWKS document and keeps the keys that can verify one
// of algs' signatures: public (a private key's public half), for
// signing, RSA of at least MinRSABits, EC on P-256/384/521 or Ed25519.
// skipped says which were left and why. An unreadable document, or one
// with no usable key, is an error.
func ParseSet(data []byte, algs []string) (keys []jose.JSONWebKey, skipped []string, err error) {
	if len(data) > MaxSetBytes {
		return nil, nil, fmt.Errorf("the key set is %d bytes, more than %d", len(data), MaxSetBytes)
	}
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, nil, fmt.Errorf("the key set is not a JWKS document: %v", err)
	}
	if len(doc.Keys) > MaxSetKeys {
		return nil, nil, fmt.Errorf("the key set has %d keys, more than %d", len(doc.Keys), MaxSetKeys)
	}
	for i, raw := range doc.Keys {
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(raw); err != nil {
			skipped = append(skipped, fmt.Sprintf("keys[%d]: %v", i, err))
			continue
		}
		if why := unusable(&k, algs); why != "" {
			skipped = append(skipped, fmt.Sprintf("keys[%d] (kid %q): %s", i, k.KeyID, why))
			continue
		}
		if !k.IsPublic() {
			k = k.Public()
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, skipped, fmt.Errorf("the key set has no key that can verify %s (%s)", strings.Join(algs, ", "), strings.Join(skipped, "; "))
	}
	return keys, skipped, nil
}

// unusable says why k cannot verify a token of algs, "" when it can.
func unusable(k *jose.JSONWebKey, algs []string) string {
	if k.Use != "" && k.Use != "sig" {
		return fmt.Sprintf("use %q, not sig", k.Use)
	}
	if k.Algorithm != "" && !slices.Contains(algs, k.Algorithm) {
		return fmt.Sprintf("alg %q is not accepted", k.Algorithm)
	}
	switch pk := publicKey(k.Key).(type) {
	case *rsa.PublicKey:
		if pk.N.BitLen() < MinRSABits {
			return fmt.Sprintf("RSA key of %d bits, under %d", pk.N.BitLen(), MinRSABits)
		}
	case *ecdsa.PublicKey, ed25519.PublicKey:
	default:
		return fmt.Sprintf("a %T key cannot verify an asymmetric signature", k.Key)
	}
	return ""
}

// publicKey is key's public half: key itself if it is public, or of a
// type that has none.
func publicKey(key any) any {
	switch pk := key.(type) {
	case *rsa.PrivateKey:
		return &pk.PublicKey
	case *ecdsa.PrivateKey:
		return &pk.PublicKey
	case ed25519.PrivateKey:
		return pk.Public()
	}
	return key
}

// fits reports whether k is of the type (and curve) alg signs with, and
// of that alg if it names one.
func fits(k *jose.JSONWebKey, alg string) bool {
	if k.Algorithm != "" && k.Algorithm != alg {
		return false
	}
	switch pk := publicKey(k.Key).(type) {
	case *rsa.PublicKey:
		return alg[:2] == "RS" || alg[:2] == "PS"
	case *ecdsa.PublicKey:
		switch alg {
		case "ES256":
			return pk.Curve == elliptic.P256()
		case "ES384":
			return pk.Curve == elliptic.P384()
		case "ES512":
			return pk.Curve == elliptic.P521()
		}
	case ed25519.PublicKey:
		return alg == "EdDSA"
	}
	return false
}

// Verifier verifies tokens under one Policy against the current key set.
// It is safe for concurrent use.
type Verifier struct {
	policy Policy
	algs   []jose.SignatureAlgorithm

	mu    sync.Mutex
	set   *keySet
	cache map[[sha256.Size]byte]*Identity
	// onUnknownKey is called (without mu) when a token names a kid the set
	// lacks: the provider may have rotated; the source refreshes early.
	onUnknownKey func()
}

// NewVerifier is a Verifier for p, with no key set until SetKeys.
func NewVerifier(p Policy) *Verifier {
	if p.Algorithms == nil {
		p.Algorithms = DefaultAlgorithms
	}
	v := &Verifier{policy: p, cache: map[[sha256.Size]byte]*Identity{}}
	for _, a := range p.Algorithms {
		v.algs = append(v.algs, jose.SignatureAlgorithm(a))
	}
	return v
}

// Algorithms are the policy's accepted algorithms.
func (v *Verifier) Algorithms() []string { return v.policy.Algorithms }

// SetKeys makes keys the set tokens are verified against; tokens
// verified against the set before are verified again.
func (v *Verifier) SetKeys(keys []jose.JSONWebKey) {
	v.mu.Lock()
	defer v.mu.Unlock()
	gen := uint64(1)
	if v.set != nil {
		gen = v.set.gen + 1
	}
	v.set = &keySet{keys: keys, gen: gen}
	clear(v.cache)
}

// HasKeys reports whether a key set has been loaded.
func (v *Verifier) HasKeys() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.set != nil
}

// Verify returns the identity of token at now, or why it is refused
// (*Error). A token verified before, under the same key set, is taken
// from the cache (its expiry checked again).
func (v *Verifier) Verify(token []byte, now time.Time) (*Identity, *Error) {
	if len(token) > MaxToken {
		return nil, refused("the token is %d bytes, more than %d", len(token), MaxToken)
	}
	sum := sha256.Sum256(token)
	v.mu.Lock()
	set, id := v.set, v.cache[sum]
	v.mu.Unlock()
	if set == nil {
		return nil, ErrNoKeys
	}
	if id != nil {
		if now.Add(-v.policy.Leeway).After(id.Expiry) {
			v.mu.Lock()
			delete(v.cache, sum)
			v.mu.Unlock()
			return nil, refused("the token expired at %s", id.Expiry.UTC().Format(time.RFC3339))
		}
		return id, nil
	}
	id, err := v.verify(string(token), set, now)
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	if v.set == set { // not a token of a set replaced meanwhile
		if len(v.cache) >= cacheMax {
			for k := range v.cache { // an arbitrary one: map order
				delete(v.cache, k)
				break
			}
		}
		v.cache[sum] = id
	}
	v.mu.Unlock()
	return id, nil
}

// verify checks token's signature against set and its claims against the
// policy.
func (v *Verifier) verify(token string, set *keySet, now time.Time) (*Identity, *Error) {
	tok, err := jwt.ParseSigned(token, v.algs)
	if err != nil {
		if alg := headerAlg(token); alg != "" && !slices.Contains(v.policy.Algorithms, alg) {
			return nil, refused("alg %q is not accepted (only %s)", alg, strings.Join(v.policy.Algorithms, ", "))
		}
		return nil, refused("the token is not a signed JWT: %v", trimJose(err))
	}
	if len(tok.Headers) != 1 {
		return nil, refused("the token has %d signatures, not one", len(tok.Headers))
	}
	h := tok.Headers[0]
	if h.JSONWebKey != nil || h.ExtraHeaders["jku"] != nil || h.ExtraHeaders["x5u"] != nil {
		// A key the token brings along is the caller's own: only the set's
		// keys are trusted (go-jose ignores these, refused all the same).
		return nil, refused("the token carries its own key (jwk, jku or x5u): only the identity provider's key set is trusted")
	}
	if h.ExtraHeaders["crit"] != nil {
		// RFC 7515 4.1.11: a verifier must refuse a token whose "crit"
		// names an extension it does not understand; this gateway
		// understands none (go-jose would refuse all but "b64" as a bad
		// signature: refused here first, saying why).
		return nil, refused("the token's header names critical extensions (crit), which this gateway does not understand")
	}
	var std jwt.Claims
	claims := map[string]json.RawMessage{}
	verified, kidKnown := false, false
	for i := range set.keys {
		k := &set.keys[i]
		if h.KeyID != "" && k.KeyID != h.KeyID {
			continue
		}
		kidKnown = true
		if !fits(k, h.Algorithm) {
			continue
		}
		if tok.Claims(k.Key, &std, &claims) == nil {
			verified = true
			break
		}
	}
	switch {
	case !kidKnown && h.KeyID != "":
		if f := v.onUnknownKey; f != nil {
			f()
		}
		return nil, refused("the token's key (kid %q) is not in the identity provider's key set", h.KeyID)
	case !verified:
		return nil, refused("the token's signature does not verify against the identity provider's key set")
	}
	if std.Expiry == nil {
		return nil, refused("the token has no expiry (exp)")
	}
	if !slices.Contains(v.policy.Issuers, std.Issuer) {
		return nil, refused("the token's issuer %q is not accepted", clip(std.Issuer))
	}
	switch err := std.ValidateWithLeeway(jwt.Expected{AnyAudience: v.policy.Audiences, Time: now}, v.policy.Leeway); {
	case err == nil:
	case errors.Is(err, jwt.ErrExpired):
		return nil, refused("the token expired at %s", std.Expiry.Time().UTC().Format(time.RFC3339))
	case errors.Is(err, jwt.ErrNotValidYet):
		return nil, refused("the token is not valid before %s", std.NotBefore.Time().UTC().Format(time.RFC3339))
	case errors.Is(err, jwt.ErrIssuedInTheFuture):
		return nil, refused("the token is issued in the future (iat %s)", std.IssuedAt.Time().UTC().Format(time.RFC3339))
	case errors.Is(err, jwt.ErrInvalidAudience):
		return nil, refused("the token's audience is not this gateway's")
	default:
		return nil, refused("%v", trimJose(err))
	}
	id := &Identity{Subject: std.Subject, Expiry: std.Expiry.Time(), claims: claims}
	keys, ok := keyList(claims[v.policy.KeyClaim])
	if !ok {
		return nil, refused("the token's claim %q names no key: it must be a string, or a list of at most %d strings (none empty)", v.policy.KeyClaim, MaxKeyClaimValues)
	}
	id.Key, id.Keys = keys[0], keys
	if c := v.policy.ModelsClaim; c != "" {
		if raw, found := claims[c]; found {
			if id.Models, ok = modelList(raw); !ok {
				return nil, refused("the token's claim %q is neither a string of model names nor a list of them", c)
			}
		}
	}
	return id, nil
}

// keyList is a key claim's names: a string, or a list of 1 to
// MaxKeyClaimValues strings (a "groups" claim), none empty.
func keyList(raw json.RawMessage) ([]string, bool) {
	if len(raw) == 0 {
		return nil, false
	}
	var s string
	if raw[0] == '"' && json.Unmarshal(raw, &s) == nil && s != "" {
		return []string{s}, true
	}
	var list []string
	if raw[0] != '[' || json.Unmarshal(raw, &list) != nil || len(list) == 0 || len(list) > MaxKeyClaimValues || slices.Contains(list, "") {
		return nil, false
	}
	return list, true
}

// modelList is a models claim's names: a list of strings, or a string of
// names separated by spaces (as OAuth's "scope").
func modelList(raw json.RawMessage) ([]string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return append([]string{}, strings.Fields(s)...), true
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return append([]string{}, list...), true
	}
	return nil, false
}

// headerAlg is the "alg" of token's header, "" if it cannot be read: for
// saying why a token go-jose refused was refused.
func headerAlg(token string) string {
	head, _, _ := strings.Cut(token, ".")
	b, err := base64.RawURLEncoding.DecodeString(head)
	if err != nil {
		return ""
	}
	var h struct {
		Alg string `json:"alg"`
	}
	if json.Unmarshal(b, &h) != nil {
		return ""
	}
	return clip(h.Alg)
}

// trimJose drops go-jose's prefix from err's text.
func trimJose(err error) string {
	s := err.Error()
	for _, p := range []string{"go-jose/go-jose/jwt: ", "go-jose/go-jose: "} {
		s = strings.TrimPrefix(s, p)
	}
	return clip(s)
}

// clip bounds a caller's text quoted back to it.
func clip(s string) string {
	if len(s) > 100 {
		return s[:100] + "…"
	}
	return s
}
