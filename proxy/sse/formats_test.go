package sse

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// responsesStream is a vLLM Responses stream cut at max_output_tokens, in
// vLLM's shapes: "event:" lines (api_router's _convert_stream_to_sse_events),
// the openai SDK's event models (fields in alphabetical order, "type" last),
// vLLM's ResponsesResponse (id first, status after output) and its only end
// event, response.completed, whatever the status. No [DONE].
var responsesStream = "event: response.created\n" +
	`data: {"response":{"id":"resp_abc","created_at":1733300000,"incomplete_details":null,"instructions":null,"metadata":null,"model":"m","object":"response","output":[],"parallel_tool_calls":true,"temperature":1.0,"tool_choice":"auto","tools":[],"top_p":1.0,"background":false,"max_output_tokens":16,"max_tool_calls":null,"previous_response_id":null,"prompt":null,"reasoning":null,"service_tier":"auto","status":"in_progress","text":null,"top_logprobs":null,"truncation":"disabled","usage":null,"user":null,"input_messages":null,"output_messages":null},"sequence_number":0,"type":"response.created"}` + "\n\n" +
	"event: response.in_progress\n" +
	`data: {"response":{"id":"resp_abc","created_at":1733300000,"incomplete_details":null,"model":"m","object":"response","output":[],"status":"in_progress","usage":null},"sequence_number":1,"type":"response.in_progress"}` + "\n\n" +
	"event: response.output_item.added\n" +
	`data: {"item":{"id":"msg_1","content":[],"role":"assistant","status":"in_progress","type":"message"},"output_index":0,"sequence_number":2,"type":"response.output_item.added"}` + "\n\n" +
	"event: response.content_part.added\n" +
	`data: {"content_index":0,"item_id":"msg_1","output_index":0,"part":{"annotations":[],"text":"","type":"output_text","logprobs":null},"sequence_number":3,"type":"response.content_part.added"}` + "\n\n" +
	"event: response.output_text.delta\n" +
	`data: {"content_index":0,"delta":"Hi","item_id":"msg_1","logprobs":[],"output_index":0,"sequence_number":4,"type":"response.output_text.delta"}` + "\n\n" +
	"event: response.output_text.done\n" +
	`data: {"content_index":0,"item_id":"msg_1","logprobs":[],"output_index":0,"sequence_number":5,"text":"Hi","type":"response.output_text.done"}` + "\n\n" +
	"event: response.completed\n" +
	`data: {"response":{"id":"resp_abc","created_at":1733300000,"incomplete_details":{"reason":"max_output_tokens"},"model":"m","object":"response","output":[{"id":"msg_1","content":[{"annotations":[],"text":"Hi","type":"output_text","logprobs":null}],"role":"assistant","status":"completed","type":"message"}],"status":"incomplete","usage":{"input_tokens":12,"input_tokens_details":{"cached_tokens":8,"input_tokens_per_turn":[],"cached_tokens_per_turn":[]},"output_tokens":16,"output_tokens_details":{"reasoning_tokens":0,"tool_output_tokens":0,"output_tokens_per_turn":[],"tool_output_tokens_per_turn":[]},"total_tokens":28},"user":null},"sequence_number":6,"type":"response.completed"}` + "\n\n"

// messagesStream is a vLLM Messages stream in vLLM's shapes
// (anthropic/serving.py's message_stream_converter: pydantic dumps with
// exclude_unset, "type" first; message_start from the first chat chunk with
// output_tokens 0; message_delta repeating input_tokens; [DONE] turned into
// message_stop).
var messagesStream = "event: message_start\n" +
	`data: {"type":"message_start","message":{"id":"chatcmpl-1","content":[],"model":"m","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":0}}}` + "\n\n" +
	"event: content_block_start\n" +
	`data: {"type":"content_block_start","content_block":{"type":"text","text":""},"index":0}` + "\n\n" +
	"event: content_block_delta\n" +
	`data: {"type":"content_block_delta","delta":{"type":"text_delta","text":"Hi"},"index":0}` + "\n\n" +
	"event: content_block_stop\n" +
	`data: {"type":"content_block_stop","index":0}` + "\n\n" +
	"event: message_delta\n" +
	`data: {"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"input_tokens":12,"output_tokens":16}}` + "\n\n" +
	"event: message_stop\n" +
	`data: {"type":"message_stop"}` + "\n\n"

