package tests

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// adminGet is GET path on the admin listener with the Authorization
// header auth (none when empty); it returns the status.
func adminGet(t *testing.T, g *gateway, path, auth string) (int, http.Header) {
	t.Helper()
	return adminGetWith(t, http.DefaultClient, g, path, auth)
}

// adminGetWith is adminGet with client.
func adminGetWith(t *testing.T, client *http.Client, g *gateway, path, auth string) (int, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, g.AdminURL+path, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	res.Body.Close()
	return res.StatusCode, res.Header
}

// With admin_token_env, /metrics and /status answer only with the bearer
// token (401 without it, with a wrong one, a prefix of it or another
// scheme); /healthz and /readyz stay open for probes; `sluice reload`
// reads /status with the token from the same variable. Each path's wrong
// tokens come from an address of their own: ten failures a minute from
// one address are all the admin listener answers (TestAdminLoginThrottle).
func TestAdminToken(t *testing.T) {
	const token = "admin-token-0123456789abcdef"
	t.Setenv("SLUICE_TEST_ADMIN_TOKEN", token)
	be := startBackend(t, fakevllm.Options{Tokens: 1})
	g, _, _ := controllableGateway(t, func(extra string) string {
		return baseConfig(be.URL(), "off", extra+"\nadmin_token_env: SLUICE_TEST_ADMIN_TOKEN")
	})
	for i, path := range []string{"/metrics", "/status"} {
		client := clientFrom(fmt.Sprintf("127.0.0.%d", 2+i))
		for _, auth := range []string{"", "Bearer", "Bearer ", "Bearer wrong", "Bearer " + token[:len(token)-1],
			"Bearer " + token + "x", "Basic " + token, token} {
			code, hdr := adminGetWith(t, client, g, path, auth)
			if code != http.StatusUnauthorized || !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("GET %s with Authorization %q: %d %v; want 401 with WWW-Authenticate", path, auth, code, hdr)
			}
		}
		for _, auth := range []string{"Bearer " + token, "bearer " + token} {
			if code, _ := adminGetWith(t, client, g, path, auth); code != http.StatusOK {
				t.Errorf("GET %s with the token (%q): %d", path, auth, code)
			}
		}
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, _ := adminGet(t, g, path, ""); code != http.StatusOK {
			t.Errorf("GET %s without a token: %d; probes must stay open", path, code)
		}
	}
	if out, err := sluiceReload(g); exitCode(err) != 0 {
		t.Fatalf("sluice reload with the token in its environment: %v %s", err, out)
	}
}
