package jwtauth

import (
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
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/sluice-gw/sluice/config"
)

// signers are one key of each accepted kind, generated once.
var signers = sync.OnceValue(func() map[string]crypto.Signer {
	r, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	e, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	_, d, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	return map[string]crypto.Signer{"RS256": r, "ES256": e, "EdDSA": d}
})

// setOf is the JWKS of the public halves of algs' signers, kid = alg.
func setOf(t testing.TB, algs ...string) []byte {
	t.Helper()
	var set jose.JSONWebKeySet
	for _, a := range algs {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: signers()[a].Public(), KeyID: a, Use: "sig", Algorithm: a})
	}
	b, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sign is a token of claims signed by alg's signer (kid: the alg, or kid
// when given).
func sign(t testing.TB, alg string, claims map[string]any, kid ...string) string {
	t.Helper()
	id := alg
	if len(kid) > 0 {
		id = kid[0]
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.SignatureAlgorithm(alg), Key: signers()[alg]},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", id))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

var now = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

func claims(extra ...any) map[string]any {
	c := map[string]any{"iss": "https://idp.example", "aud": "sluice", "sub": "svc-1", "team": "team-a",
		"exp": now.Add(time.Hour).Unix(), "iat": now.Add(-time.Minute).Unix()}
	for i := 0; i+1 < len(extra); i += 2 {
		if extra[i+1] == nil {
			delete(c, extra[i].(string))
		} else {
			c[extra[i].(string)] = extra[i+1]
		}
	}
	return c
}

func verifier(t testing.TB, algs ...string) *Verifier {
	t.Helper()
	v := NewVerifier(Policy{Issuers: []string{"https://other", "https://idp.example"}, Audiences: []string{"sluice"},
		KeyClaim: "team", ModelsClaim: "models", Leeway: 30 * time.Second})
	keys, skipped, err := ParseSet(setOf(t, algs...), v.Algorithms())
	if err != nil || len(skipped) > 0 {
		t.Fatal(err, skipped)
	}
	v.SetKeys(keys)
	return v
}

func TestAcceptsEachAlgorithm(t *testing.T) {
	v := verifier(t, "RS256", "ES256", "EdDSA")
	for _, alg := range []string{"RS256", "ES256", "EdDSA"} {
		id, err := v.Verify([]byte(sign(t, alg, claims())), now)
		if err != nil {
			t.Fatalf("%s: %v", alg, err)
		}
		if id.Key != "team-a" || id.Subject != "svc-1" || id.Models != nil || !id.Expiry.Equal(now.Add(time.Hour)) {
			t.Fatalf("%s: %+v", alg, id)
		}
	}
	// No kid: each key of the algorithm's type is tried.
	tok := sign(t, "ES256", claims(), "")
	if _, err := v.Verify([]byte(tok), now); err != nil {
		t.Fatalf("no kid: %v", err)
	}
}

// unsigned is a token with header and claims and the given signature part.
func unsigned(header string, c map[string]any, sig string) string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString([]byte(header)) + "." + base64.RawURLEncoding.EncodeToString(b) + "." + sig
}

