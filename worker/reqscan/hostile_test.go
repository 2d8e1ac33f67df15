package reqscan

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// Bodies whose fields the backend could read differently from the
// gateway are refused, naming the field (issue 18: each of these was
// served on another model, or streamed unbilled, before).
func TestScanRefusesAmbiguousFields(t *testing.T) {
	cases := []struct{ body, field string }{
		{`{"model":"public","mod\u0065l":"secret"}`, "model"},
		{`{"mod\u0065l":"secret"}`, "model"},
		{`{"model":"public","model":"secret"}`, "model"},
		{`{"model":"m","str\u0065am":true}`, "stream"},
		{`{"model":"m","stream":1}`, "stream"},
		{`{"model":"m","stream":"true"}`, "stream"},
		{`{"model":"m","stream":"yes"}`, "stream"},
		{`{"model":"m","stream":false,"stream":true}`, "stream"},
		{`{"model":"m","stream":true,"stream_options":{"include_usage":false},"stream_options":{}}`, "stream_options"},
		{`{"model":"m","stream":true,"stream_options":{"include_usage":false,"include_usage":true}}`, "stream_options.include_usage"},
		{`{"model":"m","stream":true,"stream_options":{"include_\u0075sage":false}}`, "stream_options.include_usage"},
		{`{"model":"m","stream":true,"stream_options":{"include_usage":1}}`, "stream_options.include_usage"},
		{`{"model":"m","stream_options":5}`, "stream_options"},
		{`{"model":5}`, "model"},
		{`{"model":["m"]}`, "model"},
		{`{"model":"a\ud800"}`, "model"},
		{"{\"model\":\"a\xff\"}", "model"},
		{`{"model":"m","max_tokens":1,"max_tokens":100000}`, "max_tokens"},
		{`{"model":"m","max_tokens":"100000"}`, "max_tokens"},
		{`{"model":"m","max_tokens":1e30}`, "max_tokens"},
		{`{"model":"m","max_tokens":100.0}`, "max_tokens"},
		{`{"model":"m","max_tokens":-1}`, "max_tokens"},
		{`{"model":"m","max_completion_tokens":true}`, "max_completion_tokens"},
		{`{"model":"m","max_\u0074okens":5}`, "max_tokens"},
		{`{"model":"m","user":"a","user":"b"}`, "user"},
		{`{"model":"m","user":5}`, "user"},
		{`{"model":"m","messages":[],"messages":[]}`, "messages"},
		{`{"model":"m","prompt":"a","prompt":"b"}`, "prompt"},
		{`{"model":"m","input":"a","inp\u0075t":"b"}`, "input"},
		{`{"model":"m","messages":[{"role":"user","content":"a","content":"b"}]}`, "messages[].content"},
		{`{"model":"m","messages":[{"role":"user","cont\u0065nt":"b"}]}`, "messages[].content"},
	}
	for _, tc := range cases {
		_, err := Scan([]byte(tc.body))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("Scan(%s) = %v; want a FieldError on %q", tc.body, err, tc.field)
		}
	}
}

// What stays accepted: escapes and duplicates outside the fields the
// gateway reads, escapes in values, null for optional fields, keys that
// differ only in case (Python's json is case-sensitive too).
func TestScanAcceptsUnambiguous(t *testing.T) {
	cases := []struct {
		body   string
		model  string
		stream bool
		max    int64
	}{
		{`{"model":"a\/b","n":1,"n":2,"t\u0065mperature":1}`, "a/b", false, 0},
		{`{"model":"caf\u00e9 \ud83d\ude00","Model":"other","STREAM":true}`, "café 😀", false, 0},
		{`{"model":"m","stream":null,"stream_options":null,"user":null,"max_tokens":null}`, "m", false, 0},
		{`{"model":"m","stream":true,"max_tokens":10,"max_completion_tokens":20}`, "m", true, 20},
		{`{"model":"m","messages":[{"content":"a","x":1,"x":2},{"content":"b"}],"tools":[{"model":"x","model":"y"}]}`, "m", false, 0},
		{`{"model":"m","max_tokens":0}`, "m", false, 0},
		{`{"model":"m","max_tokens":9223372036854775807}`, "m", false, math.MaxInt64},
		{`{"model":"m","max_tokens":18446744073709551615}`, "m", false, math.MaxInt64},
		{`{"model":"m","max_tokens":99999999999999999999999999999999999999}`, "m", false, math.MaxInt64},
	}
	for _, tc := range cases {
		r, err := Scan([]byte(tc.body))
		if err != nil || r.ModelName != tc.model || r.Stream != tc.stream || r.MaxTokens != tc.max {
			t.Errorf("Scan(%s) = model %q stream %v max %d, %v; want %q %v %d", tc.body, r.ModelName, r.Stream, r.MaxTokens, err, tc.model, tc.stream, tc.max)
		}
	}
}

// Nesting is bounded: a body of 20 MB of '[' is a 400 at the offset
// where it passes the bound, not a stack exhausted (it killed the worker).
func TestScanDepth(t *testing.T) {
	deep := func(n int) string {
		return `{"model":"m","x":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`
	}
	if _, err := Scan([]byte(deep(MaxDepth - 1))); err != nil { // the object itself is one level
		t.Fatalf("depth %d refused: %v", MaxDepth, err)
	}
	for _, body := range []string{
		deep(MaxDepth),
		`{"model":"m","x":` + strings.Repeat("[", 20<<20),
		`{"model":"m","x":` + strings.Repeat(`{"a":`, MaxDepth) + "1" + strings.Repeat("}", MaxDepth) + "}",
		`{"model":"m","messages":[` + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + "]}",
	} {
		_, err := Scan([]byte(body))
		var se *SyntaxError
		if !errors.As(err, &se) || !strings.Contains(se.Msg, "nested deeper") || se.Offset != strings.Index(body, "[")+MaxDepth-1 && se.Offset != strings.Index(body, `{"a"`)+5*(MaxDepth-1) {
			t.Errorf("Scan(deep body of %d bytes) = %v; want a nesting error at the level past %d", len(body), err, MaxDepth)
		}
	}
}
