package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/tests/fakenomad"
	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// startNomad starts the fake Nomad and points NOMAD_ADDR (read by
// nomad/api's DefaultConfig in the gateway) at it.
func startNomad(t *testing.T) *fakenomad.Server {
	t.Helper()
	n, err := fakenomad.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	t.Setenv("NOMAD_ADDR", n.Addr())
	t.Setenv("NOMAD_TOKEN", "nomad-secret")
	return n
}

// instanceOf is a fake backend as a Nomad service instance.
func instanceOf(be *fakevllm.Server) fakenomad.Instance {
	host, port, _ := strings.Cut(strings.TrimPrefix(be.URL(), "http://"), ":")
	p, _ := strconv.Atoi(port)
	return fakenomad.Instance{Address: host, Port: p, Tags: []string{"llama"}}
}

// nomadConfig is baseConfig with model "m" discovered from Nomad service
// "vllm" (tag llama) instead of a static backend.
func nomadConfig(usage, extra string) string {
	cfg := baseConfig("http://127.0.0.1:1", usage, extra)
	return strings.Replace(cfg, "    backends:\n      - url: http://127.0.0.1:1\n        slots: 64\n        api_key_env: SLUICE_TEST_BACKEND_KEY\n",
		"    nomad: {service: vllm, tags: [llama], slots: 8}\n    affinity: none\n", 1)
}

// A model's backends come from Nomad: the first list, then changes
// through blocking queries, applied without a restart; while Nomad is
// unreachable the last list stays in use.
func TestNomadDiscovery(t *testing.T) {
	nomad := startNomad(t)
	a, b := startBackend(t, fakevllm.Options{Tokens: 1}), startBackend(t, fakevllm.Options{Tokens: 1})
	other := instanceOf(startBackend(t, fakevllm.Options{Tokens: 1}))
	other.Tags = []string{"mistral"} // filtered out by tag
	nomad.Set("default", "vllm", instanceOf(a), instanceOf(b), other)
	g := startGateway(t, nomadConfig("off", ""))
	client := freshClient()
	send := func(n int) {
		for i := 0; i < n; i++ {
			if res, body := post(t, client, g.URL+"/v1/chat/completions", keyAll, chatBody("m", false, "x"), nil); res.StatusCode != 200 {
				t.Fatalf("request: %s %s", res.Status, body)
			}
		}
	}
	send(10)
	if len(a.Received()) == 0 || len(b.Received()) == 0 {
		t.Fatalf("discovered backends not both used: %d %d", len(a.Received()), len(b.Received()))
	}
	if v, ok := g.metric("sluice_backend_slots", map[string]string{"model": "m", "backend": a.URL()}); !ok || v != 8 {
		t.Errorf("discovered backend's slots: %v %v", v, ok)
	}
	// b leaves: only a serves, without a restart.
	nomad.Set("default", "vllm", instanceOf(a))
	await(t, "the change to apply", func() bool {
		_, ok := g.metric("sluice_backend_inflight", map[string]string{"model": "m", "backend": b.URL()})
		return !ok
	})
	// /metrics shows the new configuration once the supervisor installed
	// it; each worker swaps to it a moment later: wait until ten requests
	// in a row pass b by (before, one check right after the metric raced
	// the swap under load).
	await(t, "a backend gone from Nomad to get no more requests", func() bool {
		before := len(b.Received())
		send(10)
		return len(b.Received()) == before
	})
	// Nomad down: the last list stays, the outage shows in /metrics.
	nomad.SetDown(true)
	await(t, "the outage in /metrics", func() bool {
		v, ok := g.metric("sluice_nomad_up", map[string]string{"service": "vllm"})
		return ok && v == 0
	})
	send(5)
	nomad.SetDown(false)
	nomad.Set("default", "vllm", instanceOf(a), instanceOf(b))
	await(t, "b back", func() bool {
		_, ok := g.metric("sluice_backend_inflight", map[string]string{"model": "m", "backend": b.URL()})
		return ok
	})
	for _, tok := range nomad.Tokens() {
		if tok != "nomad-secret" {
			t.Fatalf("a query without NOMAD_TOKEN: %q", tok)
		}
	}
}

