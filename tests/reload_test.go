package tests

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// generation reads the running configuration's generation from /status.
func (g *gateway) generation() int64 { return g.status().Generation }

// lastReloadError is /status's last_reload_error.
func (g *gateway) lastReloadError() string { return g.status().LastReloadError }

// status reads the admin listener's /status.
func (g *gateway) status() (st struct {
	Generation      int64  `json:"generation"`
	LastReloadError string `json:"last_reload_error"`
}) {
	g.t.Helper()
	res, err := g.admin.Get(g.AdminURL + "/status")
	if err != nil {
		g.t.Fatalf("GET /status: %v", err)
	}
	defer res.Body.Close()
	json.NewDecoder(res.Body).Decode(&st)
	return st
}

// reloadWith writes cfg over the configuration file, sends SIGHUP and
// waits until the generation moves past before.
func (g *gateway) reloadWith(cfg string) {
	g.t.Helper()
	before := g.generation()
	if err := os.WriteFile(g.Config, []byte(cfg), 0o600); err != nil {
		g.t.Fatal(err)
	}
	g.cmd.Process.Signal(syscall.SIGHUP)
	await(g.t, "the reload to apply", func() bool { return g.generation() > before })
}

// withBackend adds a second backend to model "m-alias" (a change a reload
// applies: new cells, health checked before the swap).
func withBackend(cfg, url string) string {
	return strings.Replace(cfg, "    upstream_model: real-model\n    backends:\n",
		"    upstream_model: real-model\n    backends:\n      - url: "+url+"\n        slots: 4\n", 1)
}

// 20 reloads while 300 streams are open and steady traffic runs: no request
// fails and every stream completes.
func TestReloadsUnderLoad(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 4})
	other := startBackend(t, fakevllm.Options{Tokens: 1})
	base := baseConfig(be.URL(), "off", "")
	base = strings.ReplaceAll(base, "slots: 64", "slots: 400") // the backend reports all 300 streams as its load, for both models
	g := startGateway(t, base)

	streams := openStreams(t, g, 300, keyAll, "reload")
	stop := steadyTraffic(t, g, "m-alias", false)
	for i := 0; i < 20; i++ {
		cfg := base
		if i%2 == 0 {
			cfg = withBackend(base, other.URL())
		}
		g.reloadWith(cfg)
	}
	sent, failed := stop()
	be.Release("reload")
	awaitStreamsDone(t, streams)
	if g.generation() != 21 {
		t.Errorf("generation %d after 20 reloads", g.generation())
	}
	t.Logf("%d steady requests during 20 reloads, %d failed", sent, failed)
}

func copyAll(dst *strings.Builder, r *http.Response) (int64, error) {
	b := make([]byte, 32<<10)
	var n int64
	for {
		k, err := r.Body.Read(b)
		dst.Write(b[:k])
		n += int64(k)
		if err != nil {
			if err.Error() == "EOF" {
				return n, nil
			}
			return n, err
		}
	}
}

// Counters live in named cells, so a reload keeps them: a key at its rate
// limit stays limited, and a backend's in-flight gauge stays equal to what
// is really in flight while reloads add and remove other backends. Cells
// of removed names are freed once nothing uses them.
func TestReloadKeepsCounters(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 2})
	other := startBackend(t, fakevllm.Options{Tokens: 1})
	base := limitedConfig(be.URL(), "off", 2, "requests_per_minute: 3", "")
	g := startGateway(t, base)
	lbl := map[string]string{"model": "m", "backend": be.URL()}
	for i := 0; i < 3; i++ {
		if res := openStream(t, g, keyAll, "held", chatBody("m", true, "x")); res.StatusCode != 200 {
			t.Fatal(res.Status)
		}
	}
	codes, _, _ := burst(t, g, 5, keyLimited, chatBody("m", false, "hi"))
	if codes[200] != 3 || codes[429] != 2 {
		t.Fatalf("burst before the reloads: %v", codes)
	}
	g.reloadWith(withBackend(base, other.URL()))
	used, _ := g.metric("sluice_shm_cells_used", nil)
	g.reloadWith(base) // removes it again
	if res, body := post(t, freshClient(), g.URL+"/v1/chat/completions", keyLimited, chatBody("m", false, "hi"), nil); res.StatusCode != 429 {
		t.Errorf("a key at its limit was let through after reloads: %s %s", res.Status, body)
	}
	if v, _ := g.metric("sluice_backend_inflight", lbl); v != 3 || be.Running() != 3 {
		t.Errorf("in-flight gauge %v after reloads, backend runs %d", v, be.Running())
	}
	// The streams started before both reloads: until they end, a request
	// of an old generation may run, and the removed cell is kept.
	if freed, _ := g.metric("sluice_shm_cells_freed_total", nil); freed != 0 {
		t.Errorf("a cell was freed while requests of older generations ran")
	}
	be.Release("held")
	await(t, "the gauge to fall to zero", func() bool {
		v, _ := g.metric("sluice_backend_inflight", lbl)
		return v == 0
	})
	await(t, "the removed backend's cell to be freed", func() bool {
		now, _ := g.metric("sluice_shm_cells_used", nil)
		freed, _ := g.metric("sluice_shm_cells_freed_total", nil)
		return now == used-1 && freed == 1
	})
}

