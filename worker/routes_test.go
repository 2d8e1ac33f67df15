package worker

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/sluice-gw/sluice/config"
)

func hashOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func TestAuthenticateAndAllow(t *testing.T) {
	t.Setenv("ROUTES_TEST_KEY", "be-key")
	rt := compileRoutes(&config.Config{
		Keys: []config.Key{
			{Name: "all", SHA256: hashOf("sk-all"), Models: []string{"*"}},
			{Name: "one", SHA256: hashOf("sk-one"), Models: []string{"a"}},
		},
		Models: []config.Model{
			{Name: "a", Backends: []config.Backend{{URL: "http://h:1/", Slots: 1, APIKeyEnv: "ROUTES_TEST_KEY"}}},
			{Name: "b", Backends: []config.Backend{{URL: "http://h:2", Slots: 1}, {URL: "http://h:3", Slots: 1}}},
		},
	})
	for header, want := range map[string]string{
		"Bearer sk-all": "all", "bearer sk-one": "one", "Bearer sk-none": "", "sk-all": "", "Bearer ": "", "": "",
	} {
		k := rt.authenticate([]byte(header))
		got := ""
		if k != nil {
			got = k.name
		}
		if got != want {
			t.Errorf("authenticate(%q) = %q, want %q", header, got, want)
		}
	}
	one := rt.authenticate([]byte("Bearer sk-one"))
	if !one.allows("a") || one.allows("b") || !rt.authenticate([]byte("Bearer sk-all")).allows("b") {
		t.Error("model permissions wrong")
	}
	if b := rt.models["a"].backends[0]; b.url != "http://h:1" || b.authHeader != "Bearer be-key" {
		t.Errorf("backend compiled as %+v", b)
	}
	seen := map[string]int{}
	for i := 0; i < 10; i++ {
		seen[rt.models["b"].pickBackend().url]++
	}
	if seen["http://h:2"] != 5 || seen["http://h:3"] != 5 {
		t.Errorf("round robin: %v", seen)
	}
}
