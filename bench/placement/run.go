package main

import (
	"bytes"
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
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sluice-gw/sluice/internal/sluiceproc"

	"github.com/sluice-gw/sluice/tests/fakevllm"
	"github.com/zeebo/xxh3"
)

const (
	nBackends = 3
	apiKey    = "sk-placement"
)

// result is one run: a placement, a workload, a concurrency.
type result struct {
	workload, placement string
	conc                int
	hits, queries       int64
	convHits, convQuery int64 // past the shared prefix (W2's system prompt); 0 without one
	reqs                [nBackends]int
	avgInflight         [nBackends]float64
	peak                int     // most in flight on one backend at a sample
	offHome             float64 // share of requests not on their user's (W4: conversation's) busiest backend
	errors              int
	took                time.Duration
}

func maxMean[T int | float64](v [nBackends]T) float64 {
	var sum, hi float64
	for _, x := range v {
		sum += float64(x)
		hi = max(hi, float64(x))
	}
	if sum == 0 {
		return 0
	}
	return hi / (sum / nBackends)
}

func (r result) row() string {
	hit := 0.0
	if r.queries > 0 {
		hit = float64(r.hits) / float64(r.queries)
	}
	total := 0.0
	for _, v := range r.avgInflight {
		total += v
	}
	conv := "—"
	if r.convQuery > 0 {
		conv = fmt.Sprintf("%.3f", float64(r.convHits)/float64(r.convQuery))
	}
	return fmt.Sprintf("| %s | %d | %s | %.3f | %s | %.2f | %.2f | %d | %.1f | %.3f | %d | %.1f |",
		r.workload, r.conc, r.placement, hit, conv, maxMean(r.reqs), maxMean(r.avgInflight), r.peak, total, r.offHome, r.errors, r.took.Seconds())
}