// The backend's own load counts: with 16 requests held open directly on a
// backend of 16 slots, a gateway with none of its own queues its first
// request instead of sending it, and sends it once the backend frees.
func TestBackendLoadFromMetrics(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 2})
	cfg := strings.Replace(baseConfig(be.URL(), "off", ""), "slots: 64", "slots: 16", 1)
	g := startGateway(t, cfg)
	for i := 0; i < 16; i++ {
		req, _ := http.NewRequest(http.MethodPost, be.URL()+"/v1/chat/completions", bytes.NewReader(chatBody("m", true, "direct")))
		req.Header.Set("X-Fake-Hold", "direct")
		res, err := freshClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
	}
	await(t, "the gateway to read the backend's load", func() bool {
		v, _ := g.metric("sluice_backend_reported_load", map[string]string{"model": "m", "backend": be.URL()})
		return v == 16
	})
	done := make(chan int, 1)
	go func() {
		res, _ := post(t, freshClient(), g.URL+"/v1/chat/completions", keyAll, chatBody("m", false, "via gateway"), nil)
		done <- res.StatusCode
	}()
	await(t, "the gateway to queue its request", func() bool {
		v, _ := g.metric("sluice_queue_depth", map[string]string{"model": "m"})
		return v == 1
	})
	if be.Running() != 16 {
		t.Fatalf("the gateway sent a request to a full backend (running %d)", be.Running())
	}
	be.Release("direct")
	if code := <-done; code != 200 {
		t.Fatalf("queued request: %d", code)
	}
}

// Affinity across replicas: three gateway processes with the same
// backends send each key to the same backend.
func TestAffinityAcrossReplicas(t *testing.T) {
	bes, cfg := threeBackends(t, 64, "")
	var gws []*gateway
	for i := 0; i < 3; i++ {
		gws = append(gws, startGateway(t, cfg))
	}
	client := freshClient()
	for k := 0; k < 12; k++ {
		content := fmt.Sprintf("conversation %d", k)
		for _, g := range gws {
			if res, body := post(t, client, g.URL+"/v1/chat/completions", keyAll, chatBody("m", false, content), nil); res.StatusCode != 200 {
				t.Fatalf("%s %s", res.Status, body)
			}
		}
		got := 0
		for _, be := range bes {
			n := 0
			for _, r := range be.Received() {
				if r.FirstContent == content {
					n++
				}
			}
			if n != 0 && n != 3 {
				t.Fatalf("%q went to different backends from different replicas", content)
			}
			got += n
		}
		if got != 3 {
			t.Fatalf("%q: %d requests received", content, got)
		}
	}
}

// With fleet.nomad_service, a key's limits are shared by the live
// replicas: three replicas together admit what one would.
func TestFleetDividesLimits(t *testing.T) {
	nomad := startNomad(t)
	be := startBackend(t, fakevllm.Options{Tokens: 1})
	nomad.Set("default", "sluice", fakenomad.Instance{Address: "10.0.0.1", Port: 8080},
		fakenomad.Instance{Address: "10.0.0.2", Port: 8080}, fakenomad.Instance{Address: "10.0.0.3", Port: 8080})
	cfg := limitedConfig(be.URL(), "off", 2, "requests_per_minute: 30", "fleet: {nomad_service: sluice}")
	admitted := 0
	for i := 0; i < 3; i++ {
		g := startGateway(t, cfg)
		await(t, "the fleet size", func() bool { v, _ := g.metric("sluice_fleet_replicas", nil); return v == 3 })
		codes, sample, _ := burst(t, g, 20, keyLimited, chatBody("m", false, "x"))
		if codes[200] != 10 {
			t.Errorf("replica %d admitted %d of a burst of 20 with 30/min over 3 replicas: %v", i, codes[200], codes)
		}
		if sample[200].Header.Get("X-Ratelimit-Limit-Requests") != "10" {
			t.Errorf("replica %d reports limit %q", i, sample[200].Header.Get("X-Ratelimit-Limit-Requests"))
		}
		admitted += codes[200]
	}
	if admitted != 30 {
		t.Fatalf("3 replicas admitted %d, one alone would admit 30", admitted)
	}
}

