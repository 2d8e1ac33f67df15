package probe

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestProbeHead(t *testing.T) {
	cases := []struct {
		head   string
		path   string // "" when the head is for net/http
		http11 bool
	}{
		{"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1:9090\r\n\r\n", "/readyz", true},
		{"GET /healthz HTTP/1.1\r\nhost: localhost\r\nUser-Agent: kube-probe/1.31\r\nAccept: */*\r\nConnection: close\r\n\r\n", "/healthz", true},
		{"GET /readyz HTTP/1.0\r\n\r\n", "/readyz", false},
		{"GET /readyz HTTP/1.0\r\nHost: [::1]:9090\r\n\r\n", "/readyz", false},
		{"GET /readyz HTTP/1.1\r\nHost: a\r\nX-Empty:\r\n\r\n", "/readyz", true},
		// A query is ignored, as the mux ignores it (issue 30 item 5: on
		// 011fb07 "/healthz?x" went to net/http and stayed open, idle).
		{"GET /healthz?x HTTP/1.1\r\nHost: a\r\n\r\n", "/healthz", true},
		{"GET /readyz? HTTP/1.1\r\nHost: a\r\n\r\n", "/readyz", true},
		{"GET /readyz?verbose=1&a=%20b;c?d#e HTTP/1.0\r\n\r\n", "/readyz", false},
		{"GET /readyz?\xc3\xa9 HTTP/1.1\r\nHost: a\r\n\r\n", "/readyz", true},
		// For net/http:
		{"GET /readyz HTTP/1.1\r\n\r\n", "", false},                                            // no Host
		{"GET /readyz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", "", false},                      // two
		{"GET /readyz HTTP/1.1\r\nHost: a b\r\n\r\n", "", false},                               // not a plain host
		{"GET /readyz HTTP/1.1\r\nHost:\r\n\r\n", "", false},                                   // empty
		{"GET /readyz?a\x01 HTTP/1.1\r\nHost: a\r\n\r\n", "", false},                           // a control byte in the query
		{"GET /readyz?a\x7f HTTP/1.1\r\nHost: a\r\n\r\n", "", false},                           // DEL in the query
		{"GET /?x HTTP/1.1\r\nHost: a\r\n\r\n", "", false},                                     // the root, with a query
		{"GET /readyz/?x HTTP/1.1\r\nHost: a\r\n\r\n", "", false},                              // not letters
		{"GET /readyz/ HTTP/1.1\r\nHost: a\r\n\r\n", "", false},                                // not letters
		{"GET http://a/readyz HTTP/1.1\r\nHost: a\r\n\r\n", "", false},                         // absolute form
		{"HEAD /readyz HTTP/1.1\r\nHost: a\r\n\r\n", "", false},                                // another method
		{"GET /readyz HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", "", false},            // a body header
		{"GET /readyz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: x\r\n\r\n", "", false},         // a body header
		{"GET /readyz HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\r\n", "", false},         // an expectation
		{"GET /readyz HTTP/1.1\r\nHost: a\r\n\r\nGET /", "", false},                            // more after the head
		{"GET /readyz HTTP/1.1\r\nHost: a\r\n", "", false},                                     // incomplete
		{"GET /readyz HTTP/1.1\nHost: a\n\n", "", false},                                       // bare LF
		{"GET /readyz HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", "", false},                      // obsolete folding
		{"GET /readyz HTTP/1.1\r\nHost : a\r\n\r\n", "", false},                                // space before the colon
		{"GET /readyz HTTP/1.1\r\nHost: a\r\nX: a\x00b\r\n\r\n", "", false},                    // a control byte
		{"GET /readyz HTTP/2.0\r\nHost: a\r\n\r\n", "", false},                                 // another version
		{"GET  /readyz HTTP/1.1\r\nHost: a\r\n\r\n", "", false},                                // two spaces
		{"GET /readyz HTTP/1.1 \r\nHost: a\r\n\r\n", "", false},                                // a trailing space
		{"GET / HTTP/1.1\r\nHost: a\r\n\r\n", "", false},                                       // the root
		{"\r\nGET /readyz HTTP/1.1\r\nHost: a\r\n\r\n", "", false},                             // a leading blank line
		{"GET /readyz HTTP/1.1\r\nHost: a\r\n\r\n\r\n", "", false},                             // an extra blank line
		{"GET /readyz HTTP/1.1\r\nHost: a\r\nX\xff: b\r\n\r\n", "", false},                     // not a token
		{"GET /readyz HTTP/1.1\r\nHost: a\r\n: b\r\n\r\n", "", false},                          // no name
		{"GET /Readyz HTTP/1.1\r\nHost: a\r\n\r\n", "", false},                                 // upper case
		{"GET /readyz HTTP/1.1\r\nHost: a\r\nConnection: keep-alive\r\n\r\n", "/readyz", true}, // answered, then closed
	}
	for _, c := range cases {
		path, http11, ok := ProbeHead([]byte(c.head))
		if ok != (c.path != "") || path != c.path || http11 != c.http11 {
			t.Errorf("ProbeHead(%q) = %q, %v, %v; want %q, %v", c.head, path, http11, ok, c.path, c.http11)
		}
	}
}

