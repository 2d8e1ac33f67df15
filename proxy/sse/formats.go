package sse

import (
	"bytes"

	"github.com/tidwall/gjson"
)

// Format is how an API's answers and stream events report usage, finish
// reason and first token. A value past Messages reads as Chat.
//
// Responses (OpenAI Responses API, as vLLM serves it: vllm/entrypoints/
// openai/responses/{api_router,serving,protocol}.py):
//   - framing: each event is "event: <type>\ndata: <json>\n\n"
//     (_convert_stream_to_sse_events); no "data: [DONE]" follows the last.
//   - first token (HasContent): any "*.delta" event with a non-empty delta:
//     output_text, refusal, reasoning_text, reasoning_summary_text,
//     function_call_arguments and the other deltas each carry tokens the
//     model generated, and a reasoning model's first tokens are reasoning
//     ones; counting only output_text would make TTFT the thinking time.
//     (Messages counts its thinking_delta the same way.)
//   - end (Done): response.completed, response.incomplete, response.failed.
//     vLLM sends only response.completed, whatever the status: a response
//     cut by max_output_tokens ends with response.completed whose
//     response.status is "incomplete" (ResponsesResponse.from_request sets
//     incomplete_details.reason "max_output_tokens" when the finish reason
//     was "length"); OpenAI sends response.incomplete for it.
//   - finish reason: response.status ("completed", "incomplete", "failed",
//     "cancelled"), or, when it is "incomplete", incomplete_details.reason
//     ("max_output_tokens", "content_filter") if given: the status alone
//     cannot tell an answer cut by its token limit (Chat's "length") from
//     one a filter stopped, and the event type cannot either (see above).
//   - usage: response.usage of the end event: input_tokens → Prompt,
//     output_tokens → Completion, total_tokens → Total (Prompt+Completion
//     when absent), input_tokens_details.cached_tokens → Cached. vLLM's
//     input_tokens is every prompt token and cached_tokens the prefix-cache
//     hits among them (num_prompt_tokens, num_cached_tokens), as in OpenAI's.
//   - ResponseID: response.id of response.created (the first event) and
//     of the end events (completed, incomplete, failed), read anyway for
//     their usage; a whole answer's top-level "id".
//
// Messages (Anthropic Messages API, as vLLM serves it: vllm/entrypoints/
// anthropic/{api_router,serving,protocol}.py):
//   - framing: "event: <type>\ndata: <json>\n\n" (wrap_data_with_event);
//     vLLM turns its chat stream's [DONE] into message_stop and sends no
//     [DONE] itself.
//   - first token: content_block_delta (text_delta, thinking_delta,
//     input_json_delta; vLLM sends none with an empty delta, and the
//     signature_delta that closes a thinking block never comes first).
//   - end: message_stop.
//   - finish reason: message_delta's delta.stop_reason ("end_turn",
//     "max_tokens", "stop_sequence", "tool_use"); a whole answer's
//     stop_reason.
//   - usage: message_start's message.usage and message_delta's usage,
//     folded with Merge: input_tokens (+ cache_creation_input_tokens +
//     cache_read_input_tokens) → Prompt, cache_read_input_tokens → Cached,
//     output_tokens → Completion, Total = Prompt+Completion. Anthropic's
//     input_tokens leaves out the cached tokens, which it reports beside
//     it; adding them back keeps Prompt "every prompt token" as in the other
//     formats. vLLM reports no cache fields (AnthropicUsage gets
//     input_tokens and output_tokens only) and its input_tokens is every
//     prompt token (prompt_tokens): Cached stays 0. vLLM's message_start
//     has input_tokens and output_tokens 0; its message_delta repeats
//     input_tokens beside the final output_tokens.
//
// In both, an event's type is its JSON's top-level "type" (the SDKs read
// that), or the name on its "event:" line when the JSON has none. vLLM's
// Responses events put "type" last (the openai SDK's models list their
// fields alphabetically), its Messages events first: both are read from
// the bytes, without parsing. Only the few events that carry usage or the
// response id are parsed (gjson). UsageOnly is never set: the gateway
// injects no usage request into these APIs.
type Format uint8

const (
	Chat      Format = iota // chat completions, completions, embeddings and the other OpenAI-style endpoints: Inspect, BodyUsage, NewAnswerReader
	Responses               // OpenAI Responses API (/v1/responses)
	Messages                // Anthropic Messages API (/v1/messages)
)

