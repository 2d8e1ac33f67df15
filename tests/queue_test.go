package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// outcome is how one request of a queue test ended.
type outcome struct {
	status int
	code   string // the error's code, for a refusal
	id     string // X-Request-Id
	err    error
}

// launch sends a streamed chat completion for model "m" held at the
// backend under hold (or, with hold "", one answered at once) and delivers
// how it ended once its body is read to the end. cancel makes its client
// leave.
func launch(g *gateway, hold, content string) (<-chan outcome, context.CancelFunc) {
	return launchModel(g, "m", hold, content)
}

// launchModel is launch for another model.
func launchModel(g *gateway, model, hold, content string) (<-chan outcome, context.CancelFunc) {
	return launchAs(g, keyAll, model, hold, content)
}

// launchAs is launchModel for a request of key.
func launchAs(g *gateway, key, model, hold, content string) (<-chan outcome, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan outcome, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.URL+"/v1/chat/completions",
			bytes.NewReader(chatBody(model, hold != "", content)))
		req.Header.Set("Authorization", "Bearer "+key)
		if hold != "" {
			req.Header.Set("X-Fake-Hold", hold)
		}
		res, err := freshClient().Do(req)
		if err != nil {
			out <- outcome{err: err}
			return
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		o := outcome{status: res.StatusCode, id: res.Header.Get("X-Request-Id"), err: err}
		if res.StatusCode != 200 {
			var e struct {
				Error struct {
					Code string `json:"code"`
				} `json:"error"`
			}
			if jsonErr := json.Unmarshal(body, &e); jsonErr == nil {
				o.code = e.Error.Code
			}
		}
		out <- o
	}()
	return out, cancel
}

// startQueueGateway starts a fake backend and a gateway whose model "m"
// has 2 slots on it and the given queue. "m-alias", on the same server,
// does not read the server's /metrics (load_interval: 0s): every read the
// backend answers is m's, so a test knows when m's figure was read.
func startQueueGateway(t *testing.T, queue string) (*gateway, *fakevllm.Server) {
	t.Helper()
	be := startBackend(t, fakevllm.Options{Tokens: 3})
	usage := t.TempDir() + "/usage.log"
	cfg := slotsConfig(be.URL(), usage, 2, queue)
	if !strings.Contains(cfg, "    upstream_model: real-model\n") {
		t.Fatal("the base configuration changed: m-alias not found")
	}
	cfg = strings.Replace(cfg, "    upstream_model: real-model\n", "    upstream_model: real-model\n    load_interval: 0s\n", 1)
	g := startGateway(t, cfg)
	g.UsageLog = usage
	return g, be
}

// queueGauges reads the model's queue depth and its backend's slots in use.
func queueGauges(g *gateway, be *fakevllm.Server) (depth, inflight float64) {
	depth, _ = g.metric("sluice_queue_depth", map[string]string{"model": "m"})
	inflight, _ = g.metric("sluice_backend_inflight", map[string]string{"model": "m", "backend": be.URL()})
	return depth, inflight
}

