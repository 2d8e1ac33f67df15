// Command fairqueue measures sluice's fair queuing between API keys (issue
// 20, part B) with the real binary (2 workers) in front of one in-process
// fake vLLM backend (tests/fakevllm) of 16 slots, the queue long and
// patient. It measures:
//
//  1. a light key (one request at a time) behind another key's backlog of
//     ~200 waiting requests: its queue wait, against the service time;
//  2. slot use while requests wait: the fake's running requests and
//     sluice's held slots, sampled with the queue depth;
//  3. token shares of two keys that both keep the queue full: equal
//     weights with answers 4× apart, and weights 2:1;
//  4. a priority-1 key behind priority-0 keys' backlog;
//  5. the hand-off (a slot's release to its next holder) of every queued
//     request, from the usage log.
//
// With -baseline BIN, part 1 (and 2 and 5 with it) is run against that
// binary too, say one from before fair queuing (first come, first
// served); the keys it gets are plain (no weight, no priority).
// docs/fairqueue.md gives the figures.
//
//	go run ./bench/fairqueue -out /tmp/fairqueue.md [-baseline /tmp/sluice-base]
package main

import (
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/sluice-gw/sluice/internal/sluiceproc"
)

var (
	out          = flag.String("out", "", "also write the markdown report to this file")
	sluiceBin    = flag.String("sluice", "", "a built sluice binary (default: build ./cmd/sluice into bench/.bin)")
	baselineBin  = flag.String("baseline", "", "another sluice binary to run part 1 against (plain keys only), e.g. one from before fair queuing")
	baselineName = flag.String("baseline-name", "baseline", "how the report names the -baseline binary")
	service      = flag.Duration("service", 200*time.Millisecond, "service time of parts 1, 2 and 4 (X-Fake-Delay-Ms)")
	loops        = flag.Int("loops", 216, "backlog client loops of parts 1 and 4 (16 hold the slots, the rest wait)")
	lightDur     = flag.Duration("light-dur", 30*time.Second, "how long the light key of part 1 sends")
	prioDur      = flag.Duration("prio-dur", 15*time.Second, "how long the priority-1 key of part 4 sends")
	shareService = flag.Duration("share-service", 80*time.Millisecond, "service time of part 3")
	shareLoops   = flag.Int("share-loops", 24, "client loops per key in part 3")
	shareWarm    = flag.Duration("share-warm", 3*time.Second, "part 3: time before counting")
	shareDur     = flag.Duration("share-dur", 12*time.Second, "part 3: time counted")
	every        = flag.Duration("sample", 5*time.Millisecond, "part 2's sampling interval")
	workers      = flag.Int("workers", 2, "sluice's workers")
	keep         = flag.Bool("keep", false, "keep each gateway's directory (config, sluice.log, usage.log)")
	cutOnly      = flag.Bool("cut-only", false, "run part 6 alone (against -baseline too, when given)")
	cutLoops     = flag.Int("cut-loops", 24, "part 6: client loops per key")
	cutTokens    = flag.Int("cut-tokens", 20, "part 6: tokens of each streamed answer")
	cutInterval  = flag.Int("cut-interval-ms", 5, "part 6: ms between a stream's events")
	cutDur       = flag.Duration("cut-dur", 12*time.Second, "part 6: time counted (after share-warm)")
	cutPrompt    = flag.Int("cut-prompt", 0, "part 6: bytes of padding in each prompt's content")
)

// The fair run's keys: a's backlog and b's single requests (part 1), lo1
// and lo2 of priority 0 and hi of priority 1 (part 4), x and y, w2 and w1
// (part 3).
var fairKeys = []keySpec{
	{"a", ""}, {"b", ""}, {"lo1", ""}, {"lo2", ""}, {"hi", "priority: 1"},
	{"x", ""}, {"y", ""}, {"w2", "weight: 2"}, {"w1", "weight: 1"},
	{cutKeys[0], ""}, {cutKeys[1], ""},
}

