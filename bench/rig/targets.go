package main

import (
	"fmt"
	"strings"
)

// targets checks the figures against the targets of the benchmark issue
// (docs/benchmarks.md explains them), each a ratio or a bound measured in
// this run, and returns the markdown table.
func targets(rows []row) string {
	find := func(scenario, variant, proxy string) *row {
		for i := range rows {
			r := &rows[i]
			if r.scenario == scenario && r.proxy == proxy && (variant == "*" || r.variant == variant) {
				return r
			}
		}
		return nil
	}
	var b strings.Builder
	b.WriteString("\n## Targets\n\nEach checked against the figures above (medians of this run); ratios are sluice over the peer in the same run.\n\n")
	b.WriteString("| target | measured | bound | met |\n|---|---|---|---|\n")
	check := func(name string, v, bound float64, unit string, ok bool) {
		met := "no"
		if ok && v <= bound {
			met = "yes"
		}
		if !ok {
			fmt.Fprintf(&b, "| %s | not measured | %s%s | — |\n", name, trim(bound), unit)
			return
		}
		fmt.Fprintf(&b, "| %s | %s%s | ≤ %s%s | %s |\n", name, trim(v), unit, trim(bound), unit, met)
	}
	ratio := func(scenario, variant, peer string, f func(r *row) float64) (float64, bool) {
		s, p := find(scenario, variant, "sluice"), find(scenario, variant, peer)
		if s == nil || p == nil || f(p) == 0 {
			return 0, false
		}
		return f(s) / f(p), true
	}
	cpuReq := func(r *row) float64 { return r.cpuReq }
	cpuEvt := func(r *row) float64 { return r.cpuEvt }

	v, ok := ratio("a", "", "nginx", cpuReq)
	check("a. small body CPU/request vs plain nginx", v, 2.0, "×", ok)
	v, ok = ratio("a", "", "nginx-lua", cpuReq)
	check("a. small body CPU/request vs nginx+Lua", v, 0.6, "×", ok)
	v, ok = ratio("b", "", "nginx", cpuReq)
	check("b. 100 KB streamed CPU/request vs plain nginx", v, 1.5, "×", ok)
	for _, n := range strings.Split(*streams, ",") {
		v, ok = ratio("c", n, "nginx", cpuEvt)
		check("c. CPU per stream event vs plain nginx, "+n+" streams", v, 1.5, "×", ok)
	}
	for _, n := range strings.Split(*streams, ",") {
		if r := find("c", n, "sluice"); r != nil {
			check("c. RSS per open stream, 100 KB prompts, "+n+" streams", r.perStream, 48, " KiB", r.perStream > 0)
		}
	}
	s100, s400 := find("f2", "100000", "sluice"), find("f2", "400000", "sluice")
	if s100 != nil && s400 != nil && s100.perStream > 0 {
		check("f2. RSS per open stream, 400 KB over 100 KB prompts", s400.perStream/s100.perStream, 1.1, "×", true)
	}
	for _, rate := range []string{"500", "1000", "2000"} {
		s, d := find("d", rate, "sluice"), find("d", rate, "direct")
		if s == nil || d == nil {
			continue
		}
		check("d. p99 over direct at "+rate+" req/s", s.p99-d.p99, 5, " ms", s.errors == 0)
		if s.errors > 0 {
			fmt.Fprintf(&b, "| d. errors at %s req/s | %.0f | 0 | no |\n", rate, s.errors)
		}
	}
	// Over TLS (issue 32). A handshake rate at least some ratio of
	// nginx's is a CPU per request at most its inverse.
	if v, ok = ratio("ta", "", "nginx", cpuReq); ok {
		check("ta. small body over TLS, CPU/request vs plain nginx over TLS", v, 1.3, "×", ok)
	}
	if v, ok = ratio("th", "", "nginx", cpuReq); ok {
		atLeast(&b, "th. full handshakes/s on one core vs nginx", 1/v, 0.8, "×")
	}
	if v, ok = ratio("tr", "", "nginx", cpuReq); ok {
		atLeast(&b, "tr. resumed handshakes/s on one core vs nginx", 1/v, 1.0, "×")
	}
	if r := find("tr", "", "sluice"); r != nil {
		atLeast(&b, "tr. answers on a resumed session, sluice", r.resumedPct, 99, "%")
	}
	for _, n := range strings.Split(*streams, ",") {
		t, p := find("tc", n, "sluice"), find("c", n, "sluice")
		if t != nil && p != nil && p.perStream > 0 {
			check("tc. RSS per open TLS stream over plain, "+n+" streams", t.perStream/p.perStream, 1.5, "×", true)
		}
		if t != nil {
			if v, ok := ratio("tc", n, "nginx", func(r *row) float64 { return r.perStream }); ok {
				check("tc. RSS per open TLS stream vs nginx over TLS, "+n+" streams", v, 1.0, "×", true)
			}
		}
	}
	// Scenario apis: the newer APIs' requests cost about what the same
	// chat request costs (issue 19).
	for _, s := range []string{"apis", "apis-rate"} {
		chat := find(s, "chat", "sluice")
		if chat == nil || chat.cpuReq == 0 {
			continue
		}
		for _, api := range apiVariants[1:] {
			if r := find(s, api, "sluice"); r != nil {
				check(s+". "+api+" CPU/request over chat, 100 KB streamed", r.cpuReq/chat.cpuReq, 1.1, "×", true)
			}
		}
	}
	// Against a -baseline build in the same run: no regression (within
	// the 5% that runs of one build move by).
	at := ""
	if *baseline != "" {
		at = " (-baseline " + *baseline + ")"
	}
	for _, s := range []string{"a", "b"} {
		if v, ok := ratio(s, "", "sluice-base", cpuReq); ok {
			check(s+". CPU/request vs sluice-base"+at, v, 1.05, "×", true)
		}
	}
	// Issue 33: the governance configured (sluice-gov) against none, one
	// build, one run.
	for _, sc := range []string{"a", "b"} {
		gov, plain := find(sc, "", "sluice-gov"), find(sc, "", "sluice")
		if gov != nil && plain != nil && plain.cpuReq > 0 {
			check(sc+". CPU/request with a quota, a budget, a price and a fallback vs without", gov.cpuReq/plain.cpuReq, 1.05, "×", true)
		}
	}
	if g := find("g", "*", "sluice"); g != nil {
		check("g. idle RSS, supervisor + one worker", g.rssIdle/1024, 16, " MiB", true)
		check("g. start to first served request", g.startMs, 150, " ms", true)
	}
	return b.String()
}

// atLeast writes a target row whose bound is a floor.
func atLeast(b *strings.Builder, name string, v, bound float64, unit string) {
	met := "no"
	if v >= bound {
		met = "yes"
	}
	fmt.Fprintf(b, "| %s | %s%s | ≥ %s%s | %s |\n", name, trim(v), unit, trim(bound), unit, met)
}

// trim formats v with as few decimals as say it.
func trim(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
