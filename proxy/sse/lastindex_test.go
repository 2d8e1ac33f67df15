package sse

import (
	"bytes"
	"testing"
)

// FuzzLastIndexUsage: lastIndexUsage is bytes.LastIndex for "usage".
func FuzzLastIndexUsage(f *testing.F) {
	for _, s := range []string{`"usage"`, `x"usage":{}`, `"usage""usage"`, `usage"`, `"usag`, `e`, ``, `"usage"e`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := lastIndexUsage(b), bytes.LastIndex(b, []byte(`"usage"`)); got != want {
			t.Fatalf("%q: %d, want %d", b, got, want)
		}
	})
}

// FuzzFirstFinishReason: a whole answer's finish reason is what an
// AnswerReader fed the same bytes reads.
func FuzzFirstFinishReason(f *testing.F) {
	for _, s := range []string{
		`{"choices":[{"index":0,"message":{"role":"assistant","content":"a \"finish_reason\": \"x\""},"finish_reason":"length"}],"usage":{}}`,
		`{"choices":[{"finish_reason":null},{"finish_reason":"stop"}]}`,
		`{"finish_reason" : 3, "finish_reason":"stop"}`,
		`{"finish_reason"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r := NewAnswerReader()
		r.Feed(b)
		if got, want := firstFinishReason(b), r.FinishReason(); got != want {
			t.Fatalf("%q: %q, the AnswerReader reads %q", b, got, want)
		}
	})
}
