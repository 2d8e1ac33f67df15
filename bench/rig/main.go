// Command rig is sluice's benchmark runner. It runs each scenario against
// sluice and its peers — plain nginx (the floor) and nginx+Lua doing
// sluice's work (what OpenResty users run today) — plus the backend alone
// (the ceiling check: what the harness can drive), each proxy pinned to one
// core with the load driver and the fake backend on the other. It reads the
// proxy's CPU (user+sys over its whole process tree, /proc/PID/stat) before
// and after each run and its RSS idle and under load, and writes the
// results as JSON lines plus a markdown report.
//
//	go run ./bench/rig -scenarios a,b,e -runs 3
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sluice-gw/sluice/bench/result"
)

// Cores: the proxy under test gets proxyCPU alone; driver and backend share loadCPU.
const (
	proxyCPU    = "0"
	loadCPU     = "1"
	backendAddr = "127.0.0.1:28000"
	adminAddr   = "127.0.0.1:28090"
)

// proxyAddrs: each proxy listens on its own port, so that all of them can
// run at once and a scenario's runs alternate between them (eachProxy).
var proxyAddrs = map[string]string{
	"sluice":    "127.0.0.1:28080",
	"nginx":     "127.0.0.1:28081",
	"nginx-lua": "127.0.0.1:28082",
	// sluice built at -baseline REV: before/after a change, in the same run.
	"sluice-base": "127.0.0.1:28083",
	// sluice's own build with the governance of issue 33 configured
	// (a quota, a budget with the model's price, a fallback): its cost.
	"sluice-gov": "127.0.0.1:28084",
}

// adminAddrs: each sluice's admin listener.
var adminAddrs = map[string]string{"sluice": adminAddr, "sluice-base": "127.0.0.1:28091", "sluice-gov": "127.0.0.1:28092"}

// proxyAddr returns where the named proxy listens.
func proxyAddr(name string) string {
	addr, ok := proxyAddrs[name]
	if !ok {
		fatalf("unknown proxy %q", name)
	}
	return addr
}

var (
	binDir   string // built binaries
	repoRoot string
	runs     = flag.Int("runs", 3, "runs per scenario and proxy (medians reported)")
	dur      = flag.Duration("duration", 10*time.Second, "length of each run")
	scen     = flag.String("scenarios", "a,b,c,d,e,f,f2,g", "scenarios to run")
	proxies  = flag.String("proxies", "direct,sluice,nginx,nginx-lua", "proxies to measure")
	streams  = flag.String("streams", "250,500,1000,2000", "scenario c: open streams, a run for each")
	sizes    = flag.String("sizes", "1000,100000,400000,1000000", "scenario f2: prompt sizes in bytes, a run for each")
	f2Open   = flag.Int("f2-streams", 500, "scenario f2: open streams at each prompt size")
	apiRate  = flag.Int("api-rate", 500, "scenario apis-rate: requests per second, the same for each API")
	// Measured side by side by running the rig twice (see docs/benchmarks-gogc.md).
	sluiceGOGC = flag.Int("sluice-gogc", 100, "sluice's gogc setting")
	// Measured side by side the same way (docs/benchmarks.md).
	sluiceProcs = flag.Int("sluice-gomaxprocs", 1, "sluice's gomaxprocs setting (its worker stays pinned to one core)")
	outDir      = flag.String("out", "bench/results", "where results go")
	baseline    = flag.String("baseline", "", "also build sluice at this git revision and measure it as proxy \"sluice-base\" (add it to -proxies)")
	reportMD    = flag.String("report", "docs/benchmarks.md", "markdown report to write")
	from        = flag.String("from", "", "only rewrite the report from this results file")
	profileDir  = flag.String("profile", "", "write pprof profiles of sluice's worker (CPU over each run, heap under load) here")
)

// pprofAddr is where sluice's worker serves pprof when -profile is set.
const pprofAddr = "127.0.0.1:28100"

// current is the scenario and variant being run, for profile file names.
var current struct{ scenario, variant string }

