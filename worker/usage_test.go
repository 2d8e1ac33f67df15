package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"sync"
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

// writeCounter records each write(2) the log makes.
type writeCounter struct{ writes [][]byte }

func (w *writeCounter) Write(p []byte) (int, error) {
	w.writes = append(w.writes, append([]byte(nil), p...))
	return len(p), nil
}

// With usage_log_flush, lines wait and go out whole, several per write, at
// most the buffer's size per write; close writes what waits.
func TestBufferedUsageLog(t *testing.T) {
	for _, tc := range []struct {
		dest  string
		limit int
	}{{"/var/log/usage.log", usageFileBuffer}, {"stdout", usagePipeBuffer}} {
		var w writeCounter
		u := &usageLog{w: &w, dest: tc.dest, worker: 1, every: time.Hour}
		const n = 200
		for range n {
			u.write(sampleRecord(), time.Now())
		}
		if len(w.writes) == 0 || len(w.writes) >= n/2 {
			t.Errorf("%s: %d writes for %d lines; want several lines per write", tc.dest, len(w.writes), n)
		}
		u.close()
		lines := 0
		for _, p := range w.writes {
			if len(p) > tc.limit {
				t.Errorf("%s: a write of %d bytes, over %d", tc.dest, len(p), tc.limit)
			}
			if p[len(p)-1] != '\n' {
				t.Errorf("%s: a write ends inside a line", tc.dest)
			}
			for _, line := range bytes.SplitAfter(p, []byte("\n")) {
				if len(line) == 0 {
					continue
				}
				var m map[string]any
				if err := json.Unmarshal(line, &m); err != nil {
					t.Fatalf("%s: a line is not whole JSON: %v", tc.dest, err)
				}
				lines++
			}
		}
		if lines != n {
			t.Errorf("%s: %d lines written; want %d (none lost, none doubled)", tc.dest, lines, n)
		}
	}
}

// The flusher writes waiting lines without more requests coming.
func TestUsageLogFlusher(t *testing.T) {
	var mu sync.Mutex
	var w lockedCounter
	w.mu = &mu
	u := &usageLog{w: &w, dest: "/x", worker: 1, every: 5 * time.Millisecond}
	u.write(sampleRecord(), time.Now())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go u.runFlusher(ctx)
	deadline := time.Now().Add(10 * time.Second)
	for w.count() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the waiting line was never written")
		}
		time.Sleep(time.Millisecond)
	}
}

type lockedCounter struct {
	mu *sync.Mutex
	n  int
}

func (l *lockedCounter) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.n++
	l.mu.Unlock()
	return len(p), nil
}

func (l *lockedCounter) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}