func TestRefusals(t *testing.T) {
	v := verifier(t, "RS256", "ES256")
	rsaPub := signers()["RS256"].Public().(*rsa.PublicKey)
	der, _ := x509.MarshalPKIXPublicKey(rsaPub)
	pemPub := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	// HS256 keyed by the RSA public key: the algorithm-confusion attack.
	hs, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: pemPub}, (&jose.SignerOptions{}).WithHeader("kid", "RS256"))
	confused, _ := jwt.Signed(hs).Claims(claims()).Serialize()
	good := sign(t, "RS256", claims())
	parts := strings.Split(good, ".")
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"iss":"https://idp.example","aud":"sluice","team":"admin","exp":9999999999}`)) + "." + parts[2]
	embedded, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: signers()["ES256"]}, (&jose.SignerOptions{EmbedJWK: true}))
	withJWK, _ := jwt.Signed(embedded).Claims(claims()).Serialize()
	critSigner, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: signers()["RS256"]},
		(&jose.SignerOptions{}).WithHeader("kid", "RS256").WithCritical("exp").WithHeader("exp", 1))
	withCrit, _ := jwt.Signed(critSigner).Claims(claims()).Serialize()
	b64Signer, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: signers()["RS256"]},
		(&jose.SignerOptions{}).WithHeader("kid", "RS256").WithBase64(true).WithCritical("b64"))
	withB64, _ := jwt.Signed(b64Signer).Claims(claims()).Serialize()
	for _, c := range []struct {
		name, token, want string
	}{
		{"alg none", unsigned(`{"alg":"none","typ":"JWT"}`, claims(), ""), `alg "none" is not accepted`},
		{"alg None", unsigned(`{"alg":"None"}`, claims(), ""), `alg "None" is not accepted`},
		{"HS256 keyed by the public key", confused, `alg "HS256" is not accepted`},
		{"EdDSA not in the set", sign(t, "EdDSA", claims()), `(kid "EdDSA") is not in`},
		{"expired", sign(t, "RS256", claims("exp", now.Add(-time.Minute).Unix())), "expired"},
		{"not yet valid", sign(t, "RS256", claims("nbf", now.Add(time.Minute).Unix())), "not valid before"},
		{"issued in the future", sign(t, "RS256", claims("iat", now.Add(time.Hour).Unix())), "issued in the future"},
		{"no expiry", sign(t, "RS256", claims("exp", nil)), "no expiry"},
		{"other issuer", sign(t, "RS256", claims("iss", "https://evil")), `issuer "https://evil"`},
		{"no issuer", sign(t, "RS256", claims("iss", nil)), `issuer ""`},
		{"other audience", sign(t, "RS256", claims("aud", []string{"other"})), "audience"},
		{"no audience", sign(t, "RS256", claims("aud", nil)), "audience"},
		{"no key claim", sign(t, "RS256", claims("team", nil)), `claim "team"`},
		{"key claim a number", sign(t, "RS256", claims("team", 7)), `claim "team"`},
		{"key claim empty", sign(t, "RS256", claims("team", "")), `claim "team"`},
		{"key claim an empty list", sign(t, "RS256", claims("team", []string{})), `claim "team"`},
		{"key claim a list with an empty name", sign(t, "RS256", claims("team", []string{"a", ""})), `claim "team"`},
		{"key claim a list of numbers", sign(t, "RS256", claims("team", []int{1})), `claim "team"`},
		{"key claim an object", sign(t, "RS256", claims("team", map[string]string{"a": "b"})), `claim "team"`},
		{"key claim too long a list", sign(t, "RS256", claims("team", strings.Fields(strings.Repeat("x ", MaxKeyClaimValues+1)))), `claim "team"`},
		{"models claim an object", sign(t, "RS256", claims("models", map[string]any{"a": 1})), `claim "models"`},
		{"tampered payload", tampered, "signature does not verify"},
		{"signed by a key of the wrong type for its kid", sign(t, "ES256", claims(), "RS256"), "signature does not verify"},
		{"embedded key", withJWK, "carries its own key"},
		{"crit names an extension", withCrit, "critical extensions"},
		{"crit names b64 (which go-jose knows)", withB64, "critical extensions"},
		{"garbage", "eyJhbGciOi.x.y", "not a signed JWT"},
		{"too long", "eyJ" + strings.Repeat("a", MaxToken) + ".a.b", "more than"},
	} {
		id, err := v.Verify([]byte(c.token), now)
		if err == nil {
			t.Errorf("%s: accepted as %+v", c.name, id)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

func TestLeeway(t *testing.T) {
	v := verifier(t, "RS256")
	tok := []byte(sign(t, "RS256", claims("exp", now.Unix(), "nbf", now.Add(20*time.Second).Unix())))
	if _, err := v.Verify(tok, now.Add(20*time.Second)); err != nil {
		t.Fatalf("within leeway: %v", err)
	}
	// From the cache, its expiry is checked all the same.
	if _, err := v.Verify(tok, now.Add(31*time.Second)); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("past leeway, cached: %v", err)
	}
	if _, err := v.Verify(tok, now.Add(31*time.Second)); err == nil {
		t.Fatal("past leeway, uncached: accepted")
	}
}

// A key claim that is a list (a "groups" claim) keeps its values in the
// token's order.
func TestKeyClaimList(t *testing.T) {
	v := verifier(t, "ES256")
	id, err := v.Verify([]byte(sign(t, "ES256", claims("team", []string{"everyone", "team-b", "team-a"}))), now)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(id.Keys, ",") != "everyone,team-b,team-a" || id.Key != "everyone" {
		t.Fatalf("keys %q, key %q", id.Keys, id.Key)
	}
	id, err = v.Verify([]byte(sign(t, "ES256", claims())), now)
	if err != nil || strings.Join(id.Keys, ",") != "team-a" {
		t.Fatalf("a string claim: %v %v", id, err)
	}
}

func TestModelsClaim(t *testing.T) {
	v := verifier(t, "ES256")
	for _, c := range []struct {
		claim any
		want  string
	}{{"a  b", "a,b"}, {[]string{"a", "c"}, "a,c"}, {[]string{}, ""}, {"", ""}} {
		id, err := v.Verify([]byte(sign(t, "ES256", claims("models", c.claim))), now)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(id.Models, ","); got != c.want || id.Models == nil {
			t.Fatalf("%v: models %q (nil %v), want %q", c.claim, got, id.Models == nil, c.want)
		}
		for _, m := range []string{"a", "b", "c"} {
			if id.Allows(m) != strings.Contains(","+c.want+",", ","+m+",") {
				t.Fatalf("%v: Allows(%s) = %v", c.claim, m, id.Allows(m))
			}
		}
	}
	var static *Identity
	if !static.Allows("x") {
		t.Fatal("a static key's nil identity must allow its key's models")
	}
}

func TestClaim(t *testing.T) {
	v := verifier(t, "ES256")
	id, err := v.Verify([]byte(sign(t, "ES256", claims("uid", 12345, "obj", []int{1}, "esc", "a\u00e9"))), now)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, v string
		ok, bad bool
	}{{"sub", "svc-1", true, false}, {"uid", "12345", true, false}, {"esc", "aé", true, false}, {"obj", "", false, true}, {"none", "", false, false}} {
		got, ok, bad := id.Claim(c.name)
		if got != c.v || ok != c.ok || bad != c.bad {
			t.Errorf("Claim(%s) = %q %v %v", c.name, got, ok, bad)
		}
	}
}

// A new key set drops every token verified under the old: a key removed
// from the set (revoked) admits nothing more, even from the cache.
func TestNewSetDropsCache(t *testing.T) {
	v := verifier(t, "RS256", "ES256")
	tok := []byte(sign(t, "RS256", claims()))
	if _, err := v.Verify(tok, now); err != nil {
		t.Fatal(err)
	}
	keys, _, err := ParseSet(setOf(t, "ES256"), v.Algorithms())
	if err != nil {
		t.Fatal(err)
	}
	v.SetKeys(keys)
	if _, err := v.Verify(tok, now); err == nil {
		t.Fatal("a token of a removed key is still accepted")
	}
}

func TestNoKeysYet(t *testing.T) {
	v := NewVerifier(Policy{Issuers: []string{"https://idp.example"}, Audiences: []string{"sluice"}, KeyClaim: "team"})
	if _, err := v.Verify([]byte(sign(t, "RS256", claims())), now); err != ErrNoKeys {
		t.Fatalf("%v", err)
	}
}

func TestParseSet(t *testing.T) {
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	smallJWK, _ := json.Marshal(jose.JSONWebKey{Key: &small.PublicKey, KeyID: "small"})
	encJWK, _ := json.Marshal(jose.JSONWebKey{Key: signers()["ES256"].Public(), KeyID: "enc", Use: "enc"})
	privJWK, _ := json.Marshal(jose.JSONWebKey{Key: signers()["EdDSA"], KeyID: "priv"})
	hsAlg, _ := json.Marshal(jose.JSONWebKey{Key: signers()["ES256"].Public(), KeyID: "hs", Algorithm: "HS256"})
	doc := `{"keys":[` + string(smallJWK) + `,` + string(encJWK) + `,{"kty":"oct","k":"c2VjcmV0","kid":"oct"},{"kty":"weird"},` +
		string(hsAlg) + `,` + string(privJWK) + `]}`
	keys, skipped, err := ParseSet([]byte(doc), DefaultAlgorithms)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || keys[0].KeyID != "priv" || !keys[0].IsPublic() {
		t.Fatalf("kept %+v", keys)
	}
	if len(skipped) != 5 {
		t.Fatalf("skipped %q", skipped)
	}
	for _, bad := range []string{`not json`, `{"keys":[]}`, `{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`, `{"keys":[` + strings.Repeat(`{},`, MaxSetKeys) + `{}]}`} {
		if _, _, err := ParseSet([]byte(bad), DefaultAlgorithms); err == nil {
			t.Errorf("%.40s: no error", bad)
		}
	}
}

func TestLooksLikeJWT(t *testing.T) {
	for tok, want := range map[string]bool{
		sign(t, "ES256", claims()): true, "sk-abc": false, "eyJhbGc.eyJ.sig": true, "eyJ.a.b.c": false, "eyJ a.b.c": false, "": false,
	} {
		if LooksLikeJWT([]byte(tok)) != want {
			t.Errorf("%q: %v", tok, !want)
		}
	}
}

// FuzzVerify: no input panics, and none is accepted unless it carries
// exactly the claims of a token the test's own key signed.
func FuzzVerify(f *testing.F) {
	v := verifier(f, "RS256", "ES256", "EdDSA")
	signed := map[string]bool{}
	for _, alg := range []string{"RS256", "ES256", "EdDSA"} {
		tok := sign(f, alg, claims())
		f.Add(tok)
		signed[strings.Split(tok, ".")[1]] = true
	}
	f.Add(unsigned(`{"alg":"none"}`, claims(), ""))
	f.Fuzz(func(t *testing.T, tok string) {
		id, err := v.Verify([]byte(tok), now)
		if err != nil {
			return
		}
		parts := strings.Split(tok, ".")
		if len(parts) != 3 || !signed[parts[1]] || id.Key != "team-a" {
			t.Fatalf("accepted %q as %+v", tok, id)
		}
	})
}

// BenchmarkVerify: a token seen before (the cache: what a caller that
// reuses its token pays per request) against one verified afresh.
func BenchmarkVerify(b *testing.B) {
	v := verifier(b, "RS256", "ES256", "EdDSA")
	for _, alg := range []string{"RS256", "ES256", "EdDSA"} {
		tok := []byte(sign(b, alg, claims()))
		b.Run(alg+"/cached", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.Verify(tok, now); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(alg+"/fresh", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				v.SetKeys(v.set.keys) // a new set: the cache is empty
				if _, err := v.Verify(tok, now); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A file source: loaded at start; a load that fails keeps the set loaded
// before; a new set replaces it (its tokens admitted, the old key's not).
func TestLoaderFile(t *testing.T) {
	path := t.TempDir() + "/jwks.json"
	write := func(data []byte) {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(setOf(t, "RS256"))
	v := NewVerifier(Policy{Issuers: []string{"https://idp.example"}, Audiences: []string{"sluice"}, KeyClaim: "team"})
	l, err := NewLoader(Source{File: path, Refresh: time.Hour}, v, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	l.Start()
	defer l.Close()
	rs, es := []byte(sign(t, "RS256", claims())), []byte(sign(t, "ES256", claims()))
	if _, err := v.Verify(rs, now); err != nil {
		t.Fatal(err)
	}
	write([]byte(`{"keys": [`))
	if err := l.Reload(); err == nil || l.Err() == nil {
		t.Fatal("a broken set loaded")
	}
	if _, err := v.Verify(rs, now); err != nil {
		t.Fatalf("the set loaded before was not kept: %v", err)
	}
	write(setOf(t, "ES256"))
	if err := l.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(es, now); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(rs, now); err == nil {
		t.Fatal("the removed key's token is still admitted")
	}
	if _, err := NewLoader(Source{File: path + ".missing", Refresh: time.Hour}, NewVerifier(Policy{}), slog.New(slog.DiscardHandler)); err == nil {
		t.Fatal("a missing file loaded")
	}
}

// config keeps copies of the algorithm lists and the set's bound (it
// imports nothing of sluice's): they must be these.
func TestConfigCopies(t *testing.T) {
	if !slices.Equal(config.JWTAlgorithms, Allowed) || !slices.Equal(config.DefaultJWTAlgorithms, DefaultAlgorithms) || config.MaxJWKSBytes != MaxSetBytes {
		t.Fatal("config's copies of jwtauth's lists differ")
	}
}

// Issuer reads a token's "iss" unverified, "" for anything else.
func TestIssuer(t *testing.T) {
	tok := sign(t, "ES256", claims())
	for _, c := range []struct{ token, want string }{
		{tok, "https://idp.example"},
		{sign(t, "ES256", claims("iss", nil)), ""},
		{unsigned(`{"alg":"none"}`, claims("iss", "x"), ""), "x"},
		{"eyJ.not base64.x", ""},
		{"eyJhbGciOiJFUzI1NiJ9", ""},
		{"a." + base64.RawURLEncoding.EncodeToString([]byte(`{"iss":7}`)) + ".b", ""},
		{"a." + strings.Repeat("A", MaxToken) + ".b", ""},
	} {
		if got := Issuer([]byte(c.token)); got != c.want {
			t.Errorf("%.40q: %q, want %q", c.token, got, c.want)
		}
	}
}
