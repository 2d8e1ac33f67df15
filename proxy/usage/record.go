// Package usage is a request's usage record and its line: one JSON line
// per request, bounded to one write(2) to a pipe whatever a client or a
// backend sent, and the log the lines go to (a file, stdout, off, or a
// sink), reopened by SIGUSR1 and re-pointed by a reload. The pipeline
// (package proxy) fills the record in, phase by phase, and writes it when
// the request ends.
package usage

import (
	"time"

	"github.com/sluice-gw/sluice/proxy/sat"
	"github.com/sluice-gw/sluice/proxy/sse"
)

// Record is what the usage line says about one request, filled in by the
// pipeline's phases as the request goes: one field per field of the line
// (AppendLine writes them in order), flat as the line is: far more than
// the ~10 fields a type of sluice's has otherwise, on purpose.
type Record struct {
	RequestID string    // the gateway's id of the request (X-Request-Id)
	Start     time.Time // when its head was read
	Key       string    // the key's configured name; "" before auth
	Model     string    // the configured model that served it, or the client's string for one that does not exist
	// ModelRequested is the model the client named ("" before the body
	// is read); Model differs from it after a fallback.
	ModelRequested string
	Backend        string // the backend whose answer went to the client (or the last tried)
	Path           string // the path as the client sent it, clipped
	Status         int    // the status the client got (499: it left)
	ErrCode        string // the gateway's error code; "" none
	ErrSource      Source // whose fault the error is, when ErrCode is set
	Stream         bool   // the answer was relayed as a stream
	BytesIn        int64  // the request body's bytes
	BytesOut       int64  // the answer body's bytes
	ClientAddr     string // the client's address
	TLSVersion     uint16 // the connection's TLS version (crypto/tls's numbers); 0: plain HTTP
	TLSResumed     bool   // its TLS session was resumed (a session ticket)

	UsageInjected bool          // the gateway added include_usage to a stream
	Usage         sse.Usage     // tokens, from the usage event or the answer's "usage"
	FinishReason  string        // the last finish_reason seen
	TTFT          time.Duration // to the first content event (streams)
	Events        int64         // stream events from the backend
	Generated     int64         // of them, the events that carry generated tokens (content, reasoning, tool-call arguments)
	// UsageCounted: the backend reported no usage (a stream cut before its
	// last event, an answer without it) and usage is the gateway's count:
	// the prompt's estimate and the generated events, one token each.
	UsageCounted bool
	// Priced: the model has a price, and CostPico is what the request's
	// usage cost at it, in pico-USD (cost_usd; null when not Priced).
	Priced          bool
	CostPico        int64
	AffinityKey     uint64        // XXH3 of the affinity key, 0 without one
	PrefixBlocks    int           // the prompt's blocks for the prefix index, 0 without
	PrefixMatched   int           // of them, the leading blocks the index held for the first candidate
	UpstreamModel   string        // the model name sent upstream
	UserRaw         string        // the request's "user", as its raw JSON string literal
	EndUser         string        // the end user its key's end_user limits held it to ("" with HasEndUser: the anonymous one)
	HasEndUser      bool          // the key has end_user limits
	Subject         string        // the "sub" of the JWT its key came from (HasSubject)
	HasSubject      bool          // its key came from a JWT
	UserAgent       string        // the client's User-Agent, clipped
	UpstreamCode    int           // status of the last backend answer
	HeadersAt       time.Duration // to the backend's response headers
	StreamAsked     bool          // the request asked for a stream
	FirstTokenRetry bool          // first_token_deadline passed on a backend; retried on the next
	Attempts        int           // upstream attempts
	Tried           []string      // backends tried, in order (in TriedFirst while they fit)
	TriedFirst      [2]string     // the usual one or two: no allocation for them
	Messages        int           // the request's messages (or input items)
	PromptBytes     int           // the bytes that become prompt
	Queued          bool          // waited in the model's queue for a slot
	QueueWait       time.Duration // time spent in the queue
	QueueBegan      time.Time     // when it began waiting (its first wait, for its trace)
	Handoff         time.Duration // from a slot's release to its hand-over to this request
	Priority        int           // the key's priority (tier in the queue)
	Served          int64         // its start tag in the fair queue, in tokens
}

// Source is who caused a failure (pingora-error's ErrorSource): the
// line's error_source.
type Source uint8

// The sources of a failure.
const (
	SourceClient   Source = iota // the request, or the client's conduct
	SourceGateway                // the gateway's own state or limits: full queue, no healthy backend, a failed temporary file
	SourceUpstream               // the backend: unreachable, broken off, too slow
)

// String is the source as the usage line writes it.
func (s Source) String() string {
	switch s {
	case SourceGateway:
		return "gateway"
	case SourceUpstream:
		return "upstream"
	}
	return "client"
}

// CountUsage makes usage the gateway's count when the backend reported
// none although it took the request (a 2xx head): a stream the client cut
// before its last event, where the usage comes, or a backend that does not
// report it. The prompt is what the backend said of it, where it said
// (a Messages stream's message_start), else its estimate; each event that
// carried generated tokens counts one (vLLM sends about a token an event;
// a coarser stream is billed low, never zero). Until issue 30 such a
// request was billed nothing: a client reading 190 of 200 tokens and
// closing paid no tokens, settled no reservation and taught its key's
// fair-queue cost nothing, and so won 8.8 slots to an honest key's one.
func (r *Record) CountUsage(promptEstimate int64) {
	if r.Usage.Found || r.UpstreamCode/100 != 2 {
		return
	}
	prompt := r.Usage.Prompt
	if prompt <= 0 {
		prompt = promptEstimate
	}
	r.Usage = sse.Usage{Prompt: prompt, Completion: r.Generated, Total: sat.Add(prompt, r.Generated), Cached: r.Usage.Cached, Found: true}
	r.UsageCounted = true
}

// Failed records that the request ended with e.
func (r *Record) Failed(status int, code string, source Source) {
	r.Status, r.ErrCode, r.ErrSource = status, code, source
}
