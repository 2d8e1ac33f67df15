package tests

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// largeTokens makes an answer of ~1.6 MB (" tok" per token): past the
// 1 MiB a worker reads whole before sending (proxy/phases.go,
// wholeAnswerMax).
const largeTokens = 400_000

// askWhole sends a non-streamed chat request with the fake's per-request
// headers, reads the answer to its end and returns it with the read error.
func askWhole(t *testing.T, url string, hdr map[string]string) (*http.Response, []byte, error) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", bytes.NewReader(chatBody("m", false, "hi")))
	req.Header.Set("Authorization", "Bearer "+keyAll)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	return res, body, err
}

// A non-streamed answer arrives whole and the same as straight from the
// backend, whatever its size: up to 1 MiB read whole first and sent with a
// Content-Length; past it relayed as it arrives, with the backend's
// Content-Length, or chunked when the backend gave none. Its usage and
// finish reason are in the usage line either way.
func TestLargeAnswersRelayed(t *testing.T) {
	g, be := newGateway(t, fakevllm.Options{}, "")
	cases := []struct {
		name       string
		tokens     int
		chunked    bool // the backend sends no Content-Length
		chunkedOut bool // the client gets it chunked (relayed, with no length to give)
	}{
		{"small", 10, false, false},
		{"small, chunked by the backend", 10, true, false},
		{"large", largeTokens, false, false},
		{"large, chunked by the backend", largeTokens, true, true},
		{"large, usage before 2 MB of prompt_logprobs", 10, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hdr := map[string]string{"X-Fake-Tokens": strconv.Itoa(c.tokens)}
			if strings.Contains(c.name, "prompt_logprobs") {
				hdr["X-Fake-Prompt-Logprobs"] = "40000" // ~60 bytes each
			}
			if c.chunked {
				hdr["X-Fake-Chunked"] = "1"
			}
			res, got, err := askWhole(t, g.URL, hdr)
			if err != nil || res.StatusCode != 200 {
				t.Fatalf("through the gateway: status %d, read error %v", res.StatusCode, err)
			}
			_, direct, err := askWhole(t, be.URL(), hdr)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(direct) {
				t.Fatalf("%d bytes through the gateway, %d straight from the backend", len(got), len(direct))
			}
			var a, b struct {
				Choices []struct {
					Message struct{ Content string }
				}
				Usage map[string]any
			}
			if json.Unmarshal(got, &a) != nil || json.Unmarshal(direct, &b) != nil ||
				len(a.Choices) != 1 || a.Choices[0].Message.Content != b.Choices[0].Message.Content {
				t.Fatal("the answer through the gateway is not the backend's")
			}
			if chunked := res.ContentLength < 0; chunked != c.chunkedOut || (!chunked && res.ContentLength != int64(len(got))) {
				t.Errorf("Content-Length %d for %d bytes: want chunked %v", res.ContentLength, len(got), c.chunkedOut)
			}
			line := g.usageLineFor(t, res.Header.Get("X-Request-Id"))
			if e, _ := line["error"].(string); line["status"] != 200.0 || e != "" {
				t.Errorf("usage line status %v error %v", line["status"], line["error"])
			}
			if line["completion_tokens"] != float64(c.tokens) || line["finish_reason"] != "length" {
				t.Errorf("usage line completion_tokens %v finish_reason %v, want %d length",
					line["completion_tokens"], line["finish_reason"], c.tokens)
			}
			if line["bytes_out"] != float64(len(got)) {
				t.Errorf("usage line bytes_out %v, want %d", line["bytes_out"], len(got))
			}
		})
	}
}

// A backend that breaks off an answer: before the gateway sent anything the
// client gets a clean 502; after, the body is cut — the client's read fails
// — never ended as if it were whole.
func TestBrokenAnswers(t *testing.T) {
	g, _ := newGateway(t, fakevllm.Options{}, "")
	large := strconv.Itoa(largeTokens)
	cases := []struct {
		name   string
		hdr    map[string]string
		status int // 0: cut after 200
	}{
		{"small, broken", map[string]string{"X-Fake-Tokens": "10", "X-Fake-Break-After": "20"}, 502},
		{"large, broken before 1 MiB", map[string]string{"X-Fake-Tokens": large, "X-Fake-Break-After": "500000", "X-Fake-Chunked": "1"}, 502},
		{"large, broken at once", map[string]string{"X-Fake-Tokens": large, "X-Fake-Break-After": "0"}, 502},
		{"large, broken after 1 MiB", map[string]string{"X-Fake-Tokens": large, "X-Fake-Break-After": "1200000", "X-Fake-Chunked": "1"}, 0},
		{"large with its length, broken", map[string]string{"X-Fake-Tokens": large, "X-Fake-Break-After": "300000"}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, body, err := askWhole(t, g.URL, c.hdr)
			if c.status != 0 {
				if res.StatusCode != c.status || err != nil {
					t.Fatalf("status %d (read error %v), want a clean %d: %.200s", res.StatusCode, err, c.status, body)
				}
				checkError(t, c.name, res.StatusCode, body, c.status, "upstream_failed", "before the response was complete")
			} else {
				if res.StatusCode != 200 {
					t.Fatalf("status %d, want 200 and a cut body", res.StatusCode)
				}
				if !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("reading the cut answer: %v after %d bytes; want unexpected EOF", err, len(body))
				}
			}
			line := g.usageLineFor(t, res.Header.Get("X-Request-Id"))
			if line["error"] != "upstream_failed" {
				t.Errorf("usage line error %v, want upstream_failed", line["error"])
			}
		})
	}
}

