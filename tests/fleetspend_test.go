package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/tests/fakenomad"
	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// Two replicas of a fleet agree on what a key spent of its daily quota
// through Nomad Variables (fleet.spend_exchange): each sees the other's
// spend; the quota holds for the fleet whole, not halved; once the fleet
// spent it, both refuse; CAS conflicts with another writer are merged,
// never losing its item; and a replica restarted with nothing (no
// state_dir) takes its own spend back from its item.
func TestFleetSharesSpend(t *testing.T) {
	nomad := startNomad(t)
	be := startBackend(t, fakevllm.Options{Tokens: 2})
	nomad.Set("default", "sluice", fakenomad.Instance{Address: "10.0.0.1", Port: 8080}, fakenomad.Instance{Address: "10.0.0.2", Port: 8080})
	const quota = 600
	dir := t.TempDir()
	replica := func(name string) *gateway {
		t.Helper()
		usage := filepath.Join(dir, name+".log")
		cfg := strings.Replace(quotaConfig(be, usage, quota, "100"), "usage_log:",
			"fleet: {nomad_service: sluice, spend_exchange: 1s, replica: "+name+"}\nusage_log:", 1)
		g := startGateway(t, cfg)
		g.UsageLog = usage
		await(t, "the fleet size", func() bool { v, _ := g.metric("sluice_fleet_replicas", nil); return v == 2 })
		return g
	}
	a, b := replica("a"), replica("b")
	body := func(i int) []byte {
		out, _ := json.Marshal(map[string]any{"model": "m", "max_tokens": 5,
			"messages": []map[string]string{{"role": "user", "content": fmt.Sprintf("fleet %d", i)}}})
		return out
	}
	var total int64   // what the usage lines of both say was used
	var largest int64 // the most one request used
	spend := func(g *gateway, n int) (refused int) {
		t.Helper()
		var ids []string
		for i := range n {
			res, out := post(t, freshClient(), g.URL+"/v1/chat/completions", keyAll, body(i), nil)
			switch {
			case res.StatusCode == 200:
				ids = append(ids, res.Header.Get("X-Request-Id"))
			case res.StatusCode == 429 && strings.Contains(string(out), "quota_exceeded"):
				refused++
			default:
				t.Fatalf("%d %s", res.StatusCode, out)
			}
		}
		for _, l := range usageOf(t, g, ids...) {
			n := int64(l["total_tokens"].(float64))
			total, largest = total+n, max(largest, n)
		}
		return refused
	}
	sees := func(g *gateway, name string) {
		t.Helper()
		await(t, name+" seeing the fleet's spend", func() bool { return quotaUsed(g) == float64(total) })
	}

	spend(a, 5)
	sees(b, "b")
	sees(a, "a")
	spend(b, 5)
	sees(a, "a")
	items, _ := nomad.Variable("default", "sluice/spend/sluice/all")
	if items["a"] == "" || items["b"] == "" {
		t.Fatalf("the key's variable lacks an item of each replica: %v", items)
	}

	// Another writer between a replica's read and its write: the CAS
	// conflicts are merged, the other's item kept, the spend still agreed.
	nomad.Interfere(4)
	await(t, "the conflicts met and merged", func() bool {
		c1, _ := a.metric("sluice_fleet_spend_exchanges_total", map[string]string{"result": "conflict"})
		c2, _ := b.metric("sluice_fleet_spend_exchanges_total", map[string]string{"result": "conflict"})
		return nomad.Conflicts() >= 4 && c1+c2 >= 4
	})
	spend(b, 2)
	sees(a, "a")
	items, _ = nomad.Variable("default", "sluice/spend/sluice/all")
	if items["intruder"] == "" || items["a"] == "" || items["b"] == "" {
		t.Fatalf("an item was lost to a CAS conflict: %v", items)
	}

	// The quota holds for the fleet whole: a admits past half of it (a
	// divided quota would stop at 300), until the fleet's spend and one
	// request's reservation pass it — the last admitted passing it only
	// by what it used beyond its reservation, at most one request's use;
	// then b, once it sees that, refuses its first request.
	if refused := spend(a, 200); refused == 0 {
		t.Fatalf("a admitted 200 requests over a quota of %d", quota)
	}
	if total <= quota/2 || total > quota+largest {
		t.Fatalf("the fleet spent %d of a quota of %d (a request: at most %d) before a refused: not the whole quota, for the fleet", total, quota, largest)
	}
	sees(b, "b")
	if refused := spend(b, 1); refused != 1 {
		t.Fatalf("b admitted a request once the fleet's spend (%d) left no room in %d", total, quota)
	}

	// b restarted with nothing of its own (no state_dir): its item in the
	// variable gives its spend back.
	b.stop()
	b = replica("b")
	sees(b, "restarted b")
	if refused := spend(b, 1); refused != 1 {
		t.Fatal("the restarted replica forgot the fleet's spend")
	}
}

