package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// benchKey is the API key every proxy accepts.
const benchKey = "sk-bench"

// running is a started proxy under test.
type running struct {
	name string
	cmd  *exec.Cmd // nil for "direct"
	url  string
	// tlsURL is its https listener ("" where it has none).
	tlsURL string
	dir    string
}

func (r *running) pid() int {
	if r.cmd == nil {
		return 0
	}
	return r.cmd.Process.Pid
}

// startProxy starts the named proxy pinned to proxyCPU and waits until it
// listens ("direct" starts nothing: the driver talks to the backend).
func startProxy(name string) *running {
	if name == "direct" {
		return &running{name: name, url: "http://" + backendAddr}
	}
	r := startProxyNoWait(name)
	awaitPort(proxyAddr(name))
	if r.tlsURL != "" {
		awaitPort(proxyTLSAddrs[name])
	}
	return r
}

func (r *running) stop() {
	stop(r.cmd)
	os.RemoveAll(r.dir)
}

// writeSluiceConfig is sluice doing the work the nginx+Lua peer does: one
// worker pinned to its core, the usage log to a file written every second
// or 64 KiB (as both peers write theirs: access_log buffer=64k flush=1s,
// and the Lua peer's own 64 KiB buffer), and per-key limits
// high enough never to refuse (the peer counts per key in a shared dict;
// sluice runs its shared-memory limiter and concurrency count).
func writeSluiceConfig(name, dir string, tls bool) string {
	sum := sha256.Sum256([]byte(benchKey))
	cfg := fmt.Sprintf(`%sadmin: %s
workers: 1
pin_cpus: true
gomaxprocs: %d
gogc: %d
usage_log: %s
usage_log_flush: 1s
keys:
  - name: bench
    sha256: %s
    models: ["*"]
    requests_per_minute: 1000000000
    max_concurrent: 1000000
models:
  - name: bench
    backends:
      - url: http://%s
        slots: 100000
`, sluiceListen(name, tls), adminAddrs[name], *sluiceProcs, *sluiceGOGC, filepath.Join(dir, "usage.log"), hex.EncodeToString(sum[:]), backendAddr)
	if name == "sluice-gov" {
		// Issue 33's governance on every request: a monthly quota and
		// budget far from reached, the model priced, a fallback model
		// (never needed: its backends answer), and the state written to
		// state_dir every second.
		cfg = strings.Replace(cfg, "    max_concurrent: 1000000\n",
			"    max_concurrent: 1000000\n    quotas: {month: 1000000000000}\n    budget: {usd: 1000000, per: month}\n", 1)
		cfg = strings.Replace(cfg, "  - name: bench\n    backends:\n",
			"  - name: bench\n    price: {input_per_mtok: 0.15, output_per_mtok: 0.6}\n    fallbacks: [spare]\n    backends:\n", 1)
		cfg += fmt.Sprintf("  - name: spare\n    backends:\n      - url: http://%s\n        slots: 100000\n", backendAddr)
		cfg = "state_dir: " + filepath.Join(dir, "state") + "\n" + cfg
	}
	path := filepath.Join(dir, "sluice.yaml")
	must(os.WriteFile(path, []byte(cfg), 0o600))
	return path
}

// renderNginx fills in a peer's config template (bench/peers).
func renderNginx(name, dir string) string {
	file := name + ".conf" // nginx-lua.conf
	if name == "nginx" {
		file = "nginx-plain.conf"
	}
	tmpl, err := os.ReadFile(filepath.Join(repoRoot, "bench", "peers", file))
	must(err)
	for _, sub := range []string{"client_body_temp", "proxy_temp", "fastcgi_temp", "uwsgi_temp", "scgi_temp", "logs"} {
		must(os.MkdirAll(filepath.Join(dir, sub), 0o755))
	}
	conf := strings.NewReplacer("@LISTEN@", proxyAddr(name), "        @TLS@\n", "        "+nginxTLS(name)+"\n", "@BACKEND@", backendAddr, "@PREFIX@", dir,
		"@LUADIR@", filepath.Join(repoRoot, "bench", "peers", "lua")).Replace(string(tmpl))
	path := filepath.Join(dir, "nginx.conf")
	must(os.WriteFile(path, []byte(conf), 0o644))
	return path
}

var installOnce sync.Once

// installPeers installs nginx and its Lua module from Debian, once.
func installPeers() {
	installOnce.Do(func() {
		cmd := exec.Command("bash", filepath.Join(repoRoot, "bench", "install-peers.sh"))
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		must(cmd.Run())
	})
}

// warm sends a little traffic through a fresh proxy (not measured).
func warm(r *running) {
	cmd := exec.Command(filepath.Join(binDir, "driver"), "-url", r.url, "-conns", "8", "-duration", "1s")
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), `"errors":0`) {
		fatalf("%s does not answer correctly: %v %s", r.name, err, out)
	}
	if r.tlsURL != "" {
		cmd = exec.Command(filepath.Join(binDir, "driver"), append([]string{"-url", r.tlsURL, "-conns", "8", "-duration", "1s"}, tlsArgs()...)...)
		out, err = cmd.Output()
		if err != nil || !strings.Contains(string(out), `"errors":0`) {
			fatalf("%s does not answer correctly over https: %v %s", r.name, err, out)
		}
	}
	time.Sleep(200 * time.Millisecond) // let the proxy settle before reading idle RSS
}

func mustTemp(name string) string {
	dir, err := os.MkdirTemp("", "rig-"+name)
	must(err)
	return dir
}
