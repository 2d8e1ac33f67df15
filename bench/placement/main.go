// Command placement measures how placement keeps vLLM's prefix caches warm
// (issue 20, part A): the same request sequences sent to three fake vLLM
// backends that simulate automatic prefix caching (tests/fakevllm,
// Options.PrefixCache) by round robin, by users hashed onto backends (both
// client side), and through sluice (2 workers, affinity: prefix, 64 slots a
// backend). W3 (RAG: shared documents, each request with a question of
// its own) measures the shared prefix index; W4 (chat: a few shared system
// prompts, interleaved conversations that grow) measures where a
// conversation's turns go. It reports each run's block hit rate (hits/queries over all
// backends, in tokens as vLLM counts them), requests per backend and the
// time-averaged in-flight per backend (max over mean), and the peak
// in-flight on any backend. docs/placement.md explains the workloads and
// gives the figures.
//
//	go run ./bench/placement -out /tmp/placement.md
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-gw/sluice/internal/sluiceproc"
)

const modelName = "m"

var (
	out        = flag.String("out", "", "also write the markdown table to this file")
	seed       = flag.Uint64("seed", 20, "workload seed")
	concs      = flag.String("conc", "8,48,256", "client concurrency levels (requests in flight)")
	placements = flag.String("placements", "rr,hash,sluice,sluice-user", "placements: rr, hash, sluice, sluice-user (sluice with the request's user set); oracles: least, least-sys, least-final, least-now (W4), ceiling (one backend with an unbounded cache)")
	workloads  = flag.String("workloads", "W1,W2,W3,W4", "workloads")
	n1         = flag.Int("w1-requests", 2400, "W1 requests")
	u1         = flag.Int("w1-users", 300, "W1 users")
	n2         = flag.Int("w2-requests", 2400, "W2 requests")
	u2         = flag.Int("w2-users", 600, "W2 users")
	n3         = flag.Int("w3-requests", 2400, "W3 requests")
	u3         = flag.Int("w3-users", 400, "W3 users")
	d3         = flag.Int("w3-docs", 12, "W3 shared documents")
	n4         = flag.Int("w4-requests", 3000, "W4 requests")
	a4         = flag.Int("w4-active", 96, "W4 conversations open at once")
	s4         = flag.Int("w4-systems", 3, "W4 shared system prompts")
	t4         = flag.String("w4-turns", "6-24", "W4 turns a conversation (min-max)")
	cacheFrac  = flag.Float64("cache-frac", 1.0/3, "each backend's cache, as a fraction of the workload's distinct reusable prefix blocks")
	msPerToken = flag.Int("ms-per-token", 2, "the fake answers after this many ms per answer token")
	slots      = flag.Int("slots", 64, "sluice's slots per backend")
	sluiceBin  = flag.String("sluice", "", "a built sluice binary (default: build ./cmd/sluice)")
	usageLog   = flag.String("usage-log", "off", "sluice's usage_log (a file path to look at where requests went; each sluice run appends)")
	// The prefix index of sluice (prefix_index).
	prefixEntries = flag.Int("prefix-entries", -1, "sluice's prefix_index.entries (0: no index; -1: sized to the simulated caches, the backends' blocks together)")
	prefixBlock   = flag.Int("prefix-block", 256, "sluice's prefix_index.block in bytes")
)

func main() {
	flag.Parse()
	log.SetFlags(log.Ltime)
	bin := *sluiceBin
	if bin == "" {
		bin = sluiceproc.Build()
	}
	var ws []*workload
	for _, name := range strings.Split(*workloads, ",") {
		switch name {
		case "W1":
			ws = append(ws, w1(*seed, *u1, *n1, 1.0))
		case "W2":
			ws = append(ws, w2(*seed, *u2, *n2, 1.0, 20))
		case "W3":
			ws = append(ws, w3(*seed, *u3, *n3, *d3, 1.0, 20))
		case "W4":
			var lo, hi int
			if _, err := fmt.Sscanf(*t4, "%d-%d", &lo, &hi); err != nil || lo < 1 || hi < lo {
				log.Fatalf("bad -w4-turns %q", *t4)
			}
			ws = append(ws, w4(*seed, *a4, *n4, *s4, lo, hi))
		default:
			log.Fatalf("unknown workload %q", name)
		}
	}
	var levels []int
	for _, c := range strings.Split(*concs, ",") {
		n, err := strconv.Atoi(c)
		if err != nil || n < 1 {
			log.Fatalf("bad -conc %q", c)
		}
		levels = append(levels, n)
	}
	start := time.Now()
	var results []result
	for _, w := range ws {
		blocks := int(float64(w.prefixBlks)**cacheFrac + 0.5)
		log.Printf("%s: %d requests, %d distinct reusable prefix blocks, cache %d blocks a backend", w.name, len(w.reqs), w.prefixBlks, blocks)
		for _, c := range levels {
			for _, p := range strings.Split(*placements, ",") {
				r := runOne(bin, p, w, c, blocks)
				log.Printf("  %s", r.row())
				results = append(results, r)
			}
		}
	}
	md := report(ws, results, time.Since(start))
	fmt.Print(md)
	if *out != "" {
		if err := os.WriteFile(*out, []byte(md), 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

func report(ws []*workload, rs []result, took time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Placement benchmark (`go run ./bench/placement`, seed %d, %s)\n\n", *seed, took.Round(time.Second))
	for _, w := range ws {
		fmt.Fprintf(&b, "- %s: %s; %d requests; cache %d blocks a backend (%.2f of %d distinct reusable prefix blocks)\n",
			w.name, w.title, len(w.reqs), int(float64(w.prefixBlks)**cacheFrac+0.5), *cacheFrac, w.prefixBlks)
	}
	fmt.Fprintf(&b, "- answers after %d ms per answer token (8-40 tokens); sluice: 2 workers, affinity: prefix, %d slots a backend\n", *msPerToken, *slots)
	for _, w := range ws {
		fmt.Fprintf(&b, "- %s: sluice's prefix_index: %d entries, blocks of %d bytes\n", w.name, indexEntries(int(float64(w.prefixBlks)**cacheFrac+0.5)), *prefixBlock)
	}
	b.WriteString("\n")
	b.WriteString("| workload | in flight | placement | hit rate | hit past system | requests max/mean | in-flight max/mean | peak in-flight | mean in-flight | off home | errors | s |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		b.WriteString(r.row() + "\n")
	}
	return b.String()
}
