package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sluice-gw/sluice/internal/sluiceproc"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

const (
	modelName = "m"
	slots     = 16
)

// keySpec is a key of the gateway's configuration; extra is its YAML past
// name, sha256 and models ("weight: 2", "priority: 1"), empty for a plain
// key (the only kind a binary from before fair queuing takes).
type keySpec struct{ name, extra string }

func secret(key string) string { return "sk-fairbench-" + key }

// gateway is a running sluice (supervisor and -workers workers) in front of one
// fake backend, with its usage log in a file.
type gateway struct {
	cmd              *exec.Cmd
	dir, url, admin  string
	usage, logPath   string
	be               *fakevllm.Server
	light, backlogTr *http.Transport
}

func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startGateway starts a fresh fake (16 slots' worth: it has no limit of
// its own) and bin in front of it with keys.
func startGateway(bin string, keys []keySpec) *gateway {
	be, err := fakevllm.Start("127.0.0.1:0", fakevllm.Options{Tokens: 4})
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "fairqueue-sluice")
	if err != nil {
		log.Fatal(err)
	}
	listen, admin := freeAddr(), freeAddr()
	var ks strings.Builder
	for _, k := range keys {
		sum := sha256.Sum256([]byte(secret(k.name)))
		fmt.Fprintf(&ks, "  - name: %s\n    sha256: %s\n    models: [\"*\"]\n", k.name, hex.EncodeToString(sum[:]))
		if k.extra != "" {
			fmt.Fprintf(&ks, "    %s\n", k.extra)
		}
	}
	g := &gateway{dir: dir, url: "http://" + listen, admin: "http://" + admin, be: be,
		usage: filepath.Join(dir, "usage.log"), logPath: filepath.Join(dir, "sluice.log"),
		// Light keys: a connection a request, so they land on either worker.
		light: &http.Transport{DisableKeepAlives: true, DisableCompression: true},
		// Backlog loops: a connection a loop, kept.
		backlogTr: &http.Transport{MaxIdleConnsPerHost: 512, DisableCompression: true},
	}
	cfg := fmt.Sprintf(`listen: %s
admin: %s
workers: %d
shutdown_timeout: 5s
usage_log: %s
keys:
%smodels:
  - name: %s
    queue: {max: 2000, timeout: 600s}
    health:
      interval: 1s
    backends:
      - url: %s
        slots: %d
`, listen, admin, *workers, g.usage, ks.String(), modelName, be.URL(), slots)
	path := filepath.Join(dir, "sluice.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		log.Fatal(err)
	}
	g.cmd = sluiceproc.Start(bin, path, g.logPath)
	// Ready: the admin listener says so, the backend passed a health check
	// and a request of the first key is answered.
	end := time.Now().Add(30 * time.Second)
	for {
		if time.Now().After(end) {
			g.stop()
			log.Fatalf("sluice did not get ready (log: %s)", g.logPath)
		}
		time.Sleep(20 * time.Millisecond)
		res, err := http.Get(g.admin + "/readyz")
		if err != nil {
			continue
		}
		res.Body.Close()
		if res.StatusCode != 200 || be.HealthChecks() == 0 {
			continue
		}
		if _, err := g.send(g.light, keys[0].name, "ready", nil); err == nil {
			return g
		}
	}
}

// send posts one chat completion of key with the fake's headers hdr and
// an X-Bench-Id of id; it returns the time from sending to the whole
// answer read.
func (g *gateway) send(tr *http.Transport, key, id string, hdr map[string]string) (time.Duration, error) {
	return g.sendCtx(context.Background(), tr, key, id, hdr)
}

// body is every request's body: the same length for every key, so every
// request's prompt is the same number of tokens (the fake counts bytes/4).
func body(key string) []byte {
	b, _ := json.Marshal(map[string]any{
		"model":    modelName,
		"messages": []map[string]string{{"role": "user", "content": fmt.Sprintf("fair queue bench, key %-6s", key)}},
	})
	return b
}