func main() {
	flag.Parse()
	log.SetFlags(log.Ltime)
	if *from != "" {
		writeReport(readResults(*from), *from)
		return
	}
	var err error
	repoRoot, err = os.Getwd()
	must(err)
	binDir = filepath.Join(repoRoot, "bench", ".bin")
	must(os.MkdirAll(binDir, 0o755))
	must(os.MkdirAll(*outDir, 0o755))
	build()

	portFree(backendAddr)
	for name, addr := range proxyAddrs {
		portFree(addr)
		portFree(proxyTLSAddrs[name])
	}
	defer func() {
		if rigCerts.dir != "" {
			os.RemoveAll(rigCerts.dir)
		}
	}()
	backend := startBackground("backend", loadCPU, filepath.Join(binDir, "fakevllm"), "-listen", backendAddr)
	defer stop(backend)
	awaitPort(backendAddr)

	results := filepath.Join(*outDir, time.Now().UTC().Format("20060102-150405")+".jsonl")
	out, err := os.Create(results)
	must(err)
	defer out.Close()
	var all []Measurement
	for _, s := range strings.Split(*scen, ",") {
		sc, ok := scenarios[s]
		if !ok {
			fatalf("unknown scenario %q", s)
		}
		log.Printf("scenario %s: %s", s, sc.title)
		current.scenario = s
		for _, m := range sc.run() {
			m.Scenario = s
			b, _ := json.Marshal(m)
			out.Write(append(b, '\n'))
			all = append(all, m)
		}
	}
	log.Printf("results: %s", results)
	writeReport(all, results)
}

func must(err error) {
	if err != nil {
		fatalf("%v", err)
	}
}

// started is every process the rig started, stopped by fatalf too: a
// failed run must not leave a backend or proxy holding the rig's ports.
var (
	startedMu sync.Mutex
	started   []*exec.Cmd
)

func fatalf(format string, args ...any) {
	startedMu.Lock()
	cmds := append([]*exec.Cmd(nil), started...)
	startedMu.Unlock()
	for _, c := range cmds {
		stop(c)
	}
	log.Fatalf(format, args...)
}

// build compiles sluice (as `make build` does: static, without cgo), the
// fake backend and the driver.
func build() {
	for _, b := range []struct {
		out, pkg, tags string
		static         bool
	}{
		{"sluice", "./cmd/sluice", "stdjson,gjson", true},
		{"fakevllm", "./bench/fakevllm", "", false},
		{"driver", "./bench/driver", "", false},
	} {
		args := []string{"build", "-o", filepath.Join(binDir, b.out)}
		if b.tags != "" {
			args = append(args, "-tags", b.tags)
		}
		cmd := exec.Command("go", append(args, b.pkg)...)
		if b.static {
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		}
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		must(cmd.Run())
	}
	if *baseline != "" {
		buildBaseline(*baseline)
	}
}

// buildBaseline builds sluice at git revision rev (in a temporary
// worktree) as binDir/sluice-base, so that a change can be measured
// against what it changed, alternated in one run.
func buildBaseline(rev string) {
	dir, err := os.MkdirTemp("", "rig-baseline")
	must(err)
	defer os.RemoveAll(dir)
	wt := filepath.Join(dir, "src")
	add := exec.Command("git", "worktree", "add", "--detach", wt, rev)
	add.Stdout, add.Stderr = os.Stderr, os.Stderr
	must(add.Run())
	defer exec.Command("git", "worktree", "remove", "--force", wt).Run() //nolint:errcheck
	cmd := exec.Command("go", "build", "-tags", "stdjson,gjson", "-o", filepath.Join(binDir, "sluice-base"), "./cmd/sluice")
	cmd.Dir = wt
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	must(cmd.Run())
}

// portFree fails the run when something already listens on addr: the
// measurement would silently be of that other process.
func portFree(addr string) {
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		fatalf("%s is already in use by another process; stop it first", addr)
	}
}

// startBackground starts a command pinned to cpus with taskset.
func startBackground(name, cpus string, argv ...string) *exec.Cmd {
	cmd := exec.Command("taskset", append([]string{"-c", cpus}, argv...)...)
	logf, err := os.Create(filepath.Join(os.TempDir(), "rig-"+name+".log"))
	must(err)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	must(cmd.Start())
	startedMu.Lock()
	started = append(started, cmd)
	startedMu.Unlock()
	return cmd
}

