package tests

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/sluiceproc"
	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// sluiceUpgrade runs `sluice upgrade -c` on the gateway's configuration.
func sluiceUpgrade(g *gateway) ([]byte, error) {
	cmd := exec.Command(sluiceBin, "upgrade", "-c", g.Config)
	cmd.Env = append(os.Environ(), "SLUICE_TEST_BACKEND_KEY="+backendKey)
	return cmd.CombinedOutput()
}

// adoptSupervisor makes sure a supervisor this test did not start itself
// (the one a binary upgrade started) and its workers are gone when the
// test ends.
func adoptSupervisor(t *testing.T, pid int) {
	t.Cleanup(func() {
		workers := sluiceproc.Children(pid)
		syscall.Kill(pid, syscall.SIGTERM)
		for end := time.Now().Add(deadline); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			if syscall.Kill(pid, 0) != nil {
				break
			}
		}
		syscall.Kill(pid, syscall.SIGKILL)
		for _, w := range workers {
			syscall.Kill(w, syscall.SIGKILL)
		}
	})
}

// controllableGateway starts a gateway that `sluice reload` and `sluice
// upgrade` can find: a pid_file and a fixed admin address. cfgOf renders
// the configuration given the extra top-level YAML.
func controllableGateway(t *testing.T, cfgOf func(extra string) string) (g *gateway, cfg, pidFile string) {
	t.Helper()
	pidFile = filepath.Join(t.TempDir(), "sluice.pid")
	cfg = strings.Replace(cfgOf("pid_file: "+pidFile), "admin: 127.0.0.1:0", "admin: "+freeAddr(t), 1)
	g = startGateway(t, cfg)
	await(t, "the pid file", func() bool { _, err := os.Stat(pidFile); return err == nil })
	return g, cfg, pidFile
}

// successor returns the pid the pid file names after a hand-over, makes
// sure that supervisor is stopped when the test ends, and fails if it is
// still the old one.
func successor(t *testing.T, pidFile string, oldPID int) int {
	t.Helper()
	pid := readPID(t, pidFile)
	adoptSupervisor(t, pid)
	if pid == oldPID {
		t.Fatalf("the pid file still names the old supervisor %d", oldPID)
	}
	return pid
}

func readPID(t *testing.T, path string) int {
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// A binary upgrade under steady traffic with open streams: no connection
// error, no failed stream, the old supervisor gone afterwards, and the
// counters carried over in the shared region (a key at its rate limit
// stays limited).
func TestBinaryUpgradeUnderLoad(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 4})
	g, _, pidFile := controllableGateway(t, func(extra string) string {
		return limitedConfig(be.URL(), "off", 2, "requests_per_minute: 3", extra)
	})
	oldPID := g.cmd.Process.Pid
	if codes, _, _ := burst(t, g, 5, keyLimited, chatBody("m", false, "x")); codes[200] != 3 || codes[429] != 2 {
		t.Fatalf("burst before the upgrade: %v", codes)
	}

	streams := openStreams(t, g, 50, keyAll, "upgrade")
	var resets atomic.Int64
	stop := sdkTraffic(t, g, "m", &resets)

	out, err := sluiceUpgrade(g)
	if err != nil || !strings.Contains(string(out), "upgraded") {
		t.Fatalf("sluice upgrade: %v\n%s", err, out)
	}
	newPID := successor(t, pidFile, oldPID)
	// The old workers drain the open streams; let them finish.
	be.Release("upgrade")
	awaitStreamsDone(t, streams)
	// (g.exited waits for the old supervisor's stderr, which the new one
	// inherited: look at the process instead.)
	awaitExit(t, "the old supervisor to exit", oldPID)
	if g.findLog("sluice stopped", 0) == nil {
		t.Error("the old supervisor did not log its clean stop")
	}
	// Traffic keeps flowing to the new supervisor's workers for a moment.
	sent, failed := stop()
	t.Logf("%d steady requests across the upgrade (new connection each), %d failed; %d connections reset and retried by the SDK",
		sent, failed, resets.Load())
	if len(sluiceproc.Children(newPID)) != 2 {
		t.Errorf("new supervisor runs %d workers", len(sluiceproc.Children(newPID)))
	}
	// The limiter's cell carried over: the key is still at its limit.
	if res, body := post(t, freshClient(), g.URL+"/v1/chat/completions", keyLimited, chatBody("m", false, "x"), nil); res.StatusCode != 429 {
		t.Errorf("rate limit reset by the upgrade: %s %s", res.Status, body)
	}
}

