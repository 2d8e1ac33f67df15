package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

// row is the medians of one (scenario, variant, proxy).
type row struct {
	scenario, variant, proxy string
	rps, p50, p99, errors    float64
	cpuReq, cpuEvt, cpuPct   float64
	rssIdle, rssLoad         float64
	rssFresh                 float64 // idle RSS before the first run: what open streams add to
	perStream                float64 // KiB per open stream (c, f2): (rssLoad − rssFresh) / streams
	firstPerStream           float64 // the same from the first run alone, on the fresh process
	startMs, pssIdle         float64
	resumedPct               float64 // over https: answers on a resumed session, %
	tls                      string  // over https: what the first connection negotiated
}

func summarize(all []Measurement) []row {
	type k struct{ s, v, p string }
	groups := map[k][]Measurement{}
	var order []k
	for _, m := range all {
		key := k{m.Scenario, m.Variant, m.Proxy}
		if _, ok := groups[key]; !ok {
			order = append(order, key)
		}
		groups[key] = append(groups[key], m)
	}
	var rows []row
	for _, key := range order {
		ms := groups[key]
		med := func(f func(Measurement) float64) float64 {
			xs := make([]float64, len(ms))
			for i, m := range ms {
				xs[i] = f(m)
			}
			return median(xs)
		}
		rows = append(rows, row{
			scenario: key.s, variant: key.v, proxy: key.p,
			rps:      med(func(m Measurement) float64 { return m.Driver.RPS }),
			p50:      med(func(m Measurement) float64 { return m.Driver.P50Ms }),
			p99:      med(func(m Measurement) float64 { return m.Driver.P99Ms }),
			errors:   med(func(m Measurement) float64 { return float64(m.Driver.Errors) }),
			cpuReq:   med(func(m Measurement) float64 { return m.CPUPerReq }),
			cpuEvt:   med(func(m Measurement) float64 { return m.CPUPerEvt }),
			cpuPct:   med(func(m Measurement) float64 { return m.CPUPct }),
			rssIdle:  med(func(m Measurement) float64 { return float64(m.RSSIdleKiB) }),
			rssLoad:  med(func(m Measurement) float64 { return float64(m.RSSLoadKiB) }),
			rssFresh: float64(ms[0].RSSIdleKiB),
			startMs:  med(func(m Measurement) float64 { return m.StartToFirstMs }),
			pssIdle:  med(func(m Measurement) float64 { return float64(m.PSSIdleKiB) }),
			resumedPct: med(func(m Measurement) float64 {
				if m.Driver.OK == 0 {
					return 0
				}
				return 100 * float64(m.Driver.Resumed) / float64(m.Driver.OK)
			}),
			tls: ms[0].Driver.TLS,
		})
		r := &rows[len(rows)-1]
		n := float64(ms[0].OpenStreams)
		if n == 0 && key.s == "c" { // results written before OpenStreams existed
			fmt.Sscan(key.v, &n)
		}
		if n > 0 && key.p != "direct" {
			r.perStream = (r.rssLoad - r.rssFresh) / n
			r.firstPerStream = (float64(ms[0].RSSLoadKiB) - r.rssFresh) / n
		}
	}
	return rows
}

