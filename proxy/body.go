package proxy

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/cloudwego/hertz/pkg/app"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/shm"
)

// errBodyTooLarge is readBody's refusal of a body over max_body.
var errBodyTooLarge = errInvalid(http.StatusRequestEntityTooLarge, "request_too_large", "request body too large")

// errBodyBuffer is readBody's refusal when a spilled body's temporary file
// failed part way (the disk is full, say): the rest of the body is unread,
// so the caller closes the connection.
var errBodyBuffer = errServer(http.StatusServiceUnavailable, "body_buffer_failed",
	"The gateway could not buffer the request body; try again.")

func errIncompleteBody() *apiError {
	return errInvalid(http.StatusBadRequest, "incomplete_body", "The request body ended before its declared length.")
}

// bodyStore holds the request bodies a worker keeps for retries: their
// shared gauges, its own bytes in memory, and the bounds on both.
type bodyStore struct {
	col int // this worker's column in the gauges
	// bytes is the shared gauge of request bodies kept for retries;
	// spilled the gauge of those in temporary files and their count.
	bytes, spilled *shm.Cell
	// inMemory is the bytes of request bodies this worker holds in memory,
	// held under memory (body_memory) by spilling to files in tempDir
	// (nil: off).
	inMemory, memory atomic.Int64
	tempDir          atomic.Pointer[string]
	max              atomic.Int64 // max_body
	spillWarned      atomic.Int64 // when a failing temporary file was last logged (unix ns)
	log              *slog.Logger
}

// readBody reads the request body, refusing one over max without reading
// it: a declared Content-Length over the cap is refused before a byte of
// the body is read (hertz, patched, reads none of it ahead:
// third_party/README.md), a chunked body as soon as it passes the cap
// (errBodyTooLarge; the caller closes the connection, as for errBodyBuffer).
//
// The body is held — counted, and kept for retries — from before its first
// byte is read until the returned hold is released. A body with a declared
// length goes into a pooled buffer, or, when it would take the worker's
// bodies in memory past body_memory, into a temporary file (bodyfile.go)
// whose mapping is the returned slice; a chunked body grows in memory and
// moves to a file once it would pass body_memory (readChunked); bodies
// hertz read whole with the headers stay in memory.
func (bs *bodyStore) readBody(c *app.RequestContext, max int64) ([]byte, *bodyHold, *apiError) {
	declared := int64(c.Request.Header.ContentLength())
	if declared > max {
		return nil, nil, errBodyTooLarge
	}
	if !c.Request.IsBodyStream() {
		body := c.Request.Body()
		return body, bs.holdBody(int64(len(body))), nil
	}
	r := c.Request.BodyStream()
	if dir := bs.spillDir(declared); dir != "" {
		h, body, aerr := bs.spill(dir, r, declared)
		if h != nil || aerr != nil {
			return body, h, aerr
		}
		// No temporary file could be made: the body, still unread, stays in memory.
	}
	if declared >= 0 {
		h := bs.holdBody(0)
		h.commit(declared)
		body, err := h.readDeclared(r, declared)
		if err != nil {
			h.release()
			return nil, nil, bodyReadFailed(err)
		}
		return body, h, nil
	}
	return bs.readChunked(smallReads{r}, max)
}

// readChunked reads a chunked body of at most max bytes from r. It grows
// in memory as the bytes arrive, each growth counted against body_memory
// before it is made (commit); once a growth would take the worker's bodies
// in memory past body_memory, what has arrived and the rest go to a
// temporary file instead, as a body with a declared length would from its
// start. Chunked uploads were held in memory whole, uncounted: 16 queued
// uploads of 8 MiB held 128 MiB with body_memory 8 MiB.
func (bs *bodyStore) readChunked(r io.Reader, max int64) ([]byte, *bodyHold, *apiError) {
	h := bs.holdBody(0)
	size := min(int64(chunkedRead), max+1)
	h.commit(size)
	body, pooled := getBody(int(size))
	h.grow(size, pooled)
	got := int64(0)
	for {
		if got == int64(len(body)) { // full, more may come
			if got > max {
				h.release()
				return nil, nil, errBodyTooLarge
			}
			next := min(2*size, max+1)
			if dir := bs.spillDir(next - h.committed); dir != "" {
				if sh, sb, aerr, ok := bs.spillChunked(dir, h, body, r, max); ok {
					return sb, sh, aerr
				}
				// No temporary file could be made: the body stays in memory.
			}
			size = next
			h.commit(size)
			bigger, p := getBody(int(size))
			copy(bigger, body)
			putBody(h.pooled)
			body = bigger
			h.grow(size-h.n, p)
		}
		k, err := r.Read(body[got:])
		got += int64(k)
		if err == io.EOF {
			break
		}
		if err != nil {
			h.release()
			return nil, nil, bodyReadFailed(err)
		}
	}
	if got > max {
		h.release()
		return nil, nil, errBodyTooLarge
	}
	return body[:got], h, nil
}

