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
		{`{"model":"a\/b","seed":1,"seed":2,"t\u0065mperature":1}`, "a/b", false, 0},
		{`{"model":"caf\u00e9 \ud83d\ude00","Model":"other","STREAM":true}`, "café 😀", false, 0},
		{`{"model":"m","stream":null,"stream_options":null,"user":null,"max_tokens":null}`, "m", false, 0},
		{`{"model":"m","stream":true,"max_tokens":10,"max_completion_tokens":20}`, "m", true, 20},
		{`{"model":"m","messages":[{"content":"a","x":1,"x":2},{"content":"b"}],"tools":[{"model":"x","model":"y"}]}`, "m", false, 0},
		{`{"model":"m","max_tokens":0}`, "m", false, 0},
		{`{"model":"m","max_tokens":9223372036854775807}`, "m", false, math.MaxInt64},
		{`{"model":"m","max_tokens":9223372036854775800}`, "m", false, math.MaxInt64 - 7}, // exact up to the last digit (fuzz found it saturated early)
		{`{"model":"m","max_tokens":9223372036854775806}`, "m", false, math.MaxInt64 - 1},
		{`{"model":"m","max_tokens":9223372036854775808}`, "m", false, math.MaxInt64},
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

// Each API refuses ambiguity in the members it reads, and only in those:
// a member of another API is an extra vLLM ignores there.
func TestScanWithRefusesByAPI(t *testing.T) {
	cases := []struct {
		set   Fields
		body  string
		field string // "" when the body must be accepted
	}{
		{ResponsesFields, `{"model":"m","previous_response_id":"resp_a","previous_response_id":"resp_b"}`, "previous_response_id"},
		{ResponsesFields, `{"model":"m","previous_response_\u0069d":"resp_b"}`, "previous_response_id"},
		{ResponsesFields, `{"model":"m","previous_response_id":5}`, "previous_response_id"},
		{ResponsesFields, `{"model":"m","previous_response_id":"resp_\ud800"}`, "previous_response_id"},
		{ResponsesFields, `{"model":"m","instructions":"a","instructions":"b"}`, "instructions"},
		{ResponsesFields, `{"model":"m","instructions":["a"]}`, "instructions"},
		{ResponsesFields, `{"model":"m","max_output_tokens":"100"}`, "max_output_tokens"},
		{ResponsesFields, `{"model":"m","max_output_tokens":1,"max_output_tokens":100000}`, "max_output_tokens"},
		{ResponsesFields, `{"model":"m","store":"false"}`, "store"},
		{ResponsesFields, `{"model":"m","background":1}`, "background"},
		{ResponsesFields, `{"model":"m","request_id":null}`, "request_id"},
		{ResponsesFields, `{"model":"m","input":"a","inp\u0075t":"b"}`, "input"},
		{ResponsesFields, `{"model":"m","max_tokens":1,"max_tokens":2,"messages":[],"messages":[],"stream_options":1}`, ""},
		{MessagesFields, `{"model":"m","system":"a","system":"b"}`, "system"},
		{MessagesFields, `{"model":"m","syst\u0065m":"b"}`, "system"},
		{MessagesFields, `{"model":"m","system":{"type":"text"}}`, "system"},
		{MessagesFields, `{"model":"m","max_tokens":1.0}`, "max_tokens"},
		{MessagesFields, `{"model":"m","messages":[{"role":"user","content":"a","content":"b"}]}`, "messages[].content"},
		{MessagesFields, `{"model":"m","user":1,"user":2,"stream_options":5,"metadata":{"user_id":1,"user_id":2}}`, ""},
		{PoolingFields, `{"model":"m","documents":["a"],"documents":["b"]}`, "documents"},
		{PoolingFields, `{"model":"m","text_\u0031":"a"}`, "text_1"},
		{PoolingFields, `{"model":"m","tokens":[1],"tokens":[2]}`, "tokens"},
		{PoolingFields, `{"model":"m","stream":1,"stream":"yes","max_tokens":"5"}`, ""},
		{ChatFields, `{"model":"m","system":"a","system":"b","previous_response_id":1,"queries":1,"queries":2}`, ""},
		{ChatFields, `{"model":"m","documents":1,"documents":2}`, "documents"},
		{ChatFields, `{"model":"m","n":1,"n":2}`, "n"},
		{ChatFields, `{"model":"m","best_of":"2"}`, "best_of"},
		{ResponsesFields, `{"model":"m","tools":[],"t\u006fols":[]}`, "tools"},
		{MessagesFields, `{"model":"m","tools":[],"tools":[]}`, "tools"},
		{ResponsesFields, `{"model":"m","n":1,"n":2}`, ""},
	}
	for _, tc := range cases {
		_, err := ScanWith([]byte(tc.body), tc.set)
		var fe *FieldError
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("ScanWith(%s) = %v; want it accepted", tc.body, err)
		case tc.field != "" && (!errors.As(err, &fe) || fe.Field != tc.field):
			t.Errorf("ScanWith(%s) = %v; want a FieldError on %q", tc.body, err, tc.field)
		}
	}
}

