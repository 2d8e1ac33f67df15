package tests

import (
	"testing"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// A client that closes mid-stream cancels the upstream request: the
// backend sees its connection close (its handler ends), and the usage line
// records the client's departure (499).
func TestClientDisconnectCancelsUpstream(t *testing.T) {
	g, be := newGateway(t, fakevllm.Options{Tokens: 5}, "")
	_, _, body := openHeldStream(t, g, "gone")
	if be.Running() != 1 {
		t.Fatalf("backend running %d requests, want the held stream", be.Running())
	}
	body.Close()
	await(t, "the backend to see the client leave", func() bool { return be.Running() == 0 })
	await(t, "a usage line", func() bool { return len(g.usageLines()) == 1 })
	if l := g.usageLines()[0]; l["status"] != 499.0 || l["error"] != "client_closed" {
		t.Errorf("usage line: %v", l)
	}
}
