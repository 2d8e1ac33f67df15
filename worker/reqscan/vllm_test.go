package reqscan

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// The differential check of issue 18: what Scan reads from a body must be
// what vLLM reads from it — Python's json (escapes in keys decoded, the
// last of duplicated keys kept, case-sensitive names), then pydantic's
// lax coercions — or Scan must refuse the body. vllmRead is that reading,
// written from Python's and pydantic's documented behaviour;
// TestReferenceAgainstPython checks it against the real thing where
// python3 with pydantic is installed.

// vllmFields is what vLLM makes of the fields the gateway reads.
type vllmFields struct {
	invalid      string // why vLLM would refuse the body (pydantic's validation), or ""
	model        *string
	stream       bool
	includeUsage bool // stream_options.include_usage as sent (OpenAI's default false when absent)
	maxTokens    int64
	user         *string
	messages     int
	ambiguous    string // a field Scan must refuse: duplicated or escaped key
	coerced      string // a field vLLM reads through a lax coercion ("stream": "yes", "max_tokens": 5.0)
}

// vllmRead decodes body as vLLM would. ok is false when Python's json
// would not read it at all, or reads it where Go's cannot say the same
// (invalid UTF-8, unpaired surrogates: vLLM refuses the first, and no
// routable value carries the second).
func vllmRead(body []byte) (f vllmFields, ok bool) {
	if !utf8.Valid(body) || loneSurrogate.Match(body) || !json.Valid(body) {
		return f, false
	}
	var doc map[string]any // encoding/json: the last of duplicated keys wins, escapes decoded
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&doc) != nil || doc == nil {
		return f, false
	}
	f.ambiguous = ambiguousKeys(body)
	if v, present := doc["model"]; present && v != nil {
		s, isStr := v.(string)
		if !isStr {
			f.invalid = "model"
		}
		f.model = &s
	}
	f.coerced = coercedField(doc)
	if b, err := laxBool(doc["stream"]); err != nil {
		f.invalid = "stream"
	} else {
		f.stream = b
	}
	switch so := doc["stream_options"].(type) {
	case nil:
	case map[string]any:
		if b, err := laxBool(so["include_usage"]); err != nil {
			f.invalid = "include_usage"
		} else {
			f.includeUsage = b
		}
	default:
		f.invalid = "stream_options"
	}
	for _, k := range []string{"max_tokens", "max_completion_tokens"} {
		n, err := laxInt(doc[k])
		if err != nil {
			f.invalid = k
		}
		f.maxTokens = max(f.maxTokens, n)
	}
	if v, present := doc["user"]; present && v != nil {
		s, isStr := v.(string)
		if !isStr {
			f.invalid = "user"
		}
		f.user = &s
	}
	if msgs, isList := doc["messages"].([]any); isList {
		f.messages = len(msgs)
	}
	return f, true
}

// loneSurrogate finds \u escapes of surrogates; paired ones are fine, but
// telling them apart is not worth it here: such bodies are skipped.
var loneSurrogate = regexp.MustCompile(`\\u[dD][89abcdefABCDEF]`)

// laxBool is pydantic's lax bool (None allowed: the fields are Optional).
func laxBool(v any) (bool, error) {
	switch x := v.(type) {
	case nil:
		return false, nil
	case bool:
		return x, nil
	case json.Number:
		switch x.String() {
		case "0", "0.0":
			return false, nil
		case "1", "1.0":
			return true, nil
		}
	case string:
		switch strings.ToLower(x) {
		case "0", "off", "f", "false", "n", "no":
			return false, nil
		case "1", "on", "t", "true", "y", "yes":
			return true, nil
		}
	}
	return false, errors.New("not a bool")
}

// laxInt is pydantic's lax int, saturated to int64 the way the gateway
// reserves it (negative counts are refused by vLLM: they are invalid here).
func laxInt(v any) (int64, error) {
	var n *big.Int
	switch x := v.(type) {
	case nil:
		return 0, nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case json.Number:
		if i, ok := new(big.Int).SetString(x.String(), 10); ok {
			n = i
		} else if fl, err := strconv.ParseFloat(x.String(), 64); err == nil && fl == math.Trunc(fl) && math.Abs(fl) < 1<<63 {
			n = big.NewInt(int64(fl)) // pydantic-core converts a float through i64
		}
	case string:
		if i, ok := new(big.Int).SetString(strings.TrimSpace(x), 10); ok {
			n = i
		}
	}
	if n == nil || n.Sign() < 0 {
		return 0, errors.New("not a count")
	}
	if !n.IsInt64() {
		return math.MaxInt64, nil
	}
	return n.Int64(), nil
}