// stop ends a command and its whole process group.
func stop(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(40 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

func awaitPort(addr string) {
	end := time.Now().Add(30 * time.Second)
	for time.Now().Before(end) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	fatalf("nothing listens on %s", addr)
}

// Measurement is one run of one scenario against one proxy.
type Measurement struct {
	Scenario string `json:"scenario"`
	Proxy    string `json:"proxy"`
	Variant  string `json:"variant,omitempty"` // e.g. the rate, or the prompt size
	Run      int    `json:"run"`
	// Alternated: the scenario's runs alternated between the proxies (run
	// 1 of each, then run 2 of each, …); false in results written before
	// the rig did so, when each proxy's runs came back to back.
	Alternated bool          `json:"alternated,omitempty"`
	Driver     result.Driver `json:"driver"`
	CPUSeconds float64       `json:"cpu_s"`
	CPUPct     float64       `json:"cpu_pct"`
	CPUPerReq  float64       `json:"cpu_us_per_req"`
	CPUPerEvt  float64       `json:"cpu_us_per_event,omitempty"`
	RSSIdleKiB int64         `json:"rss_idle_kib"`
	RSSLoadKiB int64         `json:"rss_load_kib"`
	// Scenarios c and f2: streams kept open (RSS per open stream).
	OpenStreams int `json:"open_streams,omitempty"`
	// Scenario g only. PSS shares each page among the processes mapping
	// it: summed RSS counts the pages of the binary and libraries that the
	// supervisor and its worker share once per process.
	StartToFirstMs float64 `json:"start_to_first_ms,omitempty"`
	PSSIdleKiB     int64   `json:"pss_idle_kib,omitempty"`
	// Machine: the CPU model the run was measured on (a rewrite with -from
	// may run elsewhere); empty in results written before the rig kept it.
	Machine string `json:"machine,omitempty"`
}

// runDriver runs the load driver against url and measures the proxy tree
// rooted at pid (0 for the direct run) around it.
func runDriver(proxy string, pid int, url string, args ...string) Measurement {
	m := Measurement{Proxy: proxy, Machine: machine}
	var cpu0 float64
	if pid > 0 {
		m.RSSIdleKiB = rssKiB(pid)
		cpu0 = cpuSeconds(pid)
	}
	cmd := exec.Command("taskset", append([]string{"-c", loadCPU, filepath.Join(binDir, "driver"), "-url", url}, args...)...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	must(err)
	t0 := time.Now()
	must(cmd.Start())
	// Sample RSS under load a few times; keep the highest.
	stopSampling := make(chan struct{})
	sampled := make(chan int64)
	go func() {
		var peak int64
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stopSampling:
				sampled <- peak
				return
			case <-tick.C:
				if pid > 0 {
					peak = max(peak, rssKiB(pid))
				}
			}
		}
	}()
	var profiled sync.WaitGroup
	if proxy == "sluice" && *profileDir != "" {
		profiled.Add(1)
		go func() { defer profiled.Done(); captureProfiles() }()
	}
	line, _ := bufio.NewReader(stdout).ReadBytes('\n')
	cmd.Wait()
	profiled.Wait()
	close(stopSampling)
	m.RSSLoadKiB = <-sampled
	wall := time.Since(t0).Seconds()
	if err := json.Unmarshal(line, &m.Driver); err != nil {
		fatalf("driver output %q: %v", line, err)
	}
	if pid > 0 {
		m.CPUSeconds = cpuSeconds(pid) - cpu0
		m.CPUPct = 100 * m.CPUSeconds / wall
		if m.Driver.OK > 0 {
			m.CPUPerReq = 1e6 * m.CPUSeconds / float64(m.Driver.OK)
		}
		if m.Driver.Events > 0 {
			m.CPUPerEvt = 1e6 * m.CPUSeconds / float64(m.Driver.Events)
		}
	}
	log.Printf("  %-9s %-8s ok=%d err=%d rps=%.0f p50=%.2fms p99=%.2fms cpu=%.1f%% %.1fµs/req rss=%d/%dKiB",
		proxy, m.Variant, m.Driver.OK, m.Driver.Errors, m.Driver.RPS, m.Driver.P50Ms, m.Driver.P99Ms, m.CPUPct, m.CPUPerReq, m.RSSIdleKiB, m.RSSLoadKiB)
	if len(m.Driver.ErrorSamples) > 0 {
		log.Printf("  errors: %v", m.Driver.ErrorSamples)
	}
	return m
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// readResults loads a results file written by an earlier run.
func readResults(path string) []Measurement {
	data, err := os.ReadFile(path)
	must(err)
	var all []Measurement
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m Measurement
		must(json.Unmarshal([]byte(line), &m))
		all = append(all, m)
	}
	return all
}
