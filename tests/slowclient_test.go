package tests

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// Hostile clients, each tried with a raw TCP client.

// dialRaw opens a TCP connection to the gateway, closed when the test ends.
func dialRaw(t *testing.T, g *gateway) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(g.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// readUntilClosed reads c until the gateway closes it and returns what
// came; it fails the test if c is still open after the test deadline.
func readUntilClosed(t *testing.T, c net.Conn) []byte {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(deadline))
	var got bytes.Buffer
	_, err := io.Copy(&got, c) // nil at EOF
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection still open after %v (read %q)", deadline, clipBytes(got.Bytes()))
	}
	return got.Bytes()
}

func clipBytes(b []byte) []byte { return b[:min(len(b), 300)] }

// TestMultipartBodyIsNotPreRead: hertz pre-parses multipart/form-data
// bodies whole before any handler runs. Now a multipart body is refused
// like any other: without a key, 401 while the client is still sending
// (4 MiB declared, 64 KiB sent); with a key and a body over max_body, 413
// from the declared length. On the old code neither got an answer until
// the whole body had arrived.
func TestMultipartBodyIsNotPreRead(t *testing.T) {
	g, _ := newGateway(t, fakevllm.Options{}, "max_body: 1MiB")
	for _, tc := range []struct {
		name, key string
		status    int
	}{
		{"no key", "", http.StatusUnauthorized},
		{"over max_body", keyAll, http.StatusRequestEntityTooLarge},
	} {
		c := dialRaw(t, g)
		auth := ""
		if tc.key != "" {
			auth = "Authorization: Bearer " + tc.key + "\r\n"
		}
		fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n%s"+
			"Content-Type: multipart/form-data; boundary=XYZ\r\nContent-Length: %d\r\n\r\n", auth, 4<<20)
		part := "--XYZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.bin\"\r\n\r\n" +
			strings.Repeat("z", 64<<10)
		if _, err := io.WriteString(c, part); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(deadline))
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%s: no answer while the body is being sent: %v", tc.name, err)
		}
		res.Body.Close()
		if res.StatusCode != tc.status {
			t.Errorf("%s: got %d, want %d", tc.name, res.StatusCode, tc.status)
		}
	}
}