// runOne starts fresh backends (cold caches), and sluice in front of
// them for the sluice placements, and sends w's requests with conc in flight.
func runOne(bin, placement string, w *workload, conc, blocks int) result {
	if placement == "ceiling" {
		// What any placement could reach: every request on one backend
		// whose cache holds the whole workload (only the first sight of
		// each block misses). Its balance figures mean nothing.
		blocks = 4 * w.prefixBlks
	}
	var bes [nBackends]*fakevllm.Server
	for i := range bes {
		s, err := fakevllm.Start("127.0.0.1:0", fakevllm.Options{Words: answerWords,
			PrefixCache: &fakevllm.PrefixCacheOptions{Blocks: blocks}})
		if err != nil {
			log.Fatal(err)
		}
		defer s.Close()
		bes[i] = s
	}
	target := func(i int, r *request) string { return "" }
	user := false
	switch placement {
	case "ceiling":
		target = func(int, *request) string { return bes[0].URL() }
	case "rr":
		target = func(i int, _ *request) string { return bes[i%nBackends].URL() }
	case "hash":
		target = func(_ int, r *request) string {
			return bes[xxh3.HashString("user-"+strconv.Itoa(r.user))%nBackends].URL()
		}
	case "least-sys":
		var mu sync.Mutex
		home := map[int]int{}
		var open [nBackends]int
		var openSys [nBackends][16]int
		target = func(_ int, r *request) string {
			mu.Lock()
			defer mu.Unlock()
			b, ok := home[r.user]
			if !ok {
				tot := 0
				for i := range open {
					tot += open[i]
				}
				bound := float64(tot+1) / nBackends * 1.1
				b = -1
				for i := range open {
					if openSys[i][r.sys] > 0 && float64(open[i]+1) <= bound && (b < 0 || open[i] < open[b]) {
						b = i
					}
				}
				if b < 0 {
					b = fewest(open)
				}
				home[r.user] = b
				open[b]++
				openSys[b][r.sys]++
			}
			if r.last {
				open[b]--
				openSys[b][r.sys]--
			}
			return bes[b].URL()
		}
	case "least":
		// A client that knows every conversation (W4): each goes, when it
		// starts, to the backend with the fewest open, and stays.
		var mu sync.Mutex
		home := map[int]int{}
		var open [nBackends]int
		target = func(_ int, r *request) string {
			mu.Lock()
			defer mu.Unlock()
			b, ok := home[r.user]
			if !ok {
				b = fewest(open)
				home[r.user] = b
				open[b]++
			}
			if r.last {
				open[b]--
			}
			return bes[b].URL()
		}
	case "least-final", "least-now":
		// Oracles by size (W4): a new conversation goes to the backend whose
		// open conversations hold the fewest prompt bytes, counted at their
		// final size (least-final: what each will hold at its last turn) or
		// at their latest turn's (least-now), and stays. They bound what
		// balancing working sets rather than counts could give.
		final := map[int]int{} // each conversation's last request's bytes
		for _, q := range w.reqs {
			if q.last {
				final[q.user] = len(q.body)
			}
		}
		var mu sync.Mutex
		home := map[int]int{}
		size := map[int]int{} // bytes counted for each open conversation
		var open [nBackends]int
		target = func(_ int, r *request) string {
			mu.Lock()
			defer mu.Unlock()
			now := len(r.body)
			if placement == "least-final" {
				now = final[r.user]
			}
			b, ok := home[r.user]
			if !ok {
				b = fewest(open)
				home[r.user] = b
			}
			open[b] += now - size[r.user]
			size[r.user] = now
			if r.last {
				open[b] -= size[r.user]
				delete(size, r.user)
			}
			return bes[b].URL()
		}
	case "sluice", "sluice-user":
		user = placement == "sluice-user"
		g := startSluice(bin, bes[:], blocks)
		defer g.stop()
		target = func(int, *request) string { return g.url }
	default:
		log.Fatalf("unknown placement %q", placement)
	}
	// What the warm-up left (sluice's): subtracted.
	var baseReqs [nBackends]int
	var baseHits, baseQueries int64
	for i, be := range bes {
		baseReqs[i] = len(be.Received())
		h, q := be.PrefixCacheStats()
		baseHits += h
		baseQueries += q
	}

	res := result{workload: w.name, placement: placement, conc: conc}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc + 8, DisableCompression: true}, Timeout: 2 * time.Minute}
	sched := newScheduler(w.reqs)
	var errs atomic.Int64
	var sampleStop = make(chan struct{})
	var sampled sync.WaitGroup
	sampled.Add(1)
	go func() { // in flight per backend, every 2 ms
		defer sampled.Done()
		var sums [nBackends]int64
		n := 0
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-sampleStop:
				for i := range sums {
					if n > 0 {
						res.avgInflight[i] = float64(sums[i]) / float64(n)
					}
				}
				return
			case <-t.C:
			}
			n++
			for i, be := range bes {
				v := be.Running()
				sums[i] += int64(v)
				res.peak = max(res.peak, v)
			}
		}
	}()
	start := time.Now()
	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i, ok := sched.next()
				if !ok {
					return
				}
				r := &w.reqs[i]
				if err := send(client, target(i, r), r, user); err != nil {
					if errs.Add(1) <= 5 {
						log.Printf("%s %s: request %d: %v", w.name, placement, i, err)
					}
				}
				sched.done(i)
			}
		}()
	}
	wg.Wait()
	res.took = time.Since(start)
	close(sampleStop)
	sampled.Wait()
	res.errors = int(errs.Load())
	perUser := map[string]*[nBackends]int{} // requests of each user (X-Bench-User) on each backend
	for i, be := range bes {
		rec := be.Received()
		res.reqs[i] = len(rec) - baseReqs[i]
		for _, x := range rec[baseReqs[i]:] {
			u := x.Header.Get("X-Bench-User")
			if perUser[u] == nil {
				perUser[u] = new([nBackends]int)
			}
			perUser[u][i]++
		}
		if w.sharedTok > 0 || w.shared != nil {
			for _, x := range rec[baseReqs[i]:] {
				sh := w.sharedOf(x.FirstContent)
				res.convHits += int64(max(0, x.CachedTokens-sh))
				res.convQuery += int64(max(0, x.QueriedTokens-sh))
			}
		}
		h, q := be.PrefixCacheStats()
		res.hits += h
		res.queries += q
	}
	res.hits -= baseHits
	res.queries -= baseQueries
	off, all := 0, 0
	for _, n := range perUser {
		hi := 0
		for _, v := range n {
			hi = max(hi, v)
			all += v
			off += v
		}
		off -= hi
	}
	if all > 0 {
		res.offHome = float64(off) / float64(all)
	}
	client.CloseIdleConnections()
	return res
}

// fewest is the backend with the least of open (the first such).
func fewest(open [nBackends]int) int {
	b := 0
	for i := range open {
		if open[i] < open[b] {
			b = i
		}
	}
	return b
}

// send posts one chat request and checks the answer is the expected text.
func send(client *http.Client, base string, r *request, user bool) error {
	body := r.body
	if user { // "user" first: sluice keys on it
		body = append([]byte(`{"user":"user-`+strconv.Itoa(r.user)+`",`), body[1:]...)
	}
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/chat/completions", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+apiKey)
	req.Header.Set("X-Fake-Tokens", strconv.Itoa(r.tokens))
	req.Header.Set("X-Bench-User", strconv.Itoa(r.user))
	req.Header.Set("X-Fake-Delay-Ms", strconv.Itoa(r.tokens**msPerToken))
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode != 200 {
		return fmt.Errorf("status %d: %.200s", res.StatusCode, b)
	}
	var a struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(b, &a); err != nil || len(a.Choices) != 1 {
		return fmt.Errorf("answer: %v %.200s", err, b)
	}
	if a.Choices[0].Message.Content != r.answer {
		return fmt.Errorf("answer %q is not the expected %q", a.Choices[0].Message.Content, r.answer)
	}
	return nil
}