// ambiguousKeys names a field whose key is duplicated or escaped in the
// objects the gateway reads (top level, stream_options, each message).
func ambiguousKeys(body []byte) string {
	dec := json.NewDecoder(bytes.NewReader(body))
	var walk func(ctx string) string
	// keyed walks the object whose '{' was just read.
	keyed := func(ctx string, tracked map[string]bool, name func(string) string) string {
		seen := map[string]bool{}
		found := ""
		for dec.More() {
			before := dec.InputOffset()
			tok, _ := dec.Token()
			key := tok.(string)
			raw := body[before:dec.InputOffset()]
			if tracked[key] && found == "" {
				if seen[key] || bytes.IndexByte(raw, '\\') >= 0 {
					found = name(key)
				}
				seen[key] = true
			}
			sub := ""
			switch {
			case ctx == "top" && key == "stream_options":
				sub = "stream_options"
			case ctx == "top" && key == "messages":
				sub = "messages"
			}
			if r := walk(sub); found == "" {
				found = r
			}
		}
		dec.Token() // '}'
		return found
	}
	walk = func(ctx string) string {
		tok, _ := dec.Token()
		d, isDelim := tok.(json.Delim)
		if !isDelim {
			return ""
		}
		switch {
		case d == '{' && ctx == "top":
			return keyed(ctx, topFields, func(k string) string { return k })
		case d == '{' && ctx == "stream_options":
			return keyed(ctx, map[string]bool{"include_usage": true}, func(string) string { return "stream_options.include_usage" })
		case d == '{' && ctx == "message":
			return keyed(ctx, map[string]bool{"content": true}, func(string) string { return "messages[].content" })
		case d == '{':
			return keyed(ctx, nil, nil)
		}
		found := "" // an array
		for dec.More() {
			sub := ""
			if ctx == "messages" {
				sub = "message"
			}
			if r := walk(sub); found == "" {
				found = r
			}
		}
		dec.Token() // ']'
		return found
	}
	return walk("top")
}

var topFields = map[string]bool{"model": true, "stream": true, "stream_options": true, "max_tokens": true,
	"max_completion_tokens": true, "user": true, "messages": true, "prompt": true, "input": true}

// checkAgainstVLLM fails t when Scan and vLLM's reading of body disagree:
// Scan accepts it but reads a field differently, accepts what vLLM would
// refuse or a duplicated/escaped key, or refuses a body vLLM reads the
// same way with nothing ambiguous in it.
func checkAgainstVLLM(t *testing.T, body []byte) {
	t.Helper()
	r, err := Scan(body)
	ref, ok := vllmRead(body)
	if !ok {
		return
	}
	var se *SyntaxError
	if errors.As(err, &se) {
		if !strings.Contains(se.Msg, "nested deeper") {
			t.Fatalf("Scan refused valid JSON %q: %v", body, err)
		}
		return
	}
	if err != nil {
		if ref.ambiguous == "" && ref.invalid == "" && ref.coerced == "" {
			t.Fatalf("Scan refused %q (%v) with nothing ambiguous in it", body, err)
		}
		return
	}
	if ref.ambiguous != "" {
		t.Fatalf("Scan accepted %q: key %q is duplicated or escaped", body, ref.ambiguous)
	}
	if ref.invalid != "" || ref.coerced != "" {
		t.Fatalf("Scan accepted %q, where vLLM would refuse %q or coerce %q", body, ref.invalid, ref.coerced)
	}
	if (ref.model == nil) != (r.Model.Len() == 0) || ref.model != nil && *ref.model != r.ModelName {
		t.Fatalf("model: Scan %q, vLLM %v, in %q", r.ModelName, deref(ref.model), body)
	}
	if r.Stream != ref.stream || r.MaxTokens != ref.maxTokens {
		t.Fatalf("stream/max_tokens: Scan %v/%d, vLLM %v/%d, in %q", r.Stream, r.MaxTokens, ref.stream, ref.maxTokens, body)
	}
	if r.StreamOpts.Len() > 0 && r.IncludeUsage != ref.includeUsage {
		t.Fatalf("include_usage: Scan %v, vLLM %v, in %q", r.IncludeUsage, ref.includeUsage, body)
	}
	var user *string
	if r.User.Len() > 0 {
		var s string
		json.Unmarshal(body[r.User.Start:r.User.End], &s)
		user = &s
	}
	if deref(user) != deref(ref.user) || (user == nil) != (ref.user == nil) {
		t.Fatalf("user: Scan %q, vLLM %q, in %q", deref(user), deref(ref.user), body)
	}
	if ref.messages != 0 && r.Messages != ref.messages {
		t.Fatalf("messages: Scan %d, vLLM %d, in %q", r.Messages, ref.messages, body)
	}
}