// InspectAs reads one event (as emitted by Splitter) of a stream in format
// f. For Chat it is Inspect.
func InspectAs(f Format, event []byte) Event {
	switch f {
	case Responses:
		return inspectResponses(event)
	case Messages:
		return inspectMessages(event)
	}
	return Inspect(event)
}

// BodyUsageAs reads the usage of a whole (non-streamed) JSON answer in
// format f: for Chat BodyUsage; for the others the top-level "usage".
func BodyUsageAs(f Format, body []byte) Usage {
	if f != Responses && f != Messages {
		return BodyUsage(body)
	}
	r := NewAnswerReaderAs(f)
	r.Feed(body)
	return r.Usage()
}

// BodyFinishReason reads the finish reason of a whole JSON answer in format
// f: Chat choices[0].finish_reason (the first "finish_reason" key's string
// or null, as an AnswerReader reads it), Responses the status (or the
// incomplete_details reason: see Format), Messages the stop_reason.
func BodyFinishReason(f Format, body []byte) string {
	if f != Responses && f != Messages {
		return firstFinishReason(body)
	}
	r := NewAnswerReaderAs(f)
	r.Feed(body)
	return r.FinishReason()
}

// BodyResponseID reads the top-level "id" of a whole Responses answer (the
// id a later request names as previous_response_id); "" for other formats.
func BodyResponseID(f Format, body []byte) string {
	if f != Responses {
		return ""
	}
	r := NewAnswerReaderAs(f)
	r.Feed(body)
	return r.ResponseID()
}

// NewAnswerReaderAs returns a reader for one answer in format f: for Chat,
// NewAnswerReader. Responses' and Messages' answers are read by their
// top-level keys only (a JSON reader that follows nesting as the bytes
// pass): their usage, status and stop_reason are top-level, while tool
// inputs and echoed JSON schemas nested in them may hold keys of the same
// names. What it reads is what BodyUsageAs, BodyFinishReason and
// BodyResponseID read from the whole answer, however it is cut.
func NewAnswerReaderAs(f Format) *AnswerReader {
	switch f {
	case Responses:
		return &AnswerReader{format: f, top: newTopReader("usage", "status", "incomplete_details", "id")}
	case Messages:
		return &AnswerReader{format: f, top: newTopReader("usage", "stop_reason")}
	}
	return NewAnswerReader()
}

// Slots of the keys NewAnswerReaderAs reads.
const (
	slotUsage      = 0
	slotStatus     = 1 // Responses
	slotStop       = 1 // Messages
	slotIncomplete = 2 // Responses
	slotID         = 3 // Responses
)

// ResponseID is a Responses answer's id ("" for other formats or if none).
func (r *AnswerReader) ResponseID() string {
	if r.top == nil || r.format != Responses {
		return ""
	}
	return stringOf(r.top.vals[slotID])
}

func (r *AnswerReader) topUsage() Usage {
	v := gjson.ParseBytes(r.top.vals[slotUsage])
	if !v.IsObject() {
		return Usage{}
	}
	var u Usage // whole: no count left unreported to a later Merge
	if r.format == Responses {
		u.Merge(responsesUsage(v))
	} else {
		u.Merge(messagesUsage(v))
	}
	return u
}

func (r *AnswerReader) topFinishReason() string {
	if r.format == Messages {
		return stringOf(r.top.vals[slotStop])
	}
	return finishOf(stringOf(r.top.vals[slotStatus]), gjson.ParseBytes(r.top.vals[slotIncomplete]).Get("reason").Str)
}

// stringOf returns the JSON string raw holds, unquoted ("" if not a string).
func stringOf(raw []byte) string {
	if v := gjson.ParseBytes(raw); v.Type == gjson.String {
		return v.Str
	}
	return ""
}

// finishOf is a Responses answer's finish reason (see Format).
func finishOf(status, reason string) string {
	if status == "incomplete" && reason != "" {
		return reason
	}
	return status
}

