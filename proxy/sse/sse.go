// Package sse splits a server-sent-events byte stream into events as it
// arrives, and reads the token usage and finish reason that OpenAI-style
// streams (vLLM's) carry, so the gateway can relay a stream event by event,
// drop the usage-only event a client did not ask for, and still bill it.
// It reads the same (and the response id) from OpenAI Responses and
// Anthropic Messages streams and answers (Format, InspectAs).
package sse

import (
	"bytes"

	"github.com/tidwall/gjson"
)

// Splitter cuts a byte stream into whole events. Events end with a blank
// line: "\n\n" (what vLLM and OpenAI send) or "\r\n\r\n".
type Splitter struct {
	// Max is the most bytes of an unfinished event the splitter holds while
	// it waits for the event's end (0: MaxEvent). An event that grows past
	// it is passed on in pieces as its bytes arrive (emit's whole is false),
	// so that a giant event or a backend that never ends one costs no more
	// memory than this, and its bytes are not held back until the stream ends.
	Max     int
	buf     []byte // bytes of an event not yet complete
	passing bool   // inside an event that outgrew Max: its bytes go on as they come
}

// MaxEvent is a Splitter's default Max. vLLM's events are ~330 bytes; one
// with logprobs of a long answer may reach tens of KiB.
const MaxEvent = 1 << 20

// straddle is how many bytes of a possible event end ("\r\n\r\n" less its
// last byte) can lie in one read with the rest in the next.
const straddle = 3

// Feed appends p and calls emit for each complete event, in order, with the
// event's bytes including its terminating blank line (whole), or with the
// next piece of an event that outgrew Max (not whole; the piece that ends it
// ends with its blank line). The slice passed to emit is valid only during
// the call. Every byte fed is passed to emit once, in order, except the
// unfinished tail that Rest returns.
func (s *Splitter) Feed(p []byte, emit func(event []byte, whole bool)) {
	data, from := p, 0
	if len(s.buf) > 0 {
		// buf holds no event end, but one may begin in its last bytes and
		// end in p: search from there, not from the start again (which was
		// quadratic in the reads of a long event).
		from = max(0, len(s.buf)-straddle)
		s.buf = append(s.buf, p...)
		data = s.buf
	}
	for {
		n := eventEnd(data[from:])
		if n < 0 {
			break
		}
		n += from
		emit(data[:n], !s.passing)
		s.passing = false
		data, from = data[n:], 0
	}
	limit := s.Max
	if limit <= 0 {
		limit = MaxEvent
	}
	limit = max(limit, straddle)
	s.passing = s.passing || len(data) > limit
	if s.passing && len(data) > straddle {
		emit(data[:len(data)-straddle], false)
		data = data[len(data)-straddle:]
		// Let go of what the event grew the buffer to.
		s.buf = append(make([]byte, 0, 2*straddle), data...)
		return
	}
	// Keep the unfinished tail (copy: p belongs to the caller), in a new
	// buffer if a large event grew the old one far beyond it.
	switch {
	case cap(s.buf) > 64<<10 && len(data) < 16<<10:
		s.buf = append([]byte(nil), data...)
	case len(s.buf) > 0:
		s.buf = append(s.buf[:0], data...)
	case len(data) > 0:
		s.buf = append(s.buf, data...)
	}
}

// Rest returns bytes that never formed a complete event (a stream cut short).
func (s *Splitter) Rest() []byte { return s.buf }

// eventEnd returns the length of the first complete event in b, or -1.
func eventEnd(b []byte) int {
	i := bytes.Index(b, []byte("\n\n"))
	// "\r\n\r\n" holds no "\n\n", so one that ends an event earlier ends
	// at i+1 at the latest (sharing its last "\n"): searching only up to
	// there keeps a burst of events linear (searching all of b for each
	// event made it quadratic).
	before := b
	if i >= 0 {
		before = b[:i+1]
	}
	if j := bytes.Index(before, []byte("\r\n\r\n")); j >= 0 {
		return j + 4
	}
	if i < 0 {
		return -1
	}
	return i + 2
}

