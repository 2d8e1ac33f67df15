package worker

import (
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/worker/sse"
)

func sampleRecord() *usageRecord {
	return &usageRecord{
		requestID: "req_abc_1", start: time.Now(), key: "team-a", model: "llama", backend: "http://10.0.0.5:8000",
		path: "/v1/chat/completions", status: 200, stream: true, bytesIn: 102400, bytesOut: 33000,
		clientAddr: "10.1.2.3:5555", usageInjected: true, finishReason: "stop", ttft: 120 * time.Millisecond,
		usage:  sse.Usage{Prompt: 25000, Completion: 100, Total: 25100, Cached: 24000, Found: true},
		events: 102, affinityKey: 0xdeadbeef, messages: 2, promptBytes: 100000, upstreamModel: "meta/llama",
		userRaw: `"user \"42\""`, userAgent: "OpenAI/Go 3.1", upstreamCode: 200, headersAt: 3 * time.Millisecond,
		streamAsked: true, attempts: 2, tried: []string{"http://10.0.0.4:8000", "http://10.0.0.5:8000"},
	}
}

// The usage line is valid JSON with every field, at least 30 of them.
func TestUsageLine(t *testing.T) {
	var out lineCapture
	u := &usageLog{w: &out, worker: 1}
	u.write(sampleRecord(), time.Now())
	var m map[string]any
	if err := json.Unmarshal(out.last, &m); err != nil {
		t.Fatalf("%s: %v", out.last, err)
	}
	if len(m) < 30 || m["user"] != `user "42"` || m["cached_tokens"] != 24000.0 || m["affinity_key"] != "deadbeef" {
		t.Fatalf("%d fields: %s", len(m), out.last)
	}
}

type lineCapture struct{ last []byte }

func (l *lineCapture) Write(p []byte) (int, error) {
	l.last = append(l.last[:0], p...)
	return len(p), nil
}

// BenchmarkUsageLine: building and writing one line (to io.Discard).
func BenchmarkUsageLine(b *testing.B) {
	u := &usageLog{w: io.Discard, worker: 1, buf: make([]byte, 0, 1024)}
	r := sampleRecord()
	end := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		u.write(r, end)
	}
}
