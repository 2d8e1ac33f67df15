package fakevllm

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// start is a fake for one test, closed at its end.
func start(t *testing.T, o Options) *Server {
	t.Helper()
	s, err := Start("127.0.0.1:0", o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// call sends a request with a JSON body ("" for none) and headers given
// as "Name: value", and returns the answer with its whole body.
func call(t *testing.T, s *Server, method, path, body string, headers ...string) (*http.Response, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.URL()+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// sseEvent is one event of a stream: its "event:" line and its data.
type sseEvent struct {
	Event string
	Data  string
}

// readSSE reads a whole event stream, checking the framing: each event
// is "event: TYPE\ndata: JSON\n\n" (or only "data:" lines).
func readSSE(t *testing.T, body string) []sseEvent {
	t.Helper()
	if !strings.HasSuffix(body, "\n\n") {
		t.Fatalf("the stream does not end with an event's blank line: %q", body[max(0, len(body)-80):])
	}
	var evs []sseEvent
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(nil, 1<<24)
	var cur sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			evs = append(evs, cur)
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.Event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if cur.Data != "" {
				t.Fatalf("two data lines in one event: %q", line)
			}
			cur.Data = strings.TrimPrefix(line, "data: ")
		default:
			t.Fatalf("unexpected line %q", line)
		}
	}
	return evs
}

// decode is a JSON text as a map.
func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("%v: %s", err, s)
	}
	return m
}

// eventually waits up to 5s for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