// freeAddr returns a loopback address with a port free right now.
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// An invalid configuration on reload: the old one keeps serving, the error
// is logged with its file:line and counted, and `sluice reload` exits 1
// with the message. A valid one: `sluice reload` exits 0.
func TestInvalidReloadKeepsServing(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 1})
	g, cfg, _ := controllableGateway(t, func(extra string) string { return baseConfig(be.URL(), "off", extra) })

	broken := strings.Replace(cfg, "slots: 64", "slots: lots", 1)
	os.WriteFile(g.Config, []byte(broken), 0o600)
	out, err := sluiceReload(g)
	if code := exitCode(err); code != 1 || !regexp.MustCompile(`sluice\.yaml:\d+:\d+: `).Match(out) {
		t.Errorf("sluice reload of a broken file: exit %d, %s", code, out)
	}
	// Valid for `check` but not for a reload: the supervisor refuses it.
	resized := strings.Replace(cfg, "workers: 2", "workers: 2\nshm_cells: 100", 1)
	os.WriteFile(g.Config, []byte(resized), 0o600)
	out, err = sluiceReload(g)
	if code := exitCode(err); code != 1 || !strings.Contains(string(out), "shm_cells changed from 4096 to 100") {
		t.Errorf("sluice reload of a region size change: exit %d, %s", code, out)
	}
	if line := g.awaitLog("reload failed; still serving the previous configuration"); !strings.Contains(line["err"].(string), "restart sluice") {
		t.Errorf("log: %v", line)
	}
	if v, _ := g.metric("sluice_config_reloads_total", map[string]string{"result": "error"}); v != 1 {
		t.Errorf("reload errors counted: %v", v)
	}
	if res, body := post(t, http.DefaultClient, g.URL+"/v1/chat/completions", keyAll, chatBody("m", false, "still"), nil); res.StatusCode != 200 {
		t.Fatalf("after failed reloads: %s %s", res.Status, body)
	}
	// A valid change reloads.
	os.WriteFile(g.Config, []byte(strings.Replace(cfg, `models: ["m"]`, `models: ["m", "m-alias"]`, 1)), 0o600)
	out, err = sluiceReload(g)
	if exitCode(err) != 0 || !strings.Contains(string(out), "reloaded (generation 2)") {
		t.Fatalf("sluice reload of a valid file: %v %s", err, out)
	}
	if res, body := post(t, http.DefaultClient, g.URL+"/v1/chat/completions", keyLimited, chatBody("m-alias", false, "new"), nil); res.StatusCode != 200 {
		t.Errorf("the reloaded key permissions are not in effect: %s %s", res.Status, body)
	}
}

// sluiceReload runs `sluice reload -c` on the gateway's configuration.
func sluiceReload(g *gateway) ([]byte, error) {
	cmd := exec.Command(sluiceBin, "reload", "-c", g.Config)
	cmd.Env = append(os.Environ(), "SLUICE_TEST_BACKEND_KEY="+backendKey)
	return cmd.CombinedOutput()
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// SIGUSR1 reopens the usage log: after logrotate renames the file, new
// lines go to a new file under the old name, and no line is lost.
func TestUSR1ReopensUsageLog(t *testing.T) {
	g, _ := newGateway(t, fakevllm.Options{Tokens: 1}, "")
	client := freshClient()
	for i := 0; i < 10; i++ {
		post(t, client, g.URL+"/v1/chat/completions", keyAll, chatBody("m", false, "before"), nil)
	}
	await(t, "10 usage lines", func() bool { return len(g.usageLines()) == 10 })
	rotated := g.UsageLog + ".1"
	if err := os.Rename(g.UsageLog, rotated); err != nil {
		t.Fatal(err)
	}
	g.cmd.Process.Signal(syscall.SIGUSR1)
	// Until every worker has reopened, lines still go to the renamed file;
	// keep sending until both workers wrote to the new one.
	sent := 10
	await(t, "both workers writing to the new file", func() bool {
		post(t, client, g.URL+"/v1/chat/completions", keyAll, chatBody("m", false, "after"), nil)
		sent++
		workers := map[any]bool{}
		for _, l := range g.usageLines() {
			workers[l["worker"]] = true
		}
		return len(workers) == 2
	})
	old := len(g.usageLines()) // the new file
	data, _ := os.ReadFile(rotated)
	total := old + strings.Count(string(data), "\n")
	if total != sent {
		t.Errorf("%d requests, %d usage lines in the two files", sent, total)
	}
}

// A shutdown_timeout changed by a reload is the one a later stop drains
// for: in each worker and in the supervisor's kill deadline (both log it
// as the drain begins). Fails if either keeps the value it started with.
func TestReloadChangesShutdownTimeout(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 1})
	cfg := baseConfig(be.URL(), "off", "")
	g := startGateway(t, cfg)
	g.reloadWith(strings.Replace(cfg, "shutdown_timeout: 20s", "shutdown_timeout: 7s", 1))
	g.cmd.Process.Signal(syscall.SIGTERM)
	if line := g.awaitLog("stopping: workers drain in-flight requests"); line["shutdown_timeout"] != "7s" {
		t.Errorf("supervisor drains for %v, want 7s", line["shutdown_timeout"])
	}
	await(t, "both workers draining", func() bool { return g.findLog("worker draining", 1) != nil })
	for i := range 2 {
		if line := g.findLog("worker draining", i); line["shutdown_timeout"] != "7s" {
			t.Errorf("worker %v drains for %v, want 7s", line["slot"], line["shutdown_timeout"])
		}
	}
}