// plainServer is net/http alone, with the mux the supervisor's probes
// have: what the fast path must answer like.
func plainServer(tb testing.TB) (addr string) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	mux := http.NewServeMux()
	for path, answer := range testAnswers {
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) {
			status, body := answer()
			if status != http.StatusOK {
				w.WriteHeader(status)
			}
			io.WriteString(w, body) //nolint:errcheck
		})
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	tb.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// testAnswers are the probes' answers in these tests: one 200, one 503.
var testAnswers = map[string]Answer{
	"/healthz": func() (int, string) { return http.StatusOK, "ok\n" },
	"/readyz":  func() (int, string) { return http.StatusServiceUnavailable, "workers ready: 1/2\n" },
}

// netHTTPAnswer sends head to net/http at addr and returns its answer,
// read whole, with the Date and Connection headers left out (the fast
// path's Date is its own; it always closes).
func netHTTPAnswer(tb testing.TB, addr string, head []byte) string {
	tb.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second)) //nolint:errcheck
	if _, err := c.Write(head); err != nil {
		tb.Fatal(err)
	}
	return canonicalAnswer(tb, bufio.NewReader(c))
}

// canonicalAnswer reads one answer and writes it back in one form: status
// line, headers but Date and Connection (sorted), body.
func canonicalAnswer(tb testing.TB, r *bufio.Reader) string {
	tb.Helper()
	resp, err := http.ReadResponse(r, &http.Request{Method: http.MethodGet})
	if err != nil {
		tb.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	resp.Header.Del("Date")
	resp.Header.Del("Connection")
	var out strings.Builder
	out.WriteString(resp.Proto + " " + resp.Status + "\n")
	resp.Header.Write(&out) //nolint:errcheck
	out.WriteString("\n")
	out.Write(body)
	return out.String()
}

// FuzzProbeHead checks ProbeHead against net/http: every head it answers
// must be one request that net/http's parser reads whole, as the same GET
// of the same path (its query aside) without a body, and that net/http's server
// answers as the fast path does (status line, headers, body).
func FuzzProbeHead(f *testing.F) {
	for _, s := range []string{
		"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1:9090\r\n\r\n",
		"GET /healthz HTTP/1.0\r\n\r\n",
		"GET /healthz?x HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET /readyz?a=1&b=%zz#f HTTP/1.0\r\n\r\n",
		"GET /readyz HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n",
		"GET /readyz HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n",
		"GET /readyz HTTP/1.1\r\nHost: [::1]\r\nX: \t\x80\r\n\r\n",
		"GET /healthz HTTP/1.1\r\nHost: a_b.c:99999999\r\nUpgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	addr := plainServer(f)
	f.Fuzz(func(t *testing.T, head []byte) {
		path, http11, ok := ProbeHead(head)
		if !ok {
			return
		}
		br := bufio.NewReader(bytes.NewReader(head))
		req, err := http.ReadRequest(br)
		if err != nil {
			t.Fatalf("ProbeHead answers %q, net/http refuses it: %v", head, err)
		}
		if br.Buffered() != 0 {
			t.Fatalf("ProbeHead answers %q, net/http leaves %d bytes", head, br.Buffered())
		}
		if req.Method != http.MethodGet || req.URL.Path != path || req.URL.Host != "" ||
			req.ContentLength != 0 || len(req.TransferEncoding) != 0 || req.ProtoAtLeast(1, 1) != http11 {
			t.Fatalf("ProbeHead(%q) = %q, %v; net/http reads %s %q %q cl=%d te=%v %s",
				head, path, http11, req.Method, req.URL.Path, req.URL.RawQuery, req.ContentLength, req.TransferEncoding, req.Proto)
		}
		answer := testAnswers[path]
		if answer == nil {
			return // handed over: net/http answers it
		}
		status, body := answer()
		ours := canonicalAnswer(t, bufio.NewReader(bytes.NewReader(appendAnswer(nil, http11, status, body, time.Now()))))
		if theirs := netHTTPAnswer(t, addr, head); ours != theirs {
			t.Fatalf("ProbeHead answers %q as\n%s\nnet/http as\n%s", head, ours, theirs)
		}
	})
}

// TestAnswerAsNetHTTP compares the probe's answer, byte for byte, with
// net/http's to a request with "Connection: close" (the Date aside).
func TestAnswerAsNetHTTP(t *testing.T) {
	addr := plainServer(t)
	now := time.Now()
	for path, answer := range testAnswers {
		for _, proto := range []string{"HTTP/1.1", "HTTP/1.0"} {
			head := "GET " + path + " " + proto + "\r\nHost: x\r\nConnection: close\r\n\r\n"
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			c.SetDeadline(time.Now().Add(20 * time.Second)) //nolint:errcheck
			io.WriteString(c, head)                         //nolint:errcheck // the read below fails too
			theirs, err := io.ReadAll(c)
			c.Close()
			if err != nil {
				t.Fatal(err)
			}
			status, body := answer()
			ours := string(appendAnswer(nil, proto == "HTTP/1.1", status, body, now))
			date := regexp.MustCompile("Date: [^\r]*")
			if got, want := date.ReplaceAllString(ours, "Date: D"), date.ReplaceAllString(string(theirs), "Date: D"); got != want {
				t.Errorf("%s %s:\nours    %q\nnet/http %q", path, proto, got, want)
			}
		}
	}
}

// serveWrapped runs an http.Server behind Wrap on a loopback port: the mux
// answers "/readyz from net/http"; the probe path answers "from probe".
func serveWrapped(t *testing.T) (addr string, l *Listener, srv *http.Server) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "from net/http\n") //nolint:errcheck
	})
	mux.HandleFunc("POST /echo", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(w, r.Body) //nolint:errcheck
	})
	l = Wrap(ln, map[string]Answer{"/readyz": func() (int, string) { return 503, "from probe\n" }}, 5*time.Second)
	srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-served; err != http.ErrServerClosed {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String(), l, srv
}

