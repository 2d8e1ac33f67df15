// Package sse splits a server-sent-events byte stream into events as it
// arrives, and reads the token usage and finish reason that OpenAI-style
// streams (vLLM's) carry, so the gateway can relay a stream event by event,
// drop the usage-only event a client did not ask for, and still bill it.
package sse

import (
	"bytes"

	"github.com/tidwall/gjson"
)

// Splitter cuts a byte stream into whole events. Events end with a blank
// line: "\n\n" (what vLLM and OpenAI send) or "\r\n\r\n".
type Splitter struct {
	buf []byte // bytes of an event not yet complete
}

// Feed appends p and calls emit for each complete event, in order, with the
// event's bytes including its terminating blank line. The slice passed to
// emit is valid only during the call.
func (s *Splitter) Feed(p []byte, emit func(event []byte)) {
	data := p
	if len(s.buf) > 0 {
		s.buf = append(s.buf, p...)
		data = s.buf
	}
	for {
		n := eventEnd(data)
		if n < 0 {
			break
		}
		emit(data[:n])
		data = data[n:]
	}
	// Keep the partial tail (copy: p belongs to the caller).
	if len(s.buf) > 0 {
		s.buf = append(s.buf[:0], data...)
	} else if len(data) > 0 {
		s.buf = append(s.buf, data...)
	}
}

// Rest returns bytes that never formed a complete event (a stream cut short).
func (s *Splitter) Rest() []byte { return s.buf }

// eventEnd returns the length of the first complete event in b, or -1.
func eventEnd(b []byte) int {
	i := bytes.Index(b, []byte("\n\n"))
	j := bytes.Index(b, []byte("\r\n\r\n"))
	switch {
	case i < 0 && j < 0:
		return -1
	case j < 0 || (i >= 0 && i < j):
		return i + 2
	default:
		return j + 4
	}
}

// Usage is the token accounting of one response.
type Usage struct {
	Prompt, Completion, Total, Cached int64
	Found                             bool
}

// Event is what the gateway needs to know of one event.
type Event struct {
	Done         bool   // data: [DONE]
	UsageOnly    bool   // carries usage and no choices: the include_usage event
	HasContent   bool   // a choice with non-empty content or text
	FinishReason string // first non-null finish_reason in it
	Usage        Usage
}

// Inspect reads one event (as emitted by Splitter).
func Inspect(event []byte) Event {
	var ev Event
	data := dataOf(event)
	if len(data) == 0 {
		return ev
	}
	if bytes.Equal(data, []byte("[DONE]")) {
		ev.Done = true
		return ev
	}
	// Most events are one token: find what is needed with byte searches
	// and parse only the rare events that carry a finish reason or usage.
	// (Inside JSON strings quotes are escaped, so these key patterns can
	// only match real keys.)
	ev.HasContent = nonEmptyString(data, `"content":"`) || nonEmptyString(data, `"text":"`)
	if bytes.Contains(data, []byte(`"finish_reason":"`)) {
		ev.FinishReason = gjson.GetBytes(data, "choices.0.finish_reason").Str
	}
	if bytes.Contains(data, []byte(`"usage"`)) {
		f := gjson.GetManyBytes(data, "choices", "usage")
		if f[1].IsObject() {
			ev.Usage = usageOf(f[1])
			ev.UsageOnly = !f[0].Exists() || len(f[0].Array()) == 0
		}
	}
	return ev
}

// nonEmptyString reports whether data has key (`"name":"`) followed by at
// least one character before the closing quote.
func nonEmptyString(data []byte, key string) bool {
	i := bytes.Index(data, []byte(key))
	return i >= 0 && i+len(key) < len(data) && data[i+len(key)] != '"'
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

func usageOf(u gjson.Result) Usage {
	f := gjson.GetMany(u.Raw, "prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details.cached_tokens")
	return Usage{Prompt: f[0].Int(), Completion: f[1].Int(), Total: f[2].Int(), Cached: f[3].Int(), Found: true}
}

// BodyUsage reads the usage of a whole (non-streamed) JSON answer: the
// value after the last "usage" key, wherever it is — correct for answers of
// any size, unlike reading only the tail of the body.
func BodyUsage(body []byte) Usage {
	key := []byte(`"usage"`)
	for end := len(body); end > 0; {
		i := bytes.LastIndex(body[:end], key)
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