// A new binary that fails to start leaves the old supervisor serving.
func TestFailedUpgradeKeepsServing(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 1})
	g, cfg, pidFile := controllableGateway(t, func(extra string) string { return baseConfig(be.URL(), "off", extra) })
	// The new supervisor reads the file at start: make it unusable (the
	// running one validated it long ago) and signal directly.
	os.WriteFile(g.Config, []byte("listen: [broken"), 0o600)
	g.cmd.Process.Signal(syscall.SIGUSR2)
	line := g.awaitLog("binary upgrade failed; still serving")
	if !strings.Contains(line["err"].(string), "exited") {
		t.Errorf("failure reason: %v", line)
	}
	if v, _ := g.metric("sluice_binary_upgrades_total", map[string]string{"result": "error"}); v != 1 {
		t.Errorf("failed upgrades counted: %v", v)
	}
	if res, body := post(t, freshClient(), g.URL+"/v1/chat/completions", keyAll, chatBody("m", false, "x"), nil); res.StatusCode != 200 {
		t.Fatalf("after a failed upgrade: %s %s", res.Status, body)
	}
	if pid := readPID(t, pidFile); pid != g.cmd.Process.Pid {
		t.Errorf("pid file names %d, not the running supervisor %d", pid, g.cmd.Process.Pid)
	}
	// And a good upgrade still works after a failed one.
	os.WriteFile(g.Config, []byte(cfg), 0o600)
	out, err := sluiceUpgrade(g)
	if err != nil {
		t.Fatalf("upgrade after a failed one: %v %s", err, out)
	}
	adoptSupervisor(t, readPID(t, pidFile))
}

// A reload that changes the worker count and pinning needs new processes:
// a new supervisor of the same binary takes over the sockets and the
// region, its workers start and listen, then the old ones drain — an open
// stream completes, and the new supervisor runs the new worker count.
func TestReloadReplacesWorkers(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 3})
	g, cfg, pidFile := controllableGateway(t, func(extra string) string { return baseConfig(be.URL(), "off", extra) })
	oldPID := g.cmd.Process.Pid
	stream := openStream(t, g, keyAll, "replace", chatBody("m", true, "s"))
	if stream.StatusCode != 200 {
		t.Fatal(stream.Status)
	}
	os.WriteFile(g.Config, []byte(strings.Replace(strings.Replace(cfg, "workers: 2", "workers: 3", 1), "pin_cpus: true", "pin_cpus: false", 1)), 0o600)
	out, err := sluiceReload(g)
	if err != nil || !strings.Contains(string(out), "reloaded by new workers") {
		t.Fatalf("sluice reload with a new worker count: %v %s", err, out)
	}
	newPID := successor(t, pidFile, oldPID)
	await(t, "3 new workers", func() bool { return len(sluiceproc.Children(newPID)) == 3 })
	be.Release("replace")
	awaitStreamsDone(t, []*http.Response{stream})
	awaitExit(t, "the old supervisor to exit", oldPID)
	if res, body := post(t, freshClient(), g.URL+"/v1/chat/completions", keyAll, chatBody("m", false, "x"), nil); res.StatusCode != 200 {
		t.Fatalf("after the replacement: %s %s", res.Status, body)
	}
}

// Binary upgrades one after another under new-connection traffic from a
// plain client (which retries nothing): no request fails, and every old
// supervisor stops cleanly. A draining worker used to let netpoll close the
// connections it had just accepted, before their request was read (about
// one failed request per upgrade under heavier traffic); and each upgrade
// freed the shared stats cells under the new workers, which made a later
// exiting supervisor panic on a negative count.
func TestUpgradesLoseNoConnection(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 1})
	g, _, pidFile := controllableGateway(t, func(extra string) string { return baseConfig(be.URL(), "off", extra) })
	var stops []func() (sent, failed int64)
	for range 3 { // six loops, a new connection per request
		stops = append(stops, steadyTraffic(t, g, "m", true))
	}
	// Connections that never send a byte (a load balancer's TCP check): the
	// draining worker closes them once their grace is over, and still exits
	// without the supervisor having to kill it.
	for range 2 {
		c, err := net.Dial("tcp", strings.TrimPrefix(g.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	const upgrades = 3
	pid := g.cmd.Process.Pid
	for i := range upgrades {
		out, err := sluiceUpgrade(g)
		if err != nil || !strings.Contains(string(out), "upgraded") {
			t.Fatalf("upgrade %d: %v\n%s", i+1, err, out)
		}
		next := successor(t, pidFile, pid)
		awaitExit(t, "the old supervisor to exit", pid)
		pid = next
	}
	var sent, failed int64
	for _, stop := range stops {
		s, f := stop()
		sent, failed = sent+s, failed+f
	}
	t.Logf("%d requests across %d upgrades, a new connection each, %d failed", sent, upgrades, failed)
	if sent == 0 {
		t.Fatal("no traffic was sent")
	}
	// (steadyTraffic reported each failed request already.)
	log := g.stderr.String()
	if n := strings.Count(log, `"msg":"sluice stopped"`); n != upgrades {
		t.Errorf("%d supervisors logged a clean stop, want %d", n, upgrades)
	}
	if strings.Contains(log, "panic:") || strings.Contains(log, "below zero") || strings.Contains(log, "did not exit in time") {
		t.Errorf("a supervisor or worker failed during the upgrades:\n%s", log)
	}
}