// coercedField names a field whose JSON type is not the one vLLM
// declares, so that pydantic's lax mode reads it only through a coercion.
func coercedField(doc map[string]any) string {
	isBool := func(v any) bool { _, ok := v.(bool); return v == nil || ok }
	isCount := func(v any) bool {
		n, ok := v.(json.Number)
		return v == nil || ok && !strings.ContainsAny(n.String(), ".eE")
	}
	switch {
	case !isBool(doc["stream"]):
		return "stream"
	case !isCount(doc["max_tokens"]):
		return "max_tokens"
	case !isCount(doc["max_completion_tokens"]):
		return "max_completion_tokens"
	}
	if so, ok := doc["stream_options"].(map[string]any); ok && !isBool(so["include_usage"]) {
		return "stream_options.include_usage"
	}
	return ""
}

func deref(s *string) string {
	if s == nil {
		return "<absent>"
	}
	return *s
}

// FuzzScanVLLM is the differential fuzz target (make fuzz).
func FuzzScanVLLM(f *testing.F) {
	for _, b := range generateBodies(rand.New(rand.NewPCG(1, 2)), 200) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkAgainstVLLM(t, body) })
}

// TestScanAgainstVLLMGenerated runs the differential check over bodies
// generated to hit the classes that matter: duplicates, escaped keys,
// unicode, nesting, numbers, coercible types.
func TestScanAgainstVLLMGenerated(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 2026))
	for _, b := range generateBodies(rng, 20000) {
		checkAgainstVLLM(t, b)
	}
}

// generateBodies makes n request bodies from pieces chosen at random.
func generateBodies(rng *rand.Rand, n int) [][]byte {
	keys := func(name string) []string {
		esc := strings.Replace(name, name[1:2], fmt.Sprintf(`\u%04x`, name[1]), 1)
		return []string{name, name, name, esc, strings.ToUpper(name[:1]) + name[1:], name + " "}
	}
	strs := []string{`"public"`, `"secret"`, `"a\/b"`, `"caf\u00e9"`, `"\ud83d\ude00"`, `"x\"y"`, `""`, `"é"`, `"pub\u006cic"`}
	bools := []string{`true`, `false`, `null`, `1`, `0`, `"yes"`, `"true"`, `"off"`, `1.0`, `2`, `[]`, `{}`}
	nums := []string{`1`, `0`, `null`, `100`, `-1`, `1.5`, `100.0`, `1e3`, `"50"`, `9223372036854775807`,
		`9223372036854775808`, `18446744073709551615`, `1e30`, `true`, `-0`}
	pick := func(xs []string) string { return xs[rng.IntN(len(xs))] }
	value := func(depth int) string {
		switch rng.IntN(6) {
		case 0:
			return pick(strs)
		case 1:
			return pick(nums)
		case 2:
			return pick(bools)
		case 3:
			d := 1 + rng.IntN(depth+1)
			return strings.Repeat("[", d) + pick(strs) + strings.Repeat("]", d)
		case 4:
			return `{"model":` + pick(strs) + `,"model":` + pick(strs) + `}`
		}
		return `[{"role":"user","content":` + pick(strs) + `}]`
	}
	member := func() string {
		switch rng.IntN(10) {
		case 0, 1:
			return `"` + pick(keys("model")) + `":` + pick(strs)
		case 2:
			return `"` + pick(keys("stream")) + `":` + pick(bools)
		case 3:
			so := `{"` + pick(keys("include_usage")) + `":` + pick(bools)
			if rng.IntN(3) == 0 {
				so += `,"` + pick(keys("include_usage")) + `":` + pick(bools)
			}
			if rng.IntN(5) == 0 {
				return `"stream_options":` + pick(bools)
			}
			return `"` + pick(keys("stream_options")) + `":` + so + "}"
		case 4:
			return `"` + pick(keys("max_tokens")) + `":` + pick(nums)
		case 5:
			return `"` + pick(keys("max_completion_tokens")) + `":` + pick(nums)
		case 6:
			return `"` + pick(keys("user")) + `":` + pick(append(strs, `5`, `null`))
		case 7:
			msg := `{"role":"user","` + pick(keys("content")) + `":` + pick(strs)
			if rng.IntN(4) == 0 {
				msg += `,"` + pick(keys("content")) + `":` + pick(strs)
			}
			return `"` + pick(keys("messages")) + `":[` + msg + `}]`
		case 8:
			return `"` + pick([]string{"prompt", "input", "inp\\u0075t", "n", "tools"}) + `":` + value(3)
		}
		return `"x":` + value(3)
	}
	out := make([][]byte, 0, n)
	for range n {
		m := make([]string, 1+rng.IntN(5))
		for i := range m {
			m[i] = member()
		}
		sep := pick([]string{",", ", ", " ,\n"})
		out = append(out, []byte("{"+strings.Join(m, sep)+"}"))
	}
	return out
}

