// Package meter is sluice's request and token counters and latency
// histograms: what they are (names, help, labels, buckets), how a worker
// records into the shared region's meter (shm/meter.go), and how the
// supervisor reads them for /metrics. The counts live in the region, a
// column per worker, so one scrape is exact across workers and a dead
// worker's counts are kept.
//
// A series is named in the region by its descriptor: the metric's name and
// its label values, separated by NUL bytes. Descriptors, not numbers, so
// that binaries of different versions that share a region through an
// upgrade agree on what a series is.
package meter

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/zeebo/xxh3"

	"github.com/sluice-gw/sluice/shm"
)

// Kind is what a metric is.
type Kind uint8

const (
	// Counter is a count that only grows: one row.
	Counter Kind = iota
	// Histogram is a distribution of durations: HistogramRows rows.
	Histogram
)

// Metric describes one metric family.
type Metric struct {
	Name   string
	Help   string
	Labels []string
	Kind   Kind
}

// The metrics. Label values are bounded: models and keys by their
// configured names (UnknownModel, NoKey otherwise), codes by the gateway's
// error codes, backends by configured URLs.
var (
	Requests = &Metric{"sluice_requests_total",
		"Requests by model, key and outcome: code is the usage line's error code, or ok.",
		[]string{"model", "key", "code"}, Counter}
	Tokens = &Metric{"sluice_tokens_total",
		"Tokens by model, key and kind (prompt, completion, cached: prompt tokens served from the prefix cache), as the backends reported them.",
		[]string{"model", "key", "kind"}, Counter}
	TimeToFirstToken = &Metric{"sluice_time_to_first_token_seconds",
		"Time from a streamed request's arrival to its first content event, by model.",
		[]string{"model"}, Histogram}
	RequestDuration = &Metric{"sluice_request_duration_seconds",
		"Time from a request's arrival to its end (the last byte to the client, or its refusal), by model.",
		[]string{"model"}, Histogram}
	QueueWait = &Metric{"sluice_queue_wait_seconds",
		"Time requests that waited for a slot spent in the model's queue.",
		[]string{"model"}, Histogram}
	UpstreamHeaders = &Metric{"sluice_upstream_headers_seconds",
		"Time from an attempt's start to the backend's response headers, by backend.",
		[]string{"model", "backend"}, Histogram}
	Attempts = &Metric{"sluice_backend_attempts_total",
		"Requests sent to a backend: every attempt, first or retry.",
		[]string{"model", "backend"}, Counter}
	Retries = &Metric{"sluice_backend_retries_total",
		"Attempts on a backend that were a request's retry (not its first).",
		[]string{"model", "backend"}, Counter}
	Failures = &Metric{"sluice_backend_failures_total",
		"Failed attempts on a backend by kind: connect (no connection or no answer), status (an answer of 429 or 5xx), first_token (first_token_deadline passed), timeout (the gateway's own timeout), broken (the answer broke off).",
		[]string{"model", "backend", "kind"}, Counter}
	Ejections = &Metric{"sluice_backend_ejections_total",
		"Times a backend was taken out of rotation after a failed attempt (passive health).",
		[]string{"model", "backend"}, Counter}
	TLSHandshakes = &Metric{"sluice_tls_handshakes_total",
		"Completed TLS handshakes by listener, TLS version and whether the session was resumed (a session ticket).",
		[]string{"listener", "version", "resumed"}, Counter}
	TLSHandshakeFailures = &Metric{"sluice_tls_handshake_failures_total",
		"Failed TLS handshakes by listener and reason: timeout (client_header_timeout), closed (the client left), plain_http (answered 400), not_tls, client_certificate (none, or one that does not verify), protocol (versions, ciphers, alerts).",
		[]string{"listener", "reason"}, Counter}
	Fallbacks = &Metric{"sluice_model_fallbacks_total",
		"Requests sent on to a fallback model (models[].fallbacks, context_fallbacks) by the model that could not serve them, the fallback, and why: unavailable (no backend in rotation), queue_full, queue_timeout, unreachable (no connection or answer on any attempt), upstream_status (429 or 5xx on every attempt), context_length (a 400: longer than the model's context).",
		[]string{"from", "to", "reason"}, Counter}
	// Overflow counts recordings that found no room in the meter.
	Overflow = &Metric{"sluice_metrics_overflow_total",
		"Recordings dropped because the meter had no room for their series (or a label value past its limit): raise nothing, report it.",
		nil, Counter}
)

// Metrics lists every metric, for the supervisor's collector.
var Metrics = []*Metric{Requests, Tokens, TimeToFirstToken, RequestDuration, QueueWait, UpstreamHeaders,
	Attempts, Retries, Failures, Ejections, TLSHandshakes, TLSHandshakeFailures, Fallbacks, Overflow}

// Label values for what is not configured.
const (
	// UnknownModel is the model label of a request whose model is not
	// configured (or that names none): one label, however many strings.
	UnknownModel = "unknown"
	// NoKey is the key label of a request without a valid key.
	NoKey = "none"
)

