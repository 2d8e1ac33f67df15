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

// A request whose declared Content-Length is over max_body is refused from
// its head, as nginx does: 413 request_too_large and the connection
// closed, with not a byte of the body sent. (hertz, left alone, waited for
// the first 8 KiB of the body before the handler ran: third_party/README.md.)
func TestBodyOverMaxBodyRefusedFromHead(t *testing.T) {
	const maxBody = 64 << 10
	g, _ := newGateway(t, fakevllm.Options{Tokens: 2}, "max_body: 64KiB\n")
	conn := dialRaw(t, g)
	fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n", keyAll, maxBody+1)
	// Generous: the answer needs no body, so it comes at once or never.
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(conn)
	res, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("no answer to a head declaring %d bytes (max_body %d), no body sent: %v", maxBody+1, maxBody, err)
	}
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), "request_too_large") {
		t.Errorf("%s %s, want 413 request_too_large", res.Status, b)
	}
	if !res.Close {
		t.Errorf("the connection is kept, though its body was never read")
	}
	if _, err := r.ReadByte(); err != io.EOF {
		t.Errorf("the connection was not closed after the answer: %v", err)
	}
}
