package sse

import "testing"

// A non-streamed answer as vLLM sends it, usage last.
var answer = []byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1733300000,"model":"bench","choices":[{"index":0,"message":{"role":"assistant","content":"tok tok tok tok tok tok tok tok"},"logprobs":null,"finish_reason":"stop","stop_reason":null}],"usage":{"prompt_tokens":57,"total_tokens":65,"completion_tokens":8,"prompt_tokens_details":null},"prompt_logprobs":null}`)

func BenchmarkBodyUsage(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if u := BodyUsage(answer); u.Total != 65 {
			b.Fatal(u)
		}
	}
}