// What a replica's requests in flight reserved counts at the others too:
// nine long requests held at replica a, each reserving a tenth of the
// quota, make b refuse the tenth request it is asked once it has
// exchanged with a — before any of them settled (without the reservations
// in the exchange, b would see nothing spent and admit it). Released, they
// settle what they used, and b admits again.
func TestFleetSharesReservations(t *testing.T) {
	nomad := startNomad(t)
	be := startBackend(t, fakevllm.Options{Tokens: 2})
	nomad.Set("default", "sluice", fakenomad.Instance{Address: "10.0.0.1", Port: 8080}, fakenomad.Instance{Address: "10.0.0.2", Port: 8080})
	const quota, maxTokens = 10_000, 1_000
	dir := t.TempDir()
	replica := func(name string) *gateway {
		t.Helper()
		cfg := strings.Replace(quotaConfig(be, filepath.Join(dir, name+".log"), quota, "100"), "usage_log:",
			"fleet: {nomad_service: sluice, spend_exchange: 1s, replica: "+name+"}\nusage_log:", 1)
		g := startGateway(t, cfg)
		await(t, "the fleet size", func() bool { v, _ := g.metric("sluice_fleet_replicas", nil); return v == 2 })
		return g
	}
	a, b := replica("a"), replica("b")
	for _, g := range []*gateway{a, b} { // until then each holds to half the quota
		await(t, "an exchange", func() bool {
			v, _ := g.metric("sluice_fleet_spend_exchanges_total", map[string]string{"result": "ok"})
			return v >= 2
		})
	}
	body, _ := json.Marshal(map[string]any{"model": "m", "max_tokens": maxTokens, "messages": []map[string]string{{"role": "user", "content": "long"}}})
	ask := func(g *gateway, hold bool) (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/chat/completions", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+keyAll)
		req.Header.Set("Content-Type", "application/json")
		if hold {
			req.Header.Set("X-Fake-Hold-Headers", "long")
		}
		res, err := freshClient().Do(req)
		if err == nil {
			io.Copy(io.Discard, res.Body) //nolint:errcheck
			res.Body.Close()
		}
		return res, err
	}
	statuses := make(chan int, 9)
	for range 9 {
		go func() {
			res, err := ask(a, true)
			if err != nil {
				statuses <- -1
				return
			}
			statuses <- res.StatusCode
		}()
	}
	await(t, "the held requests at the backend", func() bool { return be.Running() >= 9 })
	await(t, "b seeing a's reservations", func() bool { return quotaUsed(b) >= 9*maxTokens })
	if res, err := ask(b, false); err != nil || res.StatusCode != 429 {
		t.Fatalf("b, with nine tenths of the quota reserved at a: %v %v, want 429", res, err)
	}
	be.Release("long")
	for range 9 {
		if s := <-statuses; s != 200 {
			t.Fatalf("a held request ended %d", s)
		}
	}
	await(t, "b seeing the requests settled", func() bool { return quotaUsed(b) < quota/2 })
	if res, err := ask(b, false); err != nil || res.StatusCode != 200 {
		t.Fatalf("b, once a's requests settled: %v %v", res, err)
	}
}