// A backend whose KV cache is above kv_saturation takes nothing new: the
// request waits in the queue until the cache drains.
func TestKVSaturatedBackendIsFull(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 2})
	be.SetKVUsage(0.95)
	g := startGateway(t, baseConfig(be.URL(), "off", ""))
	lbl := map[string]string{"model": "m", "backend": be.URL()}
	await(t, "the gateway to read the KV usage", func() bool {
		v, _ := g.metric("sluice_backend_kv_cache_usage", lbl)
		return v == 0.95
	})
	done := make(chan int, 1)
	go func() {
		res, _ := post(t, freshClient(), g.URL+"/v1/chat/completions", keyAll, chatBody("m", false, "x"), nil)
		done <- res.StatusCode
	}()
	await(t, "the request to queue", func() bool {
		v, _ := g.metric("sluice_queue_depth", map[string]string{"model": "m"})
		return v == 1
	})
	if n := len(be.Received()); n != 0 {
		t.Fatalf("a saturated backend got %d requests", n)
	}
	be.SetKVUsage(0.2)
	if code := <-done; code != 200 {
		t.Fatalf("queued request: %d", code)
	}
}

// The admin /metrics carries each backend's prefix-cache counters as read
// from its /metrics with the load, and the hit ratio between two reads.
func TestBackendPrefixCacheMetrics(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 2})
	be.SetPrefixCache(200, 1000)
	g := startGateway(t, baseConfig(be.URL(), "off", ""))
	lbl := map[string]string{"model": "m", "backend": be.URL()}
	await(t, "the counters as read", func() bool {
		q, _ := g.metric("sluice_backend_prefix_cache_queries_total", lbl)
		h, _ := g.metric("sluice_backend_prefix_cache_hits_total", lbl)
		return q == 1000 && h == 200
	})
	if _, ok := g.metric("sluice_backend_prefix_cache_hit_ratio", lbl); ok {
		t.Fatal("a hit ratio while no token was queried")
	}
	// Traffic of which 3 tokens in 4 hit, growing faster than the reads
	// come, so that every interval sees some.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for n := int64(1); ; n++ {
			be.SetPrefixCache(200+300*n, 1000+400*n)
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	await(t, "the hit ratio", func() bool {
		v, ok := g.metric("sluice_backend_prefix_cache_hit_ratio", lbl)
		return ok && v == 0.75
	})
}

// A Nomad instance whose address makes no URL (an IPv6 zone, a space,
// garbage) is skipped and logged; the good ones serve and no worker dies
// (one panicked on each such list, and again at every restart).
func TestNomadBadAddressesSkipped(t *testing.T) {
	nomad := startNomad(t)
	be := startBackend(t, fakevllm.Options{Tokens: 1})
	good := instanceOf(be)
	bad := func(addr string) fakenomad.Instance {
		return fakenomad.Instance{Address: addr, Port: 8000, Tags: []string{"llama"}}
	}
	nomad.Set("default", "vllm", bad("fe80::1%eth0"), bad("10.0.0.1 10.0.0.2"), bad("garbage/?#"), good)
	g := startGateway(t, nomadConfig("off", ""))
	await(t, "the good instance in use", func() bool {
		_, ok := g.metric("sluice_backend_inflight", map[string]string{"model": "m", "backend": be.URL()})
		return ok
	})
	g.awaitLog("a Nomad instance is not an address to dial; skipped")
	client := freshClient()
	for range 5 {
		if res, body := post(t, client, g.URL+"/v1/chat/completions", keyAll, chatBody("m", false, "x"), nil); res.StatusCode != 200 {
			t.Fatalf("request: %s %s", res.Status, body)
		}
	}
	// A change that brings only bad ones leaves the model without backends, workers alive.
	nomad.Set("default", "vllm", bad("fe80::2%eth1"))
	await(t, "the good instance gone", func() bool {
		_, ok := g.metric("sluice_backend_inflight", map[string]string{"model": "m", "backend": be.URL()})
		return !ok
	})
	if v, _ := g.metric("sluice_worker_restarts_total", nil); v != 0 {
		t.Fatalf("%v worker restarts", v)
	}
	if v, _ := g.metric("sluice_workers_ready", nil); v != 2 {
		t.Fatalf("%v workers ready of 2", v)
	}
}

