package sse

import (
	"strings"
	"testing"
)

// A Responses completed event past MaxEvent (a client's metadata echoed
// in it) passes through the Splitter in pieces, and its usage, finish and
// id are read all the same, wherever the reads cut it.
func TestLargeResponsesEvent(t *testing.T) {
	pad := strings.Repeat("x", 2*MaxEvent) // past MaxEvent whatever the reads: a read that ends the event emits it whole
	completed := "event: response.completed\n" +
		`data: {"response":{"id":"resp_big","metadata":{"k":"` + pad + `"},"tools":[{"parameters":{"properties":{"usage":{"type":"object"},"status":{"type":"string"}}}}],` +
		`"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":30,"input_tokens_details":{"cached_tokens":3},"output_tokens":500,"total_tokens":530}},"sequence_number":9,"type":"response.completed"}` + "\n\n"
	stream := responsesStream + completed + "event: response.output_text.delta\n" + `data: {"delta":"after","type":"response.output_text.delta"}` + "\n\n"
	for _, step := range []int{1 << 10, 8 << 10, 32<<10 + 7, 1 << 20} {
		var sp Splitter
		large := NewLargeEvent(Responses)
		var got []Event
		var wholeAfter int
		for i := 0; i < len(stream); i += step {
			sp.Feed([]byte(stream[i:min(i+step, len(stream))]), func(e []byte, whole bool) {
				if whole {
					if len(got) > 0 {
						wholeAfter++
					}
					return
				}
				if ev, end := large.Feed(e); end {
					got = append(got, ev)
				}
			})
		}
		want := Event{Done: true, FinishReason: "max_output_tokens", ResponseID: "resp_big",
			Usage: Usage{Prompt: 30, Completion: 500, Total: 530, Cached: 3, Found: true}}
		if len(got) != 1 || got[0] != want {
			t.Fatalf("reads of %d bytes: large events read %+v, want one %+v", step, got, want)
		}
		if wholeAfter != 1 {
			t.Fatalf("reads of %d bytes: %d whole events after the large one, want 1", step, wholeAfter)
		}
	}
	// Another format, or another shape, is passed on unread.
	for _, l := range []*LargeEvent{NewLargeEvent(Chat), NewLargeEvent(Messages)} {
		if ev, end := l.Feed([]byte(completed)); !end || ev != (Event{}) {
			t.Errorf("format %d read %+v (end %v)", l.format, ev, end)
		}
	}
	if ev, end := NewLargeEvent(Responses).Feed([]byte("data: {\"usage\":{\"input_tokens\":1}," + pad + "}\n\n")); !end || ev.Usage.Found {
		t.Errorf("an event of another shape read %+v (end %v)", ev, end)
	}
}