// Usage is the token accounting of one response. Prompt counts every
// prompt token, cached ones included; Cached is the part of it served from
// the prefix cache.
type Usage struct {
	Prompt, Completion, Total, Cached int64
	Found                             bool
	// missing marks the counts this usage does not report (missPrompt...),
	// which Merge then leaves as they were. Only a Messages stream event
	// sets it (message_delta may report output tokens alone); zero, as in
	// every other usage, is "all reported", so Chat's usage compares equal
	// to the literal it always did.
	missing uint8
}

// Event is what the gateway needs to know of one event. Format's doc says
// what each field means for Responses and Messages streams.
type Event struct {
	Done         bool   // data: [DONE] (Responses, Messages: the terminal event)
	UsageOnly    bool   // carries usage and no choices: the include_usage event (Chat only)
	HasContent   bool   // generated tokens: a choice with non-empty content, text, reasoning, tool-call arguments or refusal (Chat); a non-empty delta (Responses, Messages). The first one is the first token
	FinishReason string // first non-null finish_reason in it
	Usage        Usage  // fold into the running usage with Merge
	ResponseID   string // Responses: the response's id, from the events that carry the response
}

// Inspect reads one event (as emitted by Splitter).
//
// Most events are one token, so it does not parse them: one pass jumps from
// colon to colon (bytes.IndexByte) and looks at the key before each and the
// value after it. Inside a JSON string every quote is escaped, so a quoted
// key name followed by a colon can only be a real key. Only the rare usage
// event is parsed (gjson). This replaced five searches of each event for
// key patterns and a gjson lookup of the finish reason: a 12-event answer
// arriving in one read (BenchmarkFeedBurst) 6.2 → 3.5 µs, medians of 5
// side by side, with eventEnd's fix.
func Inspect(event []byte) Event {
	var ev Event
	data, last := readData(event, &ev)
	if last {
		return ev
	}
	usageAt := -1
	hasChoices := false // a choices key with a non-empty array
	for i := 0; ; {
		k := bytes.IndexByte(data[i:], ':')
		if k < 0 {
			break
		}
		k += i
		i = k + 1
		key := bytes.TrimRight(data[:k], " \t\r\n")
		v := skipSpace(data, k+1)
		if v >= len(data) || len(key) == 0 || key[len(key)-1] != '"' {
			continue
		}
		switch {
		case hasKey(key, "content"), hasKey(key, "text"), hasKey(key, "reasoning_content"), hasKey(key, "reasoning"),
			hasKey(key, "arguments"), hasKey(key, "refusal"):
			// a non-empty string (logprobs' "content" is an array): text,
			// and the other tokens a model generates — its reasoning
			// (vLLM's reasoning_content, or reasoning), a tool call's
			// arguments, a refusal. Each is generated output: the first
			// is the first token (as Responses and Messages count their
			// deltas), and each is billed when the usage never comes.
			if data[v] == '"' && v+1 < len(data) && data[v+1] != '"' {
				ev.HasContent = true
			}
		case hasKey(key, "finish_reason"):
			if ev.FinishReason == "" && data[v] == '"' {
				ev.FinishReason = stringAt(data[v:])
			}
		case hasKey(key, "usage"):
			if data[v] == '{' {
				usageAt = v
			}
		case hasKey(key, "choices"):
			if data[v] == '[' {
				if e := skipSpace(data, v+1); e < len(data) && data[e] != ']' {
					hasChoices = true
				}
			}
		}
	}
	if usageAt >= 0 {
		ev.Usage = usageOf(gjson.ParseBytes(data[usageAt:]))
		ev.UsageOnly = !hasChoices
	}
	return ev
}

// hasKey reports whether b ends with name in quotes.
func hasKey(b []byte, name string) bool {
	n := len(name)
	return len(b) >= n+2 && b[len(b)-n-2] == '"' && string(b[len(b)-n-1:len(b)-1]) == name
}