// spillChunked moves a chunked body, its first bytes read into memory
// (head, in h's buffer), to a temporary file in dir and reads the rest of
// it there. ok is false when no file could be made, before anything moved:
// the body stays in h, in memory.
func (bs *bodyStore) spillChunked(dir string, h *bodyHold, head []byte, r io.Reader, max int64) (*bodyHold, []byte, *apiError, bool) {
	s, err := newSpilledBody(dir, max)
	if err != nil {
		bs.warnSpill(err, "kept in memory")
		return nil, nil, nil, false
	}
	fh := bs.holdBody(0)
	fh.toFile(s)
	err = s.fillChunked(head, r, max)
	h.release() // the head is in the file, or the body has failed
	if errors.Is(err, errSpillTooLarge) {
		fh.release()
		return nil, nil, errBodyTooLarge, true
	}
	body, aerr := bs.settleSpill(fh, s, err)
	if aerr != nil {
		return nil, nil, aerr, true
	}
	return fh, body, nil, true
}

// chunkedRead is the most a chunked body's read asks for at once.
const chunkedRead = 16 << 10

// smallReads caps each Read of its reader at chunkedRead bytes.
type smallReads struct{ r io.Reader }

func (s smallReads) Read(p []byte) (int, error) { return s.r.Read(p[:min(len(p), chunkedRead)]) }

// firstPiece is the most memory a declared Content-Length takes before
// the bytes arrive: a body up to it is read into a buffer of its size, a
// larger one into a buffer that doubles as it fills (up to the declared
// length). Taking the declared length at its word let 500 clients that
// declare 32 MiB and send a byte a minute hold 16 GB. Bodies of up to
// 256 KiB — most prompts — still take one buffer and no copy.
const firstPiece = 256 << 10

// readDeclared reads exactly n bytes of r into a buffer held by h, which
// counts what it holds as it grows.
func (h *bodyHold) readDeclared(r io.Reader, n int64) ([]byte, error) {
	size := min(n, firstPiece)
	body, pooled := getBody(int(size))
	h.grow(size, pooled)
	got := 0
	for int64(got) < n {
		if got == len(body) { // full, more to come: double it
			size = min(n, 2*size)
			bigger, p := getBody(int(size))
			copy(bigger, body)
			putBody(h.pooled)
			body = bigger
			h.grow(size-h.n, p)
		}
		k, err := io.ReadAtLeast(r, body[got:], 1)
		got += k
		if err != nil && int64(got) < n {
			return nil, err
		}
	}
	return body, nil
}

// commit counts a body of n bytes read into memory against body_memory
// from its start, though its buffer grows only as the bytes arrive:
// uploads that begin together must not each pass the spill check on their
// first pieces and then grow, together, far past body_memory.
func (h *bodyHold) commit(n int64) {
	h.bs.inMemory.Add(n - h.committed)
	h.committed = n
}

// grow counts d more bytes held (the shared gauge), now in the pooled
// buffer p; body_memory counted them at commit.
func (h *bodyHold) grow(d int64, p *[]byte) {
	h.bs.bytes.Add(h.bs.col, d)
	h.n += d
	h.pooled = p
}

// spillDir returns the directory a body of n bytes goes to, or "" when it
// stays in memory: spilling is off (body_temp_dir "off"), or the bodies
// this worker holds in memory stay within body_memory with it. Uploads
// running at the same moment may each pass the check; the overshoot is at
// most theirs.
func (bs *bodyStore) spillDir(n int64) string {
	dir := bs.tempDir.Load() // once: a reload may set it to nil meanwhile
	if dir == nil || n <= 0 || bs.inMemory.Load()+n <= bs.memory.Load() {
		return ""
	}
	return *dir
}

// spill reads the body into a temporary file in dir and returns it (its
// mapping). It returns nothing at all when no file could be made, before
// anything was read: the caller reads the body into memory instead.
func (bs *bodyStore) spill(dir string, r io.Reader, n int64) (*bodyHold, []byte, *apiError) {
	s, err := newSpilledBody(dir, n)
	if err != nil {
		bs.warnSpill(err, "kept in memory")
		return nil, nil, nil
	}
	h := bs.holdBody(0)
	h.toFile(s)
	body, aerr := bs.settleSpill(h, s, s.fill(r, n))
	if aerr != nil {
		return nil, nil, aerr
	}
	return h, body, nil
}

// toFile makes h, holding nothing yet, the hold of the body file s: it
// counts the file's blocks as they are allocated (a step ahead of the
// bytes received), not the length the client declared.
func (h *bodyHold) toFile(s *spilledBody) {
	h.file = s
	h.moveToSpilled()
	h.addSpilled(s.allocated)
	s.grew = h.addSpilled
}

