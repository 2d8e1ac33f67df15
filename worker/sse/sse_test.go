package sse

import (
	"bytes"
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
		s.Feed(c, func(ev []byte) { out = append(out, string(ev)) })
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
		s.Feed(stream, func(ev []byte) { n += len(ev) })
		if n+len(s.Rest()) != len(stream) {
			t.Fatalf("%d bytes in events + %d rest != %d", n, len(s.Rest()), len(stream))
		}
		Inspect(stream) // must not panic on anything
	})
}

func TestBodyUsage(t *testing.T) {
	for _, size := range []int{100, 9 << 10, 2 << 20} {
		content := strings.Repeat(`word \"usage\": {\"prompt_tokens\": 1} `, size/40+1)
		body := fmt.Sprintf(`{"id":"x","object":"chat.completion","choices":[{"message":{"content":"%s"}}],"usage":{"prompt_tokens":11,"total_tokens":31,"completion_tokens":20}}`, content)
		if u := BodyUsage([]byte(body)); u != (Usage{Prompt: 11, Completion: 20, Total: 31, Found: true}) {
			t.Errorf("%d-byte answer: %+v", len(body), u)
		}
	}
	if u := BodyUsage([]byte(`{"choices":[]}`)); u.Found {
		t.Errorf("usage found where there is none: %+v", u)
	}
}

func FuzzBodyUsage(f *testing.F) {
	f.Add([]byte(`{"usage":{"prompt_tokens":1}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		u := BodyUsage(body)
		if u.Found && !bytes.Contains(body, []byte(`"usage"`)) {
			t.Fatal("usage found without a usage key")
		}
	})
}

// BenchmarkInspectTokenEvent: the per-event cost of reading a token event.
func BenchmarkInspectTokenEvent(b *testing.B) {
	ev := []byte(strings.SplitAfter(vllmStream, "\n\n")[0])
	b.ReportAllocs()
	for b.Loop() {
		Inspect(ev)
	}
}
