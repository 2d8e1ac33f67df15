package proxy

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// Request bodies that would take a worker past body_memory go to a
// temporary file instead of its heap, as nginx does past
// client_body_buffer_size. Why: a body is held from its first byte until
// its response starts (for retries), and while requests queue or uploads
// overlap, bodies held in memory make the heap — and the collector's goal,
// twice the live heap — grow with prompt size; the pages of a file are the
// kernel's to write back or drop. The file is unlinked from birth, so
// nothing is left behind by a crash, and mapped read-only while the
// gateway needs its bytes: the scan, the rewrite's pieces and every
// retry's writev read the mapping, and nothing is copied back into the heap.

// copyBufPool holds the buffers a spilled body is copied to its file through.
var copyBufPool = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// errSpillRead is fill's error when the client's body ended early or its
// connection failed: the client's fault, not the file's.
var errSpillRead = errors.New("reading the request body")

// errSpillMap is fill's error when the filled file could not be mapped:
// the body is whole in the file, and readInto can still fetch it.
var errSpillMap = errors.New("mapping the request body's temporary file")

// spillStep is how far ahead of the bytes received a body file's blocks
// are allocated. Allocating the declared length up front let a client that
// declares 32 MiB and sends a byte a minute hold 32 MiB of disk; a step
// bounds what a declaration alone reserves, and a full disk still fails at
// the first step, before a byte of the body is read, so that the body can
// be kept in memory instead.
const spillStep = 1 << 20

// spilledBody is a request body in an unlinked temporary file, mapped. The
// mapping keeps the file alive: its descriptor is closed once it is mapped.
type spilledBody struct {
	f         *os.File // until the body is mapped
	mem       []byte   // the mapping: the body's bytes
	dir       string
	allocated int64       // bytes of the file whose blocks are allocated
	size      int64       // the body's length, once filled
	grew      func(int64) // told of each allocation, when set: the hold counts it
}

// newSpilledBody makes a body file for n bytes in dir, the blocks of its
// first spillStep allocated: a full disk fails here, before a byte of the
// body is read, so the caller can keep the body in memory instead.
func newSpilledBody(dir string, n int64) (*spilledBody, error) {
	f, err := openTemp(dir)
	if err != nil {
		return nil, err
	}
	s := &spilledBody{f: f, dir: dir}
	if err := s.allocate(min(n, spillStep)); err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

// allocate allocates the file's blocks up to end (file systems without
// fallocate are written as they are).
func (s *spilledBody) allocate(end int64) error {
	if end <= s.allocated {
		return nil
	}
	err := unix.Fallocate(int(s.f.Fd()), 0, s.allocated, end-s.allocated)
	if err != nil && !errors.Is(err, unix.EOPNOTSUPP) {
		return fmt.Errorf("body_temp_dir %s: allocating %d bytes: %w", s.dir, end-s.allocated, err)
	}
	if s.grew != nil {
		s.grew(end - s.allocated)
	}
	s.allocated = end
	return nil
}

// fill copies exactly n bytes (n > 0) of r to the file and maps them. An
// error wrapping errSpillRead means r ended or failed first, errSpillMap
// that the body is in the file but could not be mapped; any other error is
// the file's (its blocks, allocated a step ahead of the bytes, could not
// be: the disk filled up while the body arrived). The caller closes s
// either way.
func (s *spilledBody) fill(r io.Reader, n int64) error {
	bp := copyBufPool.Get().(*[]byte)
	defer copyBufPool.Put(bp)
	buf := *bp
	for done := int64(0); done < n; {
		chunk := buf[:min(int64(len(buf)), n-done)]
		got, rerr := io.ReadAtLeast(r, chunk, 1)
		if err := s.allocate(min(n, done+int64(got)+spillStep)); err != nil {
			return err
		}
		if _, err := s.f.Write(chunk[:got]); err != nil {
			return fmt.Errorf("writing the request body to a temporary file: %w", err)
		}
		done += int64(got)
		if rerr != nil && done < n {
			return fmt.Errorf("%w: %w", errSpillRead, rerr)
		}
	}
	return s.mapBody(n)
}

// errSpillTooLarge is fillChunked's error when the body passes its cap.
var errSpillTooLarge = errors.New("request body too large")

// fillChunked writes head and then r until its end to the file, and maps
// them, as fill does; a body (head and the rest) longer than max is
// errSpillTooLarge. The blocks allocated past the body's end are given
// back.
func (s *spilledBody) fillChunked(head []byte, r io.Reader, max int64) error {
	done := int64(len(head))
	if done > max {
		return errSpillTooLarge
	}
	if err := s.allocate(min(max, done+spillStep)); err != nil {
		return err
	}
	if _, err := s.f.Write(head); err != nil {
		return fmt.Errorf("writing the request body to a temporary file: %w", err)
	}
	bp := copyBufPool.Get().(*[]byte)
	defer copyBufPool.Put(bp)
	buf := *bp
	for {
		got, rerr := r.Read(buf)
		if done+int64(got) > max {
			return errSpillTooLarge
		}
		if err := s.allocate(min(max, done+int64(got)+spillStep)); err != nil {
			return err
		}
		if _, err := s.f.Write(buf[:got]); err != nil {
			return fmt.Errorf("writing the request body to a temporary file: %w", err)
		}
		done += int64(got)
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return fmt.Errorf("%w: %w", errSpillRead, rerr)
		}
	}
	if done == 0 { // nothing to map; cannot happen: a spill starts from a full buffer
		return fmt.Errorf("%w: empty body", errSpillMap)
	}
	if s.allocated > done && s.f.Truncate(done) == nil {
		if s.grew != nil {
			s.grew(done - s.allocated)
		}
		s.allocated = done
	}
	return s.mapBody(done)
}

