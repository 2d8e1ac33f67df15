package worker

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A spilled body reads back exactly, through its mapping, from an unlinked
// file (the directory stays empty), also after its pages were dropped, and
// close lets it go.
func TestSpilledBodyRoundTrip(t *testing.T) {
	dir := t.TempDir()
	want := bytes.Repeat([]byte("0123456789abcdef"), 300<<10/16+3) // over several copy buffers, not a multiple of them
	s, err := newSpilledBody(dir)
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
	s, err := newSpilledBody(t.TempDir())
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
	if _, err := newSpilledBody(filepath.Join(t.TempDir(), "gone")); err == nil {
		t.Fatal("newSpilledBody in a missing directory: no error")
	}
}

// shouldSpill: off without a directory; else when the bodies in memory
// would pass body_memory with this one.
func TestShouldSpill(t *testing.T) {
	g := &gateway{}
	g.bodyMemory.Store(1000)
	g.memBodies.Store(600)
	if g.shouldSpill(500) {
		t.Fatal("spilling with body_temp_dir off")
	}
	dir := "/tmp"
	g.bodyTempDir.Store(&dir)
	if !g.shouldSpill(401) || g.shouldSpill(400) {
		t.Fatalf("with 600 of 1000 held: spill 401 %v (want true), 400 %v (want false)", g.shouldSpill(401), g.shouldSpill(400))
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