// What each API's scan reads.
func TestScanWithReads(t *testing.T) {
	body := []byte(`{"model":"m","instructions":"be brief","input":[{"role":"user","content":"hi"}],
		"previous_response_id":"resp_\u0031","max_output_tokens":300,"max_tokens":5,"stream":true,"store":false,
		"background":true,"request_id":"resp_x","user":"u","system":"sys","messages":[{"content":"a"}]}`)
	got := func(s Span) string { return string(body[s.Start:s.End]) }
	r, err := ScanWith(body, ResponsesFields)
	if err != nil {
		t.Fatal(err)
	}
	if r.PreviousResponseID != "resp_1" || got(r.PreviousResponse) != `"resp_\u0031"` || got(r.Instructions) != `"be brief"` ||
		r.MaxTokens != 300 || !r.Stream || r.Store || !r.Background || got(r.RequestID) != `"resp_x"` || got(r.User) != `"u"` ||
		r.System.Len() != 0 || r.Messages != 0 || got(r.FirstContent) != `[{"role":"user","content":"hi"}]` ||
		r.PromptBytes != len(`"be brief"`)+len(`[{"role":"user","content":"hi"}]`) {
		t.Errorf("responses: %+v", r)
	}
	if r, _ := ScanWith([]byte(`{"model":"m"}`), ResponsesFields); !r.Store {
		t.Error("responses: store defaults to true")
	}
	if r, _ := ScanWith([]byte(`{"model":"m","store":null}`), ResponsesFields); r.Store {
		t.Error("responses: store null is None, not stored")
	}
	r, err = ScanWith(body, MessagesFields)
	if err != nil {
		t.Fatal(err)
	}
	if got(r.System) != `"sys"` || r.MaxTokens != 5 || !r.Stream || r.User.Len() != 0 || r.Messages != 1 ||
		r.PreviousResponse.Len() != 0 || r.Store || r.PromptBytes != len(`"sys"`)+len(`[{"content":"a"}]`) || got(r.FirstContent) != `"a"` {
		t.Errorf("messages: %+v", r)
	}
	r, err = ScanWith([]byte(`{"model":"m","query":"q","documents":["a","b"],"stream":true,"user":"u"}`), PoolingFields)
	if err != nil || r.Stream || r.PromptBytes != len(`"q"`)+len(`["a","b"]`) || r.User.Len() == 0 {
		t.Errorf("pooling: %+v, %v", r, err)
	}
}

// A member after the messages that the chat API ignores (a completion's
// "prompt") adds to the prompt's size rather than replacing it: replaced,
// a 100 KB conversation reserved tokens for a 2-byte prompt.
func TestScanPromptSizeSums(t *testing.T) {
	big := strings.Repeat("x", 1000)
	r, err := Scan([]byte(`{"model":"m","messages":[{"role":"user","content":"` + big + `"}],"prompt":""}`))
	want := len(`[{"role":"user","content":""}]`) + len(big) + 2
	if err != nil || r.PromptBytes != want || r.Messages != 1 {
		t.Errorf("PromptBytes %d, %v; want %d", r.PromptBytes, err, want)
	}
}
