package usage

// The usage line: the record as one JSON line, every string clipped to
// its budget so that a line fits one write(2) to a pipe.

import (
	"crypto/tls"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/sluice-gw/sluice/proxy/reqscan"
)

// appendInt appends v in decimal.
func appendInt(b []byte, v int64) []byte { return strconv.AppendInt(b, v, 10) }

// MaxLine bounds a usage line, newline included: PIPE_BUF, the most a
// Write(2) to a pipe carries without interleaving with another process's.
// Every string in a line is clipped to its budget below (escaped bytes, so
// a client's control characters, six bytes each once escaped, cannot push
// a line past it); the budgets plus the fixed part of a line — names and
// numbers at their widest, 1,183 bytes — fit, as TestUsageLineBound checks.
const MaxLine = 4096

// Budgets of a usage line's strings, in escaped bytes without the quotes.
const (
	logIDMax    = 64  // request_id: the gateway's own
	logKeyMax   = 128 // key: a configured name
	PathMax     = 768 // path: the client's
	logModelMax = 256 // model: the client's when it names no model
	// logRequestedMax: model_requested, a configured model's name (the
	// model a fallback served for), so short in practice.
	logRequestedMax     = 80
	logURLMax           = 192 // backend, and each of backends_tried: configured or from Nomad
	logErrMax           = 64  // error: the gateway's own codes
	logClientMax        = 64  // client: an address
	logFinishMax        = 64  // finish_reason: the backend's
	logTriedMax         = 256 // backends_tried, the whole list
	logUpstreamModelMax = 192 // upstream_model: configured
	logUserMax          = 192 // user: the client's
	logEndUserMax       = 128 // end_user: the client's (an id of up to 1,024 bytes is clipped)
	logSubjectMax       = 128 // jwt_subject: the identity provider's
	logUAMax            = 256 // user_agent: the client's
)

