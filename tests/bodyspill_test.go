package tests

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// Bodies over body_memory go to a temporary file in body_temp_dir and come
// out unchanged: to the backend, and to the next backend on a retry (the
// file is kept, mapped, until the response starts). The files are never
// visible in the directory (unlinked from birth) and are gone once the
// response has started: the spilled gauge goes back to zero. Fails if
// bodies stay in memory (the spilled count stays 0), if a retry loses the
// body, or if a file is left behind.
func TestLargeBodiesSpillToFile(t *testing.T) {
	ok := startBackend(t, fakevllm.Options{Tokens: 2})
	bad := startBackend(t, fakevllm.Options{FailStatus: 503})
	tmp := t.TempDir()
	cfg, _ := twoBackendConfig(t, bad.URL(), ok.URL(), "")
	cfg = strings.Replace(cfg, "keys:", fmt.Sprintf("body_memory: 1KiB\nbody_temp_dir: %s\nkeys:", tmp), 1)
	g := startGateway(t, cfg)
	metric := func(name string) float64 { v, _ := g.metric(name, nil); return v }

	const n = 6
	for i := 0; i < n; i++ {
		stream := i%2 == 0
		sent := chatBody("m", stream, fmt.Sprintf("%d %s", i, strings.Repeat("a long document ", 200<<10/16)))
		res, out := post(t, http.DefaultClient, g.URL+"/v1/chat/completions", keyAll, sent, nil)
		if res.StatusCode != 200 {
			t.Fatalf("request %d (stream %v): %d %s", i, stream, res.StatusCode, out)
		}
		if stream && !bytes.Contains(out, []byte("data: [DONE]")) {
			t.Fatalf("request %d: stream without [DONE]: %.200s", i, out)
		}
		if !stream && !receivedBody(ok, asSent("all", sent)) {
			t.Fatalf("request %d reached the healthy backend without its exact body", i)
		}
	}
	if got := metric("sluice_request_bodies_spilled_total"); got != n {
		t.Fatalf("sluice_request_bodies_spilled_total = %v, want %d (every body is over body_memory)", got, n)
	}
	await(t, "the spilled bytes to be let go", func() bool { return metric("sluice_request_body_bytes_spilled") == 0 })
	if entries, err := os.ReadDir(tmp); err != nil || len(entries) != 0 {
		t.Fatalf("body_temp_dir holds %v (%v), want nothing", entries, err)
	}

	// While the backend has not answered, the spilled body is held and
	// counted; once the stream's headers are out it is let go.
	sent := chatBody("m", true, strings.Repeat("held document ", 100<<10/14))
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/chat/completions", bytes.NewReader(sent))
	req.Header.Set("Authorization", "Bearer "+keyAll)
	req.Header.Set("X-Fake-Hold-Headers", "spill-headers")
	answered := make(chan *http.Response, 1)
	go func() {
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
		}
		answered <- res
	}()
	await(t, "the healthy backend to hold the request", func() bool { return ok.Running() == 1 })
	if v := metric("sluice_request_body_bytes_spilled"); v < float64(len(sent)) {
		t.Fatalf("spilled bytes while the backend holds the request: %v, want >= %d", v, len(sent))
	}
	ok.Release("spill-headers")
	res := <-answered
	if res == nil {
		t.FailNow()
	}
	defer res.Body.Close()
	if ev := readEvents(t, bufio.NewReader(res.Body)); len(ev) == 0 || ev[len(ev)-1] != "[DONE]" {
		t.Fatalf("held stream events: %q", ev)
	}
	await(t, "the held body to be let go", func() bool { return metric("sluice_request_body_bytes_spilled") == 0 })
}

