package main

import (
	"fmt"
	"log"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

type scenario struct {
	title string
	run   func() []Measurement
}

var scenarios = map[string]scenario{
	"a": {"small body, non-streaming, closed loop (64 connections)", func() []Measurement {
		return eachProxy("", func(r *running) Measurement {
			return runDriver(r.name, r.pid(), r.url, "-conns", "64", "-duration", dur.String(), "-prompt", "200", "-tokens", "8")
		})
	}},
	"b": {"100 KB prompt, short streamed answer (10 events), closed loop (64 connections)", func() []Measurement {
		return eachProxy("", func(r *running) Measurement {
			return runDriver(r.name, r.pid(), r.url, "-conns", "64", "-duration", dur.String(), "-prompt", "100000", "-stream", "-tokens", "10")
		})
	}},
	"c": {"open streams: N streams of 100 events at 50/s, 100 KB prompts, started over 2 s", func() []Measurement {
		// Each stream lasts ~2 s; the run keeps N open for the whole duration.
		var all []Measurement
		for _, n := range splitInts(*streams) {
			all = append(all, eachProxy(fmt.Sprint(n), func(r *running) Measurement {
				return openStreams(r, n, 100_000)
			})...)
		}
		return all
	}},
	"d": {"open loop, 300 ms upstream, at 500, 1000 and 2000 req/s", func() []Measurement {
		var all []Measurement
		for _, rate := range []int{500, 1000, 2000} {
			all = append(all, eachProxy(fmt.Sprint(rate), func(r *running) Measurement {
				return runDriver(r.name, r.pid(), r.url, "-rate", fmt.Sprint(rate), "-duration", dur.String(),
					"-prompt", "200", "-tokens", "8", "-delay", "300ms")
			})...)
		}
		return all
	}},
	"e": {"one request at a time: added latency", func() []Measurement {
		return eachProxy("", func(r *running) Measurement {
			return runDriver(r.name, r.pid(), r.url, "-conns", "1", "-duration", dur.String(), "-prompt", "200", "-tokens", "8")
		})
	}},
	"f": {"prompt-size sweep: CPU per request (16 connections, 10-event streams)", func() []Measurement {
		var all []Measurement
		for _, size := range []int{1_000, 10_000, 100_000, 400_000, 1_000_000} {
			all = append(all, eachProxy(fmt.Sprint(size), func(r *running) Measurement {
				return runDriver(r.name, r.pid(), r.url, "-conns", "16", "-duration", dur.String(),
					"-prompt", fmt.Sprint(size), "-stream", "-tokens", "10")
			})...)
		}
		return all
	}},
	"f2": {"prompt-size sweep: RSS per open stream (-f2-streams streams, 500 by default, of 100 events at 50/s, started over 2 s)", func() []Measurement {
		var all []Measurement
		for _, size := range splitInts(*sizes) {
			all = append(all, eachProxy(fmt.Sprint(size), func(r *running) Measurement {
				return openStreams(r, *f2Open, size)
			})...)
		}
		return all
	}},
	"g": {"idle RSS and time from start to the first served request", startup},
	// Over TLS (bench/rig/tls.go): each proxy's https listener, the same
	// ECDSA P-256 certificate, X25519 (the driver offers it alone).
	"ta": {"scenario a over TLS: small body, non-streaming, keep-alive, closed loop (64 connections)", func() []Measurement {
		return eachProxyVariant([]string{""}, servesTLS, func(r *running, _ string) Measurement {
			return runDriver(r.name, r.pid(), r.tlsURL, append(tlsArgs(), "-conns", "64", "-duration", dur.String(), "-prompt", "200", "-tokens", "8")...)
		})
	}},
	// A handshake per request: the proxy's CPU per request is a full
	// handshake plus scenario a's request; one core's handshake rate is
	// 1 s over it. The driver's own side of each handshake shares its core
	// with the backend, so the achieved rate is the harness's, not the
	// proxy's, which is why the capacity is read from CPU.
	"th": {"full TLS handshakes: a new connection per request, no resumption, small body, closed loop (32 connections)", func() []Measurement {
		return eachProxyVariant([]string{""}, servesTLS, func(r *running, _ string) Measurement {
			return runDriver(r.name, r.pid(), r.tlsURL, append(tlsArgs(), "-new-conn", "-conns", "32", "-duration", dur.String(), "-prompt", "200", "-tokens", "8")...)
		})
	}},
	"tr": {"resumed TLS handshakes: as th, with a session cache (tickets)", func() []Measurement {
		return eachProxyVariant([]string{""}, servesTLS, func(r *running, _ string) Measurement {
			return runDriver(r.name, r.pid(), r.tlsURL, append(tlsArgs(), "-new-conn", "-resume", "-conns", "32", "-duration", dur.String(), "-prompt", "200", "-tokens", "8")...)
		})
	}},
	"tc": {"scenario c over TLS: N open streams of 100 events at 50/s, 100 KB prompts, started over 2 s", func() []Measurement {
		var all []Measurement
		for _, n := range splitInts(*streams) {
			all = append(all, eachProxyVariant([]string{fmt.Sprint(n)}, servesTLS, func(r *running, _ string) Measurement {
				m := runDriver(r.name, r.pid(), r.tlsURL, append(tlsArgs(), "-conns", fmt.Sprint(n), "-duration", dur.String(),
					"-prompt", "100000", "-stream", "-tokens", "100", "-interval", "20ms", "-ramp", "2s")...)
				m.OpenStreams = n
				return m
			})...)
		}
		return all
	}},
	"apis": {"the same 100 KB prompt and 10-token streamed answer as chat completions, Responses and Messages, closed loop (64 connections); sluice only", func() []Measurement {
		return eachProxyVariant(apiVariants, servesAPI, func(r *running, api string) Measurement {
			return runDriver(r.name, r.pid(), r.url, "-api", api, "-conns", "64", "-duration", dur.String(), "-prompt", "100000", "-stream", "-tokens", "10")
		})
	}},
	// Closed loop, each API runs as fast as the harness serves it, and the
	// harness (driver and fake on one core) serves Responses' larger events
	// at about half chat's rate: the proxy then idles more between
	// requests, which alone raises CPU per request. At one rate for all,
	// the three compare at the same load.
	"apis-rate": {"the same as apis, open loop at one rate for the three APIs (-api-rate)", func() []Measurement {
		return eachProxyVariant(apiVariants, servesAPI, func(r *running, api string) Measurement {
			return runDriver(r.name, r.pid(), r.url, "-api", api, "-rate", fmt.Sprint(*apiRate), "-duration", dur.String(), "-prompt", "100000", "-stream", "-tokens", "10")
		})
	}},
}

// apiVariants are the APIs of scenario apis, chat first: the others'
// ratios are to it.
var apiVariants = []string{"chat", "responses", "messages"}

// servesAPI says whether proxy r is measured on api in scenario apis:
// sluice only (the nginx peers do none of the newer APIs' work), and only
// where it answers it (a -baseline before the Responses and Messages APIs
// serves chat alone). The probe is the warm-up of that path.
func servesAPI(r *running, api string) bool {
	if r.name != "sluice" && r.name != "sluice-base" {
		return false
	}
	out, err := exec.Command(filepath.Join(binDir, "driver"), "-url", r.url, "-api", api, "-conns", "8", "-duration", "1s",
		"-prompt", "100000", "-stream", "-tokens", "10").Output()
	if err != nil || !strings.Contains(string(out), `"errors":0`) || strings.Contains(string(out), `"ok":0`) {
		log.Printf("  %-9s does not serve %s: skipped (%v %.200s)", r.name, api, err, out)
		return false
	}
	return true
}

// openStreams keeps n streams open (100 events at 50/s, each ~2 s, the n
// started evenly over the first 2 s) with prompts of size bytes.
func openStreams(r *running, n, size int) Measurement {
	m := runDriver(r.name, r.pid(), r.url, "-conns", fmt.Sprint(n), "-duration", dur.String(),
		"-prompt", fmt.Sprint(size), "-stream", "-tokens", "100", "-interval", "20ms", "-ramp", "2s")
	m.OpenStreams = n
	return m
}

func splitInts(list string) []int {
	var out []int
	for _, f := range strings.Split(list, ",") {
		var n int
		if _, err := fmt.Sscan(f, &n); err != nil || n <= 0 {
			fatalf("%q: not a list of positive numbers", list)
		}
		out = append(out, n)
	}
	return out
}

// eachProxy runs measure *runs times against every selected proxy, each
// started fresh for the scenario. All of them are started first and the
// runs alternate (run 1 of each proxy, then run 2 of each, …): these VMs
// drift by 10–20% over minutes, and a ratio between two proxies measured
// minutes apart carried that drift. An idle proxy waits in epoll_wait on
// the shared core and costs the one being measured nothing.
func eachProxy(variant string, measure func(r *running) Measurement) []Measurement {
	return eachProxyVariant([]string{variant}, nil, func(r *running, _ string) Measurement { return measure(r) })
}

// eachProxyVariant is eachProxy over several variants, alternated with the
// proxies (run 1 of each variant on each proxy, then run 2, …), measuring
// a proxy on a variant only where serves says so (nil: everywhere).
func eachProxyVariant(variants []string, serves func(r *running, variant string) bool, measure func(r *running, variant string) Measurement) []Measurement {
	var all []*running
	for _, name := range strings.Split(*proxies, ",") {
		r := startProxy(name)
		warm(r)
		all = append(all, r)
	}
	type pair struct {
		r       *running
		variant string
	}
	var pairs []pair
	for _, v := range variants {
		for _, r := range all {
			if serves == nil || serves(r, v) {
				pairs = append(pairs, pair{r, v})
			}
		}
	}
	var out []Measurement
	for i := 0; i < *runs; i++ {
		for _, p := range pairs {
			current.variant = p.variant
			m := measure(p.r, p.variant)
			m.Variant, m.Run, m.Alternated = p.variant, i, true
			out = append(out, m)
		}
	}
	for _, r := range all {
		r.stop()
	}
	return out
}

// startup measures, for each proxy, the idle RSS of all its processes and
// the time from exec to the first request answered correctly.
func startup() []Measurement {
	var out []Measurement
	for _, name := range strings.Split(*proxies, ",") {
		if name == "direct" {
			continue
		}
		for i := 0; i < *runs; i++ {
			t0 := time.Now()
			r := startProxyNoWait(name)
			first := awaitFirstAnswer(r.url)
			m := Measurement{Proxy: name, Run: i, StartToFirstMs: float64(first.Sub(t0).Microseconds()) / 1000}
			time.Sleep(time.Second) // idle: let start-up garbage be collected
			m.RSSIdleKiB, m.PSSIdleKiB = rssKiB(r.pid()), pssKiB(r.pid())
			log.Printf("  %-9s start→first %.1f ms, idle RSS %d KiB, PSS %d KiB", name, m.StartToFirstMs, m.RSSIdleKiB, m.PSSIdleKiB)
			r.stop()
			out = append(out, m)
		}
	}
	return out
}

func startProxyNoWait(name string) *running {
	portFree(proxyAddr(name))
	portFree(proxyTLSAddrs[name])
	makeCerts()
	r := &running{name: name, url: "http://" + proxyAddr(name), tlsURL: "https://" + proxyTLSAddrs[name]}
	dir := mustTemp(name)
	r.dir = dir
	switch name {
	case "sluice", "sluice-base", "sluice-gov":
		if *profileDir != "" && name == "sluice" {
			os.Setenv("SLUICE_PPROF_ADDR", pprofAddr) // inherited by its workers
		}
		bin := filepath.Join(binDir, name)
		if name == "sluice-gov" {
			bin = filepath.Join(binDir, "sluice") // the same build, another configuration
		}
		cfg := writeSluiceConfig(name, dir, true)
		// A -baseline from before sluice's TLS refuses the listen list:
		// it runs plain, and the TLS scenarios leave it out.
		if err := exec.Command(bin, "check", "-c", cfg).Run(); err != nil {
			log.Printf("  %s: no TLS listener (its check refuses one: %v); plain only", name, err)
			cfg, r.tlsURL = writeSluiceConfig(name, dir, false), ""
		}
		r.cmd = startBackground(name, proxyCPU, bin, "serve", "-c", cfg)
	case "nginx", "nginx-lua":
		installPeers()
		r.cmd = startBackground(name, proxyCPU, "nginx", "-p", dir, "-c", renderNginx(name, dir), "-e", filepath.Join(dir, "error.log"))
	default:
		fatalf("unknown proxy %q", name)
	}
	return r
}

// awaitFirstAnswer polls with a real request until one is answered 200.
func awaitFirstAnswer(url string) time.Time {
	body := `{"model":"bench","messages":[{"role":"user","content":"hi"}],"max_tokens":1}`
	end := time.Now().Add(30 * time.Second)
	for time.Now().Before(end) {
		req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+benchKey)
		res, err := http.DefaultTransport.RoundTrip(req)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return time.Now()
			}
		}
		time.Sleep(time.Millisecond)
	}
	fatalf("no answer from %s within 30 s", url)
	return time.Time{}
}
