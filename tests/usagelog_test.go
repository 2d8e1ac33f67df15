package tests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// rawRequest sends one HTTP/1.1 request as the given bytes, unchecked by
// any client library, and returns the response's status.
func rawRequest(t *testing.T, addr, method, path, userAgent string, body []byte) int {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var req bytes.Buffer
	fmt.Fprintf(&req, "%s %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nUser-Agent: %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", method, path, keyAll, userAgent, len(body))
	req.Write(body)
	if _, err := conn.Write(req.Bytes()); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// Usage lines stay strict JSON and within PIPE_BUF whatever a client
// sends: a "user" of raw invalid UTF-8 and a lone surrogate, a model of
// control characters, a path and a User-Agent of bytes that each escape to
// several, all at once and over every budget.
func TestUsageLogHostileClient(t *testing.T) {
	g, _ := newGateway(t, fakevllm.Options{Tokens: 1}, "")
	addr := strings.TrimPrefix(g.URL, "http://")
	ua := strings.Repeat("\"\\\xff\xc3", 800)                      // 3,200 bytes: 2, 2, 3 and 3 once escaped
	path := "/v1/chat/completions" + strings.Repeat("%01%ff", 500) // decoded by the server: bytes 0x01 and 0xff
	user := "\"\xff\xfe\\ud800\\u0001\\ud83d\\ude00\""
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"user":` + user + `}`)
	if code := rawRequest(t, addr, "POST", "/v1/chat/completions", ua, body); code != 200 {
		t.Fatalf("a request with a hostile user and User-Agent: %d", code)
	}
	// (A model with a lone surrogate is refused at the scan, 400, and not
	// logged; this one is read, looked up and logged.)
	model := strings.Repeat(`\u0001\"`, 300) + `\u00ff`
	body = []byte(`{"model":"` + model + `","messages":[{"role":"user","content":"hi"}],"user":` + user + `}`)
	if code := rawRequest(t, addr, "POST", "/v1/chat/completions", ua, body); code != 404 {
		t.Fatalf("an unknown hostile model: %d", code)
	}
	rawRequest(t, addr, "POST", path, ua, body)
	var data []byte
	lines := 0
	await(t, "three usage lines", func() bool {
		data, _ = os.ReadFile(g.UsageLog)
		return bytes.Count(data, []byte("\n")) >= 3
	})
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if len(line) > 4096 || !utf8.Valid(line) || !json.Valid(line) || bytes.Contains(line, []byte(`\ud`)) {
			t.Fatalf("a line of %d bytes that a strict reader refuses (or over PIPE_BUF): %q", len(line), line)
		}
		var m map[string]any
		json.Unmarshal(line, &m)
		lines++
		if m["status"] == 200.0 && m["user"] != "\uFFFD\uFFFD\uFFFD\x01😀" {
			t.Errorf("user logged as %q", m["user"])
		}
		if s, _ := m["user_agent"].(string); !strings.HasPrefix(s, "\"\\\uFFFD\uFFFD\"\\") {
			t.Errorf("user_agent logged as %q", s)
		}
	}
	if lines != 3 {
		t.Fatalf("%d usage lines for 3 requests", lines)
	}
}