// streamSummary is what the relay makes of a stream: the index of the
// first content event, the last finish reason, the merged usage, the first
// response id, and the index of the end event.
type streamSummary struct {
	first, done int
	finish, id  string
	usage       Usage
}

func summarize(f Format, stream string) (streamSummary, []Event) {
	s := streamSummary{first: -1, done: -1}
	var evs []Event
	for i, e := range split([]byte(stream)) {
		ev := InspectAs(f, []byte(e))
		evs = append(evs, ev)
		if ev.HasContent && s.first < 0 {
			s.first = i
		}
		if ev.FinishReason != "" {
			s.finish = ev.FinishReason
		}
		if ev.ResponseID != "" && s.id == "" {
			s.id = ev.ResponseID
		}
		if ev.Done && s.done < 0 {
			s.done = i
		}
		s.usage.Merge(ev.Usage)
	}
	return s, evs
}

func TestResponsesStream(t *testing.T) {
	s, evs := summarize(Responses, responsesStream)
	want := streamSummary{first: 4, done: 6, finish: "max_output_tokens", id: "resp_abc",
		usage: Usage{Prompt: 12, Completion: 16, Total: 28, Cached: 8, Found: true}}
	if s != want {
		t.Fatalf("got %+v\nwant %+v", s, want)
	}
	if len(evs) != 7 || evs[0].ResponseID != "resp_abc" {
		t.Fatalf("response.created: %+v", evs[0])
	}
	for i, ev := range evs {
		if ev.UsageOnly || (ev.Usage.Found && i != 6) || (ev.Done && i != 6) {
			t.Errorf("event %d: %+v", i, ev)
		}
	}
	// The Responses usage event alone is the whole usage.
	if evs[6].Usage != want.usage {
		t.Errorf("usage of the end event: %+v", evs[6].Usage)
	}
}

func TestMessagesStream(t *testing.T) {
	s, evs := summarize(Messages, messagesStream)
	want := streamSummary{first: 2, done: 5, finish: "max_tokens",
		usage: Usage{Prompt: 12, Completion: 16, Total: 28, Found: true}}
	if s != want {
		t.Fatalf("got %+v\nwant %+v", s, want)
	}
	for i, ev := range evs {
		if ev.UsageOnly || ev.ResponseID != "" || (ev.Done && i != 5) {
			t.Errorf("event %d: %+v", i, ev)
		}
	}
	// Anthropic's own shapes: message_delta reports output tokens alone,
	// and input_tokens leaves out the cached tokens reported beside it.
	start := `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":20,"output_tokens":1}}}`
	delta := `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":15}}`
	var u Usage
	for _, d := range []string{start, delta} {
		u.Merge(InspectAs(Messages, []byte("event: x\ndata: "+d+"\n\n")).Usage)
	}
	if u != (Usage{Prompt: 25, Completion: 15, Total: 40, Cached: 20, Found: true}) {
		t.Errorf("Anthropic's usage merged: %+v", u)
	}
	// A stream cut after message_start (a client that left early) has its
	// input tokens but no output count: it is not a reported usage, which
	// would settle the token reservation at zero output.
	var cut Usage
	cut.Merge(InspectAs(Messages, []byte("event: x\ndata: "+start+"\n\n")).Usage)
	if cut.Found || cut.Prompt != 25 {
		t.Errorf("usage after message_start alone: %+v, want the prompt and Found false", cut)
	}
}

