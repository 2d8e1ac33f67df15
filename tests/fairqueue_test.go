package tests

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// fairKeys are the keys of fairConfig: name → (secret, extra YAML).
var fairKeys = []struct{ name, extra string }{
	{"a", ""}, {"b", ""}, {"c", "priority: 1"},
	{"x", ""}, {"y", ""}, {"w2", "weight: 2"}, {"w1", "weight: 1"},
}

// fairSecret is the API key of fairKeys' key name.
func fairSecret(name string) string { return "sk-fair-" + name }

// fairConfig is a gateway of 2 workers whose model "m" has one backend of
// 16 slots and a queue long enough for every test here, with fairKeys.
func fairConfig(url, usage string) string {
	var keys strings.Builder
	for _, k := range fairKeys {
		fmt.Fprintf(&keys, "  - name: %s\n    sha256: %s\n    models: [\"*\"]\n", k.name, sha(fairSecret(k.name)))
		if k.extra != "" {
			fmt.Fprintf(&keys, "    %s\n", k.extra)
		}
	}
	return fmt.Sprintf(`listen: 127.0.0.1:0
admin: 127.0.0.1:0
workers: 2
shutdown_timeout: 20s
usage_log: %s
keys:
%smodels:
  - name: m
    queue: {max: 1000, timeout: 300s}
    backends:
      - url: %s
        slots: 16
`, usage, keys.String(), url)
}

// fairSend posts a chat completion of key with the given fake headers and
// delivers its status once its body is read (0 and the error text for a
// failure before a status; a canceled ctx ends it as a failure).
func fairSend(ctx context.Context, g *gateway, key string, hdr map[string]string) <-chan string {
	out := make(chan string, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.URL+"/v1/chat/completions",
			bytes.NewReader(chatBody("m", false, "fair queue "+key)))
		req.Header.Set("Authorization", "Bearer "+fairSecret(key))
		req.Header.Set("X-Test-Key", key)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		res, err := freshClient().Do(req)
		if err != nil {
			out <- "error: " + err.Error()
			return
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			out <- "error: " + err.Error()
			return
		}
		if res.StatusCode != http.StatusOK {
			out <- fmt.Sprintf("%d %s", res.StatusCode, body)
			return
		}
		out <- "200"
	}()
	return out
}

// arrivals is the backend's record of requests received, as the keys
// that sent them (X-Test-Key).
func arrivals(be *fakevllm.Server) []string {
	var keys []string
	for _, r := range be.Received() {
		keys = append(keys, r.Header.Get("X-Test-Key"))
	}
	return keys
}

// holds releases the backend's held requests one at a time, in the order
// they arrived (X-Fake-Hold-Headers names them).
type holds struct {
	be       *fakevllm.Server
	released map[string]bool
}

// releaseOldest lets the oldest held request that arrived go on and
// returns its name.
func (h *holds) releaseOldest(t *testing.T) string {
	t.Helper()
	for _, r := range h.be.Received() {
		if name := r.Header.Get("X-Fake-Hold-Headers"); name != "" && !h.released[name] {
			h.released[name] = true
			h.be.Release(name)
			return name
		}
	}
	t.Fatal("no held request to release")
	return ""
}

// heldNow is the number of requests that arrived held and are not
// released.
func (h *holds) heldNow() int {
	n := 0
	for _, r := range h.be.Received() {
		if name := r.Header.Get("X-Fake-Hold-Headers"); name != "" && !h.released[name] {
			n++
		}
	}
	return n
}

// releaseAll lets every hold of names go on, arrived or not.
func (h *holds) releaseAll(names []string) {
	for _, n := range names {
		if !h.released[n] {
			h.released[n] = true
			h.be.Release(n)
		}
	}
}

