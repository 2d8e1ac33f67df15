package worker

import (
	"context"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/sluice-gw/sluice/worker/sse"
)

// usageRecord is what the usage line says about one request. The issue
// "LLM-aware request handling" extends it (tokens, TTFT, affinity, …).
type usageRecord struct {
	requestID  string
	start      time.Time
	key        string
	model      string
	backend    string
	path       string
	status     int
	errCode    string
	stream     bool
	bytesIn    int64
	bytesOut   int64
	clientAddr string

	usageInjected   bool          // the gateway added include_usage to a stream
	usage           sse.Usage     // tokens, from the usage event or the answer's "usage"
	finishReason    string        // the last finish_reason seen
	ttft            time.Duration // to the first content event (streams)
	events          int64         // stream events from the backend
	affinityKey     uint64        // XXH3 of the affinity key, 0 without one
	upstreamModel   string        // the model name sent upstream
	userRaw         string        // the request's "user", as its raw JSON string literal
	userAgent       string
	upstreamCode    int           // status of the last backend answer
	headersAt       time.Duration // to the backend's response headers
	streamAsked     bool          // the request asked for a stream
	firstTokenRetry bool          // first_token_deadline passed on a backend; retried on the next
	attempts        int           // upstream attempts
	tried           []string      // backends tried, in order
	messages        int
	promptBytes     int
	queued          bool          // waited in the model's queue for a slot
	queueWait       time.Duration // time spent in the queue
	handoff         time.Duration // from a slot's release to its hand-over to this request
}

// usageLog writes exactly one JSON line per request. Each line is built in
// one reused buffer and written whole with a single write(2), so lines from
// several workers sharing a file (O_APPEND) or a pipe never interleave.
// With usage_log_flush, whole lines are collected and written together:
// at most 64 KiB to a file, 4 KiB (PIPE_BUF, what a pipe writes without
// interleaving) to stdout.
type usageLog struct {
	mu      sync.Mutex
	dest    string    // usage_log: "stdout", "off" or a path
	w       io.Writer // nil: usage_log is "off"
	closer  io.Closer
	worker  int
	buf     []byte        // the line being built
	pending []byte        // lines not yet written (usage_log_flush > 0)
	every   time.Duration // usage_log_flush; 0: a write per line
}

// Buffer sizes of a buffered usage log: what one write(2) may carry whole.
const (
	usageFileBuffer = 64 << 10
	usagePipeBuffer = 4 << 10
)

