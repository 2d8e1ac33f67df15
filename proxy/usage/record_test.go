package usage

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sluice-gw/sluice/proxy/sse"
)

func sampleRecord() *Record {
	return &Record{
		RequestID: "req_abc_1", Start: time.Now(), Key: "team-a", Model: "llama", Backend: "http://10.0.0.5:8000",
		Path: "/v1/chat/completions", Status: 200, Stream: true, BytesIn: 102400, BytesOut: 33000,
		ClientAddr: "10.1.2.3:5555", UsageInjected: true, FinishReason: "stop", TTFT: 120 * time.Millisecond,
		Usage:  sse.Usage{Prompt: 25000, Completion: 100, Total: 25100, Cached: 24000, Found: true},
		Events: 102, AffinityKey: 0xdeadbeef, Messages: 2, PromptBytes: 100000, UpstreamModel: "meta/llama",
		UserRaw: `"user \"42\""`, UserAgent: "OpenAI/Go 3.1", UpstreamCode: 200, HeadersAt: 3 * time.Millisecond,
		StreamAsked: true, Attempts: 2, Tried: []string{"http://10.0.0.4:8000", "http://10.0.0.5:8000"},
	}
}

// The usage line is valid JSON with every field, at least 30 of them.
func TestUsageLine(t *testing.T) {
	var out lineCapture
	u := &Log{w: &out, worker: 1}
	u.Write(sampleRecord(), time.Now())
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
	u := &Log{w: io.Discard, worker: 1, buf: make([]byte, 0, 1024)}
	r := sampleRecord()
	end := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		u.Write(r, end)
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
		u := &Log{w: &w, dest: tc.dest, worker: 1, every: time.Hour}
		const n = 200
		for range n {
			u.Write(sampleRecord(), time.Now())
		}
		if len(w.writes) == 0 || len(w.writes) >= n/2 {
			t.Errorf("%s: %d writes for %d lines; want several lines per write", tc.dest, len(w.writes), n)
		}
		u.Close()
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
	u := &Log{w: &w, dest: "/x", worker: 1, every: 5 * time.Millisecond}
	u.Write(sampleRecord(), time.Now())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go u.RunFlusher(ctx)
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

// strictLine fails t unless line is one usage line as a strict reader
// wants it: valid UTF-8, valid JSON, no \u escape of a surrogate (strict
// parsers, serde_json's among them, refuse a lone one; the log writes no
// \u escape but \u0000-\u001f and \u007f), one newline, at its end, and at
// most MaxLine bytes.
func strictLine(t testing.TB, line []byte) map[string]any {
	t.Helper()
	if len(line) > MaxLine {
		t.Fatalf("a line of %d bytes, over %d", len(line), MaxLine)
	}
	if !utf8.Valid(line) {
		t.Fatalf("not UTF-8: %q", line)
	}
	if bytes.IndexByte(line, '\n') != len(line)-1 {
		t.Fatalf("not one line ending with a newline: %q", line)
	}
	if !json.Valid(line) {
		t.Fatalf("not JSON: %q", line)
	}
	for i := 0; i < len(line); i++ {
		if line[i] != '\\' {
			continue
		}
		i++
		if line[i] == 'u' {
			if e := string(line[i+1 : i+5]); !(e[:2] == "00" && (e[2] <= '1' || e == "007f")) {
				t.Fatalf("escape \\u%s in %q", e, line)
			}
		}
	}
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	return m
}

// Whatever bytes a client or a backend sent, the line reads strictly: raw
// invalid UTF-8 and lone surrogates in "user" (copied as the client wrote
// it) read as U+FFFD; a pair of surrogates reads as its character.
func TestUsageLineHostileStrings(t *testing.T) {
	for _, tc := range []struct {
		userRaw, user string
	}{
		{"\"\xff\xfe\"", "\uFFFD\uFFFD"},
		{`"\ud800"`, "\uFFFD"},
		{`"a\udc00b\ud800\u0041"`, "a\uFFFDb\uFFFDA"},
		{`"\ud83d\ude00 \u00e9\n\"\\\/"`, "😀 é\n\"\\/"},
		{"\"\xed\xa0\x80\"", "\uFFFD\uFFFD\uFFFD"}, // a surrogate written in UTF-8
		{`"\u12"`, "\uFFFD12"},
		{`"\"`, "\uFFFD"},
		{`"tab	ok"`, "tab\tok"},
	} {
		var out lineCapture
		u := &Log{w: &out, worker: 1}
		r := sampleRecord()
		r.UserRaw = tc.userRaw
		// Each invalid byte is one U+FFFD, as encoding/json writes them.
		r.Path, r.UserAgent, r.Model, r.FinishReason = "/v1/\xff\x00", "ua\xc3", "m\x7f\"", "stop\xe2\x82"
		u.Write(r, time.Now())
		m := strictLine(t, out.last)
		if m["user"] != tc.user {
			t.Errorf("user %q logged as %q; want %q", tc.userRaw, m["user"], tc.user)
		}
		if m["path"] != "/v1/\uFFFD\x00" || m["user_agent"] != "ua\uFFFD" || m["model"] != "m\x7f\"" || m["finish_reason"] != "stop\uFFFD\uFFFD" {
			t.Errorf("fields: %q", out.last)
		}
	}
}

// hostileRecord has every string at many times its budget, of characters
// that escape to six bytes (and a multi-byte one to land on a budget's
// edge), every number at its widest, and ten backends tried.
func hostileRecord(s string) *Record {
	r := sampleRecord()
	long := strings.Repeat(s, 8192/len(s)+1)
	r.RequestID, r.Key, r.Path, r.Model, r.Backend, r.ErrCode, r.ClientAddr = long, long, long, long, long, long, long
	r.ModelRequested = long + "x" // not Model: written
	r.FinishReason, r.UpstreamModel, r.UserAgent = long, long, long
	r.EndUser, r.HasEndUser, r.Subject, r.HasSubject = long, true, long, true
	r.UserRaw = `"` + strings.Repeat(`\u0001\ud800é`, 2000) + `"`
	r.Tried = nil
	r.TLSVersion, r.TLSResumed = 0x7f7f, true // "other", the widest
	for range 10 {
		r.Tried = append(r.Tried, long)
	}
	const minInt = -1 << 63
	r.Start = time.Date(-9999, 1, 1, 0, 0, 0, 999999999, time.UTC)
	r.Status, r.BytesIn, r.BytesOut, r.Events, r.Messages, r.PromptBytes = minInt, minInt, minInt, minInt, minInt, minInt
	r.Usage = sse.Usage{Prompt: minInt, Completion: minInt, Total: minInt, Cached: minInt, Found: false}
	r.TTFT, r.HeadersAt, r.QueueWait, r.Handoff = minInt, minInt, minInt, minInt
	r.Attempts, r.UpstreamCode, r.AffinityKey = minInt, minInt, 1<<64-1
	r.Priced, r.CostPico = true, minInt // "-9223372.036854775808", the widest
	return r
}

// No line passes PIPE_BUF, whatever the path, user agent, model and the
// other strings: each is clipped after escaping, at a character.
func TestUsageLineBound(t *testing.T) {
	for _, s := range []string{"\x01", "\"", "é", "a", "\x01é\"\xff", "😀"} {
		line := AppendLine(nil, hostileRecord(s), -1<<63, time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC))
		m := strictLine(t, line)
		if len(line) < MaxLine*3/4 {
			t.Errorf("%q: a line of only %d bytes: the budgets leave room unused", s, len(line))
		}
		if tried := m["backends_tried"].([]any); len(tried) == 0 {
			t.Errorf("%q: no backend tried logged", s)
		}
	}
	// The fixed part: every string empty, every number at its widest.
	r := hostileRecord("x")
	r.RequestID, r.Key, r.Path, r.Model, r.Backend, r.ErrCode, r.ClientAddr = "", "", "", "", "", "", ""
	r.ModelRequested = "" // null, its widest empty form
	r.FinishReason, r.UpstreamModel, r.UserAgent, r.UserRaw, r.Tried = "", "", "", `""`, nil
	r.EndUser, r.HasEndUser, r.Subject, r.HasSubject = "", true, "", true
	fixed := len(AppendLine(nil, r, -1<<63, time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)))
	budgets := logIDMax + logKeyMax + PathMax + logModelMax + logRequestedMax + logURLMax + logErrMax + logClientMax +
		logFinishMax + logTriedMax + logUpstreamModelMax + logUserMax + logEndUserMax + logSubjectMax + logUAMax
	if fixed+budgets > MaxLine {
		t.Fatalf("fixed part %d + budgets %d = %d > %d", fixed, budgets, fixed+budgets, MaxLine)
	}
	t.Logf("fixed part %d bytes, budgets %d, total %d of %d", fixed, budgets, fixed+budgets, MaxLine)
}

