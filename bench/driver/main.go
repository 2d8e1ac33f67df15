// Command driver is the benchmark rig's load generator. It sends OpenAI
// chat completions (or, with -api, the same request as an OpenAI Responses
// or Anthropic Messages request) to a proxy (or straight to the backend,
// for the ceiling check), validates every response, and ends with one JSON
// line of results.
//
// Closed loop (-conns N): N keep-alive connections, each sending its next
// request as soon as the previous answer is complete. Open loop (-rate R):
// requests start at fixed intervals whatever happened before, and latency is
// counted from the intended send time, so a proxy that queues cannot hide it.
//
// A response counts as good only if its status is 200 and its body is what
// was asked for: for JSON, a chat.completion with content; for streams, the
// expected number of content events and a final [DONE] (Responses:
// response.completed; Messages: message_stop). Anything else is an error,
// never a fast answer.
package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"

	"github.com/sluice-gw/sluice/bench/result"
)

type config struct {
	api        string // chat, responses or messages
	url        string
	key        string
	model      string
	conns      int
	rate       float64
	duration   time.Duration
	promptSize int
	stream     bool
	tokens     int
	interval   time.Duration
	hold       time.Duration
	ramp       time.Duration
	caFile     string // https: the CA the proxy's certificate chains to
	newConn    bool   // a new connection (and TLS handshake) per request
	resume     bool   // https: resume sessions by ticket (a session cache)
}

type stats struct {
	mu        sync.Mutex
	latencies []time.Duration
	errors    []string
	requests  atomic.Int64
	ok        atomic.Int64
	failed    atomic.Int64
	events    atomic.Int64
	// https: connections that resumed a session, and the first
	// connection's parameters (what was measured).
	resumed atomic.Int64
	tlsOnce sync.Once
	tlsDesc string
}

func (s *stats) record(lat time.Duration, err error) {
	s.requests.Add(1)
	if err != nil {
		s.failed.Add(1)
		s.mu.Lock()
		if len(s.errors) < 5 {
			s.errors = append(s.errors, err.Error())
		}
		s.mu.Unlock()
		return
	}
	s.ok.Add(1)
	s.mu.Lock()
	s.latencies = append(s.latencies, lat)
	s.mu.Unlock()
}

