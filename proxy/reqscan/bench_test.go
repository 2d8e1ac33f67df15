package reqscan

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// chatBody100KB is a chat request with a 100 KB prompt of prose with the
// usual escapes (newlines, quotes), like a document pasted into a chat.
func chatBody100KB() []byte {
	para := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 20) + "\n\"Quoted,\" she said.\n"
	doc := strings.Repeat(para, 100_000/len(para)+1)[:100_000]
	b, _ := json.Marshal(map[string]any{
		"model": "llama-3.1-8b", "stream": true, "max_tokens": 256, "user": "user-42",
		"messages": []map[string]string{
			{"role": "system", "content": "You are a helpful assistant."},
			{"role": "user", "content": doc},
		},
	})
	return b
}

// BenchmarkScan100KB is the purpose-built one-pass scan.
func BenchmarkScan100KB(b *testing.B) {
	body := chatBody100KB()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := Scan(body)
		if err != nil || r.Messages != 2 {
			b.Fatal(err)
		}
	}
}

// BenchmarkGJSON100KB does the same work with gjson: validate, then fetch
// the fields (its path syntax reaches messages.0.content and the count).
func BenchmarkGJSON100KB(b *testing.B) {
	body := chatBody100KB()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if !gjson.ValidBytes(body) {
			b.Fatal("invalid")
		}
		f := gjson.GetManyBytes(body, "model", "stream", "stream_options.include_usage", "user", "max_tokens", "messages.0.content", "messages.#")
		if f[6].Int() != 2 {
			b.Fatal("messages")
		}
	}
}

// BenchmarkInject100KB is the stream_options insertion: one copy.
func BenchmarkInject100KB(b *testing.B) {
	body := chatBody100KB()
	r, _ := Scan(body)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		InjectIncludeUsage(body, &r)
	}
}

// smallChatBody is a typical short chat request: the per-key cost of the
// member lookup shows here, not in a 100 KB prompt.
var smallChatBody = []byte(`{"model":"llama-3.1-8b","stream":true,"max_tokens":256,"user":"user-42","temperature":0.7,` +
	`"messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"What is the capital of France?"}],` +
	`"stream_options":{"include_usage":true},"top_p":0.9,"n":1}`)

// BenchmarkScanSmall is the scan of a short chat request.
func BenchmarkScanSmall(b *testing.B) {
	b.SetBytes(int64(len(smallChatBody)))
	b.ReportAllocs()
	for b.Loop() {
		if r, err := Scan(smallChatBody); err != nil || r.Messages != 2 {
			b.Fatal(err)
		}
	}
}

// responsesBody is a Responses request at turn 5 of a conversation that
// resends its history: instructions and ten input items, the role of each
// read for the conversation key.
var responsesBody = func() []byte {
	items := []map[string]string{}
	for i := 0; i < 5; i++ {
		items = append(items, map[string]string{"role": "user", "content": "Question " + strings.Repeat("about the weather ", 10)},
			map[string]string{"type": "message", "role": "assistant", "content": "Answer " + strings.Repeat("it will rain ", 20)})
	}
	b, _ := json.Marshal(map[string]any{"model": "llama-3.1-8b", "stream": true, "max_output_tokens": 256,
		"instructions": "You are a helpful assistant.", "input": items})
	return b
}()

// BenchmarkScanResponses is the scan of a multi-turn Responses request.
func BenchmarkScanResponses(b *testing.B) {
	b.SetBytes(int64(len(responsesBody)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ScanWith(responsesBody, ResponsesFields); err != nil {
			b.Fatal(err)
		}
	}
}