// A string that fits its budget is logged whole and exactly; one that does
// not is clipped at a character, never inside an escape.
func TestAppendLogStringClips(t *testing.T) {
	for _, tc := range []struct {
		s    string
		max  int
		want string
	}{
		{"hello", 5, `"hello"`},
		{"hello", 4, `"hell"`},
		{"a\x01", 6, `"a"`},
		{"a\x01", 7, `"a\u0001"`},
		{"aé", 2, `"a"`},
		{"a\"", 2, `"a"`},
		{"\xff", 2, `""`},
		{"\xff", 3, "\"\uFFFD\""},
	} {
		if got := string(appendLogString(nil, tc.s, tc.max)); got != tc.want {
			t.Errorf("appendLogString(%q, %d) = %s; want %s", tc.s, tc.max, got, tc.want)
		}
	}
}

// FuzzUsageLine: any client and backend strings make a line that reads
// strictly and fits PIPE_BUF; short, clean ones are logged exactly.
func FuzzUsageLine(f *testing.F) {
	f.Add("/v1/chat/completions", "OpenAI/Go", "llama", `"user-1"`, "stop", "\xff\xfe")
	f.Add("/\x00\x01", "\xff", "\"\\", "\"\xff\xfe\"", "\xed\xa0\x80", `\ud800`)
	f.Add(strings.Repeat("\x01", 900), strings.Repeat("é", 400), strings.Repeat("\"", 300), `"\ud800\udc00\ud800"`, "", "")
	f.Fuzz(func(t *testing.T, path, ua, model, userRaw, finish, other string) {
		r := sampleRecord()
		r.Path, r.UserAgent, r.Model, r.UserRaw, r.FinishReason = path, ua, model, userRaw, finish
		r.Key, r.Backend, r.UpstreamModel, r.ErrCode, r.Tried = other, other, other, other, []string{other, other}
		var out lineCapture
		u := &Log{w: &out, worker: 1}
		u.Write(r, time.Now())
		m := strictLine(t, out.last)
		for name, v := range map[string]string{"path": path, "user_agent": ua, "model": model, "finish_reason": finish} {
			// Within every budget once escaped (the budgets count escaped bytes:
			// finish_reason's, 64, is the smallest).
			if escapedLen(v) <= 64+2 && utf8.ValidString(v) && m[name] != v {
				t.Fatalf("%s %q logged as %q", name, v, m[name])
			}
		}
	})
}

// escapedLen is the length of v as a JSON string, quotes included, with
// no HTML escaping (as the line escapes it).
func escapedLen(v string) int {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v) //nolint:errcheck // a string always encodes
	return b.Len() - 1
}
