package proxy

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"

	"golang.org/x/sys/unix"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/shm"
)

// A spilled body reads back exactly, through its mapping, from an unlinked
// file (the directory stays empty), also after its pages were dropped, and
// close lets it go.
func TestSpilledBodyRoundTrip(t *testing.T) {
	dir := t.TempDir()
	want := bytes.Repeat([]byte("0123456789abcdef"), 300<<10/16+3) // over several copy buffers, not a multiple of them
	s, err := newSpilledBody(dir, int64(len(want)))
	if err != nil {
		t.Fatal(err)
	}
	// iotest-like: the reader hands out odd-sized pieces.
	if err := s.fill(&choppy{r: bytes.NewReader(want), n: 7777}, int64(len(want))); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(s.mem, want) {
		t.Fatalf("mapped body differs: %d bytes, want %d", len(s.mem), len(want))
	}
	if s.f != nil {
		t.Fatal("the file's descriptor stayed open after mapping (the mapping keeps the file)")
	}
	// Dropped pages come back from the file, not as zeros (MADV_DONTNEED
	// on a private or anonymous mapping would lose them).
	s.dropPages()
	if !bytes.Equal(s.mem, want) {
		t.Fatal("the body differs after its pages were dropped")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("the directory holds %v: the file should be unlinked", entries)
	}
	s.close()
	s.close() // harmless
	if s.mem != nil || s.f != nil {
		t.Fatal("close left the mapping or the file")
	}
}

// A client that sends less than it declared is the client's error
// (errSpillRead), not the file's.
func TestSpilledBodyShortRead(t *testing.T) {
	s, err := newSpilledBody(t.TempDir(), 100)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	err = s.fill(strings.NewReader("only this"), 100)
	if !errors.Is(err, errSpillRead) {
		t.Fatalf("fill of a short body: %v, want errSpillRead", err)
	}
}

// A directory that is not there fails at newSpilledBody, before a byte of
// the body is read (so the caller can keep the body in memory).
func TestSpilledBodyMissingDir(t *testing.T) {
	if _, err := newSpilledBody(filepath.Join(t.TempDir(), "gone"), 100); err == nil {
		t.Fatal("newSpilledBody in a missing directory: no error")
	}
}

// spillDir: "" (memory) with spilling off, or while the bodies in memory
// stay within body_memory with this one; the directory otherwise.
func TestSpillDir(t *testing.T) {
	g := &bodyStore{}
	g.memory.Store(1000)
	g.inMemory.Store(600)
	if d := g.spillDir(500); d != "" {
		t.Fatalf("spilling to %q with body_temp_dir off", d)
	}
	dir := "/var/tmp"
	g.tempDir.Store(&dir)
	if g.spillDir(401) != dir || g.spillDir(400) != "" || g.spillDir(0) != "" {
		t.Fatalf("with 600 of 1000 held: 401 → %q (want %q), 400 → %q, 0 → %q (want \"\")",
			g.spillDir(401), dir, g.spillDir(400), g.spillDir(0))
	}
}

type choppy struct {
	r io.Reader
	n int
}

func (c *choppy) Read(p []byte) (int, error) {
	if len(p) > c.n {
		p = p[:c.n]
	}
	return c.r.Read(p)
}

