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

// The differential check of issue 18: what ScanWith reads from a body
// must be what vLLM reads from it — Python's json (escapes in keys decoded,
// the last of duplicated keys kept, case-sensitive names), then pydantic's
// lax coercions — or ScanWith must refuse the body. vllmRead is that
// reading, written from Python's and pydantic's documented behaviour and
// from vLLM's request models (apiSpecs); TestReferenceAgainstPython checks
// it against the real thing where python3 with pydantic is installed.
//
// Every API's body goes through the same parse in vLLM: FastAPI reads a
// pydantic-typed body with Starlette's request.json() (json.loads) and
// validates the dict in lax Python mode (not model_validate_json), for
// /v1/chat/completions as for /v1/responses, /v1/messages and the pooling
// routes. Only the models differ, so one reference with a table per API.

// kind is how vLLM's model types a member the gateway reads.
type kind int

const (
	kStr         kind = iota // str | None
	kReqStr                  // str, not Optional (null is refused)
	kPromptStr               // str | None, and part of the prompt
	kBool                    // bool | None, lax
	kCount                   // int | None, lax; negative refused by the gateway
	kOutputs                 // int | None, lax, answers per prompt (n, best_of); negative refused by the gateway
	kStreamOpts              // StreamOptions | None
	kMessages                // list (required by the model): counted, in the prompt whole
	kMessagesAny             // messages in a union of models: counted and in the prompt when a list, else vLLM's to judge
	kPrompt                  // any value: part of the prompt, its type vLLM's to judge
	kBatch                   // a completion's prompt: as kPrompt, and a batch when a list of strings or of lists
	kSalt                    // str | None, not empty (vLLM's check_cache_salt_support)
	kReplaced                // any value: the gateway replaces it (priority), vLLM never sees the client's
	kSystem                  // str | list[block] | None, part of the prompt
)

// apiSpec is one API: the members of vLLM's request model that the
// gateway reads (model, read by every API, aside).
type apiSpec struct {
	name    string
	set     Fields
	members map[string]kind
}

// apiSpecs are written from vLLM's models, not from the scanner's tables.
var apiSpecs = []apiSpec{
	{"chat", ChatFields, map[string]kind{ // ChatCompletionRequest, CompletionRequest, EmbeddingRequest
		"stream": kBool, "stream_options": kStreamOpts, "max_tokens": kCount, "max_completion_tokens": kCount,
		"user": kStr, "messages": kMessages, "prompt": kBatch, "input": kPrompt, "tools": kPrompt,
		"documents": kPrompt, "n": kOutputs, "best_of": kOutputs, "cache_salt": kSalt, "priority": kReplaced}},
	{"responses", ResponsesFields, map[string]kind{ // openai/responses/protocol.py ResponsesRequest
		"stream": kBool, "user": kStr, "input": kPrompt, "previous_response_id": kStr,
		"instructions": kPromptStr, "max_output_tokens": kCount, "store": kBool, "background": kBool,
		"request_id": kReqStr, "previous_input_messages": kPrompt, "previous_response": kPrompt, "tools": kPrompt,
		"cache_salt": kSalt, "priority": kReplaced}},
	{"messages", MessagesFields, map[string]kind{ // anthropic/protocol.py AnthropicMessagesRequest
		"stream": kBool, "max_tokens": kCount, "messages": kMessages, "system": kSystem, "tools": kPrompt}},
	{"pooling", PoolingFields, map[string]kind{ // rerank, score, tokenize, detokenize, pooling, classify
		"user": kStr, "messages": kMessagesAny, "prompt": kBatch, "input": kPrompt, "query": kPrompt,
		"documents": kPrompt, "queries": kPrompt, "items": kPrompt, "data_1": kPrompt, "data_2": kPrompt,
		"text_1": kPrompt, "text_2": kPrompt, "tokens": kPrompt, "data": kPrompt, "priority": kReplaced}},
}