// stringAt returns the JSON string that starts b (at its quote), unquoted.
func stringAt(b []byte) string {
	for j := 1; j < len(b); j++ {
		switch b[j] {
		case '"':
			return string(b[1:j])
		case '\\': // rare in a finish reason: let gjson unescape it
			return gjson.ParseBytes(b).String()
		}
	}
	return ""
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// readData returns an event's data, and last when there is nothing more to
// read in it: no data, or "[DONE]" (ev.Done is then set).
func readData(event []byte, ev *Event) (data []byte, last bool) {
	data = dataOf(event)
	if bytes.Equal(data, []byte("[DONE]")) { // in formats other than Chat not vLLM's, but an end all the same
		ev.Done = true
		return data, true
	}
	return data, len(data) == 0
}

// dataOf returns the payload of an event's data line(s), joined as one
// (multi-line data is rare from LLM servers; it is joined without the
// newline, which keeps JSON intact).
func dataOf(event []byte) []byte {
	var out []byte
	lines := 0
	for len(event) > 0 {
		line := event
		if k := bytes.IndexByte(event, '\n'); k >= 0 {
			line, event = event[:k], event[k+1:]
		} else {
			event = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			v = bytes.TrimPrefix(v, []byte(" "))
			if lines == 0 {
				out = v
			} else {
				out = append(append([]byte(nil), out...), v...)
			}
			lines++
		}
	}
	return out
}

// usageOf reads a usage object's counts in one pass over its keys
// (BenchmarkBodyUsage: 1.06 µs and 2 allocations with gjson.GetMany, which
// walks the object once per path, against 0.67 µs and 1 with ForEach).
func usageOf(u gjson.Result) Usage {
	out := Usage{Found: true}
	u.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "prompt_tokens":
			out.Prompt = v.Int()
		case "completion_tokens":
			out.Completion = v.Int()
		case "total_tokens":
			out.Total = v.Int()
		case "prompt_tokens_details":
			out.Cached = v.Get("cached_tokens").Int()
		}
		return true
	})
	return out
}

// BodyUsage reads the usage of a whole (non-streamed) JSON answer: the
// value after the last "usage" key, wherever it is. (An answer too large to
// hold is read as it passes, by an AnswerReader.)
func BodyUsage(body []byte) Usage {
	key := []byte(`"usage"`)
	for end := len(body); end > 0; {
		i := lastIndexUsage(body[:end])
		if i < 0 {
			return Usage{}
		}
		end = i
		if i > 0 && body[i-1] == '\\' { // inside a string: \"usage\"
			continue
		}
		rest := bytes.TrimLeft(body[i+len(key):], " \t\r\n")
		if len(rest) == 0 || rest[0] != ':' {
			continue
		}
		v := gjson.ParseBytes(bytes.TrimLeft(rest[1:], " \t\r\n"))
		if v.IsObject() {
			return usageOf(v)
		}
	}
	return Usage{}
}

// lastIndexUsage is bytes.LastIndex(b, []byte(`"usage"`)), faster for it:
// bytes.LastIndex hashes every byte (Rabin-Karp, ~20 instructions a byte);
// this looks only at the bytes after each 'e' it meets from the end, and
// the usage is near the end of an answer.
func lastIndexUsage(b []byte) int {
	const key = `"usage"`
	for end := len(b); end >= len(key); {
		e := bytes.LastIndexByte(b[:end-1], 'e') // the key's last letter
		if e < len(key)-2 {
			return -1
		}
		if i := e - (len(key) - 2); string(b[i:i+len(key)]) == key {
			return i
		}
		end = e + 1
	}
	return -1
}

