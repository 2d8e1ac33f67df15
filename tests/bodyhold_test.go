package tests

import (
	"bufio"
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// The request body is kept for retries exactly until the response starts
// flowing to the client: while the backend has not answered, a retry may
// still need it (this fails if the release moves earlier); once a stream's
// headers went out it is let go, minutes before the stream ends (this
// fails if it is kept to the end). sluice_request_body_bytes_held is the
// gauge of the bodies the workers keep.
func TestRequestBodyKeptUntilResponseStarts(t *testing.T) {
	g, be := newGateway(t, fakevllm.Options{Tokens: 3}, "")
	held := func() float64 { v, _ := g.metric("sluice_request_body_bytes_held", nil); return v }
	body := chatBody("m", true, strings.Repeat("a long document ", 100<<10/16))
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/chat/completions", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+keyAll)
	req.Header.Set("X-Fake-Hold-Headers", "headers")
	req.Header.Set("X-Fake-Hold", "end")
	type answer struct {
		res *http.Response
		err error
	}
	answered := make(chan answer, 1)
	go func() {
		res, err := http.DefaultClient.Do(req)
		answered <- answer{res, err}
	}()
	await(t, "the backend to hold the request before its headers", func() bool { return be.Running() == 1 })
	if v := held(); v < float64(len(body)) {
		t.Fatalf("body bytes held before the backend answered: %v, want >= %d (a retry would need them)", v, len(body))
	}
	be.Release("headers")
	a := <-answered
	if a.err != nil {
		t.Fatal(a.err)
	}
	defer a.res.Body.Close()
	if _, err := nextEvent(bufio.NewReader(a.res.Body)); err != nil {
		t.Fatalf("first event: %v", err)
	}
	// The stream is open (held by the backend after its first event) and
	// its body must be gone.
	await(t, "the body to be let go while the stream runs", func() bool { return held() == 0 })
	if be.Running() != 1 {
		t.Fatalf("the stream ended early: backend running %d", be.Running())
	}
	be.Release("end")
}
