package proxy

import (
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/sluice-gw/sluice/proxy/reqscan"
	"github.com/sluice-gw/sluice/proxy/sse"
)

// usageRecord is what the usage line says about one request. The issue
// "LLM-aware request handling" extends it (tokens, TTFT, affinity, …).
type usageRecord struct {
	requestID  string
	start      time.Time
	key        string
	model      string
	backend    string
	path       string
	status     int
	errCode    string
	errSource  errSource // whose fault the error is, when errCode is set
	stream     bool
	bytesIn    int64
	bytesOut   int64
	clientAddr string

	usageInjected bool          // the gateway added include_usage to a stream
	usage         sse.Usage     // tokens, from the usage event or the answer's "usage"
	finishReason  string        // the last finish_reason seen
	ttft          time.Duration // to the first content event (streams)
	events        int64         // stream events from the backend
	generated     int64         // of them, the events that carry generated tokens (content, reasoning, tool-call arguments)
	// usageCounted: the backend reported no usage (a stream cut before its
	// last event, an answer without it) and usage is the gateway's count:
	// the prompt's estimate and the generated events, one token each.
	usageCounted    bool
	affinityKey     uint64 // XXH3 of the affinity key, 0 without one
	prefixBlocks    int    // the prompt's blocks for the prefix index, 0 without
	prefixMatched   int    // of them, the leading blocks the index held for the first candidate
	upstreamModel   string // the model name sent upstream
	userRaw         string // the request's "user", as its raw JSON string literal
	userAgent       string
	upstreamCode    int           // status of the last backend answer
	headersAt       time.Duration // to the backend's response headers
	streamAsked     bool          // the request asked for a stream
	firstTokenRetry bool          // first_token_deadline passed on a backend; retried on the next
	attempts        int           // upstream attempts
	tried           []string      // backends tried, in order (in triedFirst while they fit)
	triedFirst      [2]string     // the usual one or two: no allocation for them
	messages        int
	promptBytes     int
	queued          bool          // waited in the model's queue for a slot
	queueWait       time.Duration // time spent in the queue
	queueBegan      time.Time     // when it began waiting (its first wait, for its trace)
	handoff         time.Duration // from a slot's release to its hand-over to this request
	priority        int           // the key's priority (tier in the queue)
	served          int64         // its start tag in the fair queue, in units
}

// countUsage makes usage the gateway's count when the backend reported
// none although it took the request (a 2xx head): a stream the client cut
// before its last event, where the usage comes, or a backend that does not
// report it. The prompt is what the backend said of it, where it said
// (a Messages stream's message_start), else its estimate; each event that
// carried generated tokens counts one (vLLM sends about a token an event;
// a coarser stream is billed low, never zero). Until issue 30 such a
// request was billed nothing: a client reading 190 of 200 tokens and
// closing paid no tokens, settled no reservation and taught its key's
// fair-queue cost nothing, and so won 8.8 slots to an honest key's one.
func (r *usageRecord) countUsage(promptEstimate int64) {
	if r.usage.Found || r.upstreamCode/100 != 2 {
		return
	}
	prompt := r.usage.Prompt
	if prompt <= 0 {
		prompt = promptEstimate
	}
	r.usage = sse.Usage{Prompt: prompt, Completion: r.generated, Total: satAdd(prompt, r.generated), Cached: r.usage.Cached, Found: true}
	r.usageCounted = true
}

// failed records that the request ended with e.
func (r *usageRecord) failed(e *apiError) {
	r.status, r.errCode, r.errSource = e.status, e.code, e.source
}

// maxUsageLine bounds a usage line, newline included: PIPE_BUF, the most a
// write(2) to a pipe carries without interleaving with another process's.
// Every string in a line is clipped to its budget below (escaped bytes, so
// a client's control characters, six bytes each once escaped, cannot push
// a line past it); the budgets plus the fixed part of a line — names and
// numbers at their widest, 966 bytes — fit, as TestUsageLineBound checks.
const maxUsageLine = 4096

// Budgets of a usage line's strings, in escaped bytes without the quotes.
const (
	logIDMax            = 64  // request_id: the gateway's own
	logKeyMax           = 128 // key: a configured name
	logPathMax          = 768 // path: the client's
	logModelMax         = 256 // model: the client's when it names no model
	logURLMax           = 192 // backend, and each of backends_tried: configured or from Nomad
	logErrMax           = 64  // error: the gateway's own codes
	logClientMax        = 64  // client: an address
	logFinishMax        = 64  // finish_reason: the backend's
	logTriedMax         = 384 // backends_tried, the whole list
	logUpstreamModelMax = 192 // upstream_model: configured
	logUserMax          = 256 // user: the client's
	logUAMax            = 384 // user_agent: the client's
)