// vllmFields is what vLLM makes of the fields the gateway reads.
type vllmFields struct {
	invalid      string // a read member vLLM would refuse (pydantic's validation): ScanWith must refuse it too
	rejected     string // vLLM refuses the body for a reason the gateway need not check (a required list missing)
	strs         map[string]*string
	bools        map[string]bool
	includeUsage bool // stream_options.include_usage as sent (OpenAI's default false when absent)
	maxTokens    int64
	outputs      int64 // the larger of n and best_of
	prompts      int   // a batched prompt's length
	messages     int
	promptBytes  int    // raw bytes of the prompt-bearing members (messages whole)
	ambiguous    string // a field ScanWith must refuse: duplicated or escaped key
	coerced      string // a field vLLM reads through a lax coercion ("stream": "yes", "max_tokens": 5.0)
}

// vllmRead decodes body as vLLM's model for api would. ok is false when
// Python's json would not read it at all, or reads it where Go's cannot say
// the same (invalid UTF-8, unpaired surrogates: vLLM refuses the first,
// and no routable value carries the second).
func vllmRead(body []byte, api apiSpec) (f vllmFields, ok bool) {
	if !utf8.Valid(body) || loneSurrogate.Match(body) || !json.Valid(body) {
		return f, false
	}
	var doc map[string]any // encoding/json: the last of duplicated keys wins, escapes decoded
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&doc) != nil || doc == nil {
		return f, false
	}
	var raw map[string]json.RawMessage // the same members' bytes, for the prompt's size
	json.Unmarshal(body, &raw)
	f.ambiguous = ambiguousKeys(body, api)
	f.strs, f.bools = map[string]*string{}, map[string]bool{}
	if _, reads := api.members["store"]; reads {
		f.bools["store"] = true // ResponsesRequest.store defaults to True
	}
	members := map[string]kind{"model": kStr}
	for k, kd := range api.members {
		members[k] = kd
	}
	for k, kd := range members {
		v, present := doc[k]
		if !present {
			continue
		}
		switch kd {
		case kReplaced: // read as nothing: whatever it is, it goes as 0
		case kStr, kReqStr, kPromptStr, kSalt:
			if kd == kPromptStr {
				f.promptBytes += len(raw[k])
			}
			if v == nil && kd != kReqStr {
				continue
			}
			s, isStr := v.(string)
			if !isStr || kd == kSalt && s == "" {
				f.invalid = k
			}
			f.strs[k] = &s
		case kBool:
			b, err := laxBool(v)
			if err != nil {
				f.invalid = k
			} else if _, isBool := v.(bool); !isBool && v != nil {
				f.coerced = k
			}
			f.bools[k] = b
		case kCount, kOutputs:
			n, err := laxInt(v)
			if err != nil {
				f.invalid = k
			} else if num, isNum := v.(json.Number); v != nil && (!isNum || strings.ContainsAny(num.String(), ".eE")) {
				f.coerced = k
			}
			if kd == kCount {
				f.maxTokens = max(f.maxTokens, n)
			} else {
				f.outputs = max(f.outputs, n)
			}
		case kStreamOpts:
			switch so := v.(type) {
			case nil:
			case map[string]any:
				b, err := laxBool(so["include_usage"])
				if err != nil {
					f.invalid = "include_usage"
				} else if _, isBool := so["include_usage"].(bool); !isBool && so["include_usage"] != nil {
					f.coerced = "stream_options.include_usage"
				}
				f.includeUsage = b
			default:
				f.invalid = "stream_options"
			}
		case kMessages, kMessagesAny:
			msgs, isList := v.([]any)
			if !isList {
				if kd == kMessages {
					f.rejected = k
				}
				continue
			}
			f.messages = len(msgs)
			f.promptBytes += len(raw[k])
		case kPrompt:
			f.promptBytes += len(raw[k])
		case kBatch:
			f.promptBytes += len(raw[k])
			if list, isList := v.([]any); isList && len(list) > 0 {
				switch list[0].(type) {
				case string, []any:
					f.prompts = len(list)
				}
			}
		case kSystem:
			f.promptBytes += len(raw[k])
			switch v.(type) {
			case nil, string, []any:
			default:
				f.invalid = k
			}
		}
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
// objects the gateway reads for api (top level, stream_options, each
// message).
func ambiguousKeys(body []byte, api apiSpec) string {
	top := map[string]bool{"model": true}
	for k := range api.members {
		top[k] = true
	}
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
			switch kd, reads := api.members[key]; {
			case ctx == "top" && reads && kd == kStreamOpts:
				sub = "stream_options"
			case ctx == "top" && reads && (kd == kMessages || kd == kMessagesAny):
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
			return keyed(ctx, top, func(k string) string { return k })
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

// checkAgainstVLLM fails t when ScanWith(body, api.set) and vLLM's
// reading of body disagree: the scan accepts it but reads a field
// differently, accepts what vLLM would refuse or a duplicated/escaped key,
// or refuses a body vLLM reads the same way with nothing ambiguous in it.
func checkAgainstVLLM(t *testing.T, body []byte, api apiSpec) {
	t.Helper()
	r, err := ScanWith(body, api.set)
	ref, ok := vllmRead(body, api)
	if !ok {
		return
	}
	var se *SyntaxError
	if errors.As(err, &se) {
		if !strings.Contains(se.Msg, "nested deeper") {
			t.Fatalf("%s: ScanWith refused valid JSON %q: %v", api.name, body, err)
		}
		return
	}
	if err != nil {
		if ref.ambiguous == "" && ref.invalid == "" && ref.coerced == "" {
			t.Fatalf("%s: ScanWith refused %q (%v) with nothing ambiguous in it", api.name, body, err)
		}
		return
	}
	if ref.ambiguous != "" {
		t.Fatalf("%s: ScanWith accepted %q: key %q is duplicated or escaped", api.name, body, ref.ambiguous)
	}
	if ref.invalid != "" || ref.coerced != "" {
		t.Fatalf("%s: ScanWith accepted %q, where vLLM would refuse %q or coerce %q", api.name, body, ref.invalid, ref.coerced)
	}
	got, want := scanView(body, &r), refView(&ref)
	got["prompt_bytes"], want["prompt_bytes"] = r.PromptBytes, ref.promptBytes
	got["messages"], want["messages"] = r.Messages, ref.messages
	got["prompts"], want["prompts"] = r.Prompts, ref.prompts
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: in %q\n ScanWith %v\n vLLM     %v", api.name, body, got, want)
	}
}

// viewKeys are the values compared between the scan, the reference and
// Python: every API's, so that a member an API does not read is seen to
// stay unread.
var viewKeys = []string{"model", "user", "previous_response_id", "instructions", "request_id", "cache_salt",
	"stream", "store", "background", "max_tokens", "n", "include_usage"}

// scanView is what the scan read, by viewKeys.
func scanView(body []byte, r *Request) map[string]any {
	str := func(s Span) any {
		if s.Len() == 0 {
			return "<absent>"
		}
		var v string
		json.Unmarshal(body[s.Start:s.End], &v)
		return v
	}
	return map[string]any{"model": str(r.Model), "user": str(r.User),
		"previous_response_id": str(r.PreviousResponse), "instructions": str(r.Instructions),
		"request_id": str(r.RequestID), "cache_salt": str(r.CacheSalt), "stream": r.Stream, "store": r.Store, "background": r.Background,
		"max_tokens": r.MaxTokens, "n": r.N, "include_usage": r.IncludeUsage}
}

// refView is what the reference read, by viewKeys.
func refView(f *vllmFields) map[string]any {
	v := map[string]any{"max_tokens": f.maxTokens, "n": f.outputs, "include_usage": f.includeUsage}
	for _, k := range []string{"model", "user", "previous_response_id", "instructions", "request_id", "cache_salt"} {
		v[k] = deref(f.strs[k])
	}
	for _, k := range []string{"stream", "store", "background"} {
		v[k] = f.bools[k]
	}
	return v
}

func deref(s *string) string {
	if s == nil {
		return "<absent>"
	}
	return *s
}

// FuzzScanVLLM is the differential fuzz target (make fuzz): each input is
// read as every API's body.
func FuzzScanVLLM(f *testing.F) {
	for _, b := range generateBodies(rand.New(rand.NewPCG(1, 2)), 200) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, api := range apiSpecs {
			checkAgainstVLLM(t, body, api)
		}
	})
}