// exchange sends req on a fresh connection and returns all it reads until
// the server closes the connection.
func exchange(t *testing.T, addr, req string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second)) //nolint:errcheck
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("%q: %v after %q", req, err, out)
	}
	return string(out)
}

func TestListenerAnswersProbesAndHandsOverTheRest(t *testing.T) {
	addr, _, _ := serveWrapped(t)
	for _, c := range []struct {
		name, req, want string
	}{
		{"probe", "GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n", "\r\nConnection: close\r\n\r\nfrom probe\n"},
		{"probe, HTTP/1.0", "GET /readyz HTTP/1.0\r\n\r\n", "HTTP/1.0 503 Service Unavailable\r\n"},
		{"probe, with a query", "GET /readyz?x=1 HTTP/1.1\r\nHost: x\r\n\r\n", "\r\nConnection: close\r\n\r\nfrom probe\n"},
		{"a query with a control byte", "GET /readyz?x=\x01 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "HTTP/1.1 400 Bad Request"},
		{"HEAD", "HEAD /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "HTTP/1.1 200 OK\r\n"},
		{"no Host", "GET /readyz HTTP/1.1\r\n\r\n", "HTTP/1.1 400 Bad Request: missing required Host header"},
		{"a path it does not answer", "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "HTTP/1.1 404 Not Found\r\n"},
		{"a head past the first read's bound", "GET /readyz HTTP/1.1\r\nHost: x\r\nX-Pad: " + strings.Repeat("p", maxHead) + "\r\nConnection: close\r\n\r\n", "from net/http\n"},
		{"a body, replayed whole", "POST /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 11\r\n\r\nhello world", "\r\n\r\nhello world"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := exchange(t, addr, c.req)
			if !strings.Contains(got, c.want) {
				t.Errorf("got %q, want it to contain %q", got, c.want)
			}
			if strings.Contains(got, "from probe") != strings.HasPrefix(c.name, "probe") {
				t.Errorf("answered by the wrong path: %q", got)
			}
		})
	}
}

func TestListenerCloseStopsAccepting(t *testing.T) {
	addr, l, srv := serveWrapped(t)
	// A connection being read to decide when the server closes: closed, not
	// handed over to a server that no longer accepts.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := exchange(t, addr, "GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n"); !strings.Contains(got, "from probe") {
		t.Fatalf("before Close: %q", got)
	}
	srv.Close()
	if _, err := l.Accept(); err != net.ErrClosed {
		t.Errorf("Accept after Close: %v", err)
	}
	// (The write may fail: the connection may have been reset, never
	// accepted, when the listener closed.)
	io.WriteString(c, "GET /x HTTP/1.1\r\nHost: x\r\n\r\n") //nolint:errcheck
	c.SetReadDeadline(time.Now().Add(20 * time.Second))     //nolint:errcheck
	if n, err := c.Read(make([]byte, 64)); err == nil || n != 0 {
		t.Errorf("the undecided connection after Close: read %d, %v; want it closed", n, err)
	}
	if _, err := net.DialTimeout("tcp", addr, 5*time.Second); err == nil {
		t.Errorf("dial after Close succeeded")
	}
}

// TestCloseEndsUndecided: a connection accepted but not yet read when the
// server closes is closed unanswered, even if a probe comes on it then.
func TestCloseEndsUndecided(t *testing.T) {
	addr, l, srv := serveWrapped(t)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Wait until the listener holds c undecided.
	for deadline := time.Now().Add(20 * time.Second); ; {
		l.mu.Lock()
		n := len(l.deciding)
		l.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the connection was never taken to be decided")
		}
		time.Sleep(time.Millisecond)
	}
	srv.Close()
	io.WriteString(c, "GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n") //nolint:errcheck // may be reset
	c.SetReadDeadline(time.Now().Add(20 * time.Second))          //nolint:errcheck
	if got, _ := io.ReadAll(c); len(got) != 0 {
		t.Errorf("answered after Close: %q", got)
	}
}

