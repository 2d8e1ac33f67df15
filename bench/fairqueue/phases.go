package main

import (
	"context"
	"fmt"
	"log"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// backlog runs loops closed client loops for each key in keys (each sends
// its next request, with the fake's headers hdr gives, once its last is
// answered) until stop is called, which waits for them to end. errs counts
// failed requests before stop.
func (g *gateway) backlog(keys []string, loops int, hdr func() map[string]string) (stop func(), errs *atomic.Int64) {
	ctx, cancel := context.WithCancel(context.Background())
	errs = new(atomic.Int64)
	var wg sync.WaitGroup
	for _, key := range keys {
		for range loops {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					if _, err := g.sendCtx(ctx, g.backlogTr, key, "", hdr()); err != nil && ctx.Err() == nil {
						if errs.Add(1) <= 3 {
							log.Printf("%s: %v", key, err)
						}
						time.Sleep(10 * time.Millisecond)
					}
				}
			}()
		}
	}
	return func() { cancel(); wg.Wait() }, errs
}

// sample is one look at the slots while a phase runs.
type sample struct {
	depth    float64 // sluice_queue_depth
	inflight float64 // sluice_backend_inflight: slots sluice holds
	running  int     // the fake's requests being answered, read just before the scrape
}

// sampler reads the fake's Running and the admin /metrics every interval
// until stop is closed.
func (g *gateway) sampler(every time.Duration, stop <-chan struct{}) <-chan []sample {
	out := make(chan []sample, 1)
	go func() {
		var ss []sample
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-stop:
				out <- ss
				return
			case <-t.C:
			}
			s := sample{running: g.be.Running(), depth: -1}
			for k, v := range g.scrape("sluice_queue_depth", "sluice_backend_inflight") {
				switch {
				case strings.HasPrefix(k, "sluice_queue_depth"):
					s.depth = v
				case strings.HasPrefix(k, "sluice_backend_inflight"):
					s.inflight += v
				}
			}
			if s.depth >= 0 {
				ss = append(ss, s)
			}
		}
	}()
	return out
}

// lightResult is what a light key (one request at a time) saw behind a
// backlog.
type lightResult struct {
	label        string // how the report names the run
	backlogKeys  []string
	lightKey     string
	loops        int // backlog loops, all keys together
	service      time.Duration
	jitter       bool          // the backlog's service times drawn from service × [0.5, 1.5)
	window       time.Duration // the light key's loop
	depthAtStart float64
	clientWait   []float64 // ms: latency minus the service time
	ahead        []float64 // backend arrivals between its send and its arrival
	lightErrors  int
	backlogErrs  int64
	lightUsage   []usageLine // the light key's answered lines
	backlogUsage []usageLine // the backlog's answered lines started in the first part of the window (all finished)
	handoff      []float64   // µs, every queued answered request of the phase
	samples      []sample
	arrivals     int // backend arrivals in the window
	// The workers' read and write system calls in the window.
	sysReads, sysWrites int64
}