// appendUsageLine appends r as one JSON line of at most maxUsageLine
// bytes: valid UTF-8 and valid JSON whatever bytes a client or a backend
// sent (invalid UTF-8 and lone surrogates read as U+FFFD, as encoding/json
// reads them; nothing is written as a \u escape but a control character).
func appendUsageLine(b []byte, r *usageRecord, worker int, end time.Time) []byte {
	b = append(b, `{"time":"`...)
	b = r.start.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","request_id":`...)
	b = appendLogString(b, r.requestID, logIDMax)
	b = append(b, `,"worker":`...)
	b = appendInt(b, int64(worker))
	b = append(b, `,"key":`...)
	b = appendLogString(b, r.key, logKeyMax)
	b = append(b, `,"path":`...)
	b = appendLogString(b, r.path, logPathMax)
	b = append(b, `,"model":`...)
	b = appendLogString(b, r.model, logModelMax)
	b = append(b, `,"backend":`...)
	b = appendLogString(b, r.backend, logURLMax)
	b = append(b, `,"status":`...)
	b = appendInt(b, int64(r.status))
	b = append(b, `,"error":`...)
	b = appendLogString(b, r.errCode, logErrMax)
	b = append(b, `,"error_source":`...)
	if r.errCode == "" {
		b = append(b, "null"...)
	} else {
		b = append(b, '"')
		b = append(b, r.errSource.String()...)
		b = append(b, '"')
	}
	b = append(b, `,"stream":`...)
	b = strconv.AppendBool(b, r.stream)
	b = append(b, `,"duration_ms":`...)
	b = appendInt(b, end.Sub(r.start).Milliseconds())
	b = append(b, `,"bytes_in":`...)
	b = appendInt(b, r.bytesIn)
	b = append(b, `,"bytes_out":`...)
	b = appendInt(b, r.bytesOut)
	b = append(b, `,"client":`...)
	b = appendLogString(b, r.clientAddr, logClientMax)
	b = append(b, `,"prompt_tokens":`...)
	b = appendInt(b, r.usage.Prompt)
	b = append(b, `,"completion_tokens":`...)
	b = appendInt(b, r.usage.Completion)
	b = append(b, `,"total_tokens":`...)
	b = appendInt(b, r.usage.Total)
	b = append(b, `,"cached_tokens":`...)
	b = appendInt(b, r.usage.Cached)
	b = append(b, `,"usage_reported":`...)
	b = strconv.AppendBool(b, r.usage.Found && !r.usageCounted)
	b = append(b, `,"usage_source":`...)
	switch {
	case r.usageCounted:
		b = append(b, `"gateway"`...)
	case r.usage.Found:
		b = append(b, `"backend"`...)
	default:
		b = append(b, "null"...)
	}
	b = append(b, `,"finish_reason":`...)
	b = appendLogString(b, r.finishReason, logFinishMax)
	b = append(b, `,"ttft_ms":`...)
	b = appendInt(b, r.ttft.Milliseconds())
	b = append(b, `,"events":`...)
	b = appendInt(b, r.events)
	b = append(b, `,"messages":`...)
	b = appendInt(b, int64(r.messages))
	b = append(b, `,"prompt_bytes":`...)
	b = appendInt(b, int64(r.promptBytes))
	b = append(b, `,"attempts":`...)
	b = appendInt(b, int64(r.attempts))
	b = append(b, `,"backends_tried":[`...)
	// As many as fit in logTriedMax, in order: attempts says how many there were.
	listEnd := len(b) + logTriedMax
	for i, t := range r.tried {
		mark := len(b)
		if i > 0 {
			b = append(b, ',')
		}
		if b = appendLogString(b, t, logURLMax); len(b) > listEnd {
			b = b[:mark]
			break
		}
	}
	b = append(b, ']')
	b = append(b, `,"upstream_model":`...)
	b = appendLogString(b, r.upstreamModel, logUpstreamModelMax)
	b = append(b, `,"user":`...)
	if r.userRaw == "" {
		b = append(b, "null"...)
	} else {
		b = appendLogLiteral(b, r.userRaw, logUserMax)
	}
	b = append(b, `,"user_agent":`...)
	b = appendLogString(b, r.userAgent, logUAMax)
	b = append(b, `,"upstream_status":`...)
	b = appendInt(b, int64(r.upstreamCode))
	b = append(b, `,"upstream_headers_ms":`...)
	b = appendInt(b, r.headersAt.Milliseconds())
	b = append(b, `,"stream_requested":`...)
	b = strconv.AppendBool(b, r.streamAsked)
	b = append(b, `,"first_token_retry":`...)
	b = strconv.AppendBool(b, r.firstTokenRetry)
	b = append(b, `,"usage_injected":`...)
	b = strconv.AppendBool(b, r.usageInjected)
	b = append(b, `,"queued":`...)
	b = strconv.AppendBool(b, r.queued)
	b = append(b, `,"queue_ms":`...)
	b = appendInt(b, r.queueWait.Milliseconds())
	b = append(b, `,"queue_handoff_us":`...)
	b = appendInt(b, r.handoff.Microseconds())
	b = append(b, `,"queue_priority":`...)
	b = appendInt(b, int64(r.priority))
	b = append(b, `,"queue_served_tokens":`...)
	b = appendInt(b, servedTokens(r.served))
	b = append(b, `,"affinity_key":"`...)
	b = strconv.AppendUint(b, r.affinityKey, 16)
	b = append(b, `","prefix_blocks":`...)
	b = appendInt(b, int64(r.prefixBlocks))
	b = append(b, `,"prefix_matched":`...)
	b = appendInt(b, int64(r.prefixMatched))
	return append(b, "}\n"...)
}