// openUsageLog opens the destination named by usage_log.
func openUsageLog(dest string, worker int, flush time.Duration) (*usageLog, error) {
	u := &usageLog{worker: worker, dest: dest, buf: make([]byte, 0, 1024), every: flush}
	switch dest {
	case "off":
	case "stdout":
		u.w = os.Stdout
	default:
		f, err := os.OpenFile(dest, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
		if err != nil {
			return nil, err
		}
		u.w, u.closer = f, f
	}
	return u, nil
}

// limit is how many bytes of lines may wait (u.mu held); 0: none.
func (u *usageLog) limit() int {
	switch {
	case u.every <= 0:
		return 0
	case u.dest == "stdout":
		return usagePipeBuffer
	}
	return usageFileBuffer
}

// emit writes one finished line, or queues it (u.mu held).
func (u *usageLog) emit(line []byte) {
	limit := u.limit()
	if len(u.pending)+len(line) > limit {
		u.flushLocked()
	}
	if len(line) > limit {
		u.w.Write(line) //nolint:errcheck // a full disk must not fail requests
		return
	}
	u.pending = append(u.pending, line...)
}

func (u *usageLog) flushLocked() {
	if len(u.pending) > 0 && u.w != nil {
		u.w.Write(u.pending) //nolint:errcheck // a full disk must not fail requests
	}
	u.pending = u.pending[:0]
}

// runFlusher writes waiting lines every usage_log_flush until ctx ends,
// then once more.
func (u *usageLog) runFlusher(ctx context.Context) {
	for {
		u.mu.Lock()
		every := u.every
		u.mu.Unlock()
		if every <= 0 {
			every = time.Second // unbuffered now; look again later (a reload may change it)
		}
		select {
		case <-ctx.Done():
			u.mu.Lock()
			u.flushLocked()
			u.mu.Unlock()
			return
		case <-time.After(every):
		}
		u.mu.Lock()
		u.flushLocked()
		u.mu.Unlock()
	}
}

// write appends r as one line.
func (u *usageLog) write(r *usageRecord, end time.Time) {
	if u.w == nil {
		return
	}
	u.mu.Lock()
	b := u.buf[:0]
	b = append(b, `{"time":"`...)
	b = r.start.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","request_id":`...)
	b = appendJSONString(b, r.requestID)
	b = append(b, `,"worker":`...)
	b = appendInt(b, int64(u.worker))
	b = append(b, `,"key":`...)
	b = appendJSONString(b, r.key)
	b = append(b, `,"path":`...)
	b = appendJSONString(b, r.path)
	b = append(b, `,"model":`...)
	b = appendJSONString(b, r.model)
	b = append(b, `,"backend":`...)
	b = appendJSONString(b, r.backend)
	b = append(b, `,"status":`...)
	b = appendInt(b, int64(r.status))
	b = append(b, `,"error":`...)
	b = appendJSONString(b, r.errCode)
	b = append(b, `,"stream":`...)
	b = strconv.AppendBool(b, r.stream)
	b = append(b, `,"duration_ms":`...)
	b = appendInt(b, end.Sub(r.start).Milliseconds())
	b = append(b, `,"bytes_in":`...)
	b = appendInt(b, r.bytesIn)
	b = append(b, `,"bytes_out":`...)
	b = appendInt(b, r.bytesOut)
	b = append(b, `,"client":`...)
	b = appendJSONString(b, r.clientAddr)
	b = append(b, `,"prompt_tokens":`...)
	b = appendInt(b, r.usage.Prompt)
	b = append(b, `,"completion_tokens":`...)
	b = appendInt(b, r.usage.Completion)
	b = append(b, `,"total_tokens":`...)
	b = appendInt(b, r.usage.Total)
	b = append(b, `,"cached_tokens":`...)
	b = appendInt(b, r.usage.Cached)
	b = append(b, `,"usage_reported":`...)
	b = strconv.AppendBool(b, r.usage.Found)
	b = append(b, `,"finish_reason":`...)
	b = appendJSONString(b, r.finishReason)
	b = append(b, `,"ttft_ms":`...)
	b = appendInt(b, r.ttft.Milliseconds())
	b = append(b, `,"events":`...)
	b = appendInt(b, r.events)
	b = append(b, `,"messages":`...)
	b = appendInt(b, int64(r.messages))
	b = append(b, `,"prompt_bytes":`...)
	b = appendInt(b, int64(r.promptBytes))
	b = append(b, `,"attempts":`...)
	b = appendInt(b, int64(r.attempts))
	b = append(b, `,"backends_tried":[`...)
	for i, t := range r.tried {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, t)
	}
	b = append(b, ']')
	b = append(b, `,"upstream_model":`...)
	b = appendJSONString(b, r.upstreamModel)
	b = append(b, `,"user":`...)
	if r.userRaw == "" {
		b = append(b, "null"...)
	} else {
		b = append(b, r.userRaw...) // already a JSON string literal, checked by the scanner
	}
	b = append(b, `,"user_agent":`...)
	b = appendJSONString(b, r.userAgent)
	b = append(b, `,"upstream_status":`...)
	b = appendInt(b, int64(r.upstreamCode))
	b = append(b, `,"upstream_headers_ms":`...)
	b = appendInt(b, r.headersAt.Milliseconds())
	b = append(b, `,"stream_requested":`...)
	b = strconv.AppendBool(b, r.streamAsked)
	b = append(b, `,"first_token_retry":`...)
	b = strconv.AppendBool(b, r.firstTokenRetry)
	b = append(b, `,"usage_injected":`...)
	b = strconv.AppendBool(b, r.usageInjected)
	b = append(b, `,"queued":`...)
	b = strconv.AppendBool(b, r.queued)
	b = append(b, `,"queue_ms":`...)
	b = appendInt(b, r.queueWait.Milliseconds())
	b = append(b, `,"queue_handoff_us":`...)
	b = appendInt(b, r.handoff.Microseconds())
	b = append(b, `,"affinity_key":"`...)
	b = strconv.AppendUint(b, r.affinityKey, 16)
	b = append(b, '"')
	b = append(b, "}\n"...)
	u.emit(b)
	u.buf = b
	u.mu.Unlock()
}

// retarget points the log at dest and sets its flush interval, when a
// reload changed usage_log or usage_log_flush.
func (u *usageLog) retarget(dest string, flush time.Duration) error {
	u.mu.Lock()
	same := dest == u.dest
	if same {
		u.flushLocked()
		u.every = flush
	}
	u.mu.Unlock()
	if same {
		return nil
	}
	return u.switchTo(dest, flush)
}

// reopen opens the log file again under its name (SIGUSR1, after logrotate
// renamed it): lines written from now on go to the new file, none is lost
// in between — a line is written whole to the old file or to the new one.
func (u *usageLog) reopen() error {
	u.mu.Lock()
	dest, flush := u.dest, u.every
	u.mu.Unlock()
	return u.switchTo(dest, flush)
}

func (u *usageLog) switchTo(dest string, flush time.Duration) error {
	n, err := openUsageLog(dest, u.worker, flush)
	if err != nil {
		return err
	}
	u.mu.Lock()
	u.flushLocked() // waiting lines go to the old destination
	old := u.closer
	u.dest, u.w, u.closer, u.every = dest, n.w, n.closer, flush
	u.mu.Unlock()
	if old != nil {
		old.Close()
	}
	return nil
}

// close writes waiting lines and closes the file.
func (u *usageLog) close() {
	u.mu.Lock()
	u.flushLocked()
	u.mu.Unlock()
	if u.closer != nil {
		u.closer.Close()
	}
}