// TestScanAgainstVLLMGenerated runs the differential check over bodies
// generated to hit the classes that matter: duplicates, escaped keys,
// unicode, nesting, numbers, coercible types; each body read as every
// API's (a member of one API is an unread extra in another).
func TestScanAgainstVLLMGenerated(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 2026))
	for _, b := range generateBodies(rng, 20000) {
		for _, api := range apiSpecs {
			checkAgainstVLLM(t, b, api)
		}
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
		switch rng.IntN(7) {
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
		case 5:
			return `[{"type":"text","text":` + pick(strs) + `}]`
		}
		return `[{"role":"user","content":` + pick(strs) + `}]`
	}
	prompts := []string{"prompt", "input", "inp\\u0075t", "n", "tools", "query", "documents", "queries",
		"items", "data_1", "data_2", "text_1", "text_2", "tokens", "data", "d\\u0061ta", "previous_input_messages",
		"previous_response", "system", "syst\\u0065m", "instructions", "metadata", "priority", "pri\\u006frity"}
	member := func() string {
		switch rng.IntN(16) {
		case 0, 1:
			return `"` + pick(keys("model")) + `":` + pick(append(strs, `null`))
		case 2:
			return `"` + pick(keys(pick([]string{"stream", "store", "background"}))) + `":` + pick(bools)
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
			return `"` + pick(keys(pick([]string{"max_completion_tokens", "max_output_tokens"}))) + `":` + pick(nums)
		case 6:
			return `"` + pick(keys("user")) + `":` + pick(append(strs, `5`, `null`))
		case 7, 8:
			msg := `{"role":"user","` + pick(keys("content")) + `":` + pick(append(strs, `[{"type":"text","text":"hi"}]`))
			if rng.IntN(4) == 0 {
				msg += `,"` + pick(keys("content")) + `":` + pick(strs)
			}
			msgs := msg + `}`
			if rng.IntN(2) == 0 {
				msgs += `,{"role":"assistant","content":` + pick(strs) + `}`
			}
			if rng.IntN(8) == 0 {
				return `"messages":` + pick(strs)
			}
			return `"` + pick(keys("messages")) + `":[` + msgs + `]`
		case 9, 10:
			return `"` + pick(prompts) + `":` + value(3)
		case 11:
			return `"` + pick(keys(pick([]string{"previous_response_id", "request_id", "instructions", "cache_salt"}))) + `":` +
				pick(append(strs, `null`, `5`, `["a"]`))
		case 12:
			return `"` + pick(keys(pick([]string{"system", "query", "documents", "text_1", "input"}))) + `":` + value(2)
		}
		return `"x":` + value(3)
	}
	out := make([][]byte, 0, n)
	for range n {
		m := make([]string, 1+rng.IntN(6))
		for i := range m {
			m[i] = member()
		}
		sep := pick([]string{",", ", ", " ,\n"})
		out = append(out, []byte("{"+strings.Join(m, sep)+"}"))
	}
	return out
}

