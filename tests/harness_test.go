// Package tests holds sluice's integration tests: they build the real
// binary once, run it (supervisor + workers) over loopback in front of the
// fake vLLM in tests/fakevllm, and talk to it with real clients.
package tests

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/sluiceproc"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// sluiceBin is the binary under test, built once by TestMain.
var sluiceBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sluice-test-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sluiceBin = filepath.Join(dir, "sluice")
	args := []string{"build", "-o", sluiceBin}
	if os.Getenv("SLUICE_TEST_RACE") == "1" {
		args = append(args, "-race")
	}
	if tags := os.Getenv("SLUICE_TEST_TAGS"); tags != "" {
		args = append(args, "-tags", tags)
	}
	// Every process the tests start (supervisors, their workers, the
	// one-shot commands) inherits this environment. A race-built binary
	// sleeps atexit_sleep_ms (1 s by default) before it exits, a grace for
	// race reports still being written; reports finished before then are
	// unaffected, and the exit still waits for one in progress. At two
	// processes and more per gateway, that second was about 2 s of every
	// gateway's stop, over 100 gateways. Races are still found and reported
	// (see gateway.stop).
	if g := os.Getenv("GORACE"); !strings.Contains(g, "atexit_sleep_ms") {
		os.Setenv("GORACE", strings.TrimSpace(g+" atexit_sleep_ms=0"))
	}
	build := exec.Command("go", append(args, "../cmd/sluice")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build sluice:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Keys used by the test configurations: the secret and its SHA-256.
const (
	keyAll     = "sk-test-all"
	keyLimited = "sk-test-limited"
)

// deadline is how long any awaited condition may take: generous, because a
// loaded 2-core CI machine is slow, and never part of a pass/fail on speed.
const deadline = 30 * time.Second

// baseConfig renders a configuration with two models on backend url:
// "m" (passed through) and "m-alias" (upstream_model: "real-model").
// keyAll may use everything, keyLimited only "m".
func baseConfig(url, usageLog, extra string) string {
	return fmt.Sprintf(`listen: 127.0.0.1:0
admin: 127.0.0.1:0
workers: 2
pin_cpus: true
shutdown_timeout: 20s
usage_log: %s
%s
keys:
  - name: all
    sha256: %s
    models: ["*"]
  - name: limited
    sha256: %s
    models: ["m"]
models:
  - name: m
    backends:
      - url: %s
        slots: 64
        api_key_env: SLUICE_TEST_BACKEND_KEY
  - name: m-alias
    upstream_model: real-model
    backends:
      - url: %s
        slots: 64
`, usageLog, extra, sha(keyAll), sha(keyLimited), url, url)
}

// backendKey is the backend's own API key, set in the gateway's environment.
const backendKey = "backend-secret-123"

// gateway is a running sluice supervisor and its workers.
type gateway struct {
	t        *testing.T
	cmd      *exec.Cmd
	URL      string // client-facing base URL
	AdminURL string
	UsageLog string
	Config   string       // the configuration file's path
	admin    *http.Client // how the admin listener is reached
	stderr   *syncBuffer
	exited   chan struct{}
	exitErr  error
}

// startGateway writes cfg to a file, starts `sluice serve`, waits until
// every worker is ready, and stops it (and its workers) when the test ends.
func startGateway(t *testing.T, cfg string) *gateway {
	t.Helper()
	return startGatewayNofile(t, cfg, 0)
}

// startGatewayNofile is startGateway with RLIMIT_NOFILE set to nofile,
// soft and hard (so the Go runtime cannot raise it), for the supervisor
// and its workers; 0 leaves the limit as it is.
func startGatewayNofile(t *testing.T, cfg string, nofile int) *gateway {
	t.Helper()
	return launchGateway(t, cfg, nofile, nil)
}

// launchGateway starts the gateway: RLIMIT_NOFILE nofile (0: as it is),
// and its admin listener reached over https with adminTLS (nil: plain).
func launchGateway(t *testing.T, cfg string, nofile int, adminTLS *http.Client) *gateway {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "sluice.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	g := &gateway{t: t, stderr: &syncBuffer{}, exited: make(chan struct{}), Config: path, admin: http.DefaultClient}
	scheme := "http://"
	if adminTLS != nil {
		g.admin, scheme = adminTLS, "https://"
	}
	g.cmd = exec.Command(sluiceBin, "serve", "-c", path)
	if nofile > 0 {
		// The shell execs the binary: the supervisor keeps its pid.
		g.cmd = exec.Command("sh", "-c", `ulimit -n `+strconv.Itoa(nofile)+` && exec "$0" "$@"`, sluiceBin, "serve", "-c", path)
	}
	g.cmd.Env = append(os.Environ(), "SLUICE_TEST_BACKEND_KEY="+backendKey)
	g.cmd.Stderr = g.stderr
	g.cmd.Stdout = os.Stdout
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { g.exitErr = g.cmd.Wait(); close(g.exited) }()
	t.Cleanup(g.stop)

	// The supervisor logs the addresses it bound (port 0 in the config).
	start := g.awaitLog("sluice starting")
	g.URL = "http://" + start["listen"].(string)
	g.AdminURL = scheme + start["admin"].(string)
	g.awaitReady()
	return g
}

// stop ends the gateway: SIGTERM, then SIGKILL for anything left, workers
// included, so no test leaves a process behind.
func (g *gateway) stop() {
	workers := g.workerPIDs()
	g.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-g.exited:
	case <-time.After(deadline):
		g.cmd.Process.Kill()
		<-g.exited
	}
	for _, pid := range workers {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	// A race-built gateway reports a data race on its stderr (and exits 66,
	// which only some tests look at): any report fails the test.
	if strings.Contains(g.stderr.String(), "WARNING: DATA RACE") {
		g.t.Error("the race detector reported a data race in the gateway's processes")
	}
	if g.t.Failed() || os.Getenv("SLUICE_TEST_LOGS") != "" {
		g.t.Logf("gateway stderr:\n%s", g.stderr.String())
	}
}

// awaitReady waits until /readyz says every worker accepts connections.
func (g *gateway) awaitReady() {
	g.t.Helper()
	await(g.t, "gateway ready", func() bool {
		res, err := g.admin.Get(g.AdminURL + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
}

// awaitLog waits for a JSON log line whose msg is msg and returns it.
func (g *gateway) awaitLog(msg string) map[string]any {
	g.t.Helper()
	var found map[string]any
	await(g.t, "log line "+strconv.Quote(msg), func() bool {
		found = g.findLog(msg, 0)
		return found != nil
	})
	return found
}

// findLog returns the nth (0-based) JSON log line whose msg is msg.
func (g *gateway) findLog(msg string, nth int) map[string]any {
	for _, line := range strings.Split(g.stderr.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == msg {
			if nth == 0 {
				return m
			}
			nth--
		}
	}
	return nil
}

// workerPIDs lists the supervisor's child processes.
func (g *gateway) workerPIDs() []int {
	return sluiceproc.Children(g.cmd.Process.Pid)
}

// usageLines parses the usage log written so far.
func (g *gateway) usageLines() []map[string]any {
	data, err := os.ReadFile(g.UsageLog)
	if err != nil {
		return nil
	}
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil {
			lines = append(lines, m)
		}
	}
	return lines
}

// await polls cond until it holds or deadline passes.
func await(t *testing.T, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(deadline)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("timed out after %v waiting for %s", deadline, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startBackend starts a fake vLLM for one test.
func startBackend(t *testing.T, o fakevllm.Options) *fakevllm.Server {
	t.Helper()
	s, err := fakevllm.Start("127.0.0.1:0", o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// newGateway starts a fake backend and a gateway in front of it, with the
// usage log in a file.
func newGateway(t *testing.T, o fakevllm.Options, extra string) (*gateway, *fakevllm.Server) {
	t.Helper()
	be := startBackend(t, o)
	usage := filepath.Join(t.TempDir(), "usage.log")
	g := startGateway(t, baseConfig(be.URL(), usage, extra))
	g.UsageLog = usage
	return g, be
}

// post sends a JSON body with a bearer key and returns status and body.
func post(t *testing.T, client *http.Client, url, key string, body []byte, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(res.Body)
	return res, buf.Bytes()
}

// readEvents reads SSE "data:" payloads until EOF.
func readEvents(t *testing.T, r *bufio.Reader) []string {
	t.Helper()
	var events []string
	for {
		ev, err := nextEvent(r)
		if err != nil {
			return events
		}
		events = append(events, ev)
	}
}

// nextEvent reads one SSE event's data payload.
func nextEvent(r *bufio.Reader) (string, error) {
	var data string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return "", err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if data != "" {
				return data, nil
			}
			continue
		}
		if strings.HasPrefix(line, "data: ") {
			data = strings.TrimPrefix(line, "data: ")
		}
	}
}

// syncBuffer is a bytes.Buffer safe for a process writing while a test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// openHeldStream starts a streamed chat completion whose backend holds after
// the first event until be.Release(hold), checks it is an SSE 200, and
// returns its reader positioned after that first event, the event, and the
// response body (closing it is a client leaving mid-stream).
func openHeldStream(t *testing.T, g *gateway, hold string) (*bufio.Reader, string, io.Closer) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/chat/completions", bytes.NewReader(chatBody("m", true, "hi")))
	req.Header.Set("Authorization", "Bearer "+keyAll)
	req.Header.Set("X-Fake-Hold", hold)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, content-type %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	r := bufio.NewReader(res.Body)
	first, err := nextEvent(r)
	if err != nil {
		t.Fatalf("first event: %v", err)
	}
	return r, first, res.Body
}

// groupSalt is the cache_salt the gateway sends for the keys of a cache
// group (proxy/cachegroup.go: base64url of SHA-256 of a fixed prefix and
// the group's name), written here from docs/internals.md's description.
func groupSalt(group string) string {
	sum := sha256.Sum256([]byte("sluice cache group\x00" + group))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// asSent is a chat, completions or Responses body without a cache_salt as
// the gateway sends it upstream for a key of the cache group group: the
// group's cache_salt added before the closing brace, nothing else changed.
func asSent(group string, body []byte) []byte {
	end := bytes.LastIndexByte(body, '}')
	out := append([]byte(nil), body[:end]...)
	out = append(out, `,"cache_salt":"`+groupSalt(group)+`"`...)
	return append(out, body[end:]...)
}
