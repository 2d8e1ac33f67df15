package usage

// The usage log: where the lines go (a file, stdout, off, or a sink),
// written whole with one write(2) each or gathered every usage_log_flush,
// re-pointed by a reload and reopened by SIGUSR1.

import (
	"context"
	"io"
	"os"
	"sync"
	"time"
)

// Log writes exactly one JSON line per request. Each line is built in
// one reused buffer and written whole with a single write(2), so lines from
// several workers sharing a file (O_APPEND) or a pipe never interleave.
// With usage_log_flush, whole lines are collected and written together:
// at most 64 KiB to a file, 4 KiB (PIPE_BUF, what a pipe writes without
// interleaving) to stdout.
type Log struct {
	mu      sync.Mutex
	dest    string    // usage_log: "stdout", "off" or a path
	w       io.Writer // nil: usage_log is "off"
	closer  io.Closer
	worker  int
	buf     []byte        // the line being built
	pending []byte        // lines not yet written (usage_log_flush > 0)
	every   time.Duration // usage_log_flush; 0: a write per line
	sink    bool          // w is Options.UsageSink: kept over reloads and reopens
}

// Buffer sizes of a buffered usage log: what one write(2) may carry whole.
const (
	usageFileBuffer = 64 << 10
	usagePipeBuffer = 4 << 10
)

// Open opens the destination named by usage_log.
func Open(dest string, worker int, flush time.Duration) (*Log, error) {
	u := &Log{worker: worker, dest: dest, buf: make([]byte, 0, 1024), every: flush}
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
func (u *Log) limit() int {
	switch {
	case u.every <= 0:
		return 0
	case u.dest == "stdout":
		return usagePipeBuffer
	}
	return usageFileBuffer
}

// emit writes one finished line, or queues it (u.mu held).
func (u *Log) emit(line []byte) {
	limit := u.limit()
	if len(u.pending)+len(line) > limit {
		u.flushLocked()
	}
	if len(line) > limit {
		if u.w != nil {
			u.w.Write(line) //nolint:errcheck // a full disk must not fail requests
		}
		return
	}
	u.pending = append(u.pending, line...)
}

func (u *Log) flushLocked() {
	if len(u.pending) > 0 && u.w != nil {
		u.w.Write(u.pending) //nolint:errcheck // a full disk must not fail requests
	}
	u.pending = u.pending[:0]
}

// RunFlusher writes waiting lines every usage_log_flush until ctx ends,
// then once more.
func (u *Log) RunFlusher(ctx context.Context) {
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

// Write appends r as one line.
func (u *Log) Write(r *Record, end time.Time) {
	u.mu.Lock()
	if u.w == nil { // under the lock: a reload may turn the log off at any moment
		u.mu.Unlock()
		return
	}
	b := AppendLine(u.buf[:0], r, u.worker, end)
	u.emit(b)
	u.buf = b
	u.mu.Unlock()
}

// SinkTo sends every line to w from now on, whatever a reload's
// usage_log says (Options.UsageSink).
func (u *Log) SinkTo(w io.Writer) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.dest, u.w, u.sink = "sink", w, true
}

// Retarget points the log at dest and sets its flush interval, when a
// reload changed usage_log or usage_log_flush.
func (u *Log) Retarget(dest string, flush time.Duration) error {
	u.mu.Lock()
	same := dest == u.dest || u.sink
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

// Reopen opens the log file again under its name (SIGUSR1, after logrotate
// renamed it): lines written from now on go to the new file, none is lost
// in between — a line is written whole to the old file or to the new one.
func (u *Log) Reopen() error {
	u.mu.Lock()
	dest, flush, sink := u.dest, u.every, u.sink
	u.mu.Unlock()
	if sink {
		return nil
	}
	return u.switchTo(dest, flush)
}

func (u *Log) switchTo(dest string, flush time.Duration) error {
	n, err := Open(dest, u.worker, flush)
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

// Close writes waiting lines and closes the file.
func (u *Log) Close() {
	u.mu.Lock()
	u.flushLocked()
	u.mu.Unlock()
	if u.closer != nil {
		u.closer.Close()
	}
}