// firstFinishReason is what an AnswerReader fed body whole reads as its
// finish reason: the value, a string or null (""), after the first
// "finish_reason" key (quoted, not inside a string, followed by a colon),
// read as the reader's finder reads one (valueAfterKey, within maxValue).
// One forward search: gjson's path choices.0.finish_reason walked the
// answer's objects (~3,000 instructions a request), and a finder fed the
// body took 4 allocations.
func firstFinishReason(body []byte) string {
	key := []byte(`"finish_reason"`)
	for off := 0; ; {
		i := bytes.Index(body[off:], key)
		if i < 0 {
			return ""
		}
		i += off
		off = i + 1                     // keys may overlap: "finish_reason"finish_reason":
		if i > 0 && body[i-1] == '\\' { // inside a string: \"finish_reason\"
			continue
		}
		after := body[i+len(key):]
		if raw, st := valueAfterKey(after[:min(len(after), maxValue)]); st == valueRead {
			if r := gjson.ParseBytes(raw); stringOrNull(r) {
				return r.Str
			}
		}
	}
}

// AnswerReader reads, from a JSON answer fed in pieces as it is relayed, what
// the gateway bills: the usage BodyUsage would read from the whole answer
// (the value after the last "usage" key that is an object), and the finish
// reason (the value after the first "finish_reason" key: choices[0]'s, ""
// when null). It holds only those values, never the answer, and reads
// neither when it takes more than maxValue bytes. That is a Chat answer's;
// one from NewAnswerReaderAs reads another format's (see there).
type AnswerReader struct {
	usage  finder
	finish finder
	format Format
	top    *topReader // Responses and Messages: their answers' top-level keys
}

// maxValue bounds a value an AnswerReader reads (a usage object is ~200 bytes).
const maxValue = 4 << 10

// NewAnswerReader returns a reader for one answer.
func NewAnswerReader() *AnswerReader {
	return &AnswerReader{
		usage:  finder{key: []byte(`"usage"`), want: gjson.Result.IsObject},
		finish: finder{key: []byte(`"finish_reason"`), want: stringOrNull, first: true},
	}
}

// stringOrNull: the first choice's finish reason is the first
// "finish_reason" key's, even when it is null (as gjson's choices.0 reads a
// whole answer).
func stringOrNull(v gjson.Result) bool { return v.Type == gjson.String || v.Type == gjson.Null }

// Feed reads the answer's next bytes.
func (r *AnswerReader) Feed(p []byte) {
	if r.top != nil {
		r.top.feed(p)
		return
	}
	r.usage.feed(p)
	r.finish.feed(p)
}

// Usage is the answer's usage (Found false if none).
func (r *AnswerReader) Usage() Usage {
	if r.top != nil {
		return r.topUsage()
	}
	if r.usage.found == nil {
		return Usage{}
	}
	return usageOf(gjson.ParseBytes(r.usage.found))
}

// FinishReason is the answer's finish reason ("" if none).
func (r *AnswerReader) FinishReason() string {
	if r.top != nil {
		return r.topFinishReason()
	}
	return gjson.ParseBytes(r.finish.found).Str
}

// finder finds, in bytes fed in pieces, the value after a key (quoted, not
// preceded by a backslash — not inside a string — and followed by a colon)
// that want accepts: the last such value, or with first the first.
type finder struct {
	key     []byte
	want    func(gjson.Result) bool
	first   bool
	tail    []byte      // the last len(key) bytes fed: a key may straddle two pieces
	open    []candidate // keys whose value is not complete yet
	found   []byte      // the value kept
	foundAt int64       // where its key is
	fed     int64       // bytes fed so far
}

// candidate is a key found, and the bytes after it so far.
type candidate struct {
	at    int64
	after []byte
}

// maxOpen bounds the keys waiting for their values at once (each holds up
// to maxValue bytes): past it the oldest is dropped. A key whose value is
// in the same piece is read at once, so only keys near a piece's end wait.
const maxOpen = 4

func (f *finder) feed(p []byte) {
	if f.first && f.found != nil {
		return
	}
	kept := f.open[:0]
	for _, c := range f.open {
		c.after = append(c.after, p[:min(len(p), maxValue-len(c.after))]...)
		if !f.resolve(c) {
			kept = append(kept, c)
		}
	}
	f.open = kept
	// Keys that begin in the tail of the last piece and end in p, then keys
	// wholly in p (p itself is never copied).
	seam := append(f.tail[:len(f.tail):len(f.tail)], p[:min(len(p), len(f.key)-1)]...)
	f.scan(seam, len(f.tail), f.fed-int64(len(f.tail)), p, 0)
	f.scan(p, 0, f.fed, p, lastByte(f.tail))
	f.fed += int64(len(p))
	if len(p) >= len(f.key) {
		f.tail = append(f.tail[:0], p[len(p)-len(f.key):]...)
	} else {
		f.tail = append(f.tail, p...)
		f.tail = append(f.tail[:0], f.tail[max(0, len(f.tail)-len(f.key)):]...)
	}
}