// pythonReference reads bodies with the real Python json module and, per
// API, a pydantic model holding vLLM's types for the members the gateway
// reads (lax mode, validate_python on json.loads's dict: what FastAPI does
// with a body parameter). Required-ness is not modelled: vLLM refusing a
// body that lacks model or max_tokens is no bypass, and the gateway refuses
// a missing model itself. Each line in is "api base64(body)"; each line out
// is "invalid" or the viewKeys' values as a JSON object.
const pythonReference = `
import sys, json, base64
from typing import Optional, Any, Union
from pydantic import BaseModel, ValidationError
class StreamOptions(BaseModel):
    include_usage: Optional[bool] = False
class Chat(BaseModel):  # ChatCompletionRequest
    model: Optional[str] = None
    stream: Optional[bool] = False
    stream_options: Optional[StreamOptions] = None
    max_tokens: Optional[int] = None
    max_completion_tokens: Optional[int] = None
    user: Optional[str] = None
    messages: Optional[list[Any]] = None
    cache_salt: Optional[str] = None
    n: Optional[int] = None  # vLLM: 1 (CompletionRequest: int = 1); None and 0 both mean one answer here
    best_of: Optional[int] = None
class Responses(BaseModel):  # ResponsesRequest
    model: Optional[str] = None
    stream: Optional[bool] = False
    user: Optional[str] = None
    previous_response_id: Optional[str] = None
    instructions: Optional[str] = None
    max_output_tokens: Optional[int] = None
    store: Optional[bool] = True
    background: Optional[bool] = False
    request_id: str = "<absent>"  # vLLM: default_factory=random_uuid
    cache_salt: Optional[str] = None
class Messages(BaseModel):  # AnthropicMessagesRequest (model: str and max_tokens: int are required there)
    model: Optional[str] = None
    stream: Optional[bool] = False
    max_tokens: Optional[int] = None
    system: Union[str, list[Any], None] = None
    messages: Optional[list[Any]] = None
class Pooling(BaseModel):  # PoolingBasicRequestMixin
    model: Optional[str] = None
    user: Optional[str] = None
models = {"chat": Chat, "responses": Responses, "messages": Messages, "pooling": Pooling}
counts = ["max_tokens", "max_completion_tokens", "max_output_tokens"]
for line in sys.stdin:
    api, b64 = line.split()
    body = base64.b64decode(b64)
    try:
        r = models[api].model_validate(json.loads(body))
    except (ValueError, ValidationError):
        print("invalid"); continue
    ns = [getattr(r, k, None) or 0 for k in counts]
    outs = [getattr(r, k, None) or 0 for k in ["n", "best_of"]]
    if getattr(r, "cache_salt", None) == "":  # vLLM: "must be a non-empty string if provided"
        print("invalid"); continue
    if min(ns + outs) < 0:
        print("invalid"); continue
    so = getattr(r, "stream_options", None)
    out = {"max_tokens": min(max(ns), 2**63-1), "n": min(max(outs), 2**63-1), "include_usage": bool(so and so.include_usage)}
    for k in ["model", "user", "previous_response_id", "instructions", "request_id", "cache_salt"]:
        v = getattr(r, k, None)
        out[k] = "<absent>" if v is None else v
    for k in ["stream", "store", "background"]:
        out[k] = bool(getattr(r, k, False))
    print(json.dumps(out))
`