// adminStatus reads the supervisor's /status.
func (g *gateway) adminStatus() map[string]any {
	g.t.Helper()
	res, err := http.Get(g.AdminURL + "/status")
	if err != nil {
		g.t.Fatalf("GET /status: %v", err)
	}
	defer res.Body.Close()
	var st map[string]any
	if err := json.NewDecoder(res.Body).Decode(&st); err != nil {
		g.t.Fatalf("GET /status: %v", err)
	}
	return st
}

// When the shared region cannot hold what Nomad lists, discovery applies
// what it can (backends that left go), says why in /status and the
// metrics, leaks no cell, and retries until the cells of departed backends
// are freed; a list that fits applies at once.
func TestNomadRegionFull(t *testing.T) {
	nomad := startNomad(t)
	a, b := startBackend(t, fakevllm.Options{Tokens: 1}), startBackend(t, fakevllm.Options{Tokens: 1})
	nomad.Set("default", "vllm")
	// 2 keys + 2 models + m-alias's backend + the gateway's own: room for one discovered backend.
	start := 5 + (&config.Config{}).CellsNeeded()
	g := startGateway(t, nomadConfig("off", fmt.Sprintf("shm_cells: %d", start+1)))
	cells := func() float64 { v, _ := g.metric("sluice_shm_cells_used", nil); return v }
	if c := cells(); c != float64(start) {
		t.Fatalf("%v cells used at start; the test assumes %d", c, start)
	}
	in := func(be *fakevllm.Server) func() bool {
		return func() bool {
			_, ok := g.metric("sluice_backend_inflight", map[string]string{"model": "m", "backend": be.URL()})
			return ok
		}
	}
	waiting := func() bool {
		v, _ := g.metric("sluice_discovery_pending", nil)
		e, _ := g.adminStatus()["discovery_error"].(string)
		return v == 1 && strings.Contains(e, "every cell of the region is taken")
	}
	// Two new backends, room for one: neither is applied, none leaks a cell.
	nomad.Set("default", "vllm", instanceOf(a), instanceOf(b))
	await(t, "the full region in /status and /metrics", waiting)
	if c := cells(); c != float64(start) {
		t.Fatalf("%v cells used after a change the region could not hold: leaked", c)
	}
	if v, _ := g.metric("sluice_discovery_errors_total", nil); v < 1 {
		t.Fatalf("sluice_discovery_errors_total %v", v)
	}
	// A list that fits applies, and clears the error.
	nomad.Set("default", "vllm", instanceOf(b))
	await(t, "b in use", in(b))
	await(t, "the error cleared", func() bool { return !waiting() && g.adminStatus()["discovery_error"] == "" })
	// b leaves as a arrives: b's cell is freed once unused, then a is applied.
	nomad.Set("default", "vllm", instanceOf(a))
	await(t, "b gone and a in use", func() bool { return !in(b)() && in(a)() })
	await(t, "the error cleared", func() bool {
		v, _ := g.metric("sluice_discovery_pending", nil)
		return v == 0 && g.adminStatus()["discovery_error"] == ""
	})
	// /metrics shows the configuration once the supervisor installed it;
	// the workers swap to it a moment later.
	await(t, "a request served by a", func() bool {
		res, _ := post(t, freshClient(), g.URL+"/v1/chat/completions", keyAll, chatBody("m", false, "x"), nil)
		return res.StatusCode == 200 && len(a.Received()) > 0
	})
	if c := cells(); c != float64(start+1) {
		t.Fatalf("%v cells used; want %d", c, start+1)
	}
}
