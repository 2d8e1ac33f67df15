// Command acceptpath measures the accept path: a server's user-space
// instructions per short connection (connect, one request, close), the way
// docs/field-notes.md §3 scores it. bench/accept-path.sh runs the server
// under callgrind for two connection counts; the difference of the two
// totals over the difference of the counts is the cost of one connection,
// with start-up and exit cancelled out.
//
//	acceptpath serve -mode sluice|nethttp [-addr-file F]
//	acceptpath client -addr HOST:PORT -n N -path P [-key K] -want-status S (-want-body B | -want-models)
//
// serve starts the server under test in this process on a loopback
// listener, writes its address to F (or stdout) and serves until its stdin
// ends. The script runs the client natively, as a process of its own, so
// callgrind counts the server's instructions alone. Modes:
//
//	sluice   a real worker (worker.Run, as BenchmarkProxy runs one) with one
//	         key and one model; the client sends GET /v1/models with the key
//	chat     the same worker with the fake vLLM at -backend as its backend
//	         (the script runs bench/fakevllm natively, so that only the
//	         worker is counted); the client sends a small chat completion
//	         (-chat)
//	nethttp  a plain net/http server answering a fixed body: the reference
//
// The third mode, readyz (the supervisor's admin /readyz), is served by the
// supervisor's own test binary (TestAcceptPathReadyz in supervisor/): the
// admin handler is the supervisor's, built by its unexported startAdmin.
//
// client opens N TCP connections one after another; on each it sends one
// request with "Connection: close", reads the whole answer to the server's
// close, checks the status and the exact body, and closes. Any failure
// ends it with a non-zero status: a run that is not all exact scores 0.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/worker"
)

const (
	key   = "sk-acceptpath"
	model = "m"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: acceptpath serve|client ...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:])
	case "client":
		err = client(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "acceptpath:", err)
		os.Exit(1)
	}
}

func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	mode := fs.String("mode", "sluice", "sluice, chat or nethttp")
	addrFile := fs.String("addr-file", "", "file to write the listening address to, once serving")
	gogc := fs.Int("gogc", 0, "the worker's gogc (0: the default)")
	backend := fs.String("backend", "", "mode chat: the backend's URL (a fake vLLM in another process, not counted)")
	memProfile := fs.String("memprofile", "", "write every allocation's profile here at the end (not under callgrind: it samples each one)")
	governance := fs.Bool("governance", false, "the key with a monthly quota and budget and an end-user limit, the model priced and with a fallback (issue 33's cost)")
	fs.Parse(args) //nolint:errcheck // ExitOnError
	if *memProfile != "" {
		runtime.MemProfileRate = 1
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	switch *mode {
	case "nethttp":
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(fixedBody)) //nolint:errcheck
		})}
		go srv.Serve(ln) //nolint:errcheck // ends with Close
		defer srv.Close()
	case "sluice":
		stop, err := startWorker(ln, *gogc, "http://127.0.0.1:9", *governance)
		if err != nil {
			return err
		}
		defer stop()
	case "chat":
		if *backend == "" {
			return errors.New("mode chat needs -backend")
		}
		stop, err := startWorker(ln, *gogc, *backend, *governance)
		if err != nil {
			return err
		}
		defer stop()
	default:
		return fmt.Errorf("unknown mode %q", *mode)
	}
	if err := serveUntilEOF(ln.Addr().String(), *addrFile); err != nil {
		return err
	}
	// Allocations so far, for the script's allocs and bytes per connection.
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Fprintf(os.Stderr, "acceptpath: mallocs %d bytes %d gcs %d heap %d goal %d\n", ms.Mallocs, ms.TotalAlloc, ms.NumGC, ms.HeapAlloc, ms.NextGC)
	if *memProfile != "" {
		f, err := os.Create(*memProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		runtime.GC() // the profile is as of the last GC's end
		return pprof.Lookup("allocs").WriteTo(f, 0)
	}
	return nil
}

// fixedBody is the reference server's answer.
const fixedBody = "ok\n"

// serveUntilEOF publishes addr in addrFile (written whole, then renamed
// into place) and returns once stdin ends: the script's signal that the
// client is done. (No child process and no signal: callgrind 3.19 fails an
// assertion on the SIGCHLD of a Go program's child now and then.)
func serveUntilEOF(addr, addrFile string) error {
	if addrFile == "" {
		fmt.Println(addr)
	} else {
		if err := os.WriteFile(addrFile+".tmp", []byte(addr+"\n"), 0o644); err != nil {
			return err
		}
		if err := os.Rename(addrFile+".tmp", addrFile); err != nil {
			return err
		}
	}
	_, err := io.Copy(io.Discard, os.Stdin)
	return err
}