// mapBody maps the file's first n bytes, the body, read-only.
func (s *spilledBody) mapBody(n int64) error {
	s.size = n
	// MAP_POPULATE: the pages are in the page cache, just written; map them
	// all now rather than fault them in 64 KiB at a time during the scan.
	mem, err := unix.Mmap(int(s.f.Fd()), 0, int(n), unix.PROT_READ, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return fmt.Errorf("%w: %v", errSpillMap, err)
	}
	s.mem = mem
	s.f.Close()
	s.f = nil
	return nil
}

// readInto reads the whole (unmapped) file into dst.
func (s *spilledBody) readInto(dst []byte) error {
	_, err := s.f.ReadAt(dst, 0)
	return err
}

// openTemp creates an unlinked file in dir: O_TMPFILE where the file
// system has it (never named, so nothing to remove after a crash), else a
// named file removed at once.
func openTemp(dir string) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err == nil {
		return os.NewFile(uintptr(fd), dir), nil
	}
	if !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EINVAL) {
		return nil, fmt.Errorf("body_temp_dir %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, "sluice-body-*")
	if err != nil {
		return nil, fmt.Errorf("body_temp_dir: %w", err)
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, fmt.Errorf("body_temp_dir: %w", err)
	}
	return f, nil
}

// dropPages takes the body's pages out of the worker's memory until it is
// read again: they stay in the file (the page cache), and the next read of
// the mapping — a send upstream — faults them back in. A body that waits
// in a queue for a slot is then the kernel's to write back or evict, not
// resident in the worker.
func (s *spilledBody) dropPages() {
	if s != nil && s.mem != nil {
		unix.Madvise(s.mem, unix.MADV_DONTNEED) //nolint:errcheck // advice: on failure the pages just stay
	}
}

// close unmaps the body (the last reference to its file, which frees its
// pages) and closes the file if it was never mapped: nothing may use the
// body afterwards. Once is enough, more is harmless.
func (s *spilledBody) close() {
	if s == nil {
		return
	}
	if s.mem != nil {
		unix.Munmap(s.mem) //nolint:errcheck
		s.mem = nil
	}
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
}