// A body_temp_dir that goes away under a running gateway costs no request:
// bodies stay in memory, and the failure is logged (once, not per request).
func TestSpillFallsBackToMemory(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 2})
	tmp := filepath.Join(t.TempDir(), "bodies")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	usage := filepath.Join(t.TempDir(), "usage.log")
	g := startGateway(t, baseConfig(be.URL(), usage, "body_memory: 1KiB\nbody_temp_dir: "+tmp))
	if err := os.Remove(tmp); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		sent := chatBody("m", false, fmt.Sprintf("%d %s", i, strings.Repeat("x", 100<<10)))
		res, out := post(t, http.DefaultClient, g.URL+"/v1/chat/completions", keyAll, sent, nil)
		if res.StatusCode != 200 || !receivedBody(be, asSent("all", sent)) {
			t.Fatalf("request %d: %d %s (body received intact: %v)", i, res.StatusCode, out, receivedBody(be, asSent("all", sent)))
		}
	}
	if l := g.awaitLog("request body could not go to a temporary file"); l["body"] != "kept in memory" {
		t.Fatalf("log line %v: want body=kept in memory", l)
	}
	if v, _ := g.metric("sluice_request_bodies_spilled_total", nil); v != 0 {
		t.Fatalf("sluice_request_bodies_spilled_total = %v with no directory to spill to", v)
	}
	// Two workers: at most one line each within the minute.
	if n := strings.Count(g.stderr.String(), "request body could not go to a temporary file"); n > 2 {
		t.Fatalf("the failure was logged %d times for 4 requests, want once per worker", n)
	}
}

// Chunked uploads (no Content-Length) count against body_memory and go to
// a file past it, as bodies with a declared length do: each reaches the
// backend intact, streamed or not, and 16 uploads held part way with
// body_memory at 64 KiB leave all but a few in files. Before, chunked
// bodies were read into memory whole, uncounted: the spilled count stayed
// at 0 (issue: 16 queued 8 MiB uploads held 128 MiB, body_memory 8 MiB).
func TestChunkedBodiesSpill(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 2})
	tmp := t.TempDir()
	g := startGateway(t, limitedConfig(be.URL(), "off", 1, "max_concurrent: 1000",
		"max_body: 4MiB\nbody_memory: 64KiB\nbody_temp_dir: "+tmp))
	metric := func(name string) float64 { v, _ := g.metric(name, nil); return v }

	const n = 3
	for i := range n {
		stream := i == 1
		sent := chatBody("m", stream, fmt.Sprintf("%d %s", i, strings.Repeat("a chunked document ", 300<<10/19)))
		// An io.MultiReader hides the length: the client sends it chunked.
		req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/chat/completions", io.MultiReader(bytes.NewReader(sent)))
		req.Header.Set("Authorization", "Bearer "+keyLimited)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || (stream && !bytes.Contains(out, []byte("data: [DONE]"))) {
			t.Fatalf("chunked request %d (stream %v): %d %.300s", i, stream, res.StatusCode, out)
		}
		if !stream && !receivedBody(be, asSent("limited", sent)) { // a stream's body gains stream_options
			t.Fatalf("chunked request %d reached the backend without its exact body", i)
		}
	}
	if got := metric("sluice_request_bodies_spilled_total"); got != n {
		t.Fatalf("sluice_request_bodies_spilled_total = %v after %d chunked bodies over body_memory, want %d", got, n, n)
	}
	await(t, "the spilled bytes to be let go", func() bool { return metric("sluice_request_body_bytes_spilled") == 0 })

	// Uploads held part way: 256 KiB of each sent, in chunks, the rest not.
	const clients = 16
	piece := strings.Repeat("y", 32<<10)
	for range clients {
		conn, err := net.Dial("tcp", strings.TrimPrefix(g.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		var b strings.Builder
		b.WriteString("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
			"Authorization: Bearer " + keyLimited + "\r\nTransfer-Encoding: chunked\r\n\r\n")
		first := `{"model":"m","messages":[{"role":"user","content":"`
		fmt.Fprintf(&b, "%x\r\n%s\r\n", len(first), first)
		for range 8 {
			fmt.Fprintf(&b, "%x\r\n%s\r\n", len(piece), piece)
		}
		if _, err := conn.Write([]byte(b.String())); err != nil {
			t.Fatal(err)
		}
	}
	await(t, "the held chunked uploads in files, all but a few", func() bool {
		return metric("sluice_request_bodies_spilled_total") >= n+clients-2 &&
			metric("sluice_request_body_bytes_spilled") >= float64((clients-2)*8*len(piece))
	})
}