// settleSpill decides what a body file's fill error means for the body held
// by h: nil, the mapped body; a read failure, the client's error; a
// mapping failure, the body read back into memory from the whole file; any
// other, 503 body_buffer_failed. On an error h is released.
func (bs *bodyStore) settleSpill(h *bodyHold, s *spilledBody, err error) ([]byte, *apiError) {
	switch {
	case err == nil:
		return s.mem, nil
	case errors.Is(err, errSpillRead):
		h.release()
		return nil, bodyReadFailed(err)
	case errors.Is(err, errSpillMap):
		// The body is whole in the file: read it into memory after all.
		bs.warnSpill(err, "read back into memory")
		body, pooled := getBody(int(s.size))
		if rerr := s.readInto(body); rerr != nil {
			putBody(pooled)
			h.release()
			return nil, errBodyBuffer
		}
		h.moveToMemory(pooled)
		return body, nil
	default:
		bs.warnSpill(err, "refused: 503 body_buffer_failed")
		h.release()
		return nil, errBodyBuffer
	}
}

// spillWarnEvery bounds the log lines of a failing body_temp_dir.
const spillWarnEvery = time.Minute

// warnSpill logs a temporary file's failure and what became of the body,
// at most once per spillWarnEvery.
func (bs *bodyStore) warnSpill(err error, outcome string) {
	now := time.Now().UnixNano()
	last := bs.spillWarned.Load()
	if now-last < int64(spillWarnEvery) || !bs.spillWarned.CompareAndSwap(last, now) {
		return
	}
	bs.log.Error("request body could not go to a temporary file", "err", err, "body", outcome,
		"next_report_in", spillWarnEvery.String())
}

// bodyHold counts a request body the handler keeps: the bytes it takes in
// this worker's column of the shared held-bytes gauge (and of the spilled
// gauge when in a file), and, while in memory, its length in the worker's
// count of bodies in memory (inMemory, what body_memory bounds). release
// gives its buffer or file back.
type bodyHold struct {
	bs        *bodyStore
	n         int64         // bytes taken: the held gauge
	committed int64         // bytes counted in inMemory
	pooled    *[]byte       // the pooled buffer of a body in memory
	file      *spilledBody  // the temporary file of a spilled body
	mem       *atomic.Int64 // inMemory while the body is in memory, nil when spilled
}

func (bs *bodyStore) holdBody(n int64) *bodyHold {
	h := &bodyHold{bs: bs, n: n, committed: n, mem: &bs.inMemory}
	bs.bytes.Add(bs.col, n)
	bs.inMemory.Add(n)
	return h
}

// moveToSpilled counts the body as spilled, not in memory.
func (h *bodyHold) moveToSpilled() {
	h.bs.inMemory.Add(-h.committed)
	h.committed = 0
	h.mem = nil
	h.bs.spilled.Add(h.bs.col, h.n)
	atomic.AddInt64(h.bs.spilled.Scalar(shm.SpilledBodiesScalar), 1)
}

// addSpilled counts d more bytes of a spilled body.
func (h *bodyHold) addSpilled(d int64) {
	h.bs.bytes.Add(h.bs.col, d)
	h.bs.spilled.Add(h.bs.col, d)
	h.n += d
}

// moveToMemory counts a spilled body as in memory again, in pooled, and
// lets its file go.
func (h *bodyHold) moveToMemory(pooled *[]byte) {
	h.bs.spilled.Add(h.bs.col, -h.n)
	h.bs.inMemory.Add(h.n)
	h.committed = h.n
	h.mem = &h.bs.inMemory
	h.pooled = pooled
	h.file.close()
	h.file = nil
}

// idle says the body is not read until the next send upstream: a spilled
// body's pages leave the worker's memory meanwhile (dropPages).
func (h *bodyHold) idle() {
	if h != nil {
		h.file.dropPages()
	}
}

// release uncounts the body and gives its buffer or file back; once is
// enough, more is harmless. Nothing may use the body afterwards.
func (h *bodyHold) release() {
	if h.n != 0 || h.committed != 0 {
		h.bs.bytes.Add(h.bs.col, -h.n)
		if h.mem != nil {
			h.mem.Add(-h.committed)
		} else {
			h.bs.spilled.Add(h.bs.col, -h.n)
		}
		h.n, h.committed = 0, 0
	}
	putBody(h.pooled)
	h.pooled = nil
	h.file.close()
	h.file = nil
}

// setLimits takes max_body, body_memory and body_temp_dir from cfg (at
// start and on every reload).
func (bs *bodyStore) setLimits(cfg *config.Config) {
	bs.max.Store(int64(cfg.MaxBody))
	bs.memory.Store(int64(cfg.BodyMemory))
	if dir := cfg.BodyTempDirPath(); dir != "" {
		bs.tempDir.Store(&dir)
	} else {
		bs.tempDir.Store(nil)
	}
}