// startWorker runs a worker on ln with one key and one model served by
// backend, and returns once it accepts connections. The key has limits
// too high to refuse anything, as the rig's (bench/rig/proxies.go): a
// proxied request pays for its limiters and x-ratelimit-* headers. For /v1/models the
// backend is a closed port: the worker's health check (one at start, then
// hourly) finds it down, which /v1/models does not look at.
func startWorker(ln net.Listener, gogc int, backend string, governance bool) (stop func(), err error) {
	dir, err := os.MkdirTemp("", "acceptpath")
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(key))
	keyGov, modelGov, spare, state := "", "", "", ""
	if governance {
		// The spend journal too (state_dir): a settle's write(2).
		state = "state_dir: " + filepath.Join(dir, "state") + "\n"
		if err := os.Mkdir(filepath.Join(dir, "state"), 0o700); err != nil {
			return nil, err
		}
		keyGov = "    quotas: {month: 1000000000000}\n    budget: {usd: 1000000, per: month}\n" +
			"    end_user: {requests_per_minute: 1000000000, max_concurrent: 1000000, quota: {tokens: 1000000000000, per: month}}\n"
		modelGov = "    price: {input_per_mtok: 0.15, output_per_mtok: 0.6}\n    fallbacks: [spare]\n"
		spare = fmt.Sprintf("  - name: spare\n    backends:\n      - url: %s\n        slots: 10\n", backend)
	}
	cfg, err := config.Parse("acceptpath.yaml", fmt.Appendf(nil, `%slisten: 127.0.0.1:0
usage_log: %s
usage_log_flush: 1s
gogc: %d
keys:
  - name: acceptpath
    sha256: %s
    models: ["*"]
    requests_per_minute: 1000000000
    max_concurrent: 1000000
%smodels:
  - name: %s
%s    health:
      interval: 1h
    backends:
      - url: %s
        slots: 10
%s`, state, filepath.Join(dir, "usage.log"), gogc, hex.EncodeToString(sum[:]), keyGov, model, modelGov, backend, spare))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() {
		done <- worker.Run(ctx, worker.Options{Listener: ln, Config: cfg,
			Log: slog.New(slog.DiscardHandler), Ready: func() { close(ready) }})
	}()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("worker did not start: %v", err)
	}
	return func() {
		cancel()
		<-done
		os.RemoveAll(dir)
	}, nil
}

// modelsBody is the worker's answer to GET /v1/models for the one model;
// "created" is the worker's start time, so the client takes the first
// answer's and wants every other byte for byte the same.
var modelsBody = regexp.MustCompile(`^\{"object":"list","data":\[\{"id":"` + model +
	`","object":"model","created":[0-9]+,"owned_by":"sluice"\}\]\}` + "\n$")

// chatBody is a chat completion of the model with its answer: the fake's
// ids and times vary, its shape does not.
var chatBody = regexp.MustCompile(`^\{"id":"[^"]+","object":"chat\.completion","created":[0-9]+,"model":"` + model + `","choices":\[\{"index":0,"message":\{"role":"assistant","content":"tok( tok){7}",`)

