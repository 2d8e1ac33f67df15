package tests

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// Every worker sends the same conversation (same first message) to the
// same backend, and different users spread over the backends.
func TestPrefixAffinityAcrossWorkers(t *testing.T) {
	var bes []*fakevllm.Server
	var urls []string
	for i := 0; i < 3; i++ {
		be := startBackend(t, fakevllm.Options{Tokens: 1})
		bes = append(bes, be)
		urls = append(urls, "      - url: "+be.URL()+"\n        slots: 8")
	}
	cfg := strings.Replace(baseConfig(bes[0].URL(), filepath.Join(t.TempDir(), "u.log"), ""),
		"      - url: "+bes[0].URL()+"\n        slots: 64\n        api_key_env: SLUICE_TEST_BACKEND_KEY", strings.Join(urls, "\n"), 1)
	g := startGateway(t, cfg)
	client := freshClient() // new connections: both workers take part
	received := func() []int {
		n := make([]int, len(bes))
		for i, be := range bes {
			n[i] = len(be.Received())
		}
		return n
	}
	for i := 0; i < 20; i++ {
		body := fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":"the same long document"},{"role":"user","content":"question %d"}]}`, i)
		if res, out := post(t, client, g.URL+"/v1/chat/completions", keyAll, []byte(body), nil); res.StatusCode != 200 {
			t.Fatalf("status %d: %s", res.StatusCode, out)
		}
	}
	got := received()
	if got[0]+got[1]+got[2] != 20 || (got[0] != 20 && got[1] != 20 && got[2] != 20) {
		t.Fatalf("one conversation spread over backends: %v", got)
	}
	for i := 0; i < 60; i++ {
		body := fmt.Sprintf(`{"model":"m","user":"user-%d","messages":[{"role":"user","content":"the same long document"}]}`, i)
		post(t, client, g.URL+"/v1/chat/completions", keyAll, []byte(body), nil)
	}
	after := received()
	for i := range after {
		if after[i]-got[i] == 0 {
			t.Errorf("60 users, none on backend %d: %v -> %v", i, got, after)
		}
	}
}
