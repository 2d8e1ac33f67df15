package sse

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

const vllmStream = "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hi\"},\"finish_reason\":null}]}\n\n" +
	"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\"},\"finish_reason\":\"stop\"}]}\n\n" +
	"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"total_tokens\":9,\"completion_tokens\":2,\"prompt_tokens_details\":{\"cached_tokens\":4}}}\n\n" +
	"data: [DONE]\n\n"

func split(chunks ...[]byte) []string {
	var s Splitter
	var out []string
	for _, c := range chunks {
		s.Feed(c, func(ev []byte, whole bool) {
			if !whole {
				panic("an event of a test stream outgrew MaxEvent")
			}
			out = append(out, string(ev))
		})
	}
	return out
}

func TestSplitAndInspect(t *testing.T) {
	evs := split([]byte(vllmStream))
	if len(evs) != 4 || strings.Join(evs, "") != vllmStream {
		t.Fatalf("events: %q", evs)
	}
	first, fin, usage, done := Inspect([]byte(evs[0])), Inspect([]byte(evs[1])), Inspect([]byte(evs[2])), Inspect([]byte(evs[3]))
	if !first.HasContent || first.UsageOnly || first.Done {
		t.Errorf("first: %+v", first)
	}
	if fin.FinishReason != "stop" || fin.HasContent {
		t.Errorf("finish: %+v", fin)
	}
	if !usage.UsageOnly || usage.Usage != (Usage{Prompt: 7, Completion: 2, Total: 9, Cached: 4, Found: true}) {
		t.Errorf("usage: %+v", usage)
	}
	if !done.Done {
		t.Errorf("done: %+v", done)
	}
	// CRLF framing and multi-line data.
	crlf := split([]byte("event: x\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\ndata: [DONE]\r\n\r\n"))
	if len(crlf) != 2 || !Inspect([]byte(crlf[1])).Done || string(dataOf([]byte(crlf[0]))) != `{"a":1}` {
		t.Errorf("crlf: %q", crlf)
	}
}