// lightPhase keeps loops requests of backlogKeys (split evenly) going with
// the given service time (with jitter: drawn uniformly from half to one and
// a half times it, a request at a time) while lightKey sends one request
// at a time, each of the given service time, for dur (at most maxN
// requests, 0: no limit).
//
// With a fixed service time a closed-loop backlog stays in step: the 16
// requests that took the slots together at the start end together 200 ms
// later, and so do the ones after them, so slots are freed in bursts, not
// one every service/16; jitter spreads the releases out.
func (g *gateway) lightPhase(label string, backlogKeys []string, lightKey string, loops int, service time.Duration, jitter bool, dur time.Duration, maxN int, every time.Duration) lightResult {
	r := lightResult{label: label, backlogKeys: backlogKeys, lightKey: lightKey, loops: loops, service: service, jitter: jitter}
	ms := int(service / time.Millisecond)
	hdr := map[string]string{"X-Fake-Delay-Ms": strconv.Itoa(ms), "X-Fake-Tokens": "4"}
	backlogHdr := func() map[string]string {
		if !jitter {
			return hdr
		}
		return map[string]string{"X-Fake-Delay-Ms": strconv.Itoa(ms/2 + rand.IntN(ms+1)), "X-Fake-Tokens": "4"}
	}
	phaseStart := time.Now()
	stop, errs := g.backlog(backlogKeys, loops/len(backlogKeys), backlogHdr)
	want := float64(loops - slots - 8)
	end := time.Now().Add(30 * time.Second)
	for g.depth() < want {
		if time.Now().After(end) {
			log.Fatalf("%s: the backlog did not build (depth %v, want %v)", label, g.depth(), want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(time.Second)
	r.depthAtStart = g.depth()
	stopSampling := make(chan struct{})
	sampled := g.sampler(every, stopSampling)
	t0, n0 := time.Now(), len(g.be.Received())
	r0, w0 := g.syscalls()
	for i := 0; time.Since(t0) < dur && (maxN == 0 || i < maxN); i++ {
		id := fmt.Sprintf("%s-%d", lightKey, i)
		before := len(g.be.Received())
		took, err := g.send(g.light, lightKey, id, hdr)
		if err != nil {
			r.lightErrors++
			log.Printf("%s: %s: %v", label, lightKey, err)
			continue
		}
		rec := g.be.Received()
		for j := before; j < len(rec); j++ {
			if rec[j].Header.Get("X-Bench-Id") == id {
				r.ahead = append(r.ahead, float64(j-before))
				break
			}
		}
		r.clientWait = append(r.clientWait, float64(took-service)/1e6)
	}
	r.window = time.Since(t0)
	r.arrivals = len(g.be.Received()) - n0
	r1, w1 := g.syscalls()
	r.sysReads, r.sysWrites = r1-r0, w1-w0
	close(stopSampling)
	r.samples = <-sampled
	t1 := time.Now()
	stop()
	r.backlogErrs = errs.Load()
	g.drain()
	// What the usage log says: the light key's lines, the backlog's that
	// started early enough in the window to have finished, and every
	// queued request's hand-off.
	settle := 2 * service * time.Duration(loops) / slots
	for _, u := range g.usageLines() {
		if u.Time.Before(phaseStart) || u.Status != 200 {
			continue
		}
		switch {
		case u.Key == lightKey:
			r.lightUsage = append(r.lightUsage, u)
		case slices.Contains(backlogKeys, u.Key) && !u.Time.Before(t0) && u.Time.Before(t1.Add(-settle)):
			r.backlogUsage = append(r.backlogUsage, u)
		}
		if u.Queued && u.Time.Before(t1) {
			r.handoff = append(r.handoff, float64(u.HandoffUs))
		}
	}
	return r
}

// shareResult is two keys' token throughput while both kept the queue full.
type shareResult struct {
	label      string
	keys       [2]string
	weights    [2]string
	tokens     [2]int // answer tokens (X-Fake-Tokens)
	service    time.Duration
	window     time.Duration
	reqs, toks [2]int
	minDepth   [2]float64 // each key's least sluice_key_queue_depth over the window's samples
}

// share runs loops closed loops per key, answers of tokens[i] tokens after
// service, and counts what the backend received of each key over dur
// after warm: prompt (the fake's count: body bytes/4) and answer tokens.
func (g *gateway) share(label string, keys, weights [2]string, tokens [2]int, loops int, service, warm, dur time.Duration) shareResult {
	r := shareResult{label: label, keys: keys, weights: weights, tokens: tokens, service: service, minDepth: [2]float64{1e9, 1e9}}
	var stops []func()
	for i, k := range keys {
		hdr := map[string]string{"X-Fake-Tokens": strconv.Itoa(tokens[i]), "X-Fake-Delay-Ms": strconv.Itoa(int(service / time.Millisecond))}
		stop, _ := g.backlog([]string{k}, loops, func() map[string]string { return hdr })
		stops = append(stops, stop)
	}
	time.Sleep(warm)
	t0, n0 := time.Now(), len(g.be.Received())
	for time.Since(t0) < dur {
		time.Sleep(250 * time.Millisecond)
		m := g.scrape("sluice_key_queue_depth")
		for i, k := range keys {
			r.minDepth[i] = min(r.minDepth[i], m[`sluice_key_queue_depth{key="`+k+`"}`])
		}
	}
	rec := g.be.Received()
	r.window = time.Since(t0)
	for _, stop := range stops {
		stop()
	}
	for _, x := range rec[n0:] {
		for i, k := range keys {
			if x.Header.Get("X-Test-Key") == k {
				completion, _ := strconv.Atoi(x.Header.Get("X-Fake-Tokens"))
				r.reqs[i]++
				r.toks[i] += x.BodyLen/4 + completion // as the fake counts them in its usage
			}
		}
	}
	g.drain()
	return r
}