// Merge folds v, an event's usage, into u, the running usage of a response:
// each count v reports replaces u's; Total, when v reports none, becomes
// Prompt+Completion. A v that found no usage changes nothing; after one
// that reported the completion's size, u.Found is true — not before, since
// Found is what lets a usage settle a token reservation: a Messages stream
// the client leaves after message_start (input tokens, and a placeholder
// output count) must not settle it at zero output. For a Chat usage event, which reports every
// count, u ends equal to v: merging and replacing are the same. Messages'
// two usage events (message_start, message_delta) merge to the full usage.
func (u *Usage) Merge(v Usage) {
	if !v.Found {
		return
	}
	if v.missing&missPrompt == 0 {
		u.Prompt = v.Prompt
	}
	if v.missing&missCompletion == 0 {
		u.Completion = v.Completion
		u.Found = true
	}
	if v.missing&missCached == 0 {
		u.Cached = v.Cached
	}
	if v.missing&missTotal == 0 {
		u.Total = v.Total
	} else {
		u.Total = u.Prompt + u.Completion
	}
	u.missing = 0
}

// Usage.missing bits.
const (
	missPrompt uint8 = 1 << iota
	missCompletion
	missTotal
	missCached
)

// responsesUsage reads a Responses usage object. It is always the whole
// usage (one event reports it), so counts it lacks are 0, not unreported.
func responsesUsage(u gjson.Result) Usage {
	out := Usage{Found: true}
	total := false
	u.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "input_tokens":
			out.Prompt = v.Int()
		case "output_tokens":
			out.Completion = v.Int()
		case "total_tokens":
			out.Total, total = v.Int(), true
		case "input_tokens_details":
			out.Cached = v.Get("cached_tokens").Int()
		}
		return true
	})
	if !total {
		out.Total = out.Prompt + out.Completion
	}
	return out
}

// messagesUsage reads a Messages usage object (see Format), marking the
// counts it does not report (a null count is not reported) for Merge.
func messagesUsage(u gjson.Result) Usage {
	out := Usage{Found: true, missing: missPrompt | missCompletion | missTotal | missCached}
	var input, created, read int64
	u.ForEach(func(k, v gjson.Result) bool {
		if v.Type == gjson.Null {
			return true
		}
		switch k.Str {
		case "input_tokens":
			input, out.missing = v.Int(), out.missing&^missPrompt
		case "cache_creation_input_tokens":
			created, out.missing = v.Int(), out.missing&^missPrompt
		case "cache_read_input_tokens":
			read, out.missing = v.Int(), out.missing&^(missPrompt|missCached)
		case "output_tokens":
			out.Completion, out.missing = v.Int(), out.missing&^missCompletion
		}
		return true
	})
	out.Prompt, out.Cached = input+created+read, read
	out.Total = out.Prompt + out.Completion
	return out
}

func inspectResponses(event []byte) Event {
	var ev Event
	data, last := readData(event, &ev)
	if last {
		return ev
	}
	typ := typeOf(event, data)
	if bytes.HasSuffix(typ, []byte(".delta")) {
		ev.HasContent = deltaNonEmpty(data)
		return ev
	}
	switch string(typ) {
	case "response.completed", "response.incomplete", "response.failed":
		ev.Done = true
		resp := gjson.GetBytes(data, "response")
		var status, reason string
		resp.ForEach(func(k, v gjson.Result) bool {
			switch k.Str {
			case "id":
				ev.ResponseID = v.Str
			case "status":
				status = v.Str
			case "incomplete_details":
				reason = v.Get("reason").Str
			case "usage":
				if v.IsObject() {
					ev.Usage = responsesUsage(v)
				}
			}
			return true
		})
		ev.FinishReason = finishOf(status, reason)
	case "response.created":
		// The stream's first event names the response; the in_progress
		// (and queued) events that repeat it are not parsed again: each
		// carries the whole response object, ~1 KB a parse (the rig's
		// profile: inspecting a Responses stream 12 µs against chat's 5).
		ev.ResponseID = gjson.GetBytes(data, "response.id").Str
	}
	return ev
}

func inspectMessages(event []byte) Event {
	var ev Event
	data, last := readData(event, &ev)
	if last {
		return ev
	}
	switch string(typeOf(event, data)) {
	case "content_block_delta":
		ev.HasContent = true
	case "message_start":
		if u := gjson.GetBytes(data, "message.usage"); u.IsObject() {
			ev.Usage = messagesUsage(u)
			// Its output_tokens is a placeholder (vLLM: 0; Anthropic: a
			// few): the generation's size comes with message_delta.
			ev.Usage.missing |= missCompletion
		}
	case "message_delta":
		ev.FinishReason = gjson.GetBytes(data, "delta.stop_reason").Str
		if u := gjson.GetBytes(data, "usage"); u.IsObject() {
			ev.Usage = messagesUsage(u)
		}
	case "message_stop":
		ev.Done = true
	}
	return ev
}

