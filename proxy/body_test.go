package proxy

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sluice-gw/sluice/proxy/reqscan"
)

func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", "plain", `q"uote`, `back\slash`, "nl\n tab\t cr\r", "\x00\x1f\x7f", "ünïcødé ✓", "bad\xffutf8"} {
		out := appendJSONString(nil, s)
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("%q → %s: %v", s, out, err)
		}
		if want := strings.ToValidUTF8(s, "\uFFFD"); back != want {
			t.Errorf("%q → %s → %q", s, out, back)
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	f.Add("hello \"world\"\n")
	f.Add("\xff\x00")
	f.Fuzz(func(t *testing.T, s string) {
		out := appendJSONString(nil, s)
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("%q → invalid JSON %s: %v", s, out, err)
		}
		if utf8.ValidString(s) && back != s {
			t.Fatalf("%q → %q", s, back)
		}
	})
}

func TestScanBody(t *testing.T) {
	cases := []struct {
		body, model, code string
	}{
		{`{"model":"m","messages":[]}`, "m", ""},
		{` {"messages":[{"content":"{\"model\":\"fake\"}"}],"model":"real"}`, "real", ""},
		{`{"model":"a\"b"}`, `a"b`, ""},
		{`{"model":7}`, "", "invalid_field"},
		{`{"model":null}`, "", "missing_model"},
		{`{"model":"public","mod\u0065l":"secret"}`, "", "invalid_field"},
		{`{"model":"a\/b"}`, "a/b", ""},
		{`{"model":""}`, "", "missing_model"},
		{`{"messages":[]}`, "", "missing_model"},
		{`{"model":"m",}`, "", "invalid_json"},
		{`{"model":"m"} trailing`, "", "invalid_json"},
		{``, "", "invalid_json"},
	}
	for _, tc := range cases {
		r, err := scanBody([]byte(tc.body), reqscan.ChatFields)
		code := ""
		if err != nil {
			code = err.code
		}
		if code != tc.code || (err == nil && r.ModelName != tc.model) {
			t.Errorf("scanBody(%s) = %q, %v; want %q, %q", tc.body, r.ModelName, err, tc.model, tc.code)
		}
	}
}

// Rewrite's output always parses, has the new model, and nothing else
// changed but stream_options.
func FuzzRewriteModel(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`), "upstream/x")
	f.Add([]byte(`{"stream_options":{},"stream":true, "model" : "m" }`), `q"uote`)
	f.Fuzz(func(t *testing.T, body []byte, upstream string) {
		r, aerr := scanBody(body, reqscan.ChatFields)
		if aerr != nil {
			return
		}
		out, _ := reqscan.Rewrite(body, &r, reqscan.Rewrites{UpstreamModel: upstream})
		var before, after map[string]any
		if err := json.Unmarshal(body, &before); err != nil {
			return
		}
		if err := json.Unmarshal(out, &after); err != nil {
			t.Fatalf("output does not parse: %s: %v", out, err)
		}
		var want string // what encoding/json makes of the name (invalid UTF-8 → U+FFFD per byte)
		quoted, _ := json.Marshal(upstream)
		json.Unmarshal(quoted, &want)
		if upstream == "" { // no upstream_model: the client's model goes through
			want, _ = before["model"].(string)
		}
		if after["model"] != want && bytes.Count(body, []byte(`"model"`)) == 1 {
			t.Fatalf("model = %v, want %q", after["model"], want)
		}
		for _, k := range []string{"model", "stream_options"} {
			delete(before, k)
			delete(after, k)
		}
		if !reflect.DeepEqual(before, after) {
			t.Fatalf("other fields changed:\n%s\n%s", body, out)
		}
	})
}