// A stream event past the gateway's 1 MiB bound on an unfinished event
// (proxy/sse, MaxEvent) — here 3 MiB with no blank line in it — goes on to
// the client as it arrives instead of being held whole; the events around
// it are relayed and counted as usual, and every byte arrives in order.
func TestGiantStreamEventPassedThrough(t *testing.T) {
	giant := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + strings.Repeat("y", 3<<20) + "\"}}]}\n\n"
	stream := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n" + giant +
		"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" +
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2,\"total_tokens\":5}}\n\n" +
		"data: [DONE]\n\n"
	// The backend sends the stream up to 2 MiB into the giant event, then
	// waits until the client has 1.5 MiB of it: held whole, it never would.
	cut := strings.Index(stream, giant) + 2<<20
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		write := func(s string) {
			for p := s; len(p) > 0; p = p[min(len(p), 64<<10):] { // in 64 KiB writes
				w.Write([]byte(p[:min(len(p), 64<<10)]))
				w.(http.Flusher).Flush()
			}
		}
		write(stream[:cut])
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		write(stream[cut:])
	})
	be := httptest.NewServer(mux)
	defer be.Close()
	usage := filepath.Join(t.TempDir(), "usage.log")
	g := startGateway(t, baseConfig(be.URL, usage, ""))
	g.UsageLog = usage

	req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer "+keyAll)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	first := make([]byte, strings.Index(stream, giant)+3<<19)
	read := make(chan error, 1)
	go func() { _, err := io.ReadFull(res.Body, first); read <- err }()
	select {
	case err := <-read:
		if err != nil {
			t.Fatalf("reading the first 1.5 MiB of the giant event: %v", err)
		}
	case <-time.After(deadline):
		t.Fatalf("the client had not got 1.5 MiB of the giant event %v after the backend sent 2 MiB of it: the gateway holds it", deadline)
	}
	close(release)
	rest, err := io.ReadAll(res.Body)
	got := append(first, rest...)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("status %d, read error %v", res.StatusCode, err)
	}
	// The usage-only event is the gateway's (the client did not ask): dropped.
	want := strings.Replace(stream, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2,\"total_tokens\":5}}\n\n", "", 1)
	if string(got) != want {
		t.Fatalf("the client got %d bytes, not the %d of the stream less its usage event", len(got), len(want))
	}
	line := g.usageLineFor(t, res.Header.Get("X-Request-Id"))
	if line["total_tokens"] != 5.0 || line["finish_reason"] != "stop" {
		t.Errorf("usage line total_tokens %v finish_reason %v, want 5 stop", line["total_tokens"], line["finish_reason"])
	}
}

// A client that stops reading a relayed answer does not hold the backend
// slot past timeouts.total: the gateway's writes to it fail then, the
// exchange ends, and the usage line says client_stalled.
func TestStalledClientReleased(t *testing.T) {
	be := startBackend(t, fakevllm.Options{})
	usage := filepath.Join(t.TempDir(), "usage.log")
	// The fake builds its 40 MB answer before the head: under -race on a
	// loaded CI machine that took over 5 s once (504). 15 s leaves room;
	// the test lasts total + the relay's 5 s write grace.
	g := startGateway(t, withModelExtra(baseConfig(be.URL(), usage, ""), "    timeouts: {total: 15s}"))
	g.UsageLog = usage

	line := stallOnLargeAnswer(t, g)
	if line["status"] != 499.0 || line["error"] != "client_stalled" {
		t.Errorf("usage line status %v error %v, want 499 client_stalled", line["status"], line["error"])
	}
}

// An HTTP/1.0 client cannot take chunks: a large answer without a length
// from the backend reaches it as a body that ends when the connection
// closes, whole and unchunked.
func TestLargeAnswerToHTTP10(t *testing.T) {
	g, be := newGateway(t, fakevllm.Options{}, "")
	hdr := map[string]string{"X-Fake-Tokens": strconv.Itoa(largeTokens), "X-Fake-Chunked": "1"}
	_, direct, err := askWhole(t, be.URL(), hdr)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", strings.TrimPrefix(g.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(deadline))
	body := chatBody("m", false, "hi")
	fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.0\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
		"X-Fake-Tokens: %d\r\nX-Fake-Chunked: 1\r\nContent-Length: %d\r\n\r\n%s", keyAll, largeTokens, len(body), body)
	all, err := io.ReadAll(conn) // to the close
	if err != nil {
		t.Fatal(err)
	}
	head, got, ok := bytes.Cut(all, []byte("\r\n\r\n"))
	if !ok || !bytes.HasPrefix(head, []byte("HTTP/1.1 200")) || bytes.Contains(bytes.ToLower(head), []byte("chunked")) {
		t.Fatalf("head %q", head)
	}
	if len(got) != len(direct) || !bytes.HasSuffix(got, []byte(`"prompt_logprobs":null}`)) {
		t.Fatalf("%d bytes after the head, %d from the backend", len(got), len(direct))
	}
}

// stallOnLargeAnswer asks for a 40 MB answer, reads only the start of its
// status line, and returns the request's usage line once it is written.
func stallOnLargeAnswer(t *testing.T, g *gateway) map[string]any {
	t.Helper()
	conn := dialRaw(t, g)
	body := chatBody("m", false, "hi")
	fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nX-Fake-Tokens: 10000000\r\nContent-Length: %d\r\n\r\n%s", keyAll, len(body), body)
	head := make([]byte, 12)
	if _, err := io.ReadFull(conn, head); err != nil || string(head) != "HTTP/1.1 200" {
		t.Fatalf("answer began %q (%v)", head, err)
	}
	// Read no more: 40 MB cannot fit in the sockets' buffers.
	var line map[string]any
	await(t, "the usage line of the stalled request", func() bool {
		if lines := g.usageLines(); len(lines) > 0 {
			line = lines[len(lines)-1]
			return true
		}
		return false
	})
	return line
}