// Each format's events read alone, including shapes vLLM does not send and
// hostile ones.
func TestInspectAsShapes(t *testing.T) {
	usage := Usage{Prompt: 3, Completion: 2, Total: 5, Found: true}
	for _, c := range []struct {
		name  string
		f     Format
		event string // data, or a whole event if it begins with "event:"
		want  Event
	}{
		{"reasoning delta", Responses, `{"content_index":0,"delta":"hm","item_id":"r","output_index":0,"sequence_number":4,"type":"response.reasoning_text.delta"}`, Event{HasContent: true}},
		{"function call arguments delta", Responses, `{"delta":"{\"a\"","item_id":"fc","output_index":0,"sequence_number":4,"type":"response.function_call_arguments.delta"}`, Event{HasContent: true}},
		{"empty delta", Responses, `{"content_index":0,"delta":"","item_id":"m","output_index":0,"sequence_number":4,"type":"response.output_text.delta"}`, Event{}},
		{"null delta", Responses, `{"delta":null,"type":"response.output_text.delta"}`, Event{}},
		{"object delta (older vLLM)", Responses, `{"delta":{"content":"We"},"type":"response.reasoning.delta"}`, Event{HasContent: true}},
		{"delta look-alike in a string", Responses, `{"text":"x\"delta\":\"y","delta":"","type":"response.output_text.delta"}`, Event{}},
		{"OpenAI's order: type first", Responses, `{"type":"response.output_text.delta","item_id":"m","output_index":0,"content_index":0,"delta":"Hi","sequence_number":4}`, Event{HasContent: true}},
		{"type in the middle", Responses, `{"delta":"Hi","type":"response.output_text.delta","sequence_number":4}`, Event{HasContent: true}},
		{"spaced", Responses, "{ \"delta\" : \"Hi\" ,\t \"type\" : \"response.output_text.delta\" }", Event{HasContent: true}},
		{"type from the event line only", Responses, "event: response.output_text.delta\ndata: {\"delta\":\"Hi\"}\n\n", Event{HasContent: true}},
		{"JSON type wins over the event line", Responses, "event: response.completed\ndata: {\"delta\":\"Hi\",\"type\":\"response.output_text.delta\"}\n\n", Event{HasContent: true}},
		{"nested type is not the event's", Responses, `{"item":{"type":"response.completed"}}`, Event{}},
		{"type look-alike at the end of a string", Responses, `{"a":"x\",\"type\":\"response.completed\"}`, Event{}},
		{"escaped type", Responses, `{"delta":"Hi","type":"response.output_text.\u0064elta"}`, Event{HasContent: true}},
		{"incomplete (OpenAI)", Responses, `{"type":"response.incomplete","sequence_number":9,"response":{"id":"resp_1","object":"response","status":"incomplete","incomplete_details":{"reason":"content_filter"},"output":[],"usage":{"input_tokens":3,"output_tokens":2,"total_tokens":5,"input_tokens_details":{"cached_tokens":0}}}}`,
			Event{Done: true, FinishReason: "content_filter", ResponseID: "resp_1", Usage: usage}},
		{"completed, no total", Responses, `{"response":{"id":"r","status":"completed","usage":{"input_tokens":3,"output_tokens":2}},"type":"response.completed"}`,
			Event{Done: true, FinishReason: "completed", ResponseID: "r", Usage: usage}},
		{"failed, usage null", Responses, `{"response":{"id":"r","status":"failed","error":{"code":"server_error","message":"x"},"usage":null},"sequence_number":3,"type":"response.failed"}`,
			Event{Done: true, FinishReason: "failed", ResponseID: "r"}},
		{"error event", Responses, `{"type":"error","code":"x","message":"usage","param":null,"sequence_number":2}`, Event{}},
		{"[DONE] from some other server", Responses, "[DONE]", Event{Done: true}},
		{"cut short", Responses, `{"response":{"id":"r","status":"completed","usage":{"input_tok`, Event{}},
		{"chat event read as Responses", Responses, `{"choices":[{"delta":{"content":"Hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3}}`, Event{}},
		{"thinking delta", Messages, `{"type":"content_block_delta","delta":{"type":"thinking_delta","thinking":"hm"},"index":0}`, Event{HasContent: true}},
		{"tool input delta", Messages, `{"type":"content_block_delta","delta":{"type":"input_json_delta","partial_json":"{\"a"},"index":1}`, Event{HasContent: true}},
		{"block start is no token", Messages, `{"type":"content_block_start","content_block":{"type":"text","text":""},"index":0}`, Event{}},
		{"ping", Messages, `{"type": "ping"}`, Event{}},
		{"error", Messages, `{"type":"error","error":{"type":"internal_error","message":"stop_reason"}}`, Event{}},
		{"stop", Messages, `{"type":"message_stop"}`, Event{Done: true}},
		{"stop from the event line", Messages, "event: message_stop\ndata: {}\n\n", Event{Done: true}},
		{"message_delta usage in full", Messages, `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"input_tokens":3,"output_tokens":2}}`,
			Event{FinishReason: "tool_use", Usage: Usage{Prompt: 3, Completion: 2, Total: 5, Found: true, missing: missTotal | missCached}}},
		{"stop reason look-alike in a string", Messages, `{"type":"content_block_delta","delta":{"type":"text_delta","text":"\"stop_reason\":\"x\", \"type\":\"message_stop\""},"index":0}`, Event{HasContent: true}},
		{"chat event read as Messages", Messages, `{"choices":[{"delta":{"content":"Hi"},"finish_reason":"stop"}]}`, Event{}},
		{"empty", Messages, "", Event{}},
	} {
		ev := c.event
		if !strings.HasPrefix(ev, "event:") {
			ev = "event: x\ndata: " + ev + "\n\n"
		}
		if got := InspectAs(c.f, []byte(ev)); got != c.want {
			t.Errorf("%s: %+v\nwant %+v", c.name, got, c.want)
		}
	}
}

