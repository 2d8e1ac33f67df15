package proxy

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/sluice-gw/sluice/meter"
	"github.com/sluice-gw/sluice/proxy/usage"
)

// The counters and histograms of /metrics, recorded into the shared
// region's meter (package meter): a request's outcome, tokens and times
// once, when it ends (finish), and each attempt's backend figures in
// attempt. Series are resolved once per worker and kept — per model and
// key pair, per error code, per backend of a route table — so recording
// is a map load and a few atomic adds to this worker's own words.

// requestMeter is a worker's recorder and its resolved series.
type requestMeter struct {
	rec   *meter.Recorder
	pairs sync.Map // pairKey → *pairSeries
	codes sync.Map // codeKey → meter.CounterWord
	falls sync.Map // fallbackKey → meter.CounterWord
}

// fallbackKey names a fallbacks series.
type fallbackKey struct{ from, to, reason string }

// meterFallback counts a request sent on from model from to model to.
func (rm *requestMeter) meterFallback(from, to, reason string) {
	if rm == nil {
		return
	}
	k := fallbackKey{from, to, reason}
	w, ok := rm.falls.Load(k)
	if !ok {
		w, _ = rm.falls.LoadOrStore(k, rm.rec.Counter(meter.Fallbacks, from, to, reason))
	}
	w.(meter.CounterWord).Add(1)
}

func newRequestMeter(rec *meter.Recorder) *requestMeter { return &requestMeter{rec: rec} }

// pairKey names the series of a model (its label) and a key (its label).
type pairKey struct{ model, key string }

// codeKey names a requests series of an outcome other than ok.
type codeKey struct{ model, key, code string }

// pairSeries are the series a request of a model and key records into.
type pairSeries struct {
	ok                         meter.CounterWord
	prompt, completion, cached meter.CounterWord
	ttft, duration, queue      meter.HistogramWords // the model's (every key's)
}

func (rm *requestMeter) pair(model, key string) *pairSeries {
	k := pairKey{model, key}
	if p, ok := rm.pairs.Load(k); ok {
		return p.(*pairSeries)
	}
	r := rm.rec
	p := &pairSeries{
		ok:         r.Counter(meter.Requests, model, key, "ok"),
		prompt:     r.Counter(meter.Tokens, model, key, "prompt"),
		completion: r.Counter(meter.Tokens, model, key, "completion"),
		cached:     r.Counter(meter.Tokens, model, key, "cached"),
		ttft:       r.Histogram(meter.TimeToFirstToken, model),
		duration:   r.Histogram(meter.RequestDuration, model),
		queue:      r.Histogram(meter.QueueWait, model),
	}
	got, _ := rm.pairs.LoadOrStore(k, p)
	return got.(*pairSeries)
}

func (rm *requestMeter) code(model, key, code string) meter.CounterWord {
	k := codeKey{model, key, code}
	if c, ok := rm.codes.Load(k); ok {
		return c.(meter.CounterWord)
	}
	c := rm.rec.Counter(meter.Requests, model, key, code)
	got, _ := rm.codes.LoadOrStore(k, c)
	return got.(meter.CounterWord)
}

// outcomeCode is a finished request's code label: the gateway's error
// code, else for a backend's answer of 400 or more relayed as it came
// "upstream_" and its status, else ok. A bounded set either way: the
// gateway's codes are its own constants, and statuses are three digits.
func outcomeCode(rec *usage.Record) string {
	switch {
	case rec.ErrCode != "":
		return rec.ErrCode
	case rec.Status >= http.StatusBadRequest && rec.Status <= 999:
		return "upstream_" + strconv.Itoa(rec.Status)
	}
	return "ok"
}

// record counts a finished request: its outcome, its tokens, its times.
// Its model and key are labelled by their configured names: a model the
// running configuration lacks (a client's string, or none) is
// meter.UnknownModel, a request without a valid key meter.NoKey.
func (rm *requestMeter) record(routes *routeTable, rec *usage.Record, end time.Time) {
	if rm == nil {
		return
	}
	model, key := rec.Model, rec.Key
	if routes == nil || routes.models[model] == nil {
		model = meter.UnknownModel
	}
	if key == "" {
		key = meter.NoKey
	}
	p := rm.pair(model, key)
	if code := outcomeCode(rec); code == "ok" {
		p.ok.Add(1)
	} else {
		rm.code(model, key, code).Add(1)
	}
	if u := rec.Usage; u.Found {
		p.prompt.Add(max(u.Prompt, 0))
		p.completion.Add(max(u.Completion, 0))
		p.cached.Add(max(u.Cached, 0))
	}
	if rec.TTFT > 0 {
		p.ttft.Observe(rec.TTFT)
	}
	p.duration.Observe(end.Sub(rec.Start))
	if rec.Queued {
		p.queue.Observe(rec.QueueWait)
	}
}

// backendSeries are the series of one backend of a model.
type backendSeries struct {
	attempts, retries, ejections meter.CounterWord
	headers                      meter.HistogramWords
	failures                     [numFailureKinds]meter.CounterWord
}

// failureKind is why an attempt failed, as sluice_backend_failures_total
// labels it.
type failureKind uint8

const (
	noFailure      failureKind = iota
	failConnect                // no connection, or no answer's head
	failStatus                 // an answer of 429 or 5xx
	failFirstToken             // first_token_deadline passed
	failTimeout                // the gateway's own timeout (total, stream idle)
	numFailureKinds
)

var failureNames = [numFailureKinds]string{"", "connect", "status", "first_token", "timeout"}

// series returns b's series under model, resolving them on first use (a
// backend route lives as long as its table: a reload resolves anew).
func (b *backendRoute) series(rm *requestMeter, model string) *backendSeries {
	if s := b.meter.Load(); s != nil {
		return s
	}
	r := rm.rec
	s := &backendSeries{
		attempts:  r.Counter(meter.Attempts, model, b.url),
		retries:   r.Counter(meter.Retries, model, b.url),
		ejections: r.Counter(meter.Ejections, model, b.url),
		headers:   r.Histogram(meter.UpstreamHeaders, model, b.url),
	}
	for k := failConnect; k < numFailureKinds; k++ {
		s.failures[k] = r.Counter(meter.Failures, model, b.url, failureNames[k])
	}
	b.meter.CompareAndSwap(nil, s)
	return b.meter.Load()
}

// failureOf is the kind of failure an attempt's result was: none when it
// answered with anything but 429 or 5xx, or when the client had gone.
func failureOf(r attemptResult) failureKind {
	switch {
	case r.clientGone:
		return noFailure
	case r.firstToken:
		return failFirstToken
	case r.timeout != nil:
		return failTimeout
	case r.err != nil:
		return failConnect
	case r.res != nil && retryableStatus(r.res.StatusCode):
		return failStatus
	}
	return noFailure
}

// meterAttempt counts one attempt on b: it was the n-th of its request,
// its answer's head took headers (0: none came), it failed as kind, and
// it took the backend out of rotation or not.
func (rm *requestMeter) meterAttempt(b *backendRoute, model string, n int, headers time.Duration, kind failureKind, ejected bool) {
	if rm == nil {
		return
	}
	s := b.series(rm, model)
	s.attempts.Add(1)
	if n > 0 {
		s.retries.Add(1)
	}
	if headers > 0 {
		s.headers.Observe(headers)
	}
	if kind != noFailure {
		s.failures[kind].Add(1)
	}
	if ejected {
		s.ejections.Add(1)
	}
}