// typeOf returns an event's type: its JSON's top-level "type", else the
// name on its "event:" line (nil if neither). The top-level "type" is read
// from the bytes where it is the first key (Messages' events, OpenAI's) or
// the last (vLLM's Responses events); elsewhere gjson finds it.
func typeOf(event, data []byte) []byte {
	if t := typeFirst(data); t != nil {
		return t
	}
	if t := typeLast(data); t != nil {
		return t
	}
	if t := gjson.GetBytes(data, "type"); t.Type == gjson.String {
		return []byte(t.Str)
	}
	return eventName(event)
}

// typeFirst returns the value of "type" if it is data's first key and a
// string without escapes, else nil.
func typeFirst(data []byte) []byte {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil
	}
	i = skipSpace(data, i+1)
	if !bytes.HasPrefix(data[i:], []byte(`"type"`)) {
		return nil
	}
	i = skipSpace(data, i+len(`"type"`))
	if i >= len(data) || data[i] != ':' {
		return nil
	}
	i = skipSpace(data, i+1)
	if i >= len(data) || data[i] != '"' {
		return nil
	}
	n := bytes.IndexByte(data[i+1:], '"')
	if n < 0 {
		return nil
	}
	v := data[i+1 : i+1+n]
	if bytes.IndexByte(v, '\\') >= 0 {
		return nil
	}
	return v
}

// typeLast returns the value of "type" if it is data's last key and a
// string without escapes, else nil. The member just before the closing
// brace of the JSON is a top-level one; the key before its colon is a key
// (not the end of a string) when a comma or the opening brace precedes it.
func typeLast(data []byte) []byte {
	e := skipSpaceBack(data, len(data))
	if e == 0 || data[e-1] != '}' {
		return nil
	}
	e = skipSpaceBack(data, e-1)
	if e == 0 || data[e-1] != '"' {
		return nil
	}
	e--
	s := bytes.LastIndexByte(data[:e], '"')
	if s <= 0 || data[s-1] == '\\' || bytes.IndexByte(data[s+1:e], '\\') >= 0 {
		return nil
	}
	k := skipSpaceBack(data, s)
	if k == 0 || data[k-1] != ':' {
		return nil
	}
	k = skipSpaceBack(data, k-1)
	if !bytes.HasSuffix(data[:k], []byte(`"type"`)) {
		return nil
	}
	k = skipSpaceBack(data, k-len(`"type"`))
	if k == 0 || (data[k-1] != ',' && data[k-1] != '{') {
		return nil
	}
	return data[s+1 : e]
}

func skipSpaceBack(b []byte, i int) int {
	for i > 0 && (b[i-1] == ' ' || b[i-1] == '\t' || b[i-1] == '\r' || b[i-1] == '\n') {
		i--
	}
	return i
}

// eventName returns the value of an event's "event:" line (nil if none).
func eventName(event []byte) []byte {
	for len(event) > 0 {
		line := event
		if k := bytes.IndexByte(event, '\n'); k >= 0 {
			line, event = event[:k], event[k+1:]
		} else {
			event = nil
		}
		if v, ok := bytes.CutPrefix(bytes.TrimSuffix(line, []byte("\r")), []byte("event:")); ok {
			return bytes.TrimPrefix(v, []byte(" "))
		}
	}
	return nil
}

// deltaNonEmpty reports whether a Responses delta event's "delta" is
// non-empty: a string with something in it (or, from older vLLM, an
// object). As in Inspect, a quoted name followed by a colon is a key: inside
// a JSON string every quote is escaped.
func deltaNonEmpty(data []byte) bool {
	key := []byte(`"delta"`)
	for i := 0; ; {
		k := bytes.Index(data[i:], key)
		if k < 0 {
			return false
		}
		k += i
		i = k + 1
		if k > 0 && data[k-1] == '\\' {
			continue
		}
		v := skipSpace(data, k+len(key))
		if v >= len(data) || data[v] != ':' {
			continue
		}
		v = skipSpace(data, v+1)
		switch {
		case v >= len(data):
			return false
		case data[v] == '"':
			return v+1 < len(data) && data[v+1] != '"'
		default:
			return data[v] != 'n' // null: nothing
		}
	}
}

