package tests

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// A request with "Expect: 100-continue" is invited to send its body only
// when the gateway would read it: a wrong key, or a body declared over
// max_body, is answered at once — 401 or 413, no 100 Continue — and its
// connection closed (the client may send the body anyway after its own
// wait); a request with a valid key gets 100 Continue, then its answer.
func TestExpectContinueOnlyForWhatIsRead(t *testing.T) {
	g, _ := newGateway(t, fakevllm.Options{Tokens: 2}, "")
	body := string(chatBody("m", false, "expecting"))
	ask := func(key string, length int) (*bufio.Reader, *http.Response, func(string)) {
		t.Helper()
		conn := dialRaw(t, g)
		fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
			"Content-Length: %d\r\nExpect: 100-continue\r\n\r\n", key, length)
		conn.SetReadDeadline(time.Now().Add(deadline))
		r := bufio.NewReader(conn)
		res, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatalf("no answer to the head: %v", err)
		}
		return r, res, func(s string) { io.WriteString(conn, s) }
	}
	for _, c := range []struct {
		name   string
		key    string
		length int
		status int
		code   string
	}{
		{"wrong key", "sk-wrong", len(body), 401, "invalid_api_key"},
		{"over max_body", keyAll, 32<<20 + 1, 413, "request_too_large"},
	} {
		r, res, _ := ask(c.key, c.length)
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != c.status || !strings.Contains(string(b), c.code) {
			t.Errorf("%s: %s %s, want %d %s at once (not 100 Continue)", c.name, res.Status, b, c.status, c.code)
		}
		if !res.Close {
			t.Errorf("%s: the connection is kept, where the client may still send the body", c.name)
		}
		if _, err := r.ReadByte(); err != io.EOF {
			t.Errorf("%s: the connection was not closed after the answer: %v", c.name, err)
		}
	}
	// Refused before a key is looked at — an unknown URL, a wrong method —
	// the same: no invitation, the connection closed, and a body sent
	// after all is never read as a next request.
	for _, c := range []struct{ method, path string }{
		{"POST", "/v1/no-such-api"}, {"PUT", "/v1/chat/completions"}, {"POST", "/v1/models"},
	} {
		conn := dialRaw(t, g)
		fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: x\r\nContent-Length: 80\r\nExpect: 100-continue\r\n\r\n", c.method, c.path)
		conn.SetReadDeadline(time.Now().Add(deadline))
		r := bufio.NewReader(conn)
		res, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatalf("%s %s: no answer: %v", c.method, c.path, err)
		}
		io.ReadAll(res.Body)
		if res.StatusCode == http.StatusContinue || !res.Close {
			t.Errorf("%s %s: %s, close %v; want its refusal at once and the connection closed", c.method, c.path, res.Status, res.Close)
		}
		// The "body": a request of its own, which must not be served.
		fmt.Fprintf(conn, "GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", keyAll)
		if next, err := http.ReadResponse(r, nil); err == nil {
			t.Errorf("%s %s: the body was served as a next request: %s", c.method, c.path, next.Status)
		}
	}

	// A valid key: 100 Continue, then the body, then the answer.
	r, res, send := ask(keyAll, len(body))
	if res.StatusCode != http.StatusContinue {
		t.Fatalf("a valid key's request got %s, want 100 Continue", res.Status)
	}
	send(body)
	res, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Errorf("after 100 Continue: %s %s", res.Status, b)
	}
}