// scheduler hands out requests in sequence order, each once the request
// it comes after has ended (a user's previous turn): the earliest ready
// one first.
type scheduler struct {
	mu      sync.Mutex
	cond    *sync.Cond
	reqs    []request
	started []bool
	ended   []bool
	head    int // first request not yet started
	left    int // not yet started
}

func newScheduler(reqs []request) *scheduler {
	s := &scheduler{reqs: reqs, started: make([]bool, len(reqs)), ended: make([]bool, len(reqs)), left: len(reqs)}
	s.cond = sync.NewCond(&s.mu)
	return s
}

func (s *scheduler) next() (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		if s.left == 0 {
			return 0, false
		}
		for s.started[s.head] {
			s.head++
		}
		for i := s.head; i < len(s.reqs); i++ {
			if !s.started[i] && (s.reqs[i].after < 0 || s.ended[s.reqs[i].after]) {
				s.started[i] = true
				s.left--
				return i, true
			}
		}
		s.cond.Wait()
	}
}

func (s *scheduler) done(i int) {
	s.mu.Lock()
	s.ended[i] = true
	s.mu.Unlock()
	s.cond.Broadcast()
}

// gateway is a running sluice (supervisor and 2 workers).
type gateway struct {
	cmd      *exec.Cmd
	dir, url string
}

func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// prefixIndex is the prefix_index section of sluice's configuration:
// -prefix-block, and -prefix-entries, or (-1) entries sized to the
// simulated caches as docs/internals.md advises — the backends' cache blocks
// together, in sluice's blocks (cacheBlocks a backend of blockBytes each).
func prefixIndex(cacheBlocks int) string {
	return fmt.Sprintf("prefix_index:\n  entries: %d\n  block: %d", indexEntries(cacheBlocks), *prefixBlock)
}

// indexEntries is the prefix index's size for caches of cacheBlocks a backend.
func indexEntries(cacheBlocks int) int {
	if *prefixEntries >= 0 {
		return *prefixEntries
	}
	return (nBackends*cacheBlocks*blockBytes + *prefixBlock - 1) / *prefixBlock
}

func startSluice(bin string, bes []*fakevllm.Server, cacheBlocks int) *gateway {
	dir, err := os.MkdirTemp("", "placement-sluice")
	if err != nil {
		log.Fatal(err)
	}
	listen, admin := freeAddr(), freeAddr()
	sum := sha256.Sum256([]byte(apiKey))
	var backends bytes.Buffer
	for _, be := range bes {
		fmt.Fprintf(&backends, "      - url: %s\n        slots: %d\n", be.URL(), *slots)
	}
	cfg := fmt.Sprintf(`listen: %s
admin: %s
workers: 2
shutdown_timeout: 2s
usage_log: %s
%s
keys:
  - name: bench
    sha256: %s
    models: ["*"]
models:
  - name: %s
    affinity: prefix
    health:
      interval: 1s
    backends:
%s`, listen, admin, *usageLog, prefixIndex(cacheBlocks), hex.EncodeToString(sum[:]), modelName, backends.String())
	path := filepath.Join(dir, "sluice.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		log.Fatal(err)
	}
	g := &gateway{dir: dir, url: "http://" + listen}
	g.cmd = sluiceproc.Start(bin, path, filepath.Join(dir, "sluice.log"))
	// Ready: every worker listens, every backend passed a health check,
	// and a request is answered (a prompt under one block: nothing cached).
	end := time.Now().Add(30 * time.Second)
	for {
		if time.Now().After(end) {
			g.stop()
			log.Fatalf("sluice did not get ready (log: %s)", filepath.Join(dir, "sluice.log"))
		}
		time.Sleep(20 * time.Millisecond)
		res, err := http.Get("http://" + admin + "/readyz")
		if err != nil {
			continue
		}
		res.Body.Close()
		healthy := res.StatusCode == 200
		for _, be := range bes {
			healthy = healthy && be.HealthChecks() > 0
		}
		if !healthy {
			continue
		}
		r := &request{body: marshal([]message{{"user", "hi"}}, 1), tokens: 1, answer: answerText(1)}
		if send(http.DefaultClient, g.url, r, false) == nil {
			return g
		}
	}
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
	os.RemoveAll(g.dir)
}