// appendLogString appends s as a JSON string whose escaped contents are
// at most max bytes: clipped at a character, never inside one or inside
// an escape. Invalid UTF-8 becomes U+FFFD.
func appendLogString(b []byte, s string, max int) []byte {
	b = append(b, '"')
	limit := len(b) + max
	for i := 0; i < len(s); {
		// A run of plain ASCII goes in at once (what most strings are),
		// found with a table (a third of the instructions of the tests).
		j, n := i, min(len(s), i+limit-len(b))
		for j < n && plainASCIITable[s[j]] {
			j++
		}
		b = append(b, s[i:j]...)
		if i = j; i == len(s) {
			break
		}
		c := s[i]
		r, size := rune(c), 1
		if c >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:]) // RuneError for invalid bytes
		}
		var ok bool
		if b, ok = appendLogRune(b, r, limit); !ok {
			break
		}
		i += size
	}
	return append(b, '"')
}

// plainASCII reports whether c stands for itself in a JSON string.
func plainASCII(c byte) bool { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\' }

// plainASCIITable is plainASCII for every byte.
var plainASCIITable = func() (t [256]bool) {
	for c := range t {
		t[c] = plainASCII(byte(c))
	}
	return t
}()

// appendLogLiteral appends lit — a JSON string literal as the client sent
// it, quotes and escapes included — as appendLogString appends its value:
// decoded as the backend reads it (reqscan.DecodeString), so a lone
// surrogate (\ud800, which strict parsers refuse) and raw invalid UTF-8
// become U+FFFD, as encoding/json reads them. Safe on any bytes.
func appendLogLiteral(b []byte, lit string, max int) []byte {
	if len(lit) >= 2 && lit[0] == '"' && lit[len(lit)-1] == '"' {
		lit = lit[1 : len(lit)-1]
	}
	v, _ := reqscan.DecodeString(lit)
	return appendLogString(b, v, max)
}

// appendLogRune appends r, escaped for a JSON string, unless that would
// take b past limit (then ok is false and b is unchanged).
func appendLogRune(b []byte, r rune, limit int) (_ []byte, ok bool) {
	const hexDigits = "0123456789abcdef"
	switch {
	case r == '"' || r == '\\':
		if len(b)+2 > limit {
			return b, false
		}
		return append(b, '\\', byte(r)), true
	case r == '\n' || r == '\r' || r == '\t':
		if len(b)+2 > limit {
			return b, false
		}
		e := byte('n')
		if r == '\r' {
			e = 'r'
		} else if r == '\t' {
			e = 't'
		}
		return append(b, '\\', e), true
	case r < 0x20 || r == 0x7f:
		if len(b)+6 > limit {
			return b, false
		}
		return append(b, '\\', 'u', '0', '0', hexDigits[r>>4], hexDigits[r&0xf]), true
	case r < utf8.RuneSelf:
		if len(b)+1 > limit {
			return b, false
		}
		return append(b, byte(r)), true
	}
	if !utf8.ValidRune(r) {
		r = utf8.RuneError
	}
	if len(b)+utf8.RuneLen(r) > limit {
		return b, false
	}
	return utf8.AppendRune(b, r), true
}