// Buckets are the histograms' upper bounds, in seconds: from a few
// milliseconds (a queue's hand-over, a cached first token) to ten minutes
// (a long generation).
var Buckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}

// bucketNanos are Buckets in nanoseconds, for the recording side.
var bucketNanos = func() []int64 {
	out := make([]int64, len(Buckets))
	for i, b := range Buckets {
		out[i] = int64(b * 1e9)
	}
	return out
}()

// HistogramRows is a histogram's rows: one count per bucket (not
// cumulative), one for +Inf, and the sum in nanoseconds.
var HistogramRows = len(Buckets) + 2

// rows is the rows a series of m takes.
func (m *Metric) rows() int {
	if m.Kind == Histogram {
		return HistogramRows
	}
	return 1
}

// labelMax bounds one label value in a descriptor; a longer value is cut
// (at a rune boundary) and ends in "~" and 8 hex digits of its whole
// value's hash, so that a long configured name still has a series, and
// two that differ only past the cut keep two.
const labelMax = 64

// labelHashLen is the length of the "~xxxxxxxx" a cut value ends in.
const labelHashLen = 9

// Descriptor names a series of m with the label values (in m.Labels'
// order).
func Descriptor(m *Metric, values ...string) string {
	var b strings.Builder
	b.WriteString(m.Name)
	for _, v := range values {
		b.WriteByte(0)
		if len(v) > labelMax {
			cut := labelMax - labelHashLen
			for cut > 0 && !utf8.RuneStart(v[cut]) {
				cut--
			}
			fmt.Fprintf(&b, "%s~%08x", v[:cut], uint32(xxh3.HashString(v)))
			continue
		}
		b.WriteString(v)
	}
	return b.String()
}

// Parse splits a descriptor into its metric name and label values.
func Parse(desc string) (name string, values []string) {
	parts := strings.Split(desc, "\x00")
	return parts[0], parts[1:]
}

// ByName finds a metric by name (nil: not one this binary knows, such as
// one a newer binary sharing the region records).
func ByName(name string) *Metric {
	for _, m := range Metrics {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// Recorder is a worker's handle on the region's meter: it resolves series
// to the worker's own words. Resolving takes a hash and a probe of the
// shared index; callers keep what it returns.
type Recorder struct {
	region   *shm.Region
	col      int
	overflow []int64 // the worker's word of Overflow; nil without room
}

// NewRecorder records into region's meter as worker column col.
func NewRecorder(region *shm.Region, col int) *Recorder {
	r := &Recorder{region: region, col: col}
	if row, ok := region.MeterSeries(Descriptor(Overflow), 1); ok {
		r.overflow = region.MeterWords(col, row, 1)
	}
	return r
}

// CounterWord is a worker's word of a counter series, or of the overflow
// counter for a series the meter had no room for (which then counts
// recordings, not what they would have added); the zero value counts
// nowhere.
type CounterWord struct {
	p        *int64
	overflow bool
}

// Add adds n to the counter (1 to the overflow counter).
func (c CounterWord) Add(n int64) {
	switch {
	case c.p == nil:
	case c.overflow:
		atomic.AddInt64(c.p, 1)
	default:
		atomic.AddInt64(c.p, n)
	}
}

// Counter resolves the counter series of m with the given label values.
func (r *Recorder) Counter(m *Metric, values ...string) CounterWord {
	if w := r.words(m, values); w != nil {
		return CounterWord{p: &w[0]}
	}
	return r.overflowWord()
}

func (r *Recorder) overflowWord() CounterWord {
	if r.overflow != nil {
		return CounterWord{&r.overflow[0], true}
	}
	return CounterWord{}
}

// HistogramWords is a worker's words of a histogram series; without them
// (no room in the meter) an observation counts in the overflow counter.
type HistogramWords struct {
	w    []int64
	over CounterWord
}

// Observe records one duration.
func (h HistogramWords) Observe(d time.Duration) {
	if h.w == nil {
		h.over.Add(1)
		return
	}
	ns := max(int64(d), 0)
	i := 0
	for i < len(bucketNanos) && ns > bucketNanos[i] {
		i++
	}
	atomic.AddInt64(&h.w[i], 1)
	atomic.AddInt64(&h.w[len(h.w)-1], ns)
}

// Histogram resolves the histogram series of m with the given label values.
func (r *Recorder) Histogram(m *Metric, values ...string) HistogramWords {
	if w := r.words(m, values); w != nil {
		return HistogramWords{w: w}
	}
	return HistogramWords{over: r.overflowWord()}
}

func (r *Recorder) words(m *Metric, values []string) []int64 {
	n := m.rows()
	row, ok := r.region.MeterSeries(Descriptor(m, values...), n)
	if !ok {
		return nil
	}
	return r.region.MeterWords(r.col, row, n)
}
