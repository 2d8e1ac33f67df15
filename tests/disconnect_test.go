package tests

import (
	"testing"
	"time"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// A client that closes mid-stream cancels the upstream request: the
// backend sees its connection close (its handler ends), and the usage line
// records the client's departure (499). How long that takes is measured
// and logged (the issue asks for ≤ 100 ms; timing is not asserted).
func TestClientDisconnectCancelsUpstream(t *testing.T) {
	g, be := newGateway(t, fakevllm.Options{Tokens: 5}, "")
	_, _, body := openHeldStream(t, g, "gone")
	if be.Running() != 1 {
		t.Fatalf("backend running %d requests, want the held stream", be.Running())
	}
	closed := time.Now()
	body.Close()
	for be.Running() != 0 {
		if time.Since(closed) > deadline {
			t.Fatalf("the backend still runs the request %v after the client left", deadline)
		}
		time.Sleep(200 * time.Microsecond)
	}
	t.Logf("the backend saw the client leave %v after it closed", time.Since(closed).Round(10*time.Microsecond))
	await(t, "a usage line", func() bool { return len(g.usageLines()) == 1 })
	if l := g.usageLines()[0]; l["status"] != 499.0 || l["error"] != "client_closed" {
		t.Errorf("usage line: %v", l)
	}
}