func (g *gateway) sendCtx(ctx context.Context, tr *http.Transport, key, id string, hdr map[string]string) (time.Duration, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.url+"/v1/chat/completions", bytes.NewReader(body(key)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+secret(key))
	req.Header.Set("X-Test-Key", key)
	req.Header.Set("X-Bench-Id", id)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	start := time.Now()
	res, err := tr.RoundTrip(req)
	if err != nil {
		return 0, err
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	took := time.Since(start)
	if err != nil {
		return 0, err
	}
	if res.StatusCode != 200 {
		return 0, fmt.Errorf("status %d: %.200s", res.StatusCode, b)
	}
	return took, nil
}

// scrape reads the admin /metrics and returns the value of every series
// whose name is in names, by its full text before the value
// (`sluice_queue_depth{model="m"}`).
func (g *gateway) scrape(names ...string) map[string]float64 {
	out := map[string]float64{}
	res, err := http.Get(g.admin + "/metrics")
	if err != nil {
		return out
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		for _, n := range names {
			if strings.HasPrefix(line, n) && (len(line) > len(n) && (line[len(n)] == '{' || line[len(n)] == ' ')) {
				i := strings.LastIndexByte(line, ' ')
				if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
					out[line[:i]] = v
				}
			}
		}
	}
	return out
}

// depth is the model's queue depth (sluice_queue_depth), -1 when unread.
func (g *gateway) depth() float64 {
	v, ok := g.scrape("sluice_queue_depth")[`sluice_queue_depth{model="`+modelName+`"}`]
	if !ok {
		return -1
	}
	return v
}

// drain waits until nothing waits or runs (after a phase's loops ended).
func (g *gateway) drain() {
	end := time.Now().Add(30 * time.Second)
	for time.Now().Before(end) {
		if g.depth() == 0 && g.be.Running() == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	log.Printf("warning: queue not drained after 30 s (depth %v, running %d)", g.depth(), g.be.Running())
}

func (g *gateway) stop() {
	syscall.Kill(-g.cmd.Process.Pid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { g.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		syscall.Kill(-g.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	g.be.Close()
	if *keep {
		log.Printf("kept %s", g.dir)
	} else {
		os.RemoveAll(g.dir)
	}
	g.light.CloseIdleConnections()
	g.backlogTr.CloseIdleConnections()
}

// usageLine is the part of a usage line the bench reads.
type usageLine struct {
	Time       time.Time `json:"time"`
	Key        string    `json:"key"`
	Status     int       `json:"status"`
	DurationMs int64     `json:"duration_ms"`
	Prompt     int64     `json:"prompt_tokens"`
	Completion int64     `json:"completion_tokens"`
	Queued     bool      `json:"queued"`
	QueueMs    int64     `json:"queue_ms"`
	HandoffUs  int64     `json:"queue_handoff_us"`
	Priority   int       `json:"queue_priority"`
	Served     int64     `json:"queue_served_tokens"`
	// UsageSource is who counted the tokens: "backend", "gateway" (a
	// stream cut before its usage event), or "" (none, or a binary from
	// before the field).
	UsageSource string `json:"usage_source"`
}

// usageLines reads the usage log so far.
func (g *gateway) usageLines() []usageLine {
	b, err := os.ReadFile(g.usage)
	if err != nil {
		log.Fatal(err)
	}
	var out []usageLine
	for _, l := range bytes.Split(b, []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		var u usageLine
		if err := json.Unmarshal(l, &u); err != nil {
			log.Fatalf("usage line %q: %v", l, err)
		}
		out = append(out, u)
	}
	return out
}

// syscalls is the read and write system calls the gateway's workers have
// made so far (/proc/PID/io of the supervisor's children): a wake-up
// between workers is a write to a pipe and a read of it.
func (g *gateway) syscalls() (reads, writes int64) {
	for _, pid := range sluiceproc.Children(g.cmd.Process.Pid) {
		io, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(io), "\n") {
			k, v, _ := strings.Cut(l, ": ")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "syscr":
				reads += n
			case "syscw":
				writes += n
			}
		}
	}
	return reads, writes
}