// A key that sends one request at a time is not queued behind another
// key's backlog: with 16 slots held by key a and 200 more of a's requests
// waiting (spread over both workers), b's request takes one of the next
// two freed slots, not the 201st (first come, first served); a request of
// a key of priority 1 takes the very next. Every release is followed by a
// request reaching the backend: no slot stays free while requests wait.
func TestFairQueueBetweenKeys(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 3})
	usage := t.TempDir() + "/usage.log"
	g := startGateway(t, fairConfig(be.URL(), usage))
	g.UsageLog = usage
	h := &holds{be: be, released: map[string]bool{}}
	var names []string
	var aDone []<-chan string
	sendA := func(i int) {
		name := "a" + strconv.Itoa(i)
		names = append(names, name)
		aDone = append(aDone, fairSend(context.Background(), g, "a", map[string]string{"X-Fake-Hold-Headers": name}))
	}
	defer func() { h.releaseAll(names) }()
	for i := range 16 {
		sendA(i)
	}
	await(t, "a's first 16 requests to hold every slot", func() bool { return len(be.Received()) == 16 })
	for i := 16; i < 216; i++ {
		sendA(i)
	}
	depth := func(key string) float64 {
		v, _ := g.metric("sluice_key_queue_depth", map[string]string{"key": key})
		return v
	}
	await(t, "200 of a's requests to wait", func() bool { return depth("a") == 200 })
	if v, _ := g.metric("sluice_queue_depth", map[string]string{"model": "m"}); v != 200 {
		t.Fatalf("sluice_queue_depth = %v with 200 waiting", v)
	}

	// One release at a time, until the request of key reaches the backend:
	// how many releases it waited for.
	waitFor := func(key string, done <-chan string) int {
		t.Helper()
		await(t, key+"'s request to wait", func() bool { return depth(key) == 1 })
		for releases := 1; ; releases++ {
			before := len(be.Received())
			h.releaseOldest(t)
			await(t, "the freed slot to be taken", func() bool { return len(be.Received()) > before })
			for _, k := range arrivals(be)[before:] {
				if k == key {
					if got := <-done; got != "200" {
						t.Fatalf("%s's request: %s", key, got)
					}
					// Its slot, freed at once, goes to a's next: every
					// slot held by a again before the next step.
					await(t, "every slot held by a again", func() bool { return h.heldNow() == 16 || depth("a") == 0 })
					return releases
				}
			}
			if releases > 220 {
				t.Fatalf("%s's request never reached the backend", key)
			}
		}
	}
	n := waitFor("b", fairSend(context.Background(), g, "b", nil))
	t.Logf("b waited for %d slot releases", n)
	if n > 2 {
		t.Errorf("key b, one request at a time, waited for %d slot releases behind a's 200 (first come, first served: 201); want at most 2", n)
	}
	if n := waitFor("c", fairSend(context.Background(), g, "c", nil)); n != 1 {
		t.Errorf("key c (priority 1) waited for %d slot releases while priority-0 requests filled the queue; want 1", n)
	}
	var line map[string]any
	await(t, "c's usage line", func() bool {
		for _, l := range g.usageLines() {
			if l["key"] == "c" {
				line = l
			}
		}
		return line != nil
	})
	if line["queued"] != true || line["queue_priority"] != float64(1) {
		t.Errorf("c's usage line: queued %v, queue_priority %v", line["queued"], line["queue_priority"])
	}
	if v, _ := g.metric("sluice_key_queued_total", map[string]string{"key": "b"}); v != 1 {
		t.Errorf("sluice_key_queued_total{key=b} = %v, want 1", v)
	}

	// Everyone else is served: nothing lost.
	h.releaseAll(names)
	for i, c := range aDone {
		if got := <-c; got != "200" {
			t.Fatalf("a's request %d: %s", i, got)
		}
	}
	if d := depth("a"); d != 0 {
		t.Errorf("sluice_key_queue_depth{key=a} = %v with nobody waiting", d)
	}
}