// For Chat, InspectAs is Inspect and merging is replacing.
func TestChatUnchanged(t *testing.T) {
	running := []Usage{{}, {Prompt: 1, Completion: 1, Total: 99, Cached: 1, Found: true}}
	for _, e := range append(split([]byte(vllmStream)), "data: {\"usage\":{\"prompt_tokens\":3}}\n\n") {
		ev := InspectAs(Chat, []byte(e))
		if ev != Inspect([]byte(e)) {
			t.Fatalf("%q: InspectAs(Chat) %+v, Inspect %+v", e, ev, Inspect([]byte(e)))
		}
		if !ev.Usage.Found {
			continue
		}
		for _, u := range running {
			if u.Merge(ev.Usage); u != ev.Usage {
				t.Errorf("%q: merged %+v, replaced %+v", e, u, ev.Usage)
			}
		}
	}
	if BodyUsageAs(Chat, answer) != BodyUsage(answer) || BodyFinishReason(Chat, answer) != "stop" || BodyResponseID(Chat, answer) != "" {
		t.Error("Chat's whole answer")
	}
	var u Usage
	if u.Merge(Usage{Prompt: 5}); u != (Usage{}) {
		t.Errorf("a usage not found merged: %+v", u)
	}
}

// responsesAnswer is a whole vLLM Responses answer (JSONResponse of
// ResponsesResponse.model_dump(): compact, fields in vLLM's order) with
// look-alikes: status and usage in the output text, an echoed tool schema
// with properties named usage, status and id, and items' own statuses.
var responsesAnswer = `{"id":"resp_abc","created_at":1733300000,"incomplete_details":null,"instructions":null,"metadata":null,"model":"m","object":"response","output":[{"id":"msg_1","content":[{"annotations":[],"text":"\"status\":\"failed\", \"usage\":{\"input_tokens\":1}, \"id\": \"x\"","type":"output_text","logprobs":null}],"role":"assistant","status":"completed","type":"message"}],"parallel_tool_calls":true,"temperature":1.0,"tool_choice":"auto","tools":[{"name":"f","parameters":{"type":"object","properties":{"usage":{"type":"object"},"status":{"type":"string"},"id":{"type":"string"}}},"strict":null,"type":"function","description":null}],"top_p":1.0,"background":false,"max_output_tokens":16,"max_tool_calls":null,"previous_response_id":null,"prompt":null,"reasoning":null,"service_tier":"auto","status":"completed","text":null,"top_logprobs":null,"truncation":"disabled","usage":{"input_tokens":12,"input_tokens_details":{"cached_tokens":8,"input_tokens_per_turn":[],"cached_tokens_per_turn":[]},"output_tokens":16,"output_tokens_details":{"reasoning_tokens":0,"tool_output_tokens":0,"output_tokens_per_turn":[],"tool_output_tokens_per_turn":[]},"total_tokens":28},"user":null,"input_messages":null,"output_messages":null}`

