package proxy

// The in-process pipeline: a Gateway over a private region, served by a
// hertz engine built with ServerOptions and Mount (as the worker builds
// its own) on a connection that lives in memory, in front of scripted
// backends (Backends.Dial and Backends.Probe). No socket, no process: a
// request goes through every phase in a millisecond or so, so that a
// change to one phase can be checked against every outcome a client can
// see (outcomes_test.go) in a second. The real binary's tests in tests/
// check what this cannot: sockets, processes, reloads over the control
// socket.

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudwego/hertz/pkg/app"
	hconfig "github.com/cloudwego/hertz/pkg/common/config"
	"github.com/cloudwego/hertz/pkg/common/hlog"
	"github.com/cloudwego/hertz/pkg/route"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/proxy/upstream"
)

// memConn is a client connection in memory, as hertz's transport hands
// one over (network.Conn): the server reads what the client sent (in),
// and what it writes and flushes collects in out.
type memConn struct {
	mu      sync.Mutex
	in      []byte
	pos     int
	eof     bool          // the client has sent all it will (its write side shut)
	changed chan struct{} // closed (and replaced) when in, eof or closed change
	closed  bool
	rto     time.Duration // read timeout: a wait for bytes longer than this fails as a timeout
	pending [][]byte      // written, not yet flushed
	out     bytes.Buffer
}

// newMemConn returns a connection whose client sent sent; with more, it
// may send more (feed) and ends when shut, else sent is all of it.
func newMemConn(sent []byte, more bool) *memConn {
	return &memConn{in: sent, eof: !more, changed: make(chan struct{})}
}

// feed sends more of the client's bytes.
func (c *memConn) feed(b []byte) {
	c.mu.Lock()
	c.in = append(c.in, b...)
	c.signal()
	c.mu.Unlock()
}

// shut ends what the client sends (its FIN).
func (c *memConn) shut() {
	c.mu.Lock()
	c.eof = true
	c.signal()
	c.mu.Unlock()
}

func (c *memConn) signal() { close(c.changed); c.changed = make(chan struct{}) }

// written returns what the server flushed to the client so far.
func (c *memConn) written() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.out.Bytes())
}

// memTimeout is a read that waited past the read timeout (netpoll's says
// Timeout() too: isTimeout).
type memTimeout struct{}

func (memTimeout) Error() string   { return "read timeout" }
func (memTimeout) Timeout() bool   { return true }
func (memTimeout) Temporary() bool { return true }

var errMemClosed = errors.New("connection closed")

// wait returns the unread bytes once there are at least n, or what is
// left with io.EOF, or a timeout after the read timeout.
func (c *memConn) wait(n int) ([]byte, error) {
	c.mu.Lock()
	rto := c.rto
	c.mu.Unlock()
	var expired <-chan time.Time
	if rto > 0 {
		t := time.NewTimer(rto)
		defer t.Stop()
		expired = t.C
	}
	for {
		c.mu.Lock()
		avail, eof, closed, ch := c.in[c.pos:], c.eof, c.closed, c.changed
		c.mu.Unlock()
		switch {
		case closed:
			return nil, errMemClosed
		case len(avail) >= n:
			return avail, nil
		case eof:
			return avail, io.EOF
		}
		select {
		case <-ch:
		case <-expired:
			return nil, memTimeout{}
		}
	}
}

func (c *memConn) Peek(n int) ([]byte, error) {
	b, err := c.wait(n)
	if err != nil {
		return nil, err
	}
	return b[:n], nil
}

func (c *memConn) Skip(n int) error {
	if _, err := c.wait(n); err != nil {
		return err
	}
	c.mu.Lock()
	c.pos += n
	c.mu.Unlock()
	return nil
}

func (c *memConn) Release() error { return nil }

func (c *memConn) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.in) - c.pos
}

func (c *memConn) ReadByte() (byte, error) {
	b, err := c.ReadBinary(1)
	if err != nil {
		return 0, err
	}
	return b[0], nil
}

func (c *memConn) ReadBinary(n int) ([]byte, error) {
	b, err := c.Peek(n)
	if err != nil {
		return nil, err
	}
	out := bytes.Clone(b)
	return out, c.Skip(n)
}

func (c *memConn) Read(p []byte) (int, error) {
	b, err := c.wait(1)
	if len(b) == 0 {
		return 0, err
	}
	n := copy(p, b)
	return n, c.Skip(n)
}

