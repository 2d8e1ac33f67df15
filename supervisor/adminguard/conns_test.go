package adminguard

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serveCapped runs an http.Server behind a Conns of cap max on loopback.
func serveCapped(t *testing.T, max int, probe func([]byte) []byte) (*Conns, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := NewConns(ln, max, probe)
	srv := &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") }),
		ReadHeaderTimeout: 20 * time.Second,
		ConnState:         l.ConnState,
	}
	go srv.Serve(l) //nolint:errcheck // ends with Close
	t.Cleanup(func() { srv.Close() })
	return l, ln.Addr().String()
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(20 * time.Second)) //nolint:errcheck
	return c
}

// get sends a keep-alive GET on c and reads its answer.
func get(t *testing.T, c net.Conn, r *bufio.Reader) *http.Response {
	t.Helper()
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body) //nolint:errcheck
	res.Body.Close()
	return res
}

// awaitFor polls cond for up to 20 s.
func awaitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func (l *Conns) idleCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.idle.len()
}

// closed reports whether the server closed c (a read ends without data).
func closed(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(20 * time.Second)) //nolint:errcheck
	n, err := c.Read(make([]byte, 1))
	return n == 0 && err != nil && !isTimeout(err)
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// At the cap a new connection closes the keep-alive connection idle
// longest and is served; the count stays at the cap.
func TestConnsEvictIdleLongest(t *testing.T) {
	l, addr := serveCapped(t, 3, nil)
	var conns []net.Conn
	for i := 0; i < 3; i++ {
		c := dial(t, addr)
		if res := get(t, c, bufio.NewReader(c)); res.StatusCode != 200 {
			t.Fatalf("conn %d: %s", i, res.Status)
		}
		awaitFor(t, "the connection idle", func() bool { return l.idleCount() == i+1 })
		conns = append(conns, c)
	}
	c := dial(t, addr)
	if res := get(t, c, bufio.NewReader(c)); res.StatusCode != 200 {
		t.Fatalf("at the cap: %s", res.Status)
	}
	if !closed(conns[0]) {
		t.Fatal("the connection idle longest is still open")
	}
	if l.Evicted() != 1 || l.Refused() != 0 {
		t.Fatalf("evicted %d refused %d", l.Evicted(), l.Refused())
	}
	if res := get(t, conns[2], bufio.NewReader(conns[2])); res.StatusCode != 200 {
		t.Fatalf("a newer idle connection: %s", res.Status)
	}
	if n := l.Open(); n != 3 {
		t.Fatalf("open %d, want 3", n)
	}
}

// A connection that has sent nothing is idle: it gives way too.
func TestConnsEvictSilent(t *testing.T) {
	l, addr := serveCapped(t, 1, nil)
	silent := dial(t, addr)
	awaitFor(t, "the silent connection accepted", func() bool { return l.Open() == 1 })
	c := dial(t, addr)
	if res := get(t, c, bufio.NewReader(c)); res.StatusCode != 200 {
		t.Fatalf("at the cap: %s", res.Status)
	}
	if !closed(silent) || l.Evicted() != 1 {
		t.Fatalf("the silent connection was not evicted (evicted %d)", l.Evicted())
	}
}

// At the cap with every connection inside a request: 503 with
// Retry-After: 1 and the connection closed; a probe is answered as a
// probe; once one closes, a new connection is served.
func TestConnsRefuseWhenNoneIdle(t *testing.T) {
	probe := func(head []byte) []byte {
		if strings.HasPrefix(string(head), "GET /readyz ") {
			return []byte("HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nready\n")
		}
		return nil
	}
	l, addr := serveCapped(t, 2, probe)
	var busy []net.Conn
	for i := 0; i < 2; i++ {
		c := dial(t, addr)
		io.WriteString(c, "GET / HTTP/1.1\r\nHo") //nolint:errcheck // a head not finished
		busy = append(busy, c)
	}
	awaitFor(t, "two connections inside a request", func() bool { return l.Open() == 2 && l.idleCount() == 0 })
	c := dial(t, addr)
	res := get(t, c, bufio.NewReader(c))
	if res.StatusCode != 503 || res.Header.Get("Retry-After") != "1" || !res.Close {
		t.Fatalf("at the cap, none idle: %s %v", res.Status, res.Header)
	}
	if !closed(c) || l.Refused() != 1 || l.Evicted() != 0 {
		t.Fatalf("refused %d evicted %d", l.Refused(), l.Evicted())
	}
	p := dial(t, addr)
	io.WriteString(p, "GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n") //nolint:errcheck
	if out, _ := io.ReadAll(p); !strings.HasSuffix(string(out), "ready\n") {
		t.Fatalf("a probe at the cap: %q", out)
	}
	if l.Refused() != 1 {
		t.Fatalf("a probe answered counted as refused (%d)", l.Refused())
	}
	busy[0].Close()
	awaitFor(t, "the closed connection's place", func() bool { return l.Open() == 1 })
	c = dial(t, addr)
	if res := get(t, c, bufio.NewReader(c)); res.StatusCode != 200 {
		t.Fatalf("after a place freed: %s", res.Status)
	}
}