// scan opens a candidate for each key in b that ends past b[:minEnd]; b
// begins at stream position base; p is the piece being fed, which b's end
// lies in (the bytes after a key are taken from p); before is the byte
// before b (0 if none).
func (f *finder) scan(b []byte, minEnd int, base int64, p []byte, before byte) {
	for from := 0; ; {
		i := bytes.Index(b[from:], f.key)
		if i < 0 {
			return
		}
		i += from
		from = i + 1
		end := i + len(f.key)
		prev := before
		if i > 0 {
			prev = b[i-1]
		}
		if end <= minEnd || prev == '\\' {
			continue // wholly in the last piece (seen then), or inside a string
		}
		rest := p[end-minEnd:] // b is the last minEnd bytes before p, then p's first bytes
		c := candidate{at: base + int64(i), after: rest[:min(len(rest), maxValue)]}
		if f.resolve(c) {
			continue // read (or not a key) from p alone
		}
		if len(f.open) == maxOpen {
			f.open = append(f.open[:0], f.open[1:]...)
		}
		c.after = append([]byte(nil), c.after...) // p is the caller's
		f.open = append(f.open, c)
	}
}

func lastByte(b []byte) byte {
	if len(b) == 0 {
		return 0
	}
	return b[len(b)-1]
}

// resolve reads c's value if it is complete and reports whether c is done
// with (read, not a key, not wanted, or past maxValue).
func (f *finder) resolve(c candidate) bool {
	raw, st := valueAfterKey(c.after)
	switch st {
	case valueIncomplete:
		return len(c.after) >= maxValue // not complete yet (or never will be within the bound)
	case valueNone:
		return true
	}
	if f.want(gjson.ParseBytes(raw)) && (f.found == nil || (c.at > f.foundAt) != f.first) {
		f.found, f.foundAt = append(f.found[:0], raw...), c.at
	}
	return true
}

// What follows a key, for valueAfterKey.
type valueState int

const (
	valueIncomplete valueState = iota // the value has not all arrived
	valueNone                         // no value: not a key (no colon), or not JSON
	valueRead                         // the value, whole
)

// valueAfterKey reads the JSON value after a key's closing quote: spaces, a
// colon, spaces, the value. Without the colon the "key" was a string's
// content.
func valueAfterKey(after []byte) ([]byte, valueState) {
	rest := bytes.TrimLeft(after, " \t\r\n")
	if len(rest) == 0 {
		return nil, valueIncomplete
	}
	if rest[0] != ':' {
		return nil, valueNone
	}
	v := bytes.TrimLeft(rest[1:], " \t\r\n")
	if len(v) == 0 {
		return nil, valueIncomplete
	}
	n := valueEnd(v)
	if n < 0 {
		return nil, valueIncomplete
	}
	if !gjson.ValidBytes(v[:n]) {
		return nil, valueNone
	}
	return v[:n], valueRead
}

// valueEnd returns the length of the JSON value v begins with, or -1 if v
// ends before it does (a literal or number ends at the next delimiter).
func valueEnd(v []byte) int {
	if v[0] != '{' && v[0] != '[' && v[0] != '"' {
		return bytes.IndexAny(v, ",}] \t\r\n")
	}
	depth, inString, escaped := 0, false, false
	for i, b := range v {
		switch {
		case escaped:
			escaped = false
		case inString:
			switch b {
			case '\\':
				escaped = true
			case '"':
				inString = false
				if depth == 0 {
					return i + 1 // a string value
				}
			}
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			depth++
		case b == '}' || b == ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}