func client(args []string) error {
	fs := flag.NewFlagSet("client", flag.ExitOnError)
	addr := fs.String("addr", "", "server address")
	n := fs.Int("n", 200, "connections, one after another")
	path := fs.String("path", "/", "request path")
	bearer := fs.String("key", "", "Authorization: Bearer key (none if empty)")
	wantStatus := fs.Int("want-status", 200, "status every answer must have")
	wantBody := fs.String("want-body", "", "exact body every answer must have")
	wantModels := fs.Bool("want-models", false, "the body is sluice's /v1/models list of the one model")
	keepAlive := fs.Bool("keepalive", false, "send the N requests on one connection instead (the last with Connection: close)")
	chat := fs.Bool("chat", false, "POST a small chat completion to -path; the body must be a chat.completion of the model")
	stream := fs.Bool("stream", false, "with -chat: ask for the answer streamed; the body must be 9 events and [DONE]")
	fs.Parse(args) //nolint:errcheck // ExitOnError
	method, payload := "GET", ""
	if *chat {
		method, payload = "POST", `{"model":"`+model+`","user":"end-user-0042","messages":[{"role":"user","content":"hello"}],"max_tokens":8,"stream":`+strconv.FormatBool(*stream)+`}`
	}
	req := method + " " + *path + " HTTP/1.1\r\nHost: " + *addr + "\r\n"
	if *bearer != "" {
		req += "Authorization: Bearer " + *bearer + "\r\n"
	}
	req += "User-Agent: acceptpath\r\n"
	if payload != "" {
		req += "Content-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(payload)) + "\r\n"
	}
	var kept *keptConn
	if *keepAlive {
		kept = &keptConn{}
		defer kept.close()
	}
	want := []byte(*wantBody)
	for i := range *n {
		var body []byte
		var err error
		if kept != nil {
			body, err = kept.do(*addr, req, payload, *wantStatus, i == *n-1)
		} else {
			body, err = once(*addr, req+"Connection: close\r\n\r\n"+payload, *wantStatus)
		}
		if err != nil {
			return fmt.Errorf("connection %d of %d: %w", i+1, *n, err)
		}
		if *chat && *stream {
			if !bytes.HasSuffix(body, []byte("data: [DONE]\n\n")) || bytes.Count(body, []byte("data: ")) < 10 {
				return fmt.Errorf("connection %d of %d: body %q is not a chat completion's stream", i+1, *n, body)
			}
			continue
		}
		if *chat {
			if !chatBody.Match(body) {
				return fmt.Errorf("connection %d of %d: body %q is not a chat completion of model %q", i+1, *n, body, model)
			}
			continue
		}
		if *wantModels && i == 0 {
			if !modelsBody.Match(body) {
				return fmt.Errorf("connection 1: body %q is not the list of model %q", body, model)
			}
			want = body
		}
		if !bytes.Equal(body, want) {
			return fmt.Errorf("connection %d of %d: body %q, want %q", i+1, *n, body, want)
		}
	}
	return nil
}

// keptConn sends requests one after another on one connection.
type keptConn struct {
	c  net.Conn
	br *bufio.Reader
}

// do sends req (a head without its end) and returns the answer's body once
// its status is want; with last, asks the server to close, and checks it does.
func (k *keptConn) do(addr, req, payload string, want int, last bool) ([]byte, error) {
	if k.c == nil {
		c, err := net.DialTimeout("tcp", addr, 30*time.Second)
		if err != nil {
			return nil, err
		}
		k.c, k.br = c, bufio.NewReader(c)
	}
	k.c.SetDeadline(time.Now().Add(60 * time.Second)) //nolint:errcheck // a TCP conn's never fails
	if last {
		req += "Connection: close\r\n"
	}
	if _, err := io.WriteString(k.c, req+"\r\n"+payload); err != nil {
		return nil, err
	}
	res, body, err := readAnswer(k.br, want)
	if err != nil {
		return nil, err
	}
	if res.Close != last {
		return nil, fmt.Errorf("the server says it closes the connection: %t, want %t", res.Close, last)
	}
	if last {
		if rest, err := io.ReadAll(k.br); err != nil || len(rest) > 0 {
			return nil, fmt.Errorf("after the last answer: %d more bytes, err %v", len(rest), err)
		}
	}
	return body, nil
}

func (k *keptConn) close() {
	if k.c != nil {
		k.c.Close()
	}
}

// once opens a connection, sends req, reads the whole answer up to the
// server's close and returns its body once the status is want.
func once(addr, req string, want int) ([]byte, error) {
	c, err := net.DialTimeout("tcp", addr, 30*time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(60 * time.Second)) //nolint:errcheck // a TCP conn's never fails
	if _, err := io.WriteString(c, req); err != nil {
		return nil, err
	}
	br := bufio.NewReader(c)
	res, body, err := readAnswer(br, want)
	if err != nil {
		return nil, err
	}
	if !res.Close {
		return nil, errors.New("the server did not say it closes the connection")
	}
	// The server closes after the answer: nothing more may follow.
	if rest, err := io.ReadAll(br); err != nil || len(rest) > 0 {
		return nil, fmt.Errorf("after the answer: %d more bytes, err %v", len(rest), err)
	}
	return body, nil
}

// readAnswer reads one answer and its whole body from br, an error unless
// its status is want.
func readAnswer(br *bufio.Reader, want int) (*http.Response, []byte, error) {
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		return nil, nil, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, nil, err
	}
	if res.StatusCode != want {
		return nil, nil, fmt.Errorf("status %d, want %d: %q", res.StatusCode, want, body)
	}
	return res, body, nil
}