func (c *memConn) Malloc(n int) ([]byte, error) {
	b := make([]byte, n)
	c.mu.Lock()
	c.pending = append(c.pending, b)
	c.mu.Unlock()
	return b, nil
}

func (c *memConn) WriteBinary(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, errMemClosed
	}
	c.pending = append(c.pending, bytes.Clone(b))
	return len(b), nil
}

func (c *memConn) Flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errMemClosed
	}
	for _, b := range c.pending {
		c.out.Write(b)
	}
	c.pending = c.pending[:0]
	return nil
}

func (c *memConn) Write(b []byte) (int, error) {
	if n, err := c.WriteBinary(b); err != nil {
		return n, err
	}
	return len(b), c.Flush()
}

func (c *memConn) Close() error {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		c.signal()
	}
	c.mu.Unlock()
	return nil
}

func (c *memConn) LocalAddr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
}

func (c *memConn) RemoteAddr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}
}

func (c *memConn) SetDeadline(time.Time) error      { return nil }
func (c *memConn) SetReadDeadline(time.Time) error  { return nil }
func (c *memConn) SetWriteDeadline(time.Time) error { return nil }
func (c *memConn) SetWriteTimeout(time.Duration) error {
	return nil
}

func (c *memConn) SetReadTimeout(t time.Duration) error {
	c.mu.Lock()
	c.rto = t
	c.mu.Unlock()
	return nil
}

// call is one request a scripted backend received.
type call struct {
	Method, Target string
	Header         http.Header
	Body           []byte
}

// backendScript answers a scripted backend's n-th request (from 0); ctx
// ends when the gateway gives the request up.
type backendScript func(ctx context.Context, n int, c call) (*http.Response, error)

// scriptedBackend is one backend URL of the pipeline's configuration.
type scriptedBackend struct {
	url    string
	mu     sync.Mutex
	script backendScript
	health int // the status its health checks get; 0: 200
	calls  []call
}

func (b *scriptedBackend) Do(ctx context.Context, req *upstream.Request) (*http.Response, error) {
	c := call{Method: req.Method, Target: req.Target, Body: bytes.Join(req.Body, nil), Header: http.Header{}}
	for _, line := range strings.Split(strings.TrimSuffix(string(req.Header), "\r\n"), "\r\n") {
		if k, v, ok := strings.Cut(line, ": "); ok {
			c.Header.Add(k, v)
		}
	}
	b.mu.Lock()
	n, script := len(b.calls), b.script
	b.calls = append(b.calls, c)
	b.mu.Unlock()
	if script == nil {
		script = answerOK
	}
	return script(ctx, n, c)
}

func (b *scriptedBackend) Close() {}

// received returns the requests the backend got.
func (b *scriptedBackend) received() []call {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]call(nil), b.calls...)
}

var quietHertz sync.Once

// downURL is a backend whose health checks fail (503).
const downURL = "http://down.test:8000"

// pipeline is a gateway in this process and the backends it reaches.
type pipeline struct {
	t        *testing.T
	clock    *testClock // the region's time as the pipeline reads it: moved by hand
	g        *Gateway
	engine   *route.Engine
	backends map[string]*scriptedBackend
	lines    *lineSink
}

// testClock is a Clock that moves only when told.
type testClock struct{ now atomic.Int64 }

func (c *testClock) Now() int64 { return c.now.Load() }

// advance moves the clock on by d.
func (c *testClock) advance(d time.Duration) { c.now.Add(int64(d)) }

// lineSink collects the usage lines.
type lineSink struct {
	mu    sync.Mutex
	lines []map[string]any
	bad   []string
}

func (s *lineSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range bytes.Split(bytes.TrimSpace(p), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			s.bad = append(s.bad, string(l))
			continue
		}
		s.lines = append(s.lines, m)
	}
	return len(p), nil
}

// byID returns the usage line of request id, or nil.
func (s *lineSink) byID(id string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.lines {
		if l["request_id"] == id {
			return l
		}
	}
	return nil
}

// testKey is the client key of the configuration's key name.
func testKey(name string) string { return "sk-" + name }

// keyHash is the sha256 a configuration lists for testKey(name).
func keyHash(name string) string {
	sum := sha256.Sum256([]byte(testKey(name)))
	return hex.EncodeToString(sum[:])
}