// Keys that both keep the queue full share the slots by tokens, in the
// ratio of their weights: equal weights get equal token throughput even
// when one key's answers are four times longer (so it gets a quarter of
// the requests), and weights 2:1 get tokens 2:1 — each within 10%, over
// the requests the backend received while both waited.
func TestFairQueueTokenShares(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 3})
	usage := t.TempDir() + "/usage.log"
	g := startGateway(t, fairConfig(be.URL(), usage))

	// share runs 24 client loops per key (more than the 16 slots: both
	// keys always wait) until the backend has received n requests, and
	// returns each key's tokens over those after the first skip.
	share := func(keys [2]string, tokens [2]int, n, skip int) map[string]int {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		var loops sync.WaitGroup
		start := len(be.Received())
		for i, key := range keys {
			// 80 ms an answer: 16 slots serve 200 a second, well below
			// what the gateway passes even under the race detector, so
			// the slots are the bottleneck and the queue decides.
			hdr := map[string]string{"X-Fake-Tokens": strconv.Itoa(tokens[i]), "X-Fake-Delay-Ms": "80"}
			for range 24 {
				loops.Add(1)
				go func() {
					defer loops.Done()
					for ctx.Err() == nil {
						if got := <-fairSend(ctx, g, key, hdr); got != "200" && ctx.Err() == nil {
							t.Errorf("%s: %s", key, got)
							return
						}
					}
				}()
			}
		}
		await(t, fmt.Sprintf("%d requests to reach the backend", n), func() bool { return len(be.Received())-start >= n })
		cancel()
		loops.Wait()
		got := map[string]int{}
		for _, r := range be.Received()[start+skip : start+n] {
			k := r.Header.Get("X-Test-Key")
			completion, _ := strconv.Atoi(r.Header.Get("X-Fake-Tokens"))
			got[k] += r.BodyLen/4 + completion // as the fake counts them in its usage
		}
		return got
	}
	within := func(what string, got, want float64) {
		t.Helper()
		if got < want*0.9 || got > want*1.1 {
			t.Errorf("%s: token ratio %.3f, want %.2f ± 10%%", what, got, want)
		} else {
			t.Logf("%s: token ratio %.3f (want %.2f)", what, got, want)
		}
	}
	eq := share([2]string{"x", "y"}, [2]int{200, 50}, 700, 100)
	within("equal weights, answers of 200 and 50 tokens", float64(eq["x"])/float64(eq["y"]), 1)
	w := share([2]string{"w2", "w1"}, [2]int{100, 100}, 500, 100)
	within("weights 2:1", float64(w["w2"])/float64(w["w1"]), 2)

	// The counters are the keys' cells: a reload that changes a key's
	// weight keeps them as they are.
	served := func() float64 {
		v, _ := g.metric("sluice_key_served_tokens", map[string]string{"key": "x"})
		return v
	}
	before := served()
	if before == 0 {
		t.Fatal("sluice_key_served_tokens{key=x} is 0 after x was served")
	}
	g.reloadWith(strings.Replace(fairConfig(be.URL(), usage), "weight: 2", "weight: 3", 1))
	if after := served(); after != before {
		t.Errorf("a reload moved key x's counter from %v to %v", before, after)
	}
}

// A worker killed with requests of a key waiting in it leaves no trace in
// the key's queue figures: its waiting counts go with its column, and once
// the survivors are served the key has nothing waiting.
func TestFairQueueKilledWorkerLeavesNoTrace(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 3})
	g := startGateway(t, fairConfig(be.URL(), "off"))
	h := &holds{be: be, released: map[string]bool{}}
	var names []string
	var done []<-chan string
	for i := range 56 { // 16 hold the slots, 40 wait, over both workers
		name := "k" + strconv.Itoa(i)
		names = append(names, name)
		done = append(done, fairSend(context.Background(), g, "a", map[string]string{"X-Fake-Hold-Headers": name}))
	}
	defer func() { h.releaseAll(names) }()
	depth := func(key string) float64 {
		v, _ := g.metric("sluice_key_queue_depth", map[string]string{"key": key})
		return v
	}
	await(t, "40 of a's requests to wait", func() bool { return depth("a") == 40 })
	pids := g.workerPIDs()
	if len(pids) != 2 {
		t.Fatalf("workers %v", pids)
	}
	syscall.Kill(pids[0], syscall.SIGKILL)
	g.awaitReady()
	h.releaseAll(names)
	failed := 0
	for _, c := range done {
		if got := <-c; got != "200" {
			failed++
		}
	}
	if failed == 0 || failed == len(done) {
		t.Fatalf("%d of %d requests failed: the killed worker held none of them, or all", failed, len(done))
	}
	if d := depth("a"); d != 0 {
		t.Errorf("sluice_key_queue_depth{key=a} = %v with nobody waiting: the killed worker's waiters were left counted", d)
	}
	if v, _ := g.metric("sluice_queue_depth", map[string]string{"model": "m"}); v != 0 {
		t.Errorf("sluice_queue_depth = %v with nobody waiting", v)
	}
	// The queue still serves: a new request of another key goes through.
	if got := <-fairSend(context.Background(), g, "b", nil); got != "200" {
		t.Errorf("after the restart: %s", got)
	}
}