// pythonReference reads bodies with the real Python json module and a
// pydantic model holding vLLM's types for the fields the gateway reads.
const pythonReference = `
import sys, json, base64
from typing import Optional, Any
from pydantic import BaseModel, ValidationError
class StreamOptions(BaseModel):
    include_usage: Optional[bool] = False
class Req(BaseModel):
    model: Optional[str] = None
    stream: Optional[bool] = False
    stream_options: Optional[StreamOptions] = None
    max_tokens: Optional[int] = None
    max_completion_tokens: Optional[int] = None
    user: Optional[str] = None
    messages: Optional[list[Any]] = None
for line in sys.stdin:
    body = base64.b64decode(line)
    try:
        r = Req.model_validate(json.loads(body))
    except (ValueError, ValidationError):
        print("invalid"); continue
    mt = max(r.max_tokens or 0, r.max_completion_tokens or 0)
    if mt < 0 or (r.max_tokens or 0) < 0 or (r.max_completion_tokens or 0) < 0:
        print("invalid"); continue
    mt = min(mt, 2**63-1)
    print(json.dumps([r.model, bool(r.stream), bool(r.stream_options and r.stream_options.include_usage), mt, r.user]))
`

// TestReferenceAgainstPython checks vllmRead, the test's model of vLLM,
// against Python's json and pydantic themselves, on the generated bodies.
// It needs python3 with pydantic (skipped without them).
func TestReferenceAgainstPython(t *testing.T) {
	if exec.Command("python3", "-c", "import pydantic").Run() != nil {
		t.Skip("python3 with pydantic not installed")
	}
	bodies := generateBodies(rand.New(rand.NewPCG(7, 7)), 3000)
	var in bytes.Buffer
	for _, b := range bodies {
		in.WriteString(base64.StdEncoding.EncodeToString(b) + "\n")
	}
	cmd := exec.Command("python3", "-c", pythonReference)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(bodies) {
		t.Fatalf("python3 answered %d lines for %d bodies", len(lines), len(bodies))
	}
	compared := 0
	for i, b := range bodies {
		ref, ok := vllmRead(b)
		if !ok {
			continue
		}
		if ref.invalid != "" || lines[i] == "invalid" {
			if (ref.invalid != "") != (lines[i] == "invalid") {
				t.Errorf("%q: python %s, reference invalid=%q", b, lines[i], ref.invalid)
			}
			continue
		}
		want := []any{deref(ref.model), ref.stream, ref.includeUsage, ref.maxTokens, deref(ref.user)}
		var got []any
		dec := json.NewDecoder(strings.NewReader(lines[i]))
		dec.UseNumber()
		if err := dec.Decode(&got); err != nil {
			t.Fatalf("python line %q: %v", lines[i], err)
		}
		for j := range got {
			if got[j] == nil {
				got[j] = "<absent>"
			}
			if n, isNum := got[j].(json.Number); isNum {
				got[j], _ = strconv.ParseInt(n.String(), 10, 64)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%q: python %v, reference %v", b, got, want)
		}
		compared++
	}
	if compared < 500 {
		t.Fatalf("only %d bodies compared", compared)
	}
	t.Logf("%d bodies read alike by Python+pydantic and the reference", compared)
}