// deadlineConn records the read deadlines set on it.
type deadlineConn struct {
	net.Conn
	set []time.Time
}

func (c *deadlineConn) SetReadDeadline(t time.Time) error {
	c.set = append(c.set, t)
	return nil
}

// TestReplayKeepsOneHeaderTimeout: the first read deadline net/http sets
// (its header timeout, counted from when it starts reading) is no later
// than the one the probe path set from accept, so a slow head gets one
// timeout in all; later deadlines pass unchanged.
func TestReplayKeepsOneHeaderTimeout(t *testing.T) {
	accept := time.Now()
	head := accept.Add(5 * time.Second)
	for _, first := range []time.Time{{}, accept.Add(9 * time.Second)} {
		dc := &deadlineConn{}
		c := &replayConn{Conn: dc, headDeadline: head}
		later := accept.Add(time.Hour)
		c.SetReadDeadline(first)       //nolint:errcheck
		c.SetReadDeadline(later)       //nolint:errcheck
		c.SetReadDeadline(time.Time{}) //nolint:errcheck
		if len(dc.set) != 3 || !dc.set[0].Equal(head) || !dc.set[1].Equal(later) || !dc.set[2].IsZero() {
			t.Errorf("first %v: deadlines set %v; want %v, %v, zero", first, dc.set, head, later)
		}
	}
	dc := &deadlineConn{}
	c := &replayConn{Conn: dc, headDeadline: head}
	sooner := accept.Add(time.Second)
	c.SetReadDeadline(sooner) //nolint:errcheck
	if !dc.set[0].Equal(sooner) {
		t.Errorf("a sooner first deadline became %v", dc.set[0])
	}
}

// TestHeadInTwoReads: a head whose first read is incomplete goes to
// net/http, which reads it whole — the first read replayed, then the rest.
// net.Pipe makes each write one read.
func TestHeadInTwoReads(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := Wrap(ln, map[string]Answer{"/readyz": func() (int, string) { return 200, "from probe\n" }}, 5*time.Second)
	defer l.Close()
	client, server := net.Pipe()
	defer client.Close()
	go l.serve(server)
	head := "GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n"
	if _, err := io.WriteString(client, head[:20]); err != nil {
		t.Fatal(err)
	}
	hc, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	go io.WriteString(client, head[20:]) //nolint:errcheck // read below
	got := make([]byte, len(head))
	if _, err := io.ReadFull(hc, got); err != nil || string(got) != head {
		t.Fatalf("handed over: %q, %v; want %q", got, err, head)
	}
}