// newPipeline builds the gateway of the YAML configuration yml, whose
// "{{key NAME}}" stand for keyHash(NAME), in front of scripted backends
// for every backend URL it lists (scripts: by URL; default answerOK).
func newPipeline(t *testing.T, yml string, scripts map[string]backendScript) *pipeline {
	t.Helper()
	for strings.Contains(yml, "{{key ") {
		i := strings.Index(yml, "{{key ")
		j := strings.Index(yml[i:], "}}")
		yml = yml[:i] + keyHash(yml[i+len("{{key "):i+j]) + yml[i+j+2:]
	}
	cfg, err := config.Parse("pipeline.yaml", []byte(yml))
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	region, err := PrivateRegion(cfg)
	if err != nil {
		t.Fatal(err)
	}
	quietHertz.Do(func() { hlog.SetOutput(io.Discard) }) // its log of each connection a case ends on purpose
	p := &pipeline{t: t, backends: map[string]*scriptedBackend{}, lines: &lineSink{}}
	for _, m := range cfg.Models {
		for _, b := range m.Backends {
			url := strings.TrimSuffix(b.URL, "/")
			if p.backends[url] == nil {
				p.backends[url] = &scriptedBackend{url: url, script: scripts[url]}
			}
		}
	}
	reach := Backends{
		Dial: func(url string, _ time.Duration) (Upstream, error) {
			if b := p.backends[url]; b != nil {
				return b, nil
			}
			return nil, fmt.Errorf("no scripted backend %s", url)
		},
		Probe: func(_ context.Context, url, _ string) (int, error) {
			if strings.HasPrefix(url, downURL) {
				return http.StatusServiceUnavailable, nil
			}
			for u, b := range p.backends {
				if strings.HasPrefix(url, u+"/") {
					b.mu.Lock()
					defer b.mu.Unlock()
					return cmp.Or(b.health, http.StatusOK), nil
				}
			}
			return 0, fmt.Errorf("no scripted backend for %s", url)
		},
	}
	p.clock = &testClock{}
	p.clock.now.Store(region.Now())
	g, err := New(Options{Config: cfg, Generation: 1, Region: region, Log: slog.New(slog.DiscardHandler),
		Backends: reach, UsageSink: p.lines, Clock: p.clock})
	if err != nil {
		region.Close()
		t.Fatalf("gateway: %v", err)
	}
	ctx, stop := context.WithCancel(context.Background())
	g.Start(ctx, nil)
	t.Cleanup(func() {
		stop()
		g.Close()
		region.Close()
	})
	p.g = g
	p.engine = route.NewEngine(hconfig.NewOptions(ServerOptions(cfg)))
	// As the worker's markBusy does: client_body_timeout for each wait
	// for more of the body.
	bodyTimeout := func(_ context.Context, c *app.RequestContext) {
		c.GetConn().SetReadTimeout(time.Duration(cfg.ClientBodyTimeout)) //nolint:errcheck // memConn's never fails
	}
	g.Mount(p.engine, nil, bodyTimeout)
	if err := p.engine.Init(); err != nil {
		t.Fatal(err)
	}
	return p
}

// answer is what the client got for one request.
type answer struct {
	res  *http.Response
	body []byte
	line map[string]any // its usage line; nil if none was written
	raw  []byte         // every byte the gateway wrote
}

// serve runs one connection: the client sends raw and then, unless more
// is given, nothing more; serve returns once the gateway is done with
// the connection, or fails the test after a minute.
func (p *pipeline) serve(ctx context.Context, conn *memConn) answer {
	p.t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.engine.Serve(ctx, conn) //nolint:errcheck // what the client got is the outcome
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		conn.Close()
		p.t.Fatalf("the gateway did not finish the connection in a minute; it wrote %q", conn.written())
	}
	raw := conn.written()
	a := answer{raw: raw}
	res, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
	if err != nil {
		p.t.Fatalf("no HTTP answer: %v; the gateway wrote %q", err, raw)
	}
	a.res = res
	a.body, err = io.ReadAll(res.Body)
	if err != nil {
		p.t.Fatalf("answer's body: %v; the gateway wrote %q", err, raw)
	}
	if id := res.Header.Get("X-Request-Id"); id != "" {
		a.line = p.lines.byID(id)
	}
	return a
}

// request is one request as a client writes it.
type request struct {
	method, path string
	key          string // the key's name: sent as Authorization: Bearer testKey(key); "" none
	header       map[string]string
	body         string
	chunked      bool // the body in chunked transfer coding
}