// messagesAnswer is a whole vLLM Messages answer (model_dump(exclude_none))
// whose tool input holds keys named stop_reason and usage.
var messagesAnswer = `{"id":"chatcmpl-1","type":"message","role":"assistant","content":[{"type":"text","text":"hi \"stop_reason\": \"x\""},{"type":"tool_use","id":"call_1","name":"f","input":{"stop_reason":"x","usage":{"input_tokens":99}}}],"model":"m","stop_reason":"tool_use","usage":{"input_tokens":12,"output_tokens":16}}`

type answerCase struct {
	name   string
	f      Format
	body   string
	usage  Usage
	finish string
	id     string
}

var answerCases = []answerCase{
	{"vLLM's Responses answer", Responses, responsesAnswer, Usage{Prompt: 12, Completion: 16, Total: 28, Cached: 8, Found: true}, "completed", "resp_abc"},
	{"incomplete", Responses, `{"id":"r","incomplete_details":{"reason":"max_output_tokens"},"output":[],"status":"incomplete","usage":{"input_tokens":3,"output_tokens":2,"total_tokens":5}}`, Usage{Prompt: 3, Completion: 2, Total: 5, Found: true}, "max_output_tokens", "r"},
	{"OpenAI's order, spaced", Responses, "{ \"id\" : \"r\" , \"object\": \"response\", \"status\" :\n\"completed\", \"output\": [{\"id\":\"m\",\"status\":\"in_progress\",\"usage\":{\"input_tokens\":1}}], \"usage\" : { \"input_tokens\" : 3 , \"output_tokens\": 2, \"total_tokens\": 5 } }", Usage{Prompt: 3, Completion: 2, Total: 5, Found: true}, "completed", "r"},
	{"escaped key", Responses, `{"\u0069d":"r","st\u0061tus":"failed","usage":null}`, Usage{}, "failed", "r"},
	{"error answer", Responses, `{"error":{"message":"usage","type":"BadRequestError","param":null,"code":400}}`, Usage{}, "", ""},
	{"vLLM's Messages answer", Messages, messagesAnswer, Usage{Prompt: 12, Completion: 16, Total: 28, Found: true}, "tool_use", ""},
	{"Anthropic's, cached", Messages, `{"id":"msg_1","type":"message","role":"assistant","model":"claude","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":5,"cache_creation_input_tokens":null,"cache_read_input_tokens":20,"output_tokens":15}}`, Usage{Prompt: 25, Completion: 15, Total: 40, Cached: 20, Found: true}, "end_turn", ""},
	{"array, not an object", Messages, `[{"stop_reason":"end_turn","usage":{"input_tokens":1}}]`, Usage{}, "", ""},
	{"cut short", Messages, `{"id":"m","stop_reason":"end_turn","usage":{"input_tokens":5,"output`, Usage{}, "end_turn", ""},
}

