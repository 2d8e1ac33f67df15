package reqscan

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestScan(t *testing.T) {
	body := `{"model":"llama","stream":true,"user":"u-1","max_tokens":50,"max_completion_tokens":70,
	  "messages":[{"role":"system","content":"be \"brief\"\n"},{"role":"user","content":[{"type":"text","text":"hi"}]}],
	  "stream_options":{"include_usage":false},"tools":[],"temperature":-0.5e+2}`
	r, err := Scan([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	got := func(s Span) string { return body[s.Start:s.End] }
	if r.ModelName != "llama" || got(r.Model) != `"llama"` || !r.Stream || got(r.User) != `"u-1"` || r.MaxTokens != 70 {
		t.Errorf("fields: %+v", r)
	}
	if r.Messages != 2 || got(r.FirstContent) != `"be \"brief\"\n"` || r.PromptBytes != len(`[{"role":"system","content":"be \"brief\"\n"},{"role":"user","content":[{"type":"text","text":"hi"}]}]`)+len(`[]`) {
		t.Errorf("messages: %d first %q prompt %d", r.Messages, got(r.FirstContent), r.PromptBytes)
	}
	if r.IncludeUsage || got(r.StreamOpts) != `{"include_usage":false}` || got(r.UsageValue) != "false" || body[r.ObjectEnd] != '}' {
		t.Errorf("stream options: %+v", r)
	}
}

func TestScanErrors(t *testing.T) {
	for body, offset := range map[string]int{
		``:                   0,
		`[]`:                 0,
		`{"model":"m",}`:     13,
		`{"model":"m"} x`:    14,
		"{\"a\":\"b\x01\"}":  7,
		`{"a":"\q"}`:         6,
		`{"a":"\u12G4"}`:     6,
		`{"a":01}`:           6,
		`{"a":1.}`:           7,
		`{"a":tru}`:          5,
		`{"messages":[{},]}`: 16,
		`{"a":"unterminated`: 18,
		`{"a" 1}`:            5,
	} {
		_, err := Scan([]byte(body))
		se, ok := err.(*SyntaxError)
		if !ok || se.Offset != offset {
			t.Errorf("Scan(%q) = %v, want an error at offset %d", body, err, offset)
		}
	}
}

func TestInjectIncludeUsage(t *testing.T) {
	cases := map[string]string{
		`{"model":"m","stream":true}`:                                         `{"model":"m","stream":true,"stream_options":{"include_usage":true}}`,
		`{"model":"m","stream":true,"stream_options":null}`:                   `{"model":"m","stream":true,"stream_options":{"include_usage":true}}`,
		`{"model":"m","stream":true,"stream_options":{ }}`:                    `{"model":"m","stream":true,"stream_options":{"include_usage":true }}`,
		`{"model":"m","stream":true,"stream_options":{"x":1}}`:                `{"model":"m","stream":true,"stream_options":{"include_usage":true,"x":1}}`,
		`{"model":"m","stream":true,"stream_options":{"include_usage":null}}`: `{"model":"m","stream":true,"stream_options":{"include_usage":true}}`,
		`{"model":"m","stream":true,"stream_options":{"include_usage":true}}`: `{"model":"m","stream":true,"stream_options":{"include_usage":true}}`,
		`{"model":"m","stream":false}`:                                        `{"model":"m","stream":false}`,
	}
	for in, want := range cases {
		r, err := Scan([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if got := string(InjectIncludeUsage([]byte(in), &r)); got != want {
			t.Errorf("inject(%s)\n got %s\nwant %s", in, got, want)
		}
	}
}

// The scanner accepts exactly the JSON objects encoding/json accepts, and
// finds what a full decode finds.
func FuzzScan(f *testing.F) {
	f.Add([]byte(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi \"there\"\n"}]}`))
	f.Add([]byte(`{"model":"a\u00e9","messages":[],"stream_options":{"include_usage":true},"n":-1.5e3}`))
	f.Add([]byte(`{"prompt":"x","model":"m"} `))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := Scan(body)
		isObject := strings.HasPrefix(strings.TrimLeft(string(body), " \t\r\n"), "{")
		_, syntax := err.(*SyntaxError)
		if syntax && strings.Contains(err.Error(), "nested deeper") {
			return // encoding/json reads up to 10,000 levels
		}
		if want := json.Valid(body) && isObject; syntax == want {
			t.Fatalf("Scan err=%v, but encoding/json says valid object=%v, for %q", err, want, body)
		}
		var doc map[string]any
		if err != nil || json.Unmarshal(body, &doc) != nil {
			return
		}
		// (encoding/json turns invalid UTF-8 into U+FFFD; the scanner keeps bytes.)
		if m, ok := doc["model"].(string); ok && utf8.Valid(body) && r.ModelName != m && !strings.Contains(string(body), `\`) {
			t.Fatalf("model %q, want %q", r.ModelName, m)
		}
		if msgs, ok := doc["messages"].([]any); ok && r.Messages != len(msgs) && strings.Count(string(body), `"messages"`) == 1 {
			t.Fatalf("messages %d, want %d", r.Messages, len(msgs))
		}
		if p := r.Prompt; p.Len() > 0 && !json.Valid(body[p.Start:p.End]) {
			t.Fatalf("Prompt %q is not one JSON value", body[p.Start:p.End])
		}
		out := InjectIncludeUsage(body, &r)
		var after map[string]any
		if err := json.Unmarshal(out, &after); err != nil {
			t.Fatalf("injected body does not parse: %s: %v", out, err)
		}
		if r.Stream && strings.Count(string(body), `"stream_options"`) <= 1 && strings.Count(string(body), `"include_usage"`) <= 1 {
			so, _ := after["stream_options"].(map[string]any)
			if so["include_usage"] != true {
				t.Fatalf("include_usage not set: %s", out)
			}
		}
		if !r.Stream && !reflect.DeepEqual(doc, after) {
			t.Fatalf("a non-streamed body changed: %s", out)
		}
	})
}

func TestRewrite(t *testing.T) {
	cases := []struct{ in, model, salt, want string }{
		{`{"model":"m","stream":true}`, "up/x", "", `{"model":"up/x","stream":true,"stream_options":{"include_usage":true}}`},
		{`{"stream_options":{},"stream":true,"model":"m"}`, "up", "", `{"stream_options":{"include_usage":true},"stream":true,"model":"up"}`},
		{`{"stream_options":{"include_usage":true},"stream":true,"model":"m"}`, "up", "", `{"stream_options":{"include_usage":true},"stream":true,"model":"up"}`},
		{`{"model":"m"}`, "", "", `{"model":"m"}`},
		// cache_salt replaced or added; priority zeroed, whatever it was.
		{`{"model":"m","cache_salt":"mine","priority":-100}`, "", "S1", `{"model":"m","cache_salt":"S1","priority":0}`},
		{`{"priority":"x","model":"m","stream":true}`, "up", "S2", `{"priority":0,"model":"up","stream":true,"stream_options":{"include_usage":true},"cache_salt":"S2"}`},
		{`{"model":"m","cache_salt":null}`, "", "S3", `{"model":"m","cache_salt":"S3"}`},
	}
	for _, tc := range cases {
		r, err := Scan([]byte(tc.in))
		if err != nil {
			t.Fatal(err)
		}
		w := Rewrites{UpstreamModel: tc.model, CacheSalt: tc.salt}
		got, injected := Rewrite([]byte(tc.in), &r, w)
		if string(got) != tc.want || injected != (r.Stream && !r.IncludeUsage) {
			t.Errorf("Rewrite(%s, %q) = %s, %v; want %s", tc.in, tc.model, got, injected, tc.want)
		}
		// The pieces are the body's own bytes (not a copy) around the edits.
		body := []byte(tc.in)
		pieces, _ := RewritePieces(body, &r, w)
		if joined := string(bytes.Join(pieces, nil)); joined != tc.want {
			t.Errorf("RewritePieces(%s, %q) joined = %s; want %s", tc.in, tc.model, joined, tc.want)
		}
		if len(pieces[0]) > 0 && &pieces[0][0] != &body[0] {
			t.Errorf("RewritePieces(%s) copied the body", tc.in)
		}
	}
}

// include_usage goes only into the APIs that have stream_options: vLLM's
// Responses and Messages report usage unasked.
func TestInjectOnlyWhereRead(t *testing.T) {
	body := []byte(`{"model":"m","stream":true}`)
	for _, set := range []Fields{ResponsesFields, MessagesFields, PoolingFields} {
		r, err := ScanWith(body, set)
		if err != nil {
			t.Fatal(err)
		}
		if out, injected := Rewrite(body, &r, Rewrites{}); injected || string(out) != string(body) {
			t.Errorf("set %b: injected into %s", set, out)
		}
	}
}

// Everything that becomes prompt tokens is counted, and what multiplies the
// answers is read (issue 30, item 4): tools, a message's tool calls and
// their arguments, a chat's documents; n and best_of; a completion's batch
// of prompts. On main before it, 40 KB of tools reserved nothing.
func TestScanCountsWhatBecomesPrompt(t *testing.T) {
	tools := `[{"type":"function","function":{"name":"f","parameters":{"type":"object","description":"` + strings.Repeat("d", 4000) + `"}}}]`
	msgs := `[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"` +
		strings.Repeat("a", 3000) + `"}}]},{"role":"tool","tool_call_id":"c","content":"ok"}]`
	r, err := Scan([]byte(`{"model":"m","tools":` + tools + `,"messages":` + msgs + `,"documents":[{"text":"doc"}],"n":3,"best_of":5}`))
	if want := len(tools) + len(msgs) + len(`[{"text":"doc"}]`); err != nil || r.PromptBytes != want || r.N != 5 {
		t.Errorf("chat: PromptBytes %d N %d, %v; want %d and 5", r.PromptBytes, r.N, err, want)
	}
	for body, want := range map[string]int{
		`{"model":"m","prompt":["a","b","c"],"max_tokens":9}`: 3,
		`{"model":"m","prompt":[[1,2],[3],[4],[5]]}`:          4,
		`{"model":"m","prompt":[1,2,3]}`:                      0, // one prompt of token ids
		`{"model":"m","prompt":"abc"}`:                        0,
		`{"model":"m","input":"x","prompt":["a","b"]}`:        2,
	} {
		if r, err := Scan([]byte(body)); err != nil || r.Prompts != want {
			t.Errorf("%s: Prompts %d, %v; want %d", body, r.Prompts, err, want)
		}
	}
	for _, set := range []Fields{ResponsesFields, MessagesFields} {
		if r, err := ScanWith([]byte(`{"model":"m","tools":`+tools+`}`), set); err != nil || r.PromptBytes != len(tools) {
			t.Errorf("tools in %b: PromptBytes %d, %v; want %d", set, r.PromptBytes, err, len(tools))
		}
	}
}