// bytes is the request as it goes on the wire (Connection: close, so
// the connection ends with the answer).
func (r request) bytes() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: gw.test\r\nConnection: close\r\n", cmp.Or(r.method, http.MethodPost), r.path)
	if r.key != "" {
		fmt.Fprintf(&b, "Authorization: Bearer %s\r\n", testKey(r.key))
	}
	_, hasType := r.header["Content-Type"]
	if r.body != "" && !hasType {
		b.WriteString("Content-Type: application/json\r\n")
	}
	for k, v := range r.header {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	_, hasLength := r.header["Content-Length"]
	switch {
	case r.chunked:
		b.WriteString("Transfer-Encoding: chunked\r\n\r\n")
		if r.body != "" {
			fmt.Fprintf(&b, "%x\r\n%s\r\n", len(r.body), r.body)
		}
		b.WriteString("0\r\n\r\n")
		return b.Bytes()
	case !hasLength && (r.body != "" || cmp.Or(r.method, http.MethodPost) == http.MethodPost):
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(r.body))
	}
	b.WriteString("\r\n")
	b.WriteString(r.body)
	return b.Bytes()
}

// do sends r on a connection of its own and returns the answer.
func (p *pipeline) do(r request) answer {
	p.t.Helper()
	return p.serve(context.Background(), newMemConn(r.bytes(), false))
}

// jsonResponse is a backend's whole JSON answer.
func jsonResponse(status int, body string) *http.Response {
	return &http.Response{StatusCode: status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body))}
}

// sseResponse is a backend's stream of events, each written whole.
func sseResponse(events ...string) *http.Response {
	body := strings.Join(events, "")
	return &http.Response{StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"text/event-stream"}},
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: -1}
}

// answerOK answers as vLLM does for each API, streamed when asked, with
// usage (5 prompt tokens, 2 generated).
func answerOK(_ context.Context, _ int, c call) (*http.Response, error) {
	stream := bytes.Contains(c.Body, []byte(`"stream":true`))
	path, _, _ := strings.Cut(c.Target, "?")
	switch {
	case path == "/v1/chat/completions" && stream:
		return sseResponse(
			`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"}}]}`+"\n\n",
			`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"!"},"finish_reason":"stop"}]}`+"\n\n",
			`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`+"\n\n",
			"data: [DONE]\n\n"), nil
	case path == "/v1/chat/completions":
		return jsonResponse(200, `{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hi!"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`), nil
	case path == "/v1/completions":
		return jsonResponse(200, `{"id":"cmpl-1","object":"text_completion","choices":[{"index":0,"text":"Hi!","finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`), nil
	case path == "/v1/embeddings":
		return jsonResponse(200, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,0.2]}],"usage":{"prompt_tokens":5,"total_tokens":5}}`), nil
	case path == "/v1/responses" && stream:
		return sseResponse(
			"event: response.created\n"+`data: {"type":"response.created","response":{"id":"resp_1","status":"in_progress"}}`+"\n\n",
			"event: response.output_text.delta\n"+`data: {"type":"response.output_text.delta","delta":"Hi!"}`+"\n\n",
			"event: response.completed\n"+`data: {"type":"response.completed","response":{"id":"resp_1","status":"completed","usage":{"input_tokens":5,"output_tokens":2,"total_tokens":7}}}`+"\n\n"), nil
	case path == "/v1/responses":
		return jsonResponse(200, `{"id":"resp_1","object":"response","status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"Hi!"}]}],"usage":{"input_tokens":5,"output_tokens":2,"total_tokens":7}}`), nil
	case strings.HasPrefix(path, "/v1/responses/"):
		return jsonResponse(200, `{"id":"resp_1","object":"response","status":"completed"}`), nil
	case path == "/v1/messages" && stream:
		return sseResponse(
			"event: message_start\n"+`data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"usage":{"input_tokens":5,"output_tokens":1}}}`+"\n\n",
			"event: content_block_delta\n"+`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi!"}}`+"\n\n",
			"event: message_delta\n"+`data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}`+"\n\n",
			"event: message_stop\n"+`data: {"type":"message_stop"}`+"\n\n"), nil
	case path == "/v1/messages":
		return jsonResponse(200, `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"Hi!"}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":2}}`), nil
	case path == "/v1/messages/count_tokens":
		return jsonResponse(200, `{"input_tokens":5}`), nil
	}
	return jsonResponse(200, `{"object":"list","data":[],"usage":{"prompt_tokens":5,"total_tokens":5}}`), nil
}