func main() {
	var c config
	flag.StringVar(&c.api, "api", "chat", "API of the request: chat (/v1/chat/completions), responses (/v1/responses, store false) or messages (/v1/messages, x-api-key)")
	flag.StringVar(&c.url, "url", "http://127.0.0.1:8080", "base URL of the proxy or backend")
	flag.StringVar(&c.key, "key", "sk-bench", "API key (Bearer)")
	flag.StringVar(&c.model, "model", "bench", "model name")
	flag.IntVar(&c.conns, "conns", 64, "closed loop: keep-alive connections")
	flag.Float64Var(&c.rate, "rate", 0, "open loop: requests per second (0 = closed loop)")
	flag.DurationVar(&c.duration, "duration", 10*time.Second, "how long to send")
	flag.IntVar(&c.promptSize, "prompt", 200, "bytes of prompt text in the first message")
	flag.BoolVar(&c.stream, "stream", false, "ask for a streamed answer")
	flag.IntVar(&c.tokens, "tokens", 8, "tokens asked of the backend (X-Fake-Tokens)")
	flag.DurationVar(&c.interval, "interval", 0, "pause between stream events at the backend (X-Fake-Interval-Ms)")
	flag.DurationVar(&c.hold, "delay", 0, "backend delay before answering (X-Fake-Delay-Ms)")
	flag.DurationVar(&c.ramp, "ramp", 0, "closed loop: start the connections evenly over this long (0: all at once)")
	flag.StringVar(&c.caFile, "cacert", "", "https: PEM file of the CA that signed the proxy's certificate")
	flag.BoolVar(&c.newConn, "new-conn", false, "a new connection per request (over https: a handshake per request)")
	flag.BoolVar(&c.resume, "resume", false, "https: keep a session cache, so that new connections resume by ticket")
	flag.Parse()
	if _, ok := apis[c.api]; !ok {
		fmt.Fprintf(os.Stderr, "driver: unknown -api %q (chat, responses, messages)\n", c.api)
		os.Exit(2)
	}

	body := makeBody(c)
	st := &stats{}
	tr := &http.Transport{MaxIdleConnsPerHost: 100000, MaxConnsPerHost: 0, DisableCompression: true, IdleConnTimeout: time.Minute,
		DisableKeepAlives: c.newConn, TLSClientConfig: tlsConfig(c)}
	if c.rate == 0 {
		tr.MaxConnsPerHost = c.conns
	}
	client := &http.Client{Transport: tr, Timeout: 10 * time.Minute}
	start := time.Now()
	end := start.Add(c.duration)
	var wg sync.WaitGroup
	if c.rate == 0 {
		for i := 0; i < c.conns; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Spread the first requests: N clients that all upload a
				// prompt in the same millisecond measure a burst, not N
				// open streams.
				time.Sleep(time.Duration(i) * c.ramp / time.Duration(c.conns))
				for time.Now().Before(end) {
					t0 := time.Now()
					err := do(client, c, body, st)
					st.record(time.Since(t0), err)
				}
			}()
		}
	} else {
		step := time.Duration(float64(time.Second) / c.rate)
		for i := 0; ; i++ {
			intended := start.Add(time.Duration(i) * step)
			if !intended.Before(end) {
				break
			}
			if d := time.Until(intended); d > 0 {
				time.Sleep(d)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := do(client, c, body, st)
				st.record(time.Since(intended), err)
			}()
		}
	}
	wg.Wait()
	elapsed := time.Since(start)

	r := result.Driver{Mode: "closed", Conns: c.conns, PromptBytes: c.promptSize, Stream: c.stream, Tokens: c.tokens,
		DurationS: elapsed.Seconds(), Requests: st.requests.Load(), OK: st.ok.Load(), Errors: st.failed.Load(),
		Events: st.events.Load(), ErrorSamples: st.errors, Resumed: st.resumed.Load(), TLS: st.tlsDesc}
	if c.rate > 0 {
		r.Mode, r.Conns, r.Rate = "open", 0, c.rate
	}
	r.RPS = float64(r.OK) / elapsed.Seconds()
	sort.Slice(st.latencies, func(i, j int) bool { return st.latencies[i] < st.latencies[j] })
	r.P50Ms, r.P90Ms, r.P99Ms = pct(st.latencies, 0.50), pct(st.latencies, 0.90), pct(st.latencies, 0.99)
	if n := len(st.latencies); n > 0 {
		r.MaxMs = ms(st.latencies[n-1])
	}
	json.NewEncoder(os.Stdout).Encode(r)
}

// tlsConfig is the client side of an https run: the rig's CA, TLS 1.2
// and 1.3, and X25519 alone. Go offers X25519MLKEM768 first by default,
// which the nginx peer's OpenSSL 3.0 does not know: offering X25519 only
// makes every proxy do the same key exchange. No HTTP/2 (the Transport
// negotiates it only when ForceAttemptHTTP2 or no TLSClientConfig is set).
func tlsConfig(c config) *tls.Config {
	if c.caFile == "" {
		return nil
	}
	pem, err := os.ReadFile(c.caFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "driver:", err)
		os.Exit(2)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		fmt.Fprintf(os.Stderr, "driver: %s: no PEM certificate\n", c.caFile)
		os.Exit(2)
	}
	cfg := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12, CurvePreferences: []tls.CurveID{tls.X25519}}
	if c.resume {
		cfg.ClientSessionCache = tls.NewLRUClientSessionCache(1024)
	} else {
		// No cache: every connection's handshake is full.
		cfg.SessionTicketsDisabled = true
	}
	return cfg
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func pct(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return ms(sorted[int(float64(len(sorted)-1)*p)])
}

// api is what differs between the APIs the driver speaks: the path, how
// the key is sent, and how an answer is recognised.
type api struct {
	path string
	// auth sets the key the way the API's clients send it.
	auth func(h http.Header, key string)
	// answerOK says whether a whole (non-streamed) answer has content.
	answerOK func(b []byte) bool
	// content says whether a stream event carries a piece of the answer;
	// last whether it is the stream's last (no event may follow it).
	content, last func(data []byte) bool
}