// Inspect reads keys by the colon after them: spacing, nesting and look-
// alike text inside strings must not fool it.
func TestInspectShapes(t *testing.T) {
	usage := Usage{Prompt: 3, Completion: 2, Total: 5, Found: true}
	for _, c := range []struct {
		name, data string
		want       Event
	}{
		{"spaced JSON", `{"choices": [ {"delta": {"content" : "Hi"}, "finish_reason" : "stop"} ]}`,
			Event{HasContent: true, FinishReason: "stop"}},
		{"empty content", `{"choices":[{"delta":{"content":""},"finish_reason":null}]}`, Event{}},
		{"logprobs content is an array", `{"choices":[{"delta":{},"logprobs":{"content":[{"token":"a"}]},"finish_reason":null}]}`, Event{}},
		{"completions text", `{"choices":[{"text":"x","finish_reason":"length"}]}`, Event{HasContent: true, FinishReason: "length"}},
		{"look-alikes inside a string", `{"choices":[{"delta":{"content":"\"usage\":{\"prompt_tokens\":9}, \"finish_reason\":\"x\""}}]}`,
			Event{HasContent: true}},
		{"second choice finishes", `{"choices":[{"delta":{"content":"a"},"finish_reason":null},{"delta":{},"finish_reason":"stop"}]}`,
			Event{HasContent: true, FinishReason: "stop"}},
		{"escaped finish reason", `{"choices":[{"finish_reason":"to\u006fl_calls"}]}`, Event{FinishReason: "tool_calls"}},
		{"usage with empty choices", `{"choices": [ ],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`,
			Event{UsageOnly: true, Usage: usage}},
		{"usage without choices", `{"usage": {"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`,
			Event{UsageOnly: true, Usage: usage}},
		{"usage beside a token (continuous usage stats)", `{"choices":[{"delta":{"content":"a"}}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`,
			Event{HasContent: true, Usage: usage}},
		{"null usage", `{"choices":[{"delta":{"content":"a"}}],"usage":null}`, Event{HasContent: true}},
		{"cut short", `{"choices":[{"delta":{"content":`, Event{}},
		{"reasoning (vLLM's reasoning_content)", `{"choices":[{"delta":{"reasoning_content":"hm"}}]}`, Event{HasContent: true}},
		{"reasoning", `{"choices":[{"delta":{"reasoning":"hm"}}]}`, Event{HasContent: true}},
		{"tool call arguments", `{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a"}}]}}]}`, Event{HasContent: true}},
		{"tool call name only", `{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":""}}]}}]}`, Event{}},
		{"refusal", `{"choices":[{"delta":{"refusal":"no"}}]}`, Event{HasContent: true}},
		{"null refusal", `{"choices":[{"delta":{"content":"","refusal":null}}]}`, Event{}},
	} {
		if got := Inspect([]byte("data: " + c.data + "\n\n")); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// feedAll feeds stream to s in reads of size n and returns the whole
// events, the bytes of all pieces emitted, and the largest unfinished tail
// the splitter held between reads.
func feedAll(s *Splitter, stream []byte, n int) (whole []string, all []byte, held int) {
	for len(stream) > 0 {
		k := min(n, len(stream))
		s.Feed(stream[:k], func(ev []byte, w bool) {
			if w {
				whole = append(whole, string(ev))
			}
			all = append(all, ev...)
		})
		held = max(held, len(s.buf))
		stream = stream[k:]
	}
	return whole, append(all, s.Rest()...), held
}

// An event that outgrows Max goes on in pieces as it arrives, never held
// whole; the events around it are whole; no byte is lost or reordered, and
// an event end that straddles two reads is found.
func TestSplitterPassesGiantEvents(t *testing.T) {
	giant := "data: {\"x\":\"" + strings.Repeat("y", 1000) + "\"}\r\n\r\n"
	stream := "data: a\n\n" + giant + "data: b\n\n" + "data: " + strings.Repeat("z", 500)
	for n := 1; n <= 70; n++ {
		s := Splitter{Max: 64}
		whole, all, held := feedAll(&s, []byte(stream), n)
		if string(all) != stream {
			t.Fatalf("reads of %d: bytes out differ from bytes in", n)
		}
		if len(whole) != 2 || whole[0] != "data: a\n\n" || whole[1] != "data: b\n\n" {
			t.Fatalf("reads of %d: whole events %q", n, whole)
		}
		if held > s.Max {
			t.Fatalf("reads of %d: held %d bytes of an unfinished event, Max %d", n, held, s.Max)
		}
	}
}

// However the stream is cut into reads, the same events come out.
func FuzzSplitter(f *testing.F) {
	f.Add([]byte(vllmStream), uint16(7), uint16(300))
	f.Add([]byte("data: a\r\n\r\ndata: b\n\n"), uint16(1), uint16(2))
	f.Fuzz(func(t *testing.T, stream []byte, a, b uint16) {
		whole := split(stream)
		x, y := int(a)%(len(stream)+1), int(b)%(len(stream)+1)
		if x > y {
			x, y = y, x
		}
		parts := split(stream[:x], stream[x:y], stream[y:])
		if fmt.Sprint(whole) != fmt.Sprint(parts) {
			t.Fatalf("whole %q\nparts %q", whole, parts)
		}
		var s Splitter
		var n int
		s.Feed(stream, func(ev []byte, _ bool) { n += len(ev) })
		if n+len(s.Rest()) != len(stream) {
			t.Fatalf("%d bytes in events + %d rest != %d", n, len(s.Rest()), len(stream))
		}
		// With a small Max, whatever the reads: every byte once, in order,
		// and never more than Max held.
		s = Splitter{Max: 1 + x%32}
		_, all, held := feedAll(&s, stream, 1+y%17)
		if !bytes.Equal(all, stream) || held > max(s.Max, straddle) {
			t.Fatalf("Max %d, reads of %d: out %q (held %d)", s.Max, 1+y%17, all, held)
		}
		if got, want := eventEnd(stream), eventEndReference(stream); got != want {
			t.Fatalf("eventEnd(%q) = %d, want %d", stream, got, want)
		}
		Inspect(stream) // must not panic on anything
	})
}

func TestBodyUsage(t *testing.T) {
	for _, size := range []int{100, 9 << 10, 2 << 20} {
		content := strings.Repeat(`word \"usage\": {\"prompt_tokens\": 1} `, size/40+1)
		body := fmt.Sprintf(`{"id":"x","object":"chat.completion","choices":[{"message":{"content":"%s"}}],"usage":{"prompt_tokens":11,"total_tokens":31,"completion_tokens":20,"prompt_tokens_details":{"cached_tokens":5}}}`, content)
		if u := BodyUsage([]byte(body)); u != (Usage{Prompt: 11, Completion: 20, Total: 31, Cached: 5, Found: true}) {
			t.Errorf("%d-byte answer: %+v", len(body), u)
		}
	}
	if u := BodyUsage(answer); u != (Usage{Prompt: 57, Completion: 8, Total: 65, Found: true}) {
		t.Errorf("vLLM's answer (details null): %+v", u)
	}
	// A key given twice counts as encoding/json reads it: the last one.
	if u := BodyUsage([]byte(`{"usage":{"prompt_tokens":1,"prompt_tokens":2}}`)); u.Prompt != 2 {
		t.Errorf("duplicate key: prompt_tokens %d, want the last (2)", u.Prompt)
	}
	if u := BodyUsage([]byte(`{"choices":[]}`)); u.Found {
		t.Errorf("usage found where there is none: %+v", u)
	}
}

// readInPieces feeds body to an AnswerReader in pieces of n bytes.
func readInPieces(body []byte, n int) (Usage, string) {
	r := NewAnswerReader()
	for p := body; len(p) > 0; p = p[min(len(p), n):] {
		r.Feed(p[:min(len(p), n)])
	}
	return r.Usage(), r.FinishReason()
}

// An answer read as it passes gives what BodyUsage and choices[0]'s finish
// reason give from the whole answer, however it is cut: with usage before
// vLLM's prompt_logprobs (megabytes after it), look-alikes inside strings,
// several choices, and keys cut across pieces.
func TestAnswerReader(t *testing.T) {
	logprobs := `[` + strings.Repeat(`{"1":{"logprob":-0.5,"rank":1,"decoded_token":"usage"}},`, 2000) + `null]`
	answers := map[string]struct {
		body   string
		finish string
	}{
		"vLLM's":                  {string(answer), "stop"},
		"usage before logprobs":   {`{"choices":[{"message":{"content":"hi"},"finish_reason":"length"}],"usage":{"prompt_tokens":7,"total_tokens":9,"completion_tokens":2},"prompt_logprobs":` + logprobs + `}`, "length"},
		"look-alikes in strings":  {`{"choices":[{"message":{"content":"\"usage\": {\"prompt_tokens\": 1}, \"finish_reason\":\"x\""},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}`, "stop"},
		"first choice unfinished": {`{"choices":[{"text":"a","finish_reason":null},{"text":"b","finish_reason":"stop"}],"usage":{"prompt_tokens":1}}`, ""},
		"several choices":         {`{"choices":[{"text":"a","finish_reason":"length"},{"text":"b","finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`, "length"},
		"spaced":                  {"{\"choices\" : [ {\"finish_reason\" :\n \"tool_calls\"} ] ,\n \"usage\" :\t{ \"prompt_tokens\" : 5 , \"prompt_tokens_details\":{\"cached_tokens\":2}} }", "tool_calls"},
		"null usage, then object": {`{"usage":null,"choices":[{"finish_reason":null}],"x":{"usage":{"prompt_tokens":8}}}`, ""},
		"embeddings":              {`{"object":"list","data":[{"embedding":[0.1,0.2]}],"usage":{"prompt_tokens":4,"total_tokens":4}}`, ""},
		"none":                    {`{"choices":[]}`, ""},
	}
	for name, a := range answers {
		want := BodyUsage([]byte(a.body))
		for _, n := range []int{1, 2, 3, 5, 7, 13, 64, 1000, 32 << 10, len(a.body)} {
			u, fin := readInPieces([]byte(a.body), n)
			if u != want || fin != a.finish {
				t.Fatalf("%s, pieces of %d: usage %+v finish %q; want %+v %q", name, n, u, fin, want, a.finish)
			}
		}
	}
}

func FuzzBodyUsage(f *testing.F) {
	f.Add([]byte(`{"usage":{"prompt_tokens":1}}`), uint16(3))
	f.Add(answer, uint16(17))
	f.Fuzz(func(t *testing.T, body []byte, n uint16) {
		u := BodyUsage(body)
		if u.Found && !bytes.Contains(body, []byte(`"usage"`)) {
			t.Fatal("usage found without a usage key")
		}
		// Read in pieces, a valid answer gives the same usage (values
		// within maxValue, keys not crowded past maxOpen).
		got, _ := readInPieces(body, 1+int(n)%64)
		if json.Valid(body) && len(body) < maxValue && bytes.Count(body, []byte(`"usage"`)) <= maxOpen && got != u {
			t.Fatalf("in pieces of %d: %+v; whole: %+v", 1+int(n)%64, got, u)
		}
	})
}

// eventEndReference is eventEnd written plainly: the earlier of the first
// "\n\n" and the first "\r\n\r\n", whole.
func eventEndReference(b []byte) int {
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

// BenchmarkFeedLongEvent: a 256 KiB event (logprobs of a long answer) fed
// in reads of 8 KiB, as the relay reads.
func BenchmarkFeedLongEvent(b *testing.B) {
	ev := []byte("data: {\"x\":\"" + strings.Repeat("y", 256<<10) + "\"}\n\n")
	b.SetBytes(int64(len(ev)))
	b.ReportAllocs()
	for b.Loop() {
		var s Splitter
		n := 0
		for p := ev; len(p) > 0; p = p[min(len(p), 8<<10):] {
			s.Feed(p[:min(len(p), 8<<10)], func([]byte, bool) { n++ })
		}
		if n != 1 {
			b.Fatalf("%d events", n)
		}
	}
}

// BenchmarkInspectTokenEvent: the per-event cost of reading a token event.
func BenchmarkInspectTokenEvent(b *testing.B) {
	ev := []byte(strings.SplitAfter(vllmStream, "\n\n")[0])
	b.ReportAllocs()
	for b.Loop() {
		Inspect(ev)
	}
}

// burstStream is a short answer as the fake vLLM sends it (10 token
// events, a usage-only event and [DONE]), all arriving in one read.
func burstStream() []byte {
	var b bytes.Buffer
	for i := range 10 {
		finish := "null"
		if i == 9 {
			finish = `"length"`
		}
		fmt.Fprintf(&b, `data: {"id":"chatcmpl-1796345116483065503","object":"chat.completion.chunk","created":1796345116,"model":"bench","choices":[{"index":0,"delta":{"role":"assistant","content":" tok"},"logprobs":null,"finish_reason":%s,"stop_reason":null}]}`+"\n\n", finish)
	}
	b.WriteString(`data: {"id":"chatcmpl-1796345116483065503","object":"chat.completion.chunk","created":1796345116,"model":"bench","choices":[],"usage":{"prompt_tokens":25000,"total_tokens":25010,"completion_tokens":10}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// BenchmarkFeedBurst: splitting and reading a whole short answer that
// arrived in one read, as the relay does.
func BenchmarkFeedBurst(b *testing.B) {
	burst := burstStream()
	b.SetBytes(int64(len(burst)))
	b.ReportAllocs()
	var s Splitter
	n := 0
	for b.Loop() {
		s.Feed(burst, func(ev []byte, _ bool) { Inspect(ev); n++ })
	}
	if n != 12*b.N {
		b.Fatalf("%d events, want %d", n, 12*b.N)
	}
}

// BenchmarkAnswerReader: reading usage and finish reason from a 2 MB answer
// as it passes, in the relay's 32 KiB reads.
func BenchmarkAnswerReader(b *testing.B) {
	body := []byte(`{"choices":[{"message":{"content":"` + strings.Repeat("tok ", 500_000) +
		`"},"finish_reason":"length"}],"usage":{"prompt_tokens":7,"total_tokens":9,"completion_tokens":2}}`)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if u, _ := readInPieces(body, 32<<10); u.Total != 9 {
			b.Fatal(u)
		}
	}
}
