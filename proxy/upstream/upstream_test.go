package upstream

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudwego/netpoll"
)

// countingServer is an httptest server that counts the connections it accepted.
func countingServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

func newPool(t *testing.T, url string) *Pool {
	p, err := New(url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func post(body ...[]byte) *Request {
	return &Request{Method: "POST", Target: "/v1/chat/completions?x=1",
		Header: []byte("Content-Type: application/json\r\nX-Test: yes\r\n"), Body: body}
}

func TestBodyArrivesWholeAndConnectionIsReused(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		got, _ := io.ReadAll(r.Body)
		if r.Host == "" || r.URL.RequestURI() != "/v1/chat/completions?x=1" || r.Header.Get("X-Test") != "yes" ||
			r.ContentLength != int64(len(got)) {
			http.Error(w, fmt.Sprintf("bad request: host %q uri %q len %d/%d", r.Host, r.URL.RequestURI(), r.ContentLength, len(got)), 400)
			return
		}
		w.Write(got) // echo
	})
	p := newPool(t, srv.URL)
	for i, pieces := range [][][]byte{
		{[]byte(`{"a":1}`)},
		{big[:1000], []byte(`,"inserted":true`), big[1000:]},
		{},
	} {
		res, err := p.Do(context.Background(), post(pieces...))
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		got, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != 200 || !bytes.Equal(got, bytes.Join(pieces, nil)) {
			t.Fatalf("request %d: status %d err %v, %d bytes back (%.60q)", i, res.StatusCode, err, len(got), got)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("3 sequential requests used %d connections; want 1 (keep-alive)", n)
	}
	if p.Idle() != 1 {
		t.Errorf("idle connections = %d; want 1", p.Idle())
	}
}

// heldStream starts a stream whose backend sends "data: one" at once and
// then rest once release is closed.
func heldStream(t *testing.T, rest string) (*Pool, *http.Response, chan struct{}) {
	t.Helper()
	release := make(chan struct{})
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: one\n\n")
		w.(http.Flusher).Flush()
		<-release
		fmt.Fprint(w, rest)
	})
	p := newPool(t, srv.URL)
	res, err := p.Do(context.Background(), post([]byte(`{}`)))
	if err != nil {
		t.Fatal(err)
	}
	return p, res, release
}

func TestChunkedStreamArrivesEventByEvent(t *testing.T) {
	p, res, release := heldStream(t, "data: [DONE]\n\n")
	br := bufio.NewReader(res.Body)
	line, err := br.ReadString('\n') // arrives while the handler is still blocked
	if err != nil || line != "data: one\n" {
		t.Fatalf("first event: %q %v", line, err)
	}
	close(release)
	rest, err := io.ReadAll(br)
	if err != nil || string(rest) != "\ndata: [DONE]\n\n" {
		t.Fatalf("rest: %q %v", rest, err)
	}
	res.Body.Close()
	if p.Idle() != 1 {
		t.Errorf("a stream read to its end should give its connection back; idle = %d", p.Idle())
	}
}

func TestCancelEndsStreamAndBackendSeesIt(t *testing.T) {
	gone := make(chan struct{})
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: one\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the client's connection closed
		close(gone)
	})
	p := newPool(t, srv.URL)
	ctx, cancel := context.WithCancel(context.Background())
	res, err := p.Do(ctx, post([]byte(`{}`)))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	if _, err := res.Body.Read(buf); err != nil {
		t.Fatal(err)
	}
	readErr := make(chan error, 1)
	go func() { _, err := res.Body.Read(buf); readErr <- err }()
	cancel()
	select {
	case err := <-readErr:
		if err == nil {
			t.Fatal("read after cancel returned no error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("read blocked after cancel")
	}
	res.Body.Close()
	select {
	case <-gone:
	case <-time.After(10 * time.Second):
		t.Fatal("backend did not see the connection close")
	}
	if p.Idle() != 0 {
		t.Error("a cancelled stream's connection went back to the pool")
	}
}

func TestUnreadBodyClosesConnection(t *testing.T) {
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write(bytes.Repeat([]byte("x"), 100<<10))
	})
	p := newPool(t, srv.URL)
	for i := 0; i < 2; i++ {
		res, err := p.Do(context.Background(), post([]byte(`{}`)))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close() // not read: never drained, never reused
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("connections = %d; want 2 (an unread body's connection is not reused)", n)
	}
}