// spillGateway is a gateway over a private region that spills every body
// to dir.
func spillGateway(t *testing.T, dir string) *bodyStore {
	t.Helper()
	cfg := &config.Config{BodyMemory: 1, BodyTempDir: dir}
	r, err := PrivateRegion(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	g := &bodyStore{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	g.bytes, g.spilled = r.Lookup(shm.BodyBytesCell), r.Lookup(shm.BodySpillCell)
	g.setLimits(cfg)
	return g
}

// Every way a spill ends — kept then released, the client's body cut
// short, a file that cannot hold the body — leaves the held, spilled and
// in-memory counts at zero.
func TestSpillCountsReturnToZero(t *testing.T) {
	g := spillGateway(t, t.TempDir())
	zero := func(when string) {
		t.Helper()
		if g.bytes.Total() != 0 || g.spilled.Total() != 0 || g.inMemory.Load() != 0 {
			t.Fatalf("%s: held %d, spilled %d, in memory %d", when, g.bytes.Total(), g.spilled.Total(), g.inMemory.Load())
		}
	}
	body := bytes.Repeat([]byte("x"), 200<<10)

	dir := *g.tempDir.Load()
	h, got, aerr := g.spill(dir, bytes.NewReader(body), int64(len(body)))
	if aerr != nil || h == nil || !bytes.Equal(got, body) {
		t.Fatalf("spill: %v", aerr)
	}
	if g.spilled.Total() != int64(len(body)) || g.bytes.Total() != int64(len(body)) || g.inMemory.Load() != 0 {
		t.Fatalf("while held: held %d, spilled %d, in memory %d", g.bytes.Total(), g.spilled.Total(), g.inMemory.Load())
	}
	if n := atomic.LoadInt64(g.spilled.Scalar(shm.SpilledBodiesScalar)); n != 1 {
		t.Fatalf("spilled bodies counted %d, want 1", n)
	}
	h.release()
	h.release()
	zero("after release")

	if _, _, aerr := g.spill(dir, bytes.NewReader(body[:1000]), int64(len(body))); aerr == nil || aerr.code != "incomplete_body" {
		t.Fatalf("short body: %v, want incomplete_body", aerr)
	}
	zero("after a short body")

	// A file that cannot grow (RLIMIT_FSIZE below the body; Go ignores
	// SIGXFSZ, so the kernel answers EFBIG): the blocks are allocated
	// before a byte is read, so the spill gives up with the body unread,
	// for the caller to keep in memory.
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	lim := old
	lim.Cur = 64 << 10
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &lim); err != nil {
		t.Skipf("cannot lower RLIMIT_FSIZE: %v", err)
	}
	r := bytes.NewReader(body)
	h, got, aerr = g.spill(dir, r, int64(len(body)))
	unix.Setrlimit(unix.RLIMIT_FSIZE, &old) //nolint:errcheck
	if h != nil || got != nil || aerr != nil || r.Len() != len(body) {
		t.Fatalf("file too small: hold %v, error %v, %d of the body read; want nothing, and nothing read", h, aerr, len(body)-r.Len())
	}
	zero("after a file too small")
}

// A chunked body (no declared length) counts against body_memory as it
// grows: past it, what has arrived and the rest go to a temporary file,
// intact; within it the body stays in memory; over max it is refused on
// either path; a body cut short is incomplete_body; and every count is back
// at zero once each is released. Chunked bodies were held in memory whole,
// uncounted by body_memory.
func TestChunkedBodySpills(t *testing.T) {
	g := spillGateway(t, t.TempDir())
	zero := func(when string) {
		t.Helper()
		if g.bytes.Total() != 0 || g.spilled.Total() != 0 || g.inMemory.Load() != 0 {
			t.Fatalf("%s: held %d, spilled %d, in memory %d", when, g.bytes.Total(), g.spilled.Total(), g.inMemory.Load())
		}
	}
	body := make([]byte, 3<<20+12345)
	for i := range body {
		body[i] = byte(i * 7 / 13)
	}
	const max = 8 << 20

	// Past body_memory (1 byte): spilled, intact, counted as spilled.
	got, h, aerr := g.readChunked(&choppy{r: bytes.NewReader(body), n: 5000}, max)
	if aerr != nil || !bytes.Equal(got, body) {
		t.Fatalf("spilled chunked body: error %v, %d bytes, equal %v", aerr, len(got), bytes.Equal(got, body))
	}
	if h.file == nil || g.inMemory.Load() != 0 || g.spilled.Total() != int64(len(body)) || g.bytes.Total() != int64(len(body)) {
		t.Fatalf("while held: file %v, in memory %d, spilled %d, held %d; want a file holding all %d bytes",
			h.file != nil, g.inMemory.Load(), g.spilled.Total(), g.bytes.Total(), len(body))
	}
	if n := atomic.LoadInt64(g.spilled.Scalar(shm.SpilledBodiesScalar)); n != 1 {
		t.Fatalf("spilled bodies counted %d, want 1", n)
	}
	h.release()
	zero("after the spilled body")

	// A body within the chunked reader's first buffer stays in memory.
	got, h, aerr = g.readChunked(bytes.NewReader(body[:1000]), max)
	if aerr != nil || !bytes.Equal(got, body[:1000]) || h.file != nil || g.inMemory.Load() == 0 {
		t.Fatalf("small chunked body: error %v, file %v, in memory %d", aerr, h.file != nil, g.inMemory.Load())
	}
	h.release()
	zero("after the small body")

	// Over max, spilled: refused.
	if _, _, aerr := g.readChunked(bytes.NewReader(body), 2<<20); aerr != errBodyTooLarge {
		t.Fatalf("chunked body over max, spilling: %v, want request_too_large", aerr)
	}
	zero("after a spilled body over max")

	// Within body_memory: kept in memory, whole; over max, refused there too.
	g.memory.Store(64 << 20)
	got, h, aerr = g.readChunked(&choppy{r: bytes.NewReader(body), n: 3000}, max)
	if aerr != nil || !bytes.Equal(got, body) || h.file != nil || g.inMemory.Load() < int64(len(body)) {
		t.Fatalf("chunked body within body_memory: error %v, file %v, in memory %d", aerr, h.file != nil, g.inMemory.Load())
	}
	h.release()
	zero("after the body in memory")
	if _, _, aerr := g.readChunked(bytes.NewReader(body), 1<<20); aerr != errBodyTooLarge {
		t.Fatalf("chunked body over max, in memory: %v, want request_too_large", aerr)
	}
	// Exactly max is allowed.
	if got, h, aerr = g.readChunked(bytes.NewReader(body[:1<<20]), 1<<20); aerr != nil || len(got) != 1<<20 {
		t.Fatalf("chunked body of exactly max: %v, %d bytes", aerr, len(got))
	}
	h.release()
	zero("after bodies in memory")

	// Cut short (the connection fails mid-body), on either path.
	cut := func() io.Reader {
		return io.MultiReader(bytes.NewReader(body[:2<<20]), iotest.ErrReader(io.ErrUnexpectedEOF))
	}
	if _, _, aerr := g.readChunked(cut(), max); aerr == nil || aerr.code != "incomplete_body" {
		t.Fatalf("chunked body cut in memory: %v, want incomplete_body", aerr)
	}
	g.memory.Store(1)
	if _, _, aerr := g.readChunked(cut(), max); aerr == nil || aerr.code != "incomplete_body" {
		t.Fatalf("spilled chunked body cut: %v, want incomplete_body", aerr)
	}
	zero("after bodies cut short")
}
