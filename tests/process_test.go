package tests

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/sluiceproc"
	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// freshClient opens a new connection per request, so SO_REUSEPORT spreads
// the requests over the workers' sockets.
func freshClient() *http.Client {
	return &http.Client{Timeout: deadline, Transport: &http.Transport{DisableKeepAlives: true}}
}

// Both workers serve: new connections spread over both sockets.
func TestBothWorkersServe(t *testing.T) {
	g, _ := newGateway(t, fakevllm.Options{Tokens: 1}, "")
	client := freshClient()
	for i := 0; i < 40; i++ {
		res, out := post(t, client, g.URL+"/v1/chat/completions", keyAll, chatBody("m", false, "x"), nil)
		if res.StatusCode != 200 {
			t.Fatalf("status %d: %s", res.StatusCode, out)
		}
	}
	var seen [2]int
	await(t, "40 usage lines", func() bool { return len(g.usageLines()) >= 40 })
	for _, l := range g.usageLines() {
		seen[int(l["worker"].(float64))]++
	}
	// With 40 connections hashed over 2 sockets, one worker getting none has
	// probability 2^-39.
	if seen[0] == 0 || seen[1] == 0 {
		t.Fatalf("requests per worker: %v", seen)
	}
	// pin_cpus: each worker is pinned to one CPU, each to another.
	cpus := map[string]bool{}
	for _, pid := range g.workerPIDs() {
		status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				v = strings.TrimSpace(v)
				if strings.ContainsAny(v, ",-") {
					t.Errorf("worker %d not pinned to one CPU: %s", pid, v)
				}
				cpus[v] = true
			}
		}
	}
	if runtime.NumCPU() >= 2 && len(cpus) != 2 {
		t.Errorf("workers pinned to %v, want two different CPUs", cpus)
	}
}

// kill -9 of a worker: it is restarted, the reason is logged, and the port
// never stops serving — connections that land on the dead worker's socket
// wait there for its replacement.
func TestKilledWorkerIsRestarted(t *testing.T) {
	g, _ := newGateway(t, fakevllm.Options{Tokens: 1}, "")
	before := g.workerPIDs()
	if len(before) != 2 {
		t.Fatalf("workers: %v", before)
	}
	victim := before[0]
	if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Straight away, while the slot has no worker: 40 new connections, about
	// half of them queued on the dead worker's socket. Every one must succeed.
	client := freshClient()
	var wg sync.WaitGroup
	errs := make(chan string, 40)
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/chat/completions", bytes.NewReader(chatBody("m", false, "x")))
			req.Header.Set("Authorization", "Bearer "+keyAll)
			res, err := client.Do(req)
			if err != nil {
				errs <- err.Error()
				return
			}
			res.Body.Close()
			if res.StatusCode != 200 {
				errs <- res.Status
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("request during restart failed: %s", e)
	}
	await(t, "a replacement worker", func() bool {
		pids := g.workerPIDs()
		return len(pids) == 2 && pids[0] != victim && pids[1] != victim
	})
	line := g.awaitLog("worker exited unexpectedly; restarting")
	if !strings.Contains(line["status"].(string), "signal killed") {
		t.Errorf("restart reason not logged: %v", line)
	}
	g.awaitReady()
}

// SIGTERM: the workers stop accepting, an in-flight stream runs to its end,
// and the supervisor exits 0.
func TestSIGTERMLetsStreamFinish(t *testing.T) {
	g, be := newGateway(t, fakevllm.Options{Tokens: 5}, "")
	r, _, _ := openHeldStream(t, g, "drain")
	if err := g.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	g.awaitLog("worker draining")
	// Draining workers accept no new connections: they are refused.
	addr := strings.TrimPrefix(g.URL, "http://")
	await(t, "new connections refused", func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	// The stream is mid-flight while the workers drain; now let it finish.
	be.Release("drain")
	rest := readEvents(t, r)
	if len(rest) != 6 || rest[len(rest)-1] != "[DONE]" {
		t.Fatalf("stream cut by shutdown: %d events %q", len(rest), rest)
	}
	select {
	case <-g.exited:
	case <-time.After(deadline):
		t.Fatal("supervisor did not exit after SIGTERM")
	}
	if g.exitErr != nil {
		t.Fatalf("supervisor exit: %v", g.exitErr)
	}
	if n := len(sluiceproc.Children(g.cmd.Process.Pid)); n != 0 {
		t.Errorf("%d workers left behind", n)
	}
}

// `sluice check` prints OK or every error with file:line, like nginx -t.
func TestCheckCommand(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(good, []byte(baseConfig("http://127.0.0.1:1", "off", "")), 0o600)
	os.WriteFile(bad, []byte(strings.Replace(baseConfig("http://127.0.0.1:1", "off", "bogus_field: 1"), "slots: 64", "slots: 0", 1)), 0o600)

	cmd := exec.Command(sluiceBin, "check", "-c", good)
	cmd.Env = append(os.Environ(), "SLUICE_TEST_BACKEND_KEY=x")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "OK") {
		t.Errorf("check of a good config: %v %s", err, out)
	}
	cmd = exec.Command(sluiceBin, "check", "-c", bad)
	cmd.Env = append(os.Environ(), "SLUICE_TEST_BACKEND_KEY=x")
	out, err = cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("check of a bad config: want exit 1, got %v", err)
	}
	if !strings.Contains(string(out), bad+":7:1") || !strings.Contains(string(out), "bogus_field") {
		t.Errorf("check output lacks file:line of the unknown field: %s", out)
	}
	// A missing environment variable is a config error too.
	cmd = exec.Command(sluiceBin, "check", "-c", good)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	out, _ = cmd.CombinedOutput()
	if !strings.Contains(string(out), "SLUICE_TEST_BACKEND_KEY is not set") {
		t.Errorf("missing env var not reported: %s", out)
	}
}

