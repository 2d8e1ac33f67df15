package tests

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// idp is a fake identity provider: signing keys by kid, and the JWKS of
// the ones it publishes, served over HTTP.
type idp struct {
	mu        sync.Mutex
	keys      map[string]crypto.Signer
	published []string
	srv       *httptest.Server
}

func newIDP(t *testing.T) *idp {
	p := &idp{keys: map[string]crypto.Signer{}}
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	ek, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	_, dk, _ := ed25519.GenerateKey(rand.Reader)
	rk2, _ := rsa.GenerateKey(rand.Reader, 2048)
	p.keys["rsa-1"], p.keys["ec-1"], p.keys["ed-1"], p.keys["rsa-2"] = rk, ek, dk, rk2
	p.published = []string{"rsa-1", "ec-1", "ed-1"}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write(p.jwks()) //nolint:errcheck
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// jwks is the set of the keys p publishes.
func (p *idp) jwks() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	var set jose.JSONWebKeySet
	for _, kid := range p.published {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: p.keys[kid].Public(), KeyID: kid, Use: "sig"})
	}
	b, _ := json.Marshal(set)
	return b
}

func (p *idp) publish(kids ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.published = kids
}

// token is claims signed with kid's key.
func (p *idp) token(t *testing.T, kid string, claims map[string]any) string {
	t.Helper()
	alg := map[string]jose.SignatureAlgorithm{"rsa": jose.RS256, "ec": jose.ES256, "ed": jose.EdDSA}[kid[:strings.IndexByte(kid, '-')]]
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: p.keys[kid]}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// teamClaims are a valid token's claims for team-a, with extra set (nil
// deletes).
func teamClaims(extra ...any) map[string]any {
	c := map[string]any{"iss": "https://idp.test", "aud": []string{"other", "sluice"}, "sub": "svc-1", "team": "team-a",
		"exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Add(-time.Minute).Unix()}
	for i := 0; i+1 < len(extra); i += 2 {
		if extra[i+1] == nil {
			delete(c, extra[i].(string))
		} else {
			c[extra[i].(string)] = extra[i+1]
		}
	}
	return c
}

// jwtConfig: auth.jwt over p's JWKS; key team-a takes tokens (and a
// static token), 4 requests a minute, each caller (sub) 2; team-b takes
// tokens for model m only.
func jwtConfig(be *fakevllm.Server, p *idp, usage string) string {
	cfg := baseConfig(be.URL(), usage, fmt.Sprintf(`auth:
  jwt:
    jwks_url: %s/jwks
    jwks_refresh: 1h
    issuers: [https://idp.test]
    audiences: [sluice]
    key_claim: team
    models_claim: models
`, p.srv.URL))
	return strings.Replace(cfg, "keys:\n", fmt.Sprintf(`keys:
  - name: team-a
    sha256: %s
    jwt: true
    models: ["*"]
    requests_per_minute: 4
    end_user: {from: "claim:sub", requests_per_minute: 2}
  - name: team-b
    jwt: true
    models: ["m"]
`, sha("sk-team-a-static")), 1)
}

// Tokens of the identity provider are their key's requests: each of the
// three algorithms, the key's limits shared with its static token (the
// same cells), each caller's own limit by its sub, models narrowed by the
// token; every bad token refused 401 with its reason; a rotated key set
// picked up (an unknown kid loads it sooner), a removed key's tokens
// refused even though they were verified before.
func TestJWTKeys(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 2})
	p := newIDP(t)
	usage := filepath.Join(t.TempDir(), "usage.log")
	g := startGateway(t, jwtConfig(be, p, usage))
	g.UsageLog = usage
	chat := []byte(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`)
	ask := func(token string, body []byte) (*http.Response, []byte) {
		t.Helper()
		return post(t, freshClient(), g.URL+"/v1/chat/completions", token, body, nil)
	}

	// Each algorithm, all as caller svc-1: its limit of 2 a minute (by
	// its sub) refuses the third; that refusal costs the key nothing.
	for i, kid := range []string{"rsa-1", "ec-1", "ed-1"} {
		res, out := ask(p.token(t, kid, teamClaims()), chat)
		if i == 2 {
			if _, code, _ := openError(t, out); res.StatusCode != 429 || code != "end_user_rate_limit_exceeded" {
				t.Fatalf("svc-1's third request (%s): %d %s", kid, res.StatusCode, out)
			}
			if res, out := ask(p.token(t, kid, teamClaims("sub", "svc-2")), chat); res.StatusCode != 200 {
				t.Fatalf("%s: %d %s", kid, res.StatusCode, out)
			}
			continue
		}
		if res.StatusCode != 200 {
			t.Fatalf("%s: %d %s", kid, res.StatusCode, out)
		}
		line := g.usageLineFor(t, res.Header.Get("X-Request-Id"))
		if line["key"] != "team-a" || line["jwt_subject"] != "svc-1" || line["end_user"] != "svc-1" {
			t.Errorf("%s: usage line key %v jwt_subject %v end_user %v", kid, line["key"], line["jwt_subject"], line["end_user"])
		}
	}
	// The static token of team-a shares its cell: the 4th request a
	// minute passes, the 5th is refused, by JWT as by token.
	res, out := ask("sk-team-a-static", chat)
	if res.StatusCode != 200 {
		t.Fatalf("static token: %d %s", res.StatusCode, out)
	}
	if line := g.usageLineFor(t, res.Header.Get("X-Request-Id")); line["jwt_subject"] != nil || line["end_user"] != "" {
		t.Errorf("static token: usage line jwt_subject %v end_user %v", line["jwt_subject"], line["end_user"])
	}
	res, out = ask(p.token(t, "ec-1", teamClaims("sub", "svc-9")), chat)
	if _, code, _ := openError(t, out); res.StatusCode != 429 || code != "rate_limit_exceeded" {
		t.Fatalf("team-a's 5th request, by JWT: %d %s", res.StatusCode, out)
	}

	// team-b: a caller's own limit (sub) and models narrowed.
	b := func(extra ...any) string {
		return p.token(t, "rsa-1", teamClaims(append([]any{"team", "team-b"}, extra...)...))
	}
	if res, out := ask(b(), chat); res.StatusCode != 200 {
		t.Fatalf("team-b: %d %s", res.StatusCode, out)
	}
	alias := []byte(`{"model":"m-alias","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`)
	if res, out := ask(b(), alias); res.StatusCode != 403 {
		t.Fatalf("team-b, a model its key lacks: %d %s", res.StatusCode, out)
	}
	if res, out := ask(b("models", []string{"m-alias"}), chat); res.StatusCode != 403 {
		t.Fatalf("a token narrowed to m-alias asked for m: %d %s", res.StatusCode, out)
	}
	if res, out := ask(b("models", "m other"), chat); res.StatusCode != 200 {
		t.Fatalf("a token narrowed to m: %d %s", res.StatusCode, out)
	}
	// A key claim that is a list (groups): its first value that is a key
	// taking tokens; team-b's, by its model check (m-alias is not its).
	groups := p.token(t, "rsa-1", teamClaims("team", []string{"everyone", "all", "team-b", "team-a"}))
	if res, out := ask(groups, alias); res.StatusCode != 403 {
		t.Fatalf("groups [everyone all team-b team-a], a model team-b lacks: %d %s (not team-b's request)", res.StatusCode, out)
	}
	if res, out := ask(groups, chat); res.StatusCode != 200 {
		t.Fatalf("groups [everyone all team-b team-a]: %d %s", res.StatusCode, out)
	}

	// Bad tokens: each a 401 invalid_api_key with its reason.
	rsaPub, _ := x509.MarshalPKIXPublicKey(p.keys["rsa-1"].Public())
	hs, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: rsaPub})},
		(&jose.SignerOptions{}).WithHeader("kid", "rsa-1"))
	confused, _ := jwt.Signed(hs).Claims(teamClaims()).Serialize()
	payload, _ := json.Marshal(teamClaims())
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","kid":"rsa-1"}`)) + "." + base64.RawURLEncoding.EncodeToString(payload) + "."
	good := strings.Split(p.token(t, "rsa-1", teamClaims()), ".")
	forged, _ := json.Marshal(teamClaims("team", "team-b", "sub", "forged"))
	tampered := good[0] + "." + base64.RawURLEncoding.EncodeToString(forged) + "." + good[2]
	for _, c := range []struct{ name, token, reason string }{
		{"alg none", none, `alg "none" is not accepted`},
		{"HS256 keyed by the public key", confused, `alg "HS256" is not accepted`},
		{"expired", p.token(t, "rsa-1", teamClaims("exp", time.Now().Add(-2*time.Minute).Unix())), "expired"},
		{"not yet valid", p.token(t, "rsa-1", teamClaims("nbf", time.Now().Add(10*time.Minute).Unix())), "not valid before"},
		{"no expiry", p.token(t, "rsa-1", teamClaims("exp", nil)), "no expiry"},
		{"other issuer", p.token(t, "rsa-1", teamClaims("iss", "https://evil.test")), "issuer"},
		{"other audience", p.token(t, "rsa-1", teamClaims("aud", "other")), "audience"},
		{"tampered", tampered, "signature does not verify"},
		{"unknown key", p.token(t, "rsa-1", teamClaims("team", "all")), "takes no tokens here"},
		{"no key claim", p.token(t, "rsa-1", teamClaims("team", nil)), `claim "team"`},
		{"groups naming no key of tokens", p.token(t, "rsa-1", teamClaims("team", []string{"everyone", "all"})), "none of which takes tokens here"},
		{"key not published", p.token(t, "rsa-2", teamClaims()), `kid "rsa-2"`},
	} {
		res, out := ask(c.token, chat)
		_, code, msg := openError(t, out)
		if res.StatusCode != 401 || code != "invalid_api_key" || !strings.Contains(msg, c.reason) {
			t.Errorf("%s: %d %s, want 401 invalid_api_key saying %q", c.name, res.StatusCode, out, c.reason)
		}
	}

	// The official SDK sends a token as its API key.
	client := openai.NewClient(option.WithBaseURL(g.URL+"/v1/"), option.WithAPIKey(b("sub", "sdk")), option.WithMaxRetries(0))
	if _, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}); err != nil {
		t.Fatalf("SDK: %v", err)
	}

	// Rotation: rsa-2 published in place of rsa-1. A token of rsa-2
	// makes each worker load the set again (at most every 10 s): it is
	// admitted on both within the deadline; rsa-1's tokens, admitted
	// before, are refused from then on.
	old := b("sub", "rotation-old")
	if res, out := ask(old, chat); res.StatusCode != 200 {
		t.Fatalf("before rotation: %d %s", res.StatusCode, out)
	}
	p.publish("rsa-2", "ec-1", "ed-1")
	fresh := p.token(t, "rsa-2", teamClaims("team", "team-b", "sub", "rotation-new"))
	inARow := 0 // admitted on fresh connections, so by both workers
	await(t, "the rotated key to be admitted by both workers", func() bool {
		if res, _ := ask(fresh, chat); res.StatusCode == 200 {
			inARow++
		} else {
			inARow = 0
		}
		return inARow >= 8
	})
	for i := range 4 {
		if res, out := ask(old, chat); res.StatusCode != 401 {
			t.Fatalf("a token of the removed key, try %d: %d %s", i, res.StatusCode, out)
		}
	}
}