// topReader reads, from JSON fed in pieces, the values of some of its
// top-level object's keys (the last of each, up to maxValue bytes; a longer
// one is not kept), holding nothing else. It follows nesting and strings,
// so a key of the same name nested deeper (a tool's input, an echoed JSON
// schema) or inside a string is never taken for it; within strings it jumps
// from quote to quote (bytes.IndexByte), so a long text costs little.
type topReader struct {
	keys      []string
	vals      [][]byte // the raw values found, by key
	depth     int
	object    bool // the top-level value is an object
	expectKey bool // at depth 1, the next string is a key
	inString  bool
	escaped   bool // in a string, after a backslash
	ended     bool // the top-level value ended (or broke): the rest is not read
	rec       uint8
	slot      int    // the key (index in keys) whose value is being read; -1 none
	key       []byte // the key being read, quotes included
	val       []byte // the value being read
	over      bool   // the key or value being read outgrew its bound: dropped
}

// What a topReader records.
const (
	recNone = iota
	recKey
	recValue
)

// maxKey bounds a key a topReader reads (the wanted ones are short; an
// escaped one may be six times as long).
const maxKey = 256

func newTopReader(keys ...string) *topReader {
	return &topReader{keys: keys, vals: make([][]byte, len(keys)), slot: -1}
}

func (t *topReader) feed(p []byte) {
	from := 0 // where the key or value being recorded continues in p
	for i := 0; i < len(p) && !t.ended; {
		if t.inString {
			if t.escaped {
				t.escaped = false
				i++
				continue
			}
			rest := p[i:]
			q := bytes.IndexByte(rest, '"')
			if q < 0 {
				q = len(rest)
			}
			if b := bytes.IndexByte(rest[:q], '\\'); b >= 0 {
				i += b + 1
				t.escaped = true
				continue
			}
			i += q
			if i == len(p) {
				break
			}
			i++ // past the closing quote
			t.inString = false
			if t.rec == recKey {
				t.record(p[from:i])
				t.keyRead()
			}
			continue
		}
		switch c := p[i]; c {
		case '"':
			t.inString = true
			if t.depth == 1 && t.expectKey {
				t.rec, from, t.key, t.over = recKey, i, t.key[:0], false
				t.expectKey = false
			}
		case '{', '[':
			if t.depth == 0 {
				t.object = c == '{'
				t.expectKey = t.object
			}
			t.depth++
		case '}', ']':
			if t.depth <= 0 {
				t.ended = true // not JSON: stop
				break
			}
			if t.depth == 1 {
				t.memberEnd(p[from:i])
				t.ended = true
			}
			t.depth--
		case ',':
			if t.depth == 1 {
				t.memberEnd(p[from:i])
				t.expectKey = t.object
			}
		case ':':
			if t.depth == 1 && t.object && t.slot >= 0 && t.rec == recNone {
				t.rec, from, t.val, t.over = recValue, i+1, t.val[:0], false
			}
		}
		i++
	}
	if t.rec != recNone {
		t.record(p[from:])
	}
}

// record appends b to the key or value being read, within its bound.
func (t *topReader) record(b []byte) {
	if t.over {
		return
	}
	dst, limit := &t.val, maxValue
	if t.rec == recKey {
		dst, limit = &t.key, maxKey
	}
	if len(*dst)+len(b) > limit {
		t.over = true
		return
	}
	*dst = append(*dst, b...)
}

// keyRead notes which wanted key (if any) the key just read is.
func (t *topReader) keyRead() {
	t.rec, t.slot = recNone, -1
	if t.over {
		return
	}
	name := t.key[1 : len(t.key)-1]
	if bytes.IndexByte(name, '\\') >= 0 { // rare: let gjson unescape it
		name = []byte(gjson.ParseBytes(t.key).Str)
	}
	for k, want := range t.keys {
		if string(name) == want {
			t.slot = k
			return
		}
	}
}

// memberEnd ends a top-level member (at its comma or the closing brace),
// b being the last bytes of its value: a wanted value is kept.
func (t *topReader) memberEnd(b []byte) {
	if t.rec == recValue {
		t.record(b)
		if v := bytes.TrimSpace(t.val); !t.over && len(v) > 0 {
			t.vals[t.slot] = append(t.vals[t.slot][:0], v...)
		}
	}
	t.rec, t.slot = recNone, -1
}