// AppendLine appends r as one JSON line of at most MaxLine
// bytes: valid UTF-8 and valid JSON whatever bytes a client or a backend
// sent (invalid UTF-8 and lone surrogates read as U+FFFD, as encoding/json
// reads them; nothing is written as a \u escape but a control character).
//
// Long (about 120 lines): one field after another in the line's order;
// split up, the line's format would be scattered.
func AppendLine(b []byte, r *Record, worker int, end time.Time) []byte {
	b = append(b, `{"time":"`...)
	b = r.Start.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","request_id":`...)
	b = appendLogString(b, r.RequestID, logIDMax)
	b = append(b, `,"worker":`...)
	b = appendInt(b, int64(worker))
	b = append(b, `,"key":`...)
	b = appendLogString(b, r.Key, logKeyMax)
	b = append(b, `,"path":`...)
	b = appendLogString(b, r.Path, PathMax)
	b = append(b, `,"model":`...)
	b = appendLogString(b, r.Model, logModelMax)
	b = append(b, `,"model_requested":`...)
	if r.ModelRequested != "" && r.ModelRequested != r.Model {
		b = appendLogString(b, r.ModelRequested, logRequestedMax)
	} else {
		b = append(b, "null"...) // served by the model it named
	}
	b = append(b, `,"backend":`...)
	b = appendLogString(b, r.Backend, logURLMax)
	b = append(b, `,"status":`...)
	b = appendInt(b, int64(r.Status))
	b = append(b, `,"error":`...)
	b = appendLogString(b, r.ErrCode, logErrMax)
	b = append(b, `,"error_source":`...)
	if r.ErrCode == "" {
		b = append(b, "null"...)
	} else {
		b = append(b, '"')
		b = append(b, r.ErrSource.String()...)
		b = append(b, '"')
	}
	b = append(b, `,"stream":`...)
	b = strconv.AppendBool(b, r.Stream)
	b = append(b, `,"duration_ms":`...)
	b = appendInt(b, end.Sub(r.Start).Milliseconds())
	b = append(b, `,"bytes_in":`...)
	b = appendInt(b, r.BytesIn)
	b = append(b, `,"bytes_out":`...)
	b = appendInt(b, r.BytesOut)
	b = append(b, `,"client":`...)
	b = appendLogString(b, r.ClientAddr, logClientMax)
	b = append(b, `,"tls_version":`...)
	switch r.TLSVersion {
	case 0:
		b = append(b, "null"...)
	case tls.VersionTLS12:
		b = append(b, `"1.2"`...)
	case tls.VersionTLS13:
		b = append(b, `"1.3"`...)
	default:
		b = append(b, `"other"`...)
	}
	b = append(b, `,"tls_resumed":`...)
	b = strconv.AppendBool(b, r.TLSResumed)
	b = append(b, `,"prompt_tokens":`...)
	b = appendInt(b, r.Usage.Prompt)
	b = append(b, `,"completion_tokens":`...)
	b = appendInt(b, r.Usage.Completion)
	b = append(b, `,"total_tokens":`...)
	b = appendInt(b, r.Usage.Total)
	b = append(b, `,"cached_tokens":`...)
	b = appendInt(b, r.Usage.Cached)
	b = append(b, `,"cost_usd":`...)
	if r.Priced {
		b = appendUSD(b, r.CostPico)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"usage_reported":`...)
	b = strconv.AppendBool(b, r.Usage.Found && !r.UsageCounted)
	b = append(b, `,"usage_source":`...)
	switch {
	case r.UsageCounted:
		b = append(b, `"gateway"`...)
	case r.Usage.Found:
		b = append(b, `"backend"`...)
	default:
		b = append(b, "null"...)
	}
	b = append(b, `,"finish_reason":`...)
	b = appendLogString(b, r.FinishReason, logFinishMax)
	b = append(b, `,"ttft_ms":`...)
	b = appendInt(b, r.TTFT.Milliseconds())
	b = append(b, `,"events":`...)
	b = appendInt(b, r.Events)
	b = append(b, `,"messages":`...)
	b = appendInt(b, int64(r.Messages))
	b = append(b, `,"prompt_bytes":`...)
	b = appendInt(b, int64(r.PromptBytes))
	b = append(b, `,"attempts":`...)
	b = appendInt(b, int64(r.Attempts))
	b = append(b, `,"backends_tried":[`...)
	// As many as fit in logTriedMax, in order: attempts says how many there were.
	listEnd := len(b) + logTriedMax
	for i, t := range r.Tried {
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
	b = appendLogString(b, r.UpstreamModel, logUpstreamModelMax)
	b = append(b, `,"user":`...)
	if r.UserRaw == "" {
		b = append(b, "null"...)
	} else {
		b = appendLogLiteral(b, r.UserRaw, logUserMax)
	}
	b = append(b, `,"end_user":`...)
	if r.HasEndUser {
		b = appendLogString(b, r.EndUser, logEndUserMax)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"jwt_subject":`...)
	if r.HasSubject {
		b = appendLogString(b, r.Subject, logSubjectMax)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"user_agent":`...)
	b = appendLogString(b, r.UserAgent, logUAMax)
	b = append(b, `,"upstream_status":`...)
	b = appendInt(b, int64(r.UpstreamCode))
	b = append(b, `,"upstream_headers_ms":`...)
	b = appendInt(b, r.HeadersAt.Milliseconds())
	b = append(b, `,"stream_requested":`...)
	b = strconv.AppendBool(b, r.StreamAsked)
	b = append(b, `,"first_token_retry":`...)
	b = strconv.AppendBool(b, r.FirstTokenRetry)
	b = append(b, `,"usage_injected":`...)
	b = strconv.AppendBool(b, r.UsageInjected)
	b = append(b, `,"queued":`...)
	b = strconv.AppendBool(b, r.Queued)
	b = append(b, `,"queue_ms":`...)
	b = appendInt(b, r.QueueWait.Milliseconds())
	b = append(b, `,"queue_handoff_us":`...)
	b = appendInt(b, r.Handoff.Microseconds())
	b = append(b, `,"queue_priority":`...)
	b = appendInt(b, int64(r.Priority))
	b = append(b, `,"queue_served_tokens":`...)
	b = appendInt(b, r.Served)
	b = append(b, `,"affinity_key":"`...)
	b = strconv.AppendUint(b, r.AffinityKey, 16)
	b = append(b, `","prefix_blocks":`...)
	b = appendInt(b, int64(r.PrefixBlocks))
	b = append(b, `,"prefix_matched":`...)
	b = appendInt(b, int64(r.PrefixMatched))
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