// `sluice demo` serves a streamed completion with the curl command it prints.
func TestDemo(t *testing.T) {
	ln1, _ := net.Listen("tcp", "127.0.0.1:0")
	ln2, _ := net.Listen("tcp", "127.0.0.1:0")
	listen, admin := ln1.Addr().String(), ln2.Addr().String()
	ln1.Close()
	ln2.Close()
	out := &syncBuffer{}
	cmd := exec.Command(sluiceBin, "demo", "--listen", listen, "--admin", admin)
	cmd.Stdout = out
	g := &gateway{t: t, cmd: cmd, stderr: &syncBuffer{}, exited: make(chan struct{}), URL: "http://" + listen, AdminURL: "http://" + admin, admin: http.DefaultClient}
	cmd.Stderr = g.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { g.exitErr = cmd.Wait(); close(g.exited) }()
	t.Cleanup(g.stop)
	g.awaitReady()

	// Run exactly the request the demo printed, reading its parts back.
	text := out.String()
	if !strings.Contains(text, "curl -N http://"+listen+"/v1/chat/completions") || !strings.Contains(text, "MOCK") {
		t.Fatalf("demo banner: %s", text)
	}
	data := text[strings.Index(text, "-d '")+4:]
	data = data[:strings.Index(data, "'")]
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/chat/completions", strings.NewReader(data))
	req.Header.Set("Authorization", "Bearer sk-demo")
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	events := readEvents(t, bufio.NewReader(res.Body))
	if res.StatusCode != 200 || len(events) < 10 || events[len(events)-1] != "[DONE]" || !strings.Contains(strings.Join(events, ""), "MOCK") {
		t.Fatalf("demo stream: %d, %d events", res.StatusCode, len(events))
	}
}

// SIGQUIT is nginx's graceful stop: workers drain with no deadline, so a
// stream outlives shutdown_timeout and completes; then the supervisor
// exits 0.
func TestSIGQUITDrainsWithoutDeadline(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 5})
	g := startGateway(t, strings.Replace(baseConfig(be.URL(), "off", ""), "shutdown_timeout: 20s", "shutdown_timeout: 300ms", 1))
	r, _, _ := openHeldStream(t, g, "quit")
	if err := g.cmd.Process.Signal(syscall.SIGQUIT); err != nil {
		t.Fatal(err)
	}
	g.awaitLog("worker draining, with no deadline (graceful stop)")
	// Let the (ignored) deadline pass several times over: this is the
	// property under test, not a synchronisation.
	time.Sleep(5 * 300 * time.Millisecond)
	if be.Running() != 1 {
		t.Fatalf("the stream was cut during a graceful stop: backend running %d", be.Running())
	}
	be.Release("quit")
	if rest := readEvents(t, r); len(rest) != 6 || rest[len(rest)-1] != "[DONE]" {
		t.Fatalf("stream cut by a graceful stop: %d events %q", len(rest), rest)
	}
	select {
	case <-g.exited:
	case <-time.After(deadline):
		t.Fatal("supervisor did not exit after the graceful stop")
	}
	if g.exitErr != nil {
		t.Fatalf("supervisor exit: %v", g.exitErr)
	}
}

// SIGTERM bounds the drain by shutdown_timeout: a stream that does not end
// is cut there and the workers exit by themselves (nothing is killed).
func TestSIGTERMDrainDeadline(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 5})
	g := startGateway(t, strings.Replace(baseConfig(be.URL(), "off", ""), "shutdown_timeout: 20s", "shutdown_timeout: 300ms", 1))
	openHeldStream(t, g, "forever")
	t.Cleanup(func() { be.Release("forever") })
	g.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-g.exited:
	case <-time.After(deadline):
		t.Fatal("supervisor did not exit")
	}
	if g.findLog("workers did not exit in time; killing them", 0) != nil {
		t.Fatal("workers ignored shutdown_timeout and had to be killed")
	}
	for i := 0; i < 2; i++ {
		if l := g.findLog("worker exited", i); l == nil || l["status"] != "exit code 0" {
			t.Errorf("worker exit: %v", l)
		}
	}
}