var (
	bearer = func(h http.Header, key string) { h.Set("Authorization", "Bearer "+key) }
	apis   = map[string]api{
		"chat": {path: "/v1/chat/completions", auth: bearer,
			answerOK: func(b []byte) bool {
				return gjson.GetBytes(b, "object").Str == "chat.completion" && gjson.GetBytes(b, "choices.0.message.content").Str != ""
			},
			content: func(d []byte) bool { return gjson.GetBytes(d, "choices.0.delta.content").Str != "" },
			last:    func(d []byte) bool { return bytes.HasPrefix(d, []byte("[DONE]")) }},
		"responses": {path: "/v1/responses", auth: bearer,
			answerOK: func(b []byte) bool {
				return gjson.GetBytes(b, "object").Str == "response" && gjson.GetBytes(b, "output.0.content.0.text").Str != ""
			},
			content: func(d []byte) bool {
				return gjson.GetBytes(d, "type").Str == "response.output_text.delta" && gjson.GetBytes(d, "delta").Str != ""
			},
			last: func(d []byte) bool { return gjson.GetBytes(d, "type").Str == "response.completed" }},
		"messages": {path: "/v1/messages", auth: func(h http.Header, key string) {
			h.Set("X-Api-Key", key)
			h.Set("Anthropic-Version", "2023-06-01")
		},
			answerOK: func(b []byte) bool {
				return gjson.GetBytes(b, "type").Str == "message" && gjson.GetBytes(b, "content.0.text").Str != ""
			},
			content: func(d []byte) bool {
				return gjson.GetBytes(d, "type").Str == "content_block_delta" && gjson.GetBytes(d, "delta.text").Str != ""
			},
			last: func(d []byte) bool { return gjson.GetBytes(d, "type").Str == "message_stop" }},
	}
)

// makeBody builds a request whose prompt has promptSize bytes: chat's first
// message, Responses' input (store false: nothing kept upstream), Messages'
// first message. Each asks for c.tokens tokens at most.
func makeBody(c config) []byte {
	words := strings.Repeat("lorem ipsum dolor sit amet ", c.promptSize/27+1)[:c.promptSize]
	req := map[string]any{"model": c.model, "stream": c.stream}
	switch c.api {
	case "responses":
		req["input"], req["max_output_tokens"], req["store"] = words, c.tokens, false
	default: // chat and messages: the same members
		req["max_tokens"] = c.tokens
		req["messages"] = []map[string]string{{"role": "user", "content": words}}
	}
	b, _ := json.Marshal(req)
	return b
}

// do sends one request and validates the whole answer.
func do(client *http.Client, c config, body []byte, st *stats) error {
	a := apis[c.api]
	req, err := http.NewRequest(http.MethodPost, c.url+a.path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	a.auth(req.Header, c.key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Fake-Tokens", fmt.Sprint(c.tokens))
	if c.interval > 0 {
		req.Header.Set("X-Fake-Interval-Ms", fmt.Sprint(c.interval.Milliseconds()))
	}
	if c.hold > 0 {
		req.Header.Set("X-Fake-Delay-Ms", fmt.Sprint(c.hold.Milliseconds()))
	}
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.TLS != nil {
		if res.TLS.DidResume {
			st.resumed.Add(1)
		}
		st.tlsOnce.Do(func() {
			st.tlsDesc = tls.VersionName(res.TLS.Version) + " " + tls.CipherSuiteName(res.TLS.CipherSuite) + " " + res.TLS.CurveID.String()
		})
	}
	if res.StatusCode != 200 {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 200))
		return fmt.Errorf("status %d: %s", res.StatusCode, b)
	}
	if !c.stream {
		b, err := io.ReadAll(res.Body)
		if err != nil {
			return err
		}
		if !a.answerOK(b) {
			return fmt.Errorf("not a %s answer: %.100s", c.api, b)
		}
		return nil
	}
	// Stream: exactly c.tokens content events, then the finish event, maybe
	// a usage event, then [DONE] last (or the API's last event).
	r := bufio.NewReaderSize(res.Body, 16<<10)
	content, done := 0, false
	for {
		line, err := r.ReadSlice('\n')
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		data, ok := bytes.CutPrefix(line, []byte("data: "))
		if !ok {
			continue
		}
		st.events.Add(1)
		if done {
			return fmt.Errorf("event after the last")
		}
		if a.last(data) {
			done = true
			continue
		}
		if a.content(data) {
			content++
		}
	}
	if !done || content != c.tokens {
		return fmt.Errorf("stream ended with %d of %d content events, last event seen=%v", content, c.tokens, done)
	}
	return nil
}
