package fakevllm

import (
	"encoding/json"
	"strings"
	"testing"
)

// contentJSON builds the same JSON string as marshalling the whole text.
func TestContentJSONMatches(t *testing.T) {
	for _, words := range [][]string{{"tok"}, {"a", "<b>", "c\"d"}, {"x", "y"}} {
		s := &Server{opts: Options{Words: words}}
		for n := 0; n < 20; n++ {
			var text strings.Builder
			for i := 0; i < n; i++ {
				text.WriteString(s.word(i))
			}
			want, _ := json.Marshal(text.String())
			if got := s.contentJSON(n); string(got) != string(want) {
				t.Fatalf("%v %d: %s want %s", words, n, got, want)
			}
		}
	}
}

// The chat stream (its token loop shared with the newer streams) keeps
// its shape: a chunk per token, the finish chunk, usage, [DONE]; held
// after the first token by X-Fake-Hold.
func TestChatStream(t *testing.T) {
	s := start(t, Options{Tokens: 3})
	done := make(chan string)
	go func() {
		_, body := call(t, s, "POST", "/v1/chat/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true}}`, "X-Fake-Hold: c")
		done <- body
	}()
	eventually(t, "the held stream", func() bool { return s.Running() == 1 })
	s.Release("c")
	evs := readSSE(t, <-done)
	if len(evs) != 6 || evs[5].Data != "[DONE]" || !strings.Contains(evs[4].Data, `"completion_tokens":3`) || !strings.Contains(evs[3].Data, `"finish_reason":"length"`) {
		t.Fatalf("%+v", evs)
	}
}

// /metrics reports the prefix-cache counters SetPrefixCache sets, as vLLM
// names them in the text format (0 until set).
func TestMetricsPrefixCache(t *testing.T) {
	s := start(t, Options{})
	want := func(queries, hits string) {
		t.Helper()
		_, page := call(t, s, "GET", "/metrics", "")
		for _, line := range []string{
			"# TYPE vllm:prefix_cache_queries_total counter\nvllm:prefix_cache_queries_total{model_name=\"fake\"} " + queries + "\n",
			"# TYPE vllm:prefix_cache_hits_total counter\nvllm:prefix_cache_hits_total{model_name=\"fake\"} " + hits + "\n",
		} {
			if !strings.Contains(page, line) {
				t.Fatalf("the page lacks %q:\n%s", line, page)
			}
		}
	}
	want("0", "0")
	s.SetPrefixCache(300, 1000)
	want("1000", "300")
}