func TestBodyAs(t *testing.T) {
	for _, c := range answerCases {
		b := []byte(c.body)
		if u, fin, id := BodyUsageAs(c.f, b), BodyFinishReason(c.f, b), BodyResponseID(c.f, b); u != c.usage || fin != c.finish || id != c.id {
			t.Errorf("%s: usage %+v finish %q id %q\nwant %+v %q %q", c.name, u, fin, id, c.usage, c.finish, c.id)
		}
	}
}

// readAsInPieces feeds body to a reader of format f in the given pieces.
func readAsInPieces(f Format, pieces ...[]byte) (Usage, string, string) {
	r := NewAnswerReaderAs(f)
	for _, p := range pieces {
		r.Feed(p)
	}
	return r.Usage(), r.FinishReason(), r.ResponseID()
}

// However an answer is cut (at every point in two, at every point in three
// around it, and in pieces of n bytes), the reader reads what the whole
// gives.
func TestAnswerReaderAsPieces(t *testing.T) {
	for _, c := range answerCases {
		b := []byte(c.body)
		check := func(how string, pieces ...[]byte) {
			t.Helper()
			if u, fin, id := readAsInPieces(c.f, pieces...); u != c.usage || fin != c.finish || id != c.id {
				t.Fatalf("%s, %s: usage %+v finish %q id %q", c.name, how, u, fin, id)
			}
		}
		for i := 0; i <= len(b); i++ {
			check(fmt.Sprintf("cut at %d", i), b[:i], b[i:])
			if i > 0 {
				check(fmt.Sprintf("cut at %d and %d", i-1, i), b[:i-1], b[i-1:i], b[i:])
			}
		}
		for _, n := range []int{1, 2, 3, 7} {
			var pieces [][]byte
			for p := b; len(p) > 0; p = p[min(len(p), n):] {
				pieces = append(pieces, p[:min(len(p), n)])
			}
			check(fmt.Sprintf("pieces of %d", n), pieces...)
		}
	}
}

// Values past maxValue are dropped, not held; a long text before the usage
// costs nothing to hold.
func TestAnswerReaderAsBounds(t *testing.T) {
	long := strings.Repeat(`tok \" \\ {[`, 200_000)
	body := `{"id":"r","output":[{"content":[{"text":"` + long + `"}]}],"status":"completed","usage":{"input_tokens":3,"output_tokens":2,"total_tokens":5}}`
	for _, n := range []int{1 << 10, 32 << 10, len(body)} {
		r := NewAnswerReaderAs(Responses)
		for p := []byte(body); len(p) > 0; p = p[min(len(p), n):] {
			r.Feed(p[:min(len(p), n)])
		}
		if u := r.Usage(); u.Total != 5 || r.FinishReason() != "completed" || r.ResponseID() != "r" {
			t.Fatalf("pieces of %d: %+v", n, u)
		}
		if held := cap(r.top.val) + cap(r.top.key); held > 2*maxValue {
			t.Fatalf("pieces of %d: holds %d bytes", n, held)
		}
	}
	huge := `{"id":"` + strings.Repeat("x", maxValue) + `","usage":{"input_tokens":1,"pad":"` + strings.Repeat("y", maxValue) + `"}}`
	if u, id := BodyUsageAs(Responses, []byte(huge)), BodyResponseID(Responses, []byte(huge)); u.Found || id != "" {
		t.Errorf("values past maxValue kept: %+v %q", u, id)
	}
}

