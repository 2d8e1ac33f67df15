package tests

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// A backend that listens but fails GET /health (vLLM loading its model) is
// kept out of rotation, and comes in once its check passes.
func TestBackendInRotationOnlyAfterHealthPasses(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 1})
	be.SetHealthy(false)
	cfg := strings.Replace(baseConfig(be.URL(), filepath.Join(t.TempDir(), "u.log"), ""),
		"        api_key_env: SLUICE_TEST_BACKEND_KEY", "        api_key_env: SLUICE_TEST_BACKEND_KEY\n    health: {path: /health, interval: 200ms}", 1)
	g := startGateway(t, cfg)
	res, body := post(t, http.DefaultClient, g.URL+"/v1/chat/completions", keyAll, chatBody("m", false, "x"), nil)
	checkError(t, "loading backend", res.StatusCode, body, 503, "no_healthy_backend", "healthy")
	if n := len(be.Received()); n != 0 {
		t.Fatalf("an unhealthy backend got %d requests", n)
	}
	be.SetHealthy(true)
	client := freshClient()
	await(t, "the backend in rotation in both workers", func() bool {
		for i := 0; i < 10; i++ {
			res, _ := post(t, client, g.URL+"/v1/chat/completions", keyAll, chatBody("m", false, "x"), nil)
			if res.StatusCode != 200 {
				return false
			}
		}
		return true
	})
}