// writeReport writes the markdown report: the machine, the command, and a
// table per scenario with ratios against plain nginx measured in the same run.
func writeReport(all []Measurement, results string) {
	rows := summarize(all)
	var b strings.Builder
	host, _ := os.Hostname()
	if *from != "" {
		fmt.Fprintf(&b, "# Benchmarks\n\nMeasured by `make bench` (bench/rig); this report rewritten from its results by `go run ./bench/rig -from %s` on %s.\n\n",
			*from, time.Now().UTC().Format("2006-01-02 15:04 MST"))
	} else {
		fmt.Fprintf(&b, "# Benchmarks\n\nWritten by `go run ./bench/rig %s` (what `make bench` runs) on %s.\n\n",
			strings.Join(os.Args[1:], " "), time.Now().UTC().Format("2006-01-02 15:04 MST"))
	}
	measuredOn := fmt.Sprintf("%s, %d CPUs (%s), %s", host, runtime.NumCPU(), machine, runtime.Version())
	if *from != "" {
		// The machine of the results, not of this rewrite.
		measuredOn = "not recorded in these results (written before the rig kept it)"
		for _, m := range all {
			if m.Machine != "" {
				measuredOn = m.Machine
				break
			}
		}
	}
	fmt.Fprintf(&b, "Machine: %s. Proxy under test pinned to CPU %s; load driver and fake backend on CPU %s. "+
		"Medians of %d runs of %v each. Raw results: `%s`.\n\n", measuredOn, proxyCPU, loadCPU, *runs, *dur, results)
	b.WriteString("CPU is user+sys of the proxy's whole process tree (/proc/PID/stat, 10 ms ticks) divided by good responses or stream events; " +
		"`direct` is the driver straight at the backend: the harness ceiling. Ratios are against plain nginx in the same run.")
	if alternated(all) {
		b.WriteString(" Within a scenario every proxy runs at once (idle ones wait on the same core) and the runs alternate between them, " +
			"so that the VM's drift over minutes falls on all of them alike.")
	}
	b.WriteString("\n")
	// Measurements made after the full report (a change's before and after,
	// by hand or with a few scenarios) are written by people too; they lead
	// the report, above the tables they update.
	if latest, err := os.ReadFile(filepath.Join(filepath.Dir(*reportMD), "benchmarks-latest.md")); err == nil {
		b.WriteString("\n" + string(latest))
	}

	byScenario := map[string][]row{}
	var scenariosSeen []string
	for _, r := range rows {
		if _, ok := byScenario[r.scenario]; !ok {
			scenariosSeen = append(scenariosSeen, r.scenario)
		}
		byScenario[r.scenario] = append(byScenario[r.scenario], r)
	}
	sort.Strings(scenariosSeen) // "f2" sorts between "f" and "g"
	for _, s := range scenariosSeen {
		fmt.Fprintf(&b, "\n## %s. %s\n\n", s, scenarios[s].title)
		rs := byScenario[s]
		if s == "g" {
			b.WriteString("| proxy | start → first answer | idle RSS, all processes | idle PSS, all processes |\n|---|---|---|---|\n")
			for _, r := range rs {
				pss := "—" // results written before PSS was read
				if r.pssIdle > 0 {
					pss = fmt.Sprintf("%.1f MiB", r.pssIdle/1024)
				}
				fmt.Fprintf(&b, "| %s | %.1f ms | %.1f MiB | %s |\n", r.proxy, r.startMs, r.rssIdle/1024, pss)
			}
			continue
		}
		open := s == "c" || s == "f2" || s == "tc"
		// Scenarios th and tr: a handshake per request.
		handshakes := s == "th" || s == "tr"
		if rs[0].tls != "" {
			fmt.Fprintf(&b, "Negotiated (first connection of the first run): %s.\n\n", rs[0].tls)
		}
		// The ratio column: against plain nginx, or in scenario apis
		// against the same proxy's chat request.
		against := "× nginx"
		if strings.HasPrefix(s, "apis") {
			against = "× chat"
		}
		base := false // a -baseline build ran: a column against it
		for _, r := range rs {
			base = base || r.proxy == "sluice-base"
		}
		fmt.Fprintf(&b, "| variant | proxy | req/s | p50 ms | p99 ms | errors | CPU µs/req | %s | CPU µs/event | CPU %% | RSS idle MiB | RSS load MiB |", against)
		if base {
			b.WriteString(" × sluice-base |")
		}
		if open {
			b.WriteString(" KiB per open stream | first run |")
		}
		if s == "e" {
			b.WriteString(" added p50 µs |")
		}
		if handshakes {
			b.WriteString(" handshakes/s on one core (10⁶ / CPU µs) | resumed |")
		}
		b.WriteString("\n|" + strings.Repeat("---|", 12))
		if handshakes {
			b.WriteString("---|---|")
		}
		if base {
			b.WriteString("---|")
		}
		if open {
			b.WriteString("---|---|")
		}
		if s == "e" {
			b.WriteString("---|")
		}
		b.WriteString("\n")
		for _, r := range rs {
			ratio, baseRatio := "—", "—"
			for _, n := range rs {
				if n.cpuReq == 0 || r.proxy == "direct" {
					continue
				}
				if apis := strings.HasPrefix(s, "apis"); apis && n.proxy == r.proxy && n.variant == "chat" ||
					!apis && n.proxy == "nginx" && n.variant == r.variant {
					ratio = fmt.Sprintf("%.2f", r.cpuReq/n.cpuReq)
				}
				if n.proxy == "sluice-base" && n.variant == r.variant && r.proxy == "sluice" {
					baseRatio = fmt.Sprintf("%.2f", r.cpuReq/n.cpuReq)
				}
			}
			fmt.Fprintf(&b, "| %s | %s | %.0f | %.2f | %.2f | %.0f | %.1f | %s | %.2f | %.0f | %.1f | %.1f |",
				r.variant, r.proxy, r.rps, r.p50, r.p99, r.errors, r.cpuReq, ratio, r.cpuEvt, r.cpuPct, r.rssIdle/1024, r.rssLoad/1024)
			if base {
				fmt.Fprintf(&b, " %s |", baseRatio)
			}
			if open {
				if r.perStream > 0 {
					fmt.Fprintf(&b, " %.1f | %.1f |", r.perStream, r.firstPerStream)
				} else {
					b.WriteString(" — | — |")
				}
			}
			if s == "e" {
				added := "—"
				for _, d := range rs {
					if d.proxy == "direct" && r.proxy != "direct" {
						added = fmt.Sprintf("%.0f", 1000*(r.p50-d.p50))
					}
				}
				fmt.Fprintf(&b, " %s |", added)
			}
			if handshakes {
				capacity := "—"
				if r.cpuReq > 0 {
					capacity = fmt.Sprintf("%.0f", 1e6/r.cpuReq)
				}
				fmt.Fprintf(&b, " %s | %.0f%% |", capacity, r.resumedPct)
			}
			b.WriteString("\n")
		}
	}
	b.WriteString(targets(rows))
	os.MkdirAll(filepath.Join(filepath.Dir(*reportMD), "img"), 0o755)
	if plots := writePlots(rows); plots != "" {
		b.WriteString("\n## Plots\n\n" + plots)
	}
	// The account of profiles, changes and what was dropped is written by
	// people; the report carries it along under the tables it explains.
	if analysis, err := os.ReadFile(filepath.Join(filepath.Dir(*reportMD), "benchmarks-analysis.md")); err == nil {
		b.WriteString("\n" + string(analysis))
	}
	if err := os.WriteFile(*reportMD, []byte(b.String()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "write report:", err)
	}
}

// machine is this machine's CPU model, read once.
var machine = cpuModel()

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
		}
	}
	return "unknown CPU"
}

// alternated reports whether every proxied run in all alternated with the
// other proxies' runs (scenario g starts each proxy on its own).
func alternated(all []Measurement) bool {
	seen := false
	for _, m := range all {
		if m.Scenario == "g" {
			continue
		}
		if !m.Alternated {
			return false
		}
		seen = true
	}
	return seen
}