// Any bytes, any format: no panic; for Chat, InspectAs is Inspect; a valid
// answer read in pieces gives what the whole gives.
func FuzzInspectAs(f *testing.F) {
	f.Add([]byte(strings.SplitAfter(responsesStream, "\n\n")[4]), uint8(Responses), uint16(9))
	f.Add([]byte(strings.SplitAfter(messagesStream, "\n\n")[4]), uint8(Messages), uint16(3))
	f.Add([]byte(messagesAnswer), uint8(Messages), uint16(100))
	f.Add([]byte(vllmStream), uint8(Chat), uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, format uint8, cut uint16) {
		fm := Format(format % 4) // 3: an unknown format, read as Chat
		ev := InspectAs(fm, data)
		if fm != Responses && fm != Messages {
			if want := Inspect(data); ev != want {
				t.Fatalf("InspectAs(%d) %+v, Inspect %+v", fm, ev, want)
			}
			return
		}
		if ev.UsageOnly {
			t.Fatal("UsageOnly outside Chat")
		}
		// A usage settles a response only once it reports the completion's
		// size (Merge's rule): a Messages event whose usage lacks
		// output_tokens (message_start, or an empty usage object) is found
		// but leaves the merged usage unfound.
		var u Usage
		u.Merge(ev.Usage)
		settles := ev.Usage.Found && ev.Usage.missing&missCompletion == 0
		if u.Found != settles || u.missing != 0 {
			t.Fatalf("merged %+v from %+v", u, ev.Usage)
		}
		if !json.Valid(data) || len(data) > maxValue {
			return
		}
		i := int(cut) % (len(data) + 1)
		gu, gf, gid := readAsInPieces(fm, data[:i], data[i:])
		if wu, wf, wid := BodyUsageAs(fm, data), BodyFinishReason(fm, data), BodyResponseID(fm, data); gu != wu || gf != wf || gid != wid {
			t.Fatalf("cut at %d: %+v %q %q; whole: %+v %q %q", i, gu, gf, gid, wu, wf, wid)
		}
		if bytes.Count(data, []byte(`"usage"`)) == 0 && gu.Found {
			t.Fatal("usage found without a usage key")
		}
	})
}

// BenchmarkInspectAsChatTokenEvent: InspectAs(Chat) against Inspect
// (BenchmarkInspectTokenEvent).
func BenchmarkInspectAsChatTokenEvent(b *testing.B) {
	ev := []byte(strings.SplitAfter(vllmStream, "\n\n")[0])
	b.ReportAllocs()
	for b.Loop() {
		InspectAs(Chat, ev)
	}
}

// BenchmarkInspectAsResponsesDelta: the per-token event of a vLLM
// Responses stream ("type" last).
func BenchmarkInspectAsResponsesDelta(b *testing.B) {
	ev := []byte(strings.SplitAfter(responsesStream, "\n\n")[4])
	b.ReportAllocs()
	for b.Loop() {
		if !InspectAs(Responses, ev).HasContent {
			b.Fatal("no content")
		}
	}
}

// BenchmarkInspectAsMessagesDelta: the per-token event of a vLLM Messages
// stream ("type" first).
func BenchmarkInspectAsMessagesDelta(b *testing.B) {
	ev := []byte(strings.SplitAfter(messagesStream, "\n\n")[2])
	b.ReportAllocs()
	for b.Loop() {
		if !InspectAs(Messages, ev).HasContent {
			b.Fatal("no content")
		}
	}
}

// BenchmarkInspectAsResponsesCompleted: the end event, parsed (once a stream).
func BenchmarkInspectAsResponsesCompleted(b *testing.B) {
	ev := []byte(strings.SplitAfter(responsesStream, "\n\n")[6])
	b.ReportAllocs()
	for b.Loop() {
		if !InspectAs(Responses, ev).Usage.Found {
			b.Fatal("no usage")
		}
	}
}

// BenchmarkAnswerReaderResponses: a 2 MB Responses answer read as it
// passes, in the relay's 32 KiB reads (compare BenchmarkAnswerReader).
func BenchmarkAnswerReaderResponses(b *testing.B) {
	body := []byte(`{"id":"r","output":[{"content":[{"text":"` + strings.Repeat("tok ", 500_000) +
		`","type":"output_text"}]}],"status":"completed","usage":{"input_tokens":7,"output_tokens":2,"total_tokens":9}}`)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		r := NewAnswerReaderAs(Responses)
		for p := body; len(p) > 0; p = p[min(len(p), 32<<10):] {
			r.Feed(p[:min(len(p), 32<<10)])
		}
		if r.Usage().Total != 9 {
			b.Fatal(r.Usage())
		}
	}
}
