package tests

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// threeBackends starts three fake backends and renders a configuration
// whose model "m" has them all, with the given slots each and extra YAML
// lines for the model.
func threeBackends(t *testing.T, slots int, modelExtra string) ([]*fakevllm.Server, string) {
	var bes []*fakevllm.Server
	var urls []string
	for i := 0; i < 3; i++ {
		be := startBackend(t, fakevllm.Options{Tokens: 2})
		bes = append(bes, be)
		urls = append(urls, fmt.Sprintf("      - url: %s\n        slots: %d", be.URL(), slots))
	}
	cfg := strings.Replace(baseConfig(bes[0].URL(), filepath.Join(t.TempDir(), "u.log"), ""),
		"      - url: "+bes[0].URL()+"\n        slots: 64\n        api_key_env: SLUICE_TEST_BACKEND_KEY",
		strings.Join(urls, "\n")+modelExtra, 1)
	return bes, cfg
}

// Every worker sends the same conversation (same first message) to the
// same backend, and different users spread over the backends.
func TestPrefixAffinityAcrossWorkers(t *testing.T) {
	bes, cfg := threeBackends(t, 8, "")
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

// When the key's home backend has no free slot the request goes to the
// next backend in the key's ranking that has one, and once every slot is
// taken it queues.
func TestAffinitySpillsToFreeSlot(t *testing.T) {
	bes, cfg := threeBackends(t, 1, "\n    affinity_load_cap: 100") // only slots make it spill
	g := startGateway(t, cfg)
	body := chatBody("m", true, "one conversation")
	for i := 1; i <= 3; i++ {
		if res := openStream(t, g, keyAll, "spill", body); res.StatusCode != 200 {
			t.Fatalf("stream %d: %s", i, res.Status)
		}
		busy := 0
		for _, be := range bes {
			busy += be.Running()
			if be.Running() > 1 {
				t.Fatalf("a backend with 1 slot runs %d requests", be.Running())
			}
		}
		if busy != i {
			t.Fatalf("%d streams open, %d backends busy", i, busy)
		}
	}
	done := make(chan int, 1)
	go func() {
		res, _ := post(t, freshClient(), g.URL+"/v1/chat/completions", keyAll, chatBody("m", false, "one conversation"), nil)
		done <- res.StatusCode
	}()
	await(t, "the 4th request to queue", func() bool {
		v, _ := g.metric("sluice_queue_depth", map[string]string{"model": "m"})
		return v == 1
	})
	for _, be := range bes { // each fake has its own gates
		be.Release("spill")
	}
	if code := <-done; code != 200 {
		t.Fatalf("queued request: %d", code)
	}
}

// Many users of one app, sharing its system prompt, spread over the
// backends (the key is the conversation up to its first user turn, not
// messages[0]), while each user's later turns, which resend the history,
// stay on the backend of their first.
func TestAffinityConversationKey(t *testing.T) {
	bes, cfg := threeBackends(t, 8, "")
	g := startGateway(t, cfg)
	client := freshClient() // new connections: both workers take part
	// backendOf sends body and returns the one backend that received it.
	backendOf := func(body string) int {
		t.Helper()
		before := make([]int, len(bes))
		for i, be := range bes {
			before[i] = len(be.Received())
		}
		if res, out := post(t, client, g.URL+"/v1/chat/completions", keyAll, []byte(body), nil); res.StatusCode != 200 {
			t.Fatalf("status %d: %s", res.StatusCode, out)
		}
		got := -1
		for i, be := range bes {
			if len(be.Received()) != before[i] {
				got = i
			}
		}
		return got
	}
	const system = `{"role":"system","content":"You are the assistant of ExampleApp. Answer briefly and politely."}`
	const users = 30
	home := make([]int, users)
	spread := make([]int, len(bes))
	for u := range users {
		home[u] = backendOf(fmt.Sprintf(`{"model":"m","messages":[%s,{"role":"user","content":"hello, I am user %d"}]}`, system, u))
		spread[home[u]]++
	}
	for i, n := range spread {
		if n == 0 {
			t.Fatalf("%d users sharing a system prompt, none on backend %d: %v", users, i, spread)
		}
	}
	for u := range users {
		history := fmt.Sprintf(`%s,{"role":"user","content":"hello, I am user %d"}`, system, u)
		for turn := 2; turn <= 3; turn++ {
			history += fmt.Sprintf(`,{"role":"assistant","content":"answer %d"},{"role":"user","content":"question %d"}`, turn-1, turn)
			if b := backendOf(`{"model":"m","stream":false,"messages":[` + history + `]}`); b != home[u] {
				t.Fatalf("user %d: turn 1 on backend %d, turn %d on %d", u, home[u], turn, b)
			}
		}
	}
}
