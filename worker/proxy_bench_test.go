package worker_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/tests/fakevllm"
	"github.com/sluice-gw/sluice/worker"
)

// BenchmarkProxy sends one request at a time through a worker running in
// this process (hertz on netpoll, key check, limits, body scan, upstream
// round trip, usage line) to the fake vLLM over loopback, and, side by
// side, the same request straight to the fake. Client, worker and fake
// share the process, so each figure counts all three: the gateway's own
// cost is the difference between "sluice" and "direct" in the same run
// (allocs/op and B/op exactly; ns/op only as loosely as two cores allow).
// The rig in bench/ measures the real processes; this is the quick loop
// for a change on the data path.
func BenchmarkProxy(b *testing.B) {
	be, err := fakevllm.Start("127.0.0.1:0", fakevllm.Options{Tokens: 8, NoRecord: true})
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	const key = "sk-bench"
	sum := sha256.Sum256([]byte(key))
	// The usage log goes to a file, written every second, as in the rig.
	cfg, err := config.Parse("bench.yaml", []byte(fmt.Sprintf(`listen: 127.0.0.1:0
usage_log: %s
usage_log_flush: 1s
keys:
  - name: bench
    sha256: %s
    models: ["*"]
    requests_per_minute: 1000000000
models:
  - name: bench
    backends:
      - url: %s
        slots: 1000
`, filepath.Join(b.TempDir(), "usage.log"), hex.EncodeToString(sum[:]), be.URL())))
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() {
		done <- worker.Run(ctx, worker.Options{Listener: ln, Config: cfg,
			Log: slog.New(slog.DiscardHandler), Ready: func() { close(ready) }})
	}()
	select {
	case <-ready:
	case err := <-done:
		b.Fatalf("worker did not start: %v", err)
	}
	defer func() {
		stop()
		if err := <-done; err != nil {
			b.Errorf("worker: %v", err)
		}
	}()

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	defer client.CloseIdleConnections()
	gateway := "http://" + ln.Addr().String()
	for _, c := range []struct {
		name   string
		stream bool
		prompt int
	}{{"small", false, 200}, {"stream-100KB", true, 100_000}} {
		body := []byte(fmt.Sprintf(`{"model":"bench","stream":%t,"messages":[{"role":"user","content":%q}]}`,
			c.stream, strings.Repeat("x", c.prompt)))
		for _, target := range []struct{ name, url string }{{"direct", be.URL()}, {"sluice", gateway}} {
			b.Run(c.name+"/"+target.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(body)))
				for b.Loop() {
					send(b, client, target.url, key, body, c.stream)
				}
			})
		}
	}
}

// send posts one completion and reads the whole answer, failing on
// anything but a 200 that ends as an answer should.
func send(b *testing.B, client *http.Client, base, key string, body []byte, stream bool) {
	req, err := http.NewRequest(http.MethodPost, base+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	data, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK {
		b.Fatalf("status %d, err %v: %.200s", res.StatusCode, err, data)
	}
	if stream && !bytes.HasSuffix(bytes.TrimSpace(data), []byte("data: [DONE]")) {
		b.Fatalf("stream did not end with [DONE]: %.200s", data)
	}
	if !stream && !bytes.Contains(data, []byte(`"usage"`)) {
		b.Fatalf("answer without usage: %.200s", data)
	}
}