// rawServer answers each connection with the bytes reply returns for it,
// after reading one request head (and its Content-Length body).
func rawServer(t *testing.T, reply func(n int) (answer string, keepOpen bool)) (string, *atomic.Int64) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var conns atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n := int(conns.Add(1))
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					answer, keep := reply(n)
					io.WriteString(c, answer)
					if !keep {
						return
					}
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String(), &conns
}

func TestStaleKeptConnectionIsRetriedOnce(t *testing.T) {
	// Every connection answers one request as keep-alive, then closes:
	// the next request finds its kept connection dead.
	url, conns := rawServer(t, func(int) (string, bool) {
		return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false
	})
	p := newPool(t, url)
	for i := 0; i < 3; i++ {
		res, err := p.Do(context.Background(), post([]byte(`{}`)))
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if string(b) != "ok" {
			t.Fatalf("request %d: body %q", i, b)
		}
	}
	if n := conns.Load(); n != 3 {
		t.Errorf("connections = %d; want 3", n)
	}
}

func TestConnectionCloseIsHonoured(t *testing.T) {
	url, conns := rawServer(t, func(int) (string, bool) {
		return "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", true
	})
	p := newPool(t, url)
	for i := 0; i < 2; i++ {
		res, err := p.Do(context.Background(), post([]byte(`{}`)))
		if err != nil {
			t.Fatal(err)
		}
		io.ReadAll(res.Body)
		res.Body.Close()
	}
	if n := conns.Load(); n != 2 || p.Idle() != 0 {
		t.Errorf("connections = %d, idle = %d; want 2 and 0 (Connection: close)", n, p.Idle())
	}
}

func TestInformationalAndHugeHeaders(t *testing.T) {
	url, _ := rawServer(t, func(n int) (string, bool) {
		if n == 1 {
			return "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n", true
		}
		return "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", 2<<20) + "\r\n\r\n", false
	})
	p := newPool(t, url)
	res, err := p.Do(context.Background(), post([]byte(`{}`)))
	if err != nil || res.StatusCode != 201 {
		t.Fatalf("after 100 Continue: %v %v", res, err)
	}
	res.Body.Close() // unread: the next request dials again
	_, err = p.Do(context.Background(), post([]byte(`{}`)))
	if !errors.Is(err, ErrHeaderTooLarge) {
		t.Fatalf("2 MiB header: err = %v; want ErrHeaderTooLarge", err)
	}
}

func TestClosedPoolKeepsNothing(t *testing.T) {
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	p := newPool(t, srv.URL)
	res, err := p.Do(context.Background(), post([]byte(`{}`)))
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(res.Body)
	p.Close()
	res.Body.Close()
	if p.Idle() != 0 {
		t.Error("a closed pool kept a connection")
	}
}

func TestDialFailureAndBadURL(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	p := newPool(t, "http://"+addr)
	if _, err := p.Do(context.Background(), post([]byte(`{}`))); err == nil {
		t.Error("request to a closed port succeeded")
	}
	if _, err := New("ftp://x:1", Options{}); err == nil {
		t.Error("ftp:// accepted")
	}
}

func TestAliveSeesAClosedConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() { c, _ := ln.Accept(); accepted <- c }()
	c, err := netpoll.DialConnection("tcp", ln.Addr().String(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	server := <-accepted
	if !alive(c) {
		t.Fatal("an open, silent connection reported dead")
	}
	server.Write([]byte("x")) // bytes nobody asked for
	deadline := time.Now().Add(10 * time.Second)
	for alive(c) {
		if time.Now().After(deadline) {
			t.Fatal("a connection with unasked bytes still reported alive")
		}
		time.Sleep(time.Millisecond)
	}
	c2, err := netpoll.DialConnection("tcp", ln.Addr().String(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	go func() { c, _ := ln.Accept(); accepted <- c }()
	(<-accepted).Close()
	for alive(c2) { // the FIN takes a moment to arrive
		if time.Now().After(deadline) {
			t.Fatal("a connection closed by its peer still reported alive")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestWaitDataBlocksUntilBytesArrive(t *testing.T) {
	release := make(chan struct{})
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		<-release
		fmt.Fprint(w, "data: one\n\n")
	})
	p := newPool(t, srv.URL)
	res, err := p.Do(context.Background(), post([]byte(`{}`)))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	w := res.Body.(interface{ WaitData() error })
	waited := make(chan error, 1)
	go func() { waited <- w.WaitData() }()
	select {
	case err := <-waited:
		t.Fatalf("WaitData returned %v before the backend sent anything", err)
	case <-time.After(50 * time.Millisecond): // a negative check: it must still be waiting
	}
	close(release)
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(res.Body)
	if err != nil || !strings.Contains(string(b), "data: one") {
		t.Fatalf("after WaitData: %q %v", b, err)
	}
}

// WaitDataFor gives up after its bound with nothing lost or broken: the
// bytes that come later are read as if it had never waited.
func TestWaitDataForGivesUpCleanly(t *testing.T) {
	_, res, release := heldStream(t, "data: two\n\n")
	defer res.Body.Close()
	w := res.Body.(interface {
		WaitDataFor(time.Duration) bool
		WaitData() error
	})
	if err := w.WaitData(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, err := res.Body.Read(buf)
	if err != nil || string(buf[:n]) != "data: one\n\n" {
		t.Fatalf("first event %q %v", buf[:n], err)
	}
	if w.WaitDataFor(20 * time.Millisecond) {
		t.Fatal("WaitDataFor reported data the backend has not sent")
	}
	close(release)
	if !w.WaitDataFor(30 * time.Second) {
		t.Fatal("WaitDataFor missed the bytes that came")
	}
	b, err := io.ReadAll(res.Body)
	if err != nil || string(b) != "data: two\n\n" {
		t.Fatalf("after a timed-out wait: %q %v", b, err)
	}
}

func TestHTTPSBackend(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\n", body)
	}))
	defer srv.Close()
	p, err := New(srv.URL, Options{TLSConfig: srv.Client().Transport.(*http.Transport).TLSClientConfig})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for i := 0; i < 2; i++ {
		res, err := p.Do(context.Background(), post([]byte(`{"n":`), []byte(fmt.Sprint(i)), []byte(`}`)))
		if err != nil {
			t.Fatalf("request %d over TLS: %v", i, err)
		}
		got, err := io.ReadAll(res.Body)
		res.Body.Close()
		if want := fmt.Sprintf("data: {\"n\":%d}\n\n", i); err != nil || string(got) != want {
			t.Fatalf("request %d: %q %v; want %q", i, got, err, want)
		}
	}
	if p.Idle() != 1 {
		t.Errorf("idle TLS connections = %d; want 1 (kept alive)", p.Idle())
	}
	strict := newPool(t, srv.URL) // the system's roots do not know the test certificate
	if _, err := strict.Do(context.Background(), post([]byte(`{}`))); err == nil {
		t.Error("a certificate no root vouches for was accepted")
	}
}

func TestBufferedCountsWhatArrived(t *testing.T) {
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: one\n\ndata: two\n\n") // one burst
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	p := newPool(t, srv.URL)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := p.Do(ctx, post([]byte(`{}`)))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b := res.Body.(interface {
		WaitData() error
		Buffered() int
	})
	if err := b.WaitData(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for b.Buffered() < len("data: one\n\ndata: two\n\n") { // the burst may land in two reads
		if time.Now().After(deadline) {
			t.Fatalf("Buffered() = %d after the burst", b.Buffered())
		}
		time.Sleep(time.Millisecond)
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(res.Body, buf); err != nil {
		t.Fatal(err)
	}
	if n := b.Buffered(); n == 0 {
		t.Error("Buffered() = 0 with most of the burst unread")
	}
}

// awaitIdle waits until the pool keeps n idle connections.
func awaitIdle(t *testing.T, p *Pool, n int, why string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for p.Idle() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%s: idle connections = %d; want %d", why, p.Idle(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// getOK sends a request and reads its answer to the end (the connection
// goes back to the pool).
func getOK(t *testing.T, p *Pool) {
	t.Helper()
	res, err := p.Do(context.Background(), post([]byte(`{}`)))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
}

// Idle connections are closed once they pass IdleTimeout, with no further
// use of the pool (they used to wait for the next request: a burst left its
// connections open in a gateway that then went quiet).
func TestIdleConnectionsExpireWithoutTraffic(t *testing.T) {
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	p, err := New(srv.URL, Options{IdleTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	getOK(t, p) // its connection is kept, then closed with no further use
	awaitIdle(t, p, 0, "past IdleTimeout, no traffic")
	getOK(t, p) // and the janitor runs again for the next
	awaitIdle(t, p, 0, "past IdleTimeout again")
}

// A kept connection the backend closes (vLLM closes idle ones after 5 s)
// is closed and dropped from the pool at once.
func TestConnectionClosedByBackendLeavesThePool(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	srv.Config.IdleTimeout = 50 * time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)
	p := newPool(t, srv.URL)
	getOK(t, p)
	awaitIdle(t, p, 0, "after the backend closed its idle connection")
}