// awaitGauges waits until the queue holds depth requests and inflight slots
// are taken; a request in watch that ends meanwhile fails the test (none of
// them may end before the test lets it).
func awaitGauges(t *testing.T, g *gateway, be *fakevllm.Server, depth, inflight float64, watch ...<-chan outcome) {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		d, f := queueGauges(g, be)
		if d == depth && f == inflight {
			return
		}
		for _, w := range watch {
			select {
			case o := <-w:
				t.Fatalf("waiting for queue depth %v and %v slots in use (now %v, %v), a request ended: %d %s %v",
					depth, inflight, d, f, o.status, o.code, o.err)
			default:
			}
		}
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for queue depth %v and %v slots in use (now %v, %v)", depth, inflight, d, f)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// awaitScrapedWhileHeld waits until the gateway has read the backend's
// /metrics while the held streams run, so that the figure it holds when
// they end counts them: a gateway that took that figure for load it does
// not own would keep requests queued behind slots that are free.
func awaitScrapedWhileHeld(t *testing.T, g *gateway, be *fakevllm.Server) {
	t.Helper()
	// A read that starts now, not one made a while ago: the next is then
	// as far off as it can be when the streams end.
	n := be.MetricsReads()
	await(t, "a read of the backend's load while the streams are held", func() bool {
		return be.MetricsReads() > n
	})
	await(t, "the load read while the streams are held", func() bool {
		v, _ := g.metric("sluice_backend_reported_load", map[string]string{"model": "m", "backend": be.URL()})
		return int(v) == be.Running() && v > 0
	})
}

// expect reads n outcomes from chans and checks that each is a 200 (want
// "") or a refusal with code want.
func expect(t *testing.T, want string, chans ...<-chan outcome) []outcome {
	t.Helper()
	var got []outcome
	for _, c := range chans {
		o := <-c
		switch {
		case o.err != nil:
			t.Fatalf("request: %v", o.err)
		case want == "" && o.status != 200, want != "" && o.code != want:
			t.Fatalf("request ended %d %q, want %q", o.status, o.code, want)
		}
		got = append(got, o)
	}
	return got
}

// usageOf returns the usage line of each request id, waiting for them all.
func usageOf(t *testing.T, g *gateway, ids ...string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	await(t, "the requests' usage lines", func() bool {
		lines = lines[:0]
		for _, id := range ids {
			for _, l := range g.usageLines() {
				if l["request_id"] == id {
					lines = append(lines, l)
				}
			}
		}
		return len(lines) == len(ids)
	})
	return lines
}

// checkServedAtOnce is what must hold once a round of queueing is over:
// the queue is empty and no slot is taken, so of three streams arriving
// together two are served at once and only the third, finding both slots
// taken, waits (never a queue_full: one place of two is used); after them,
// a lone request is served without queueing. Nothing here is timed: a
// request that waited says so in its usage line (queued).
func checkServedAtOnce(t *testing.T, g *gateway, be *fakevllm.Server, hold string) {
	t.Helper()
	awaitGauges(t, g, be, 0, 0)
	var streams []<-chan outcome
	for i := 0; i < 3; i++ {
		c, _ := launch(g, hold, fmt.Sprintf("%s-%d", hold, i))
		streams = append(streams, c)
	}
	awaitGauges(t, g, be, 1, 2, streams...)
	be.Release(hold)
	queued := 0
	for _, l := range usageOf(t, g, ids(expect(t, "", streams...))...) {
		if l["queued"] == true {
			queued++
		}
	}
	if queued != 1 {
		t.Errorf("%d of 3 streams arriving at 2 free slots waited in the queue, want 1", queued)
	}
	lone, _ := launch(g, "", hold+"-lone")
	if l := usageOf(t, g, ids(expect(t, "", lone))...)[0]; l["queued"] != false || l["queue_ms"] != 0.0 {
		t.Errorf("a lone request with every slot free waited in the queue: %v", l)
	}
	awaitGauges(t, g, be, 0, 0)
}

// ids are the request ids of outs.
func ids(outs []outcome) []string {
	var s []string
	for _, o := range outs {
		s = append(s, o.id)
	}
	return s
}

// fillSlotsAndQueue opens two streams held under hold, which take both
// slots, then two more that wait in the queue (max 2), and waits for the
// gateway to read the backend's load while they run. It returns the served
// and the queued requests.
func fillSlotsAndQueue(t *testing.T, g *gateway, be *fakevllm.Server, hold string) (served, queued []<-chan outcome, cancels []context.CancelFunc) {
	t.Helper()
	for i := 0; i < 2; i++ {
		c, _ := launch(g, hold, fmt.Sprintf("%s-served-%d", hold, i))
		served = append(served, c)
	}
	awaitGauges(t, g, be, 0, 2, served...)
	for i := 0; i < 2; i++ {
		c, cancel := launch(g, hold, fmt.Sprintf("%s-queued-%d", hold, i))
		queued, cancels = append(queued, c), append(cancels, cancel)
	}
	awaitGauges(t, g, be, 2, 2, append(served, queued...)...)
	awaitScrapedWhileHeld(t, g, be)
	return served, queued, cancels
}

// The queue never holds a request while a slot is free (issue 18, item 9):
// after every way a round of queueing can end — hand-overs to waiters,
// queue_full refusals, a client leaving while queued — new requests take
// the free slots at once, and none is refused queue_full while slots are
// free. Seen before: 2 slots, queue max 2, 5 streams at once; once all had
// ended, 2 new streams waited ~310 ms with both slots free and a third got
// queue_full, because the gateway took the backend's last-read count of
// running requests (its own, since finished) for load on the backend. The
// same after streams of another model that the same server serves.
func TestNoQueueingWhileSlotsFree(t *testing.T) {
	g, be := startQueueGateway(t, "{max: 2, max_per_key: 2, timeout: 60s}") // one key fills the queue

	// 5 streams at once: 2 served, 2 queued and handed a slot, 1 queue_full.
	var all []<-chan outcome
	for i := 0; i < 5; i++ {
		c, _ := launch(g, "five", fmt.Sprintf("five-%d", i))
		all = append(all, c)
	}
	var full outcome
	end := time.Now().Add(deadline)
	for refused := false; !refused; {
		for i, c := range all {
			select {
			case full = <-c:
				if full.code != "queue_full" {
					t.Fatalf("one of 5 streams at 2 slots and 2 queue places: %d %q %v", full.status, full.code, full.err)
				}
				all = append(all[:i], all[i+1:]...)
				refused = true
			default:
			}
			if refused {
				break
			}
		}
		if time.Now().After(end) {
			t.Fatal("none of 5 streams at 2 slots and 2 queue places was refused")
		}
		time.Sleep(10 * time.Millisecond)
	}
	awaitGauges(t, g, be, 2, 2, all...)
	awaitScrapedWhileHeld(t, g, be)
	be.Release("five")
	expect(t, "", all...)
	checkServedAtOnce(t, g, be, "after-five")

	// queue_full refusals, on connections spread over both workers.
	served, queued, _ := fillSlotsAndQueue(t, g, be, "full")
	for i := 0; i < 8; i++ {
		c, _ := launch(g, "full", "refused")
		expect(t, "queue_full", c)
	}
	be.Release("full")
	expect(t, "", append(served, queued...)...)
	checkServedAtOnce(t, g, be, "after-full")

	// A client leaves while queued; another takes its place; all are served.
	served, queued, cancels := fillSlotsAndQueue(t, g, be, "leave")
	cancels[0]()
	if o := <-queued[0]; o.err == nil {
		t.Fatalf("the client that left got an answer: %d", o.status)
	}
	awaitGauges(t, g, be, 1, 2, append(served, queued[1])...)
	late, _ := launch(g, "leave", "late")
	awaitGauges(t, g, be, 2, 2, append(served, queued[1], late)...)
	be.Release("leave")
	expect(t, "", append(served, queued[1], late)...)
	checkServedAtOnce(t, g, be, "after-leave")

	// Both queued clients leave: the slots free up with nobody waiting.
	served, queued, cancels = fillSlotsAndQueue(t, g, be, "leave-all")
	for i := range cancels {
		cancels[i]()
		<-queued[i]
	}
	awaitGauges(t, g, be, 0, 2, served...)
	be.Release("leave-all")
	expect(t, "", served...)
	checkServedAtOnce(t, g, be, "after-leave-all")

	// Streams of another model on the same server ("m-alias"): the page
	// counts them as well, and they end too.
	var alias []<-chan outcome
	for i := 0; i < 2; i++ {
		c, _ := launchModel(g, "m-alias", "alias", fmt.Sprintf("alias-%d", i))
		alias = append(alias, c)
	}
	await(t, "the other model's streams to run", func() bool { return be.Running() == 2 })
	awaitScrapedWhileHeld(t, g, be)
	be.Release("alias")
	expect(t, "", alias...)
	checkServedAtOnce(t, g, be, "after-alias")
}

// The same after waiters leave by queue_timeout.
func TestNoQueueingAfterQueueTimeout(t *testing.T) {
	g, be := startQueueGateway(t, "{max: 2, max_per_key: 2, timeout: 3s}") // one key fills the queue
	served, queued, _ := fillSlotsAndQueue(t, g, be, "timeout")
	expect(t, "queue_timeout", queued...)
	awaitGauges(t, g, be, 0, 2, served...)
	be.Release("timeout")
	expect(t, "", served...)
	checkServedAtOnce(t, g, be, "after-timeout")
}