// A jwks_file is read again at a reload (SIGHUP), even one that changes
// nothing else: the rotated key is admitted by every worker at once, the
// removed one's tokens refused.
func TestJWTKeysFileReload(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 2})
	p := newIDP(t)
	jwks := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(jwks, p.jwks(), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := strings.Replace(jwtConfig(be, p, "off"), "jwks_url: "+p.srv.URL+"/jwks", "jwks_file: "+jwks, 1)
	g := startGateway(t, cfg)
	chat := []byte(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`)
	old := p.token(t, "rsa-1", teamClaims("team", "team-b"))
	fresh := p.token(t, "rsa-2", teamClaims("team", "team-b"))
	if res, out := post(t, freshClient(), g.URL+"/v1/chat/completions", old, chat, nil); res.StatusCode != 200 {
		t.Fatalf("before the reload: %d %s", res.StatusCode, out)
	}
	p.publish("rsa-2")
	if err := os.WriteFile(jwks, p.jwks(), 0o600); err != nil {
		t.Fatal(err)
	}
	g.reloadWith(cfg)
	for i := range 6 { // fresh connections: both workers
		if res, out := post(t, freshClient(), g.URL+"/v1/chat/completions", fresh, chat, nil); res.StatusCode != 200 {
			t.Fatalf("the new key after the reload, try %d: %d %s", i, res.StatusCode, out)
		}
		if res, out := post(t, freshClient(), g.URL+"/v1/chat/completions", old, chat, nil); res.StatusCode != 401 {
			t.Fatalf("the removed key after the reload, try %d: %d %s", i, res.StatusCode, out)
		}
	}
}

// Two identity providers, each with its own key set (auth.jwt's, and one
// of auth.jwt.providers): a token is verified only against the set of the
// issuer it names, so neither provider's key can sign for the other, even
// under the same kid; an issuer of neither is refused.
func TestJWTProviders(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 2})
	a, b := newIDP(t), newIDP(t) // the same kids, other keys
	cfg := strings.Replace(jwtConfig(be, a, "off"), "    models_claim: models\n",
		fmt.Sprintf("    models_claim: models\n    providers:\n      - {issuer: \"https://idp-b.test\", jwks_url: \"%s/jwks\"}\n", b.srv.URL), 1)
	g := startGateway(t, cfg)
	chat := []byte(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`)
	ofA := teamClaims("team", "team-b")
	ofB := teamClaims("team", "team-b", "iss", "https://idp-b.test")
	for _, c := range []struct {
		name, token string
		status      int
		reason      string
	}{
		{"a's token", a.token(t, "ec-1", ofA), 200, ""},
		{"b's token", b.token(t, "rsa-1", ofB), 200, ""},
		{"b's token by another kid", b.token(t, "ed-1", ofB), 200, ""},
		{"a's key signing for b", a.token(t, "rsa-1", ofB), 401, "signature does not verify"},
		{"b's key signing for a", b.token(t, "rsa-1", ofA), 401, "signature does not verify"},
		{"an issuer of neither", a.token(t, "rsa-1", teamClaims("team", "team-b", "iss", "https://evil.test")), 401, `issuer "https://evil.test" is not accepted`},
		{"no issuer", a.token(t, "rsa-1", teamClaims("team", "team-b", "iss", nil)), 401, `issuer "" is not accepted`},
	} {
		res, out := post(t, freshClient(), g.URL+"/v1/chat/completions", c.token, chat, nil)
		if res.StatusCode != c.status {
			t.Errorf("%s: %d %s, want %d", c.name, res.StatusCode, out, c.status)
			continue
		}
		if c.status != 200 {
			if _, code, msg := openError(t, out); code != "invalid_api_key" || !strings.Contains(msg, c.reason) {
				t.Errorf("%s: %s, want invalid_api_key saying %q", c.name, out, c.reason)
			}
		}
	}
}