// TestReferenceAgainstPython checks vllmRead, the test's model of vLLM,
// against Python's json and pydantic themselves, on the generated bodies
// read as every API's. It needs python3 with pydantic (skipped without
// them).
func TestReferenceAgainstPython(t *testing.T) {
	if exec.Command("python3", "-c", "import pydantic").Run() != nil {
		t.Skip("python3 with pydantic not installed")
	}
	type job struct {
		body []byte
		api  apiSpec
	}
	var jobs []job
	var in bytes.Buffer
	for _, b := range generateBodies(rand.New(rand.NewPCG(7, 7)), 3000) {
		for _, api := range apiSpecs {
			jobs = append(jobs, job{b, api})
			in.WriteString(api.name + " " + base64.StdEncoding.EncodeToString(b) + "\n")
		}
	}
	cmd := exec.Command("python3", "-c", pythonReference)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(jobs) {
		t.Fatalf("python3 answered %d lines for %d bodies", len(lines), len(jobs))
	}
	compared := map[string]int{}
	for i, j := range jobs {
		ref, ok := vllmRead(j.body, j.api)
		if !ok {
			continue
		}
		refInvalid := ref.invalid != "" || ref.rejected != ""
		if refInvalid || lines[i] == "invalid" {
			if refInvalid != (lines[i] == "invalid") {
				t.Errorf("%s %q: python %s, reference invalid=%q rejected=%q", j.api.name, j.body, lines[i], ref.invalid, ref.rejected)
			}
			continue
		}
		var got map[string]any
		dec := json.NewDecoder(strings.NewReader(lines[i]))
		dec.UseNumber()
		if err := dec.Decode(&got); err != nil {
			t.Fatalf("python line %q: %v", lines[i], err)
		}
		for k, v := range got {
			if n, isNum := v.(json.Number); isNum {
				got[k], _ = strconv.ParseInt(n.String(), 10, 64)
			}
		}
		if want := refView(&ref); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s %q:\n python    %v\n reference %v", j.api.name, j.body, got, want)
		}
		compared[j.api.name]++
	}
	for _, api := range apiSpecs {
		if compared[api.name] < 300 {
			t.Fatalf("only %d %s bodies compared", compared[api.name], api.name)
		}
	}
	t.Logf("bodies read alike by Python+pydantic and the reference, by API: %v", compared)
}