// runCut is part 6 alone, on bin and on -baseline when given: the cutter
// cutting at 16 and at 10 of 20 tokens (the two cases).
func runCut(bin string) {
	var rs []cutResult
	for _, b := range []struct{ name, bin string }{{"sluice", bin}, {*baselineName, *baselineBin}} {
		if b.bin == "" {
			continue
		}
		g := startGateway(b.bin, []keySpec{{cutKeys[0], ""}, {cutKeys[1], ""}})
		for _, at := range []int{*cutTokens * 4 / 5, *cutTokens / 2} {
			rs = append(rs, g.cutShare(fmt.Sprintf("%s, cut at %d", b.name, at), *cutLoops, *cutTokens, at, *cutInterval, *shareWarm, *cutDur))
		}
		g.stop()
	}
	md := fmt.Sprintf("## Fair queue benchmark, part 6 (`go run ./bench/fairqueue -cut-only`, %s)\n\n- sluice: %d workers, model `m` with %d slots; %d loops per key; answers of %d tokens %d ms apart; counted over %s after %s\n\n",
		gitRev(), *workers, slots, *cutLoops, *cutTokens, *cutInterval, *cutDur, *shareWarm) + cutReport(rs)
	fmt.Print(md)
	if *out != "" {
		if err := os.WriteFile(*out, []byte(md), 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

func main() {
	flag.Parse()
	log.SetFlags(log.Ltime)
	bin := *sluiceBin
	if bin == "" {
		bin = sluiceproc.Build()
	}
	if *cutOnly {
		runCut(bin)
		return
	}
	start := time.Now()
	loadBefore := uptime()
	rev := gitRev()

	log.Printf("fair run (%s)", bin)
	g := startGateway(bin, fairKeys)
	p1 := []lightResult{
		g.lightPhase("fair queue, backlog fixed", []string{"a"}, "b", *loops, *service, false, *lightDur, 0, *every),
		g.lightPhase("fair queue, backlog jittered", []string{"a"}, "b", *loops, *service, true, *lightDur, 0, *every),
	}
	for _, r := range p1 {
		log.Printf("part 1: %s: b %d requests, queue_ms p95 %.0f", r.label, len(r.lightUsage), pct(queueMs(r.lightUsage), 0.95))
	}
	p4 := g.lightPhase("fair queue, priority, backlog jittered", []string{"lo1", "lo2"}, "hi", *loops, *service, true, *prioDur, 0, *every)
	log.Printf("part 4: hi %d requests, queue_ms p95 %.0f", len(p4.lightUsage), pct(queueMs(p4.lightUsage), 0.95))
	eq := g.share("equal weights, answers 200 and 50 tokens", [2]string{"x", "y"}, [2]string{"1", "1"}, [2]int{200, 50},
		*shareLoops, *shareService, *shareWarm, *shareDur)
	log.Printf("part 3: %s: ratio %.3f", eq.label, ratio(eq))
	wt := g.share("weights 2:1, answers 100 tokens", [2]string{"w2", "w1"}, [2]string{"2", "1"}, [2]int{100, 100},
		*shareLoops, *shareService, *shareWarm, *shareDur)
	log.Printf("part 3: %s: ratio %.3f", wt.label, ratio(wt))
	cuts := []cutResult{g.cutShare("sluice, cut at 16", *cutLoops, *cutTokens, *cutTokens*4/5, *cutInterval, *shareWarm, *cutDur)}
	keyMetrics := g.scrape("sluice_key_queued_total", "sluice_key_queue_wait_seconds_total", "sluice_key_served_tokens")
	g.stop()

	var base []lightResult
	if *baselineBin != "" {
		log.Printf("baseline run (%s)", *baselineBin)
		bg := startGateway(*baselineBin, []keySpec{{"a", ""}, {"b", ""}})
		for _, jitter := range []bool{false, true} {
			label := *baselineName + ", backlog fixed"
			if jitter {
				label = *baselineName + ", backlog jittered"
			}
			r := bg.lightPhase(label, []string{"a"}, "b", *loops, *service, jitter, *lightDur, 0, *every)
			log.Printf("part 1: %s: b %d requests, queue_ms p95 %.0f", r.label, len(r.lightUsage), pct(queueMs(r.lightUsage), 0.95))
			base = append(base, r)
		}
		bg.stop()
	}

	md := report(rev, loadBefore, uptime(), time.Since(start), p1, base, p4, []shareResult{eq, wt}, keyMetrics) + cutReport(cuts)
	fmt.Print(md)
	if *out != "" {
		if err := os.WriteFile(*out, []byte(md), 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

func uptime() string {
	b, err := exec.Command("uptime").Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}

func gitRev() string {
	b, err := exec.Command("git", "describe", "--always", "--dirty").Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}

// pct is the p-quantile of v (nearest rank), NaN for none.
func pct(v []float64, p float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	return sum / float64(len(v))
}

func queueMs(us []usageLine) []float64 {
	var v []float64
	for _, u := range us {
		v = append(v, float64(u.QueueMs))
	}
	return v
}

// serviceMs is each line's time past its queue wait: the service as the
// gateway saw it.
func serviceMs(us []usageLine) []float64 {
	var v []float64
	for _, u := range us {
		v = append(v, float64(u.DurationMs-u.QueueMs))
	}
	return v
}

func ratio(r shareResult) float64 {
	return (float64(r.toks[0]) / r.window.Seconds()) / (float64(r.toks[1]) / r.window.Seconds())
}

func verdict(ok bool) string {
	if ok {
		return "**met**"
	}
	return "**not met**"
}

func report(rev, loadBefore, loadAfter string, took time.Duration, p1, base []lightResult, p4 lightResult, shares []shareResult, km map[string]float64) string {
	var b strings.Builder
	svc := float64(*service) / 1e6
	release := svc / slots
	fmt.Fprintf(&b, "## Fair queue benchmark (`go run ./bench/fairqueue`, %s, %s)\n\n", rev, took.Round(time.Second))
	fmt.Fprintf(&b, "- sluice: %d workers, one fake vLLM backend (in the bench process), model `m` with %d slots, queue max 2000, timeout 600 s; usage log to a file\n", *workers, slots)
	fmt.Fprintf(&b, "- parts 1, 2, 4: service time %.0f ms (`X-Fake-Delay-Ms`, 4-token answers), so a slot is released every %.1f ms on average (service/%d); %d backlog loops (16 hold the slots, ~%d wait)\n", svc, release, slots, *loops, *loops-slots)
	fmt.Fprintf(&b, "- *backlog fixed*: every backlog request takes %.0f ms, and the closed loops stay in step, so slots are freed in bursts; *backlog jittered*: each backlog request's service is drawn uniformly from %.0f–%.0f ms, which spreads the releases out. The light key's requests take %.0f ms either way.\n", svc, svc/2, 1.5*svc, svc)
	fmt.Fprintf(&b, "- part 3: %d loops per key, service %s, counted over %s after %s\n", *shareLoops, *shareService, *shareDur, *shareWarm)
	fmt.Fprintf(&b, "- load before: `%s`; after: `%s`\n\n", loadBefore, loadAfter)

	runs := append(slices.Clone(p1), base...)
	// Part 1.
	b.WriteString("### 1. A light key behind a backlog\n\n")
	fmt.Fprintf(&b, "Key a keeps %d requests in flight (closed loops); key b sends one request at a time for %s. Wait = what b spent waiting for a slot; a slot release every %.1f ms, a service time %.0f ms.\n\n", *loops, *lightDur, release, svc)
	b.WriteString(lightHeader)
	for _, r := range runs {
		b.WriteString(lightRow(r))
	}
	b.WriteString("\n")
	b.WriteString("| run | a's queue_ms p50 / p95 / max | a's requests counted | service as the gateway saw it (b: duration_ms − queue_ms) mean |\n|---|---|---|---|\n")
	for _, r := range runs {
		q := queueMs(r.backlogUsage)
		fmt.Fprintf(&b, "| %s | %.0f / %.0f / %.0f | %d | %.1f ms |\n", r.label, pct(q, .5), pct(q, .95), pct(q, 1), len(q), mean(serviceMs(r.lightUsage)))
	}
	for _, r := range p1 {
		bq := queueMs(r.lightUsage)
		fmt.Fprintf(&b, "\nTarget (%s): b's queue wait within one average service time (%.0f ms): p95 %.0f ms, max %.0f ms (usage log) — %s.\n",
			r.label, svc, pct(bq, .95), pct(bq, 1), verdict(pct(bq, .95) <= svc))
	}
	b.WriteString("\n")

	// Part 2.
	b.WriteString("### 2. No idle slot while anything waits\n\n")
	fmt.Fprintf(&b, "Sampled every %s during part 1's window, the samples where `sluice_queue_depth` > 0. *fake*: the fake's requests being answered (read just before the scrape); *sluice*: `sluice_backend_inflight` (slots held, read in the same scrape as the depth). Utilisation by arrivals: backend arrivals × service / (16 × window).\n\n", *every)
	b.WriteString("| run | samples (queue > 0) | fake running/16 mean / min | fake: samples with a free slot | sluice held/16 mean / min | sluice: samples with a free slot | utilisation by arrivals |\n|---|---|---|---|---|---|---|\n")
	for _, r := range append(runs, p4) {
		b.WriteString(slotRow(r))
	}
	b.WriteString("\n")

	// Part 3.
	b.WriteString("### 3. Token shares\n\n")
	fmt.Fprintf(&b, "Two keys, %d closed loops each (more than the 16 slots: both always wait), service %s; tokens as the fake counts them in its usage (prompt = body bytes/4, plus the answer) over the requests the backend received in the window.\n\n", *shareLoops, *shareService)
	b.WriteString("| case | key | weight | answer tokens | requests | tokens | tokens/s | least key queue depth seen |\n|---|---|---|---|---|---|---|---|\n")
	for _, s := range shares {
		for i := range 2 {
			fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %d | %.0f | %.0f |\n", s.label, s.keys[i], s.weights[i], s.tokens[i], s.reqs[i], s.toks[i], float64(s.toks[i])/s.window.Seconds(), s.minDepth[i])
		}
	}
	b.WriteString("\n")
	for i, s := range shares {
		want := 1.0
		if i == 1 {
			want = 2
		}
		got := ratio(s)
		fmt.Fprintf(&b, "- %s: token ratio %s/%s = %.3f, target %.0f ± 10%% — %s\n", s.label, s.keys[0], s.keys[1], got, want, verdict(got >= want*0.9 && got <= want*1.1))
	}
	b.WriteString("\n")

	// Part 4.
	b.WriteString("### 4. Priority\n\n")
	fmt.Fprintf(&b, "Keys lo1 and lo2 (priority 0) keep %d requests in flight together; key hi (priority 1) sends one at a time for %s.\n\n", *loops, *prioDur)
	b.WriteString(lightHeader)
	b.WriteString(lightRow(p4))
	fmt.Fprintf(&b, "\nTarget: hi takes the next freed slot: arrivals ahead of it p95 %.0f, max %.0f (each arrival is one slot release); queue_ms p95 %.0f ms against a release interval of %.1f ms.\n\n",
		pct(p4.ahead, .95), pct(p4.ahead, 1), pct(queueMs(p4.lightUsage), .95), release)

	// Part 5.
	b.WriteString("### 5. Hand-off\n\n")
	b.WriteString("`queue_handoff_us` of every answered request that waited (usage log): a slot's release to its hand-over to the next waiter.\n\n")
	b.WriteString("The last two columns are the workers' read and write system calls (`/proc/PID/io` syscr, syscw) over the phase's window, per backend arrival: a wake-up passed between workers is one pipe write and one read.\n\n")
	b.WriteString("| run | queued requests | p50 µs | p99 µs | max µs | min µs | worker reads / arrival | worker writes / arrival |\n|---|---|---|---|---|---|---|---|\n")
	all := append(runs, p4)
	for _, r := range all {
		h := r.handoff
		fmt.Fprintf(&b, "| %s | %d | %.0f | %.0f | %.0f | %.0f | %.2f | %.2f |\n", r.label, len(h), pct(h, .5), pct(h, .99), pct(h, 1), pct(h, 0),
			float64(r.sysReads)/float64(r.arrivals), float64(r.sysWrites)/float64(r.arrivals))
	}
	fmt.Fprintf(&b, "\nTarget p99 ≤ 2000 µs: %s (fair queue).\n\n", verdict(pct(p1[0].handoff, .99) <= 2000 && pct(p1[1].handoff, .99) <= 2000 && pct(p4.handoff, .99) <= 2000))

	// Per-key metrics.
	b.WriteString("### The fair run's per-key metrics at its end\n\n| key | sluice_key_queued_total | mean wait (queue_wait_seconds_total / queued_total) | sluice_key_served_tokens |\n|---|---|---|---|\n")
	for _, k := range fairKeys {
		q := km[`sluice_key_queued_total{key="`+k.name+`"}`]
		w := km[`sluice_key_queue_wait_seconds_total{key="`+k.name+`"}`]
		mw := "—"
		if q > 0 {
			mw = fmt.Sprintf("%.0f ms", 1000*w/q)
		}
		fmt.Fprintf(&b, "| %s | %.0f | %s | %.0f |\n", k.name, q, mw, km[`sluice_key_served_tokens{key="`+k.name+`"}`])
	}
	return b.String()
}

const lightHeader = "| run | backlog waiting at start | light key's requests (errors) | client wait p50 / p95 / max ms | queue_ms p50 / p95 / max | p95 / service time | arrivals ahead p50 / p95 / max |\n|---|---|---|---|---|---|---|\n"

func lightRow(r lightResult) string {
	q := queueMs(r.lightUsage)
	return fmt.Sprintf("| %s | %.0f | %d (%d) | %.1f / %.1f / %.1f | %.0f / %.0f / %.0f | %.2f | %.0f / %.0f / %.0f |\n",
		r.label, r.depthAtStart, len(r.clientWait), r.lightErrors,
		pct(r.clientWait, .5), pct(r.clientWait, .95), pct(r.clientWait, 1),
		pct(q, .5), pct(q, .95), pct(q, 1), pct(q, .95)/(float64(r.service)/1e6),
		pct(r.ahead, .5), pct(r.ahead, .95), pct(r.ahead, 1))
}

func slotRow(r lightResult) string {
	var fake, held []float64
	fakeFree, heldFree := 0, 0
	for _, s := range r.samples {
		if s.depth <= 0 {
			continue
		}
		fake = append(fake, float64(s.running)/slots)
		held = append(held, s.inflight/slots)
		if s.running < slots {
			fakeFree++
		}
		if s.inflight < slots {
			heldFree++
		}
	}
	n := float64(len(fake))
	util := float64(r.arrivals) * r.service.Seconds() / (slots * r.window.Seconds())
	return fmt.Sprintf("| %s | %d | %.3f / %.3f | %.1f%% | %.3f / %.3f | %.1f%% | %.3f |\n",
		r.label, len(fake), mean(fake), pct(fake, 0), 100*float64(fakeFree)/n, mean(held), pct(held, 0), 100*float64(heldFree)/n, util)
}
