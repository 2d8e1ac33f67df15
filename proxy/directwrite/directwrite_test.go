package directwrite

import (
	"bytes"
	"errors"
	"io"
	"os"
	"syscall"
	"testing"
)

// collector stands in for netpoll's buffered writer.
type collector struct {
	got     bytes.Buffer
	flushes int
	err     error
}

func (c *collector) WriteBinary(b []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	return c.got.Write(b)
}

func (c *collector) Flush() error { c.flushes++; return c.err }

// socketPair returns a non-blocking socket and a file reading its peer.
func socketPair(t *testing.T, sndbuf int) (int, *os.File) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	if sndbuf > 0 {
		if err := syscall.SetsockoptInt(fds[0], syscall.SOL_SOCKET, syscall.SO_SNDBUF, sndbuf); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.SetNonblock(fds[0], true); err != nil {
		t.Fatal(err)
	}
	peer := os.NewFile(uintptr(fds[1]), "peer")
	t.Cleanup(func() { syscall.Close(fds[0]); peer.Close() })
	return fds[0], peer
}

func pieces(sizes ...int) ([][]byte, []byte) {
	var bufs [][]byte
	var all []byte
	for i, n := range sizes {
		b := bytes.Repeat([]byte{byte('a' + i)}, n)
		bufs = append(bufs, b)
		all = append(all, b...)
	}
	return bufs, all
}

// Everything the socket takes goes straight out, in order, and nothing
// goes through the buffered writer.
func TestSendDirect(t *testing.T) {
	fd, peer := socketPair(t, 0)
	bufs, want := pieces(100, 0, 3000, 7)
	var w collector
	if err := Send(fd, &w, append([][]byte(nil), bufs...)); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(want))
	if _, err := io.ReadFull(peer, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("bytes arrived changed or out of order")
	}
	if w.got.Len() != 0 || w.flushes != 0 {
		t.Fatalf("buffered writer used: %d bytes, %d flushes", w.got.Len(), w.flushes)
	}
}

// What a full socket does not take goes through the buffered writer, and
// the two parts join up to exactly what was sent.
func TestSendRestThroughBuffer(t *testing.T) {
	fd, peer := socketPair(t, 4096)
	bufs, want := pieces(1000, 600_000, 10, 300_000)
	var w collector
	if err := Send(fd, &w, append([][]byte(nil), bufs...)); err != nil {
		t.Fatal(err)
	}
	if w.got.Len() == 0 || w.flushes != 1 {
		t.Fatalf("a full socket took everything? buffered %d bytes, %d flushes", w.got.Len(), w.flushes)
	}
	direct := len(want) - w.got.Len()
	got := make([]byte, direct)
	if _, err := io.ReadFull(peer, got); err != nil {
		t.Fatal(err)
	}
	got = append(got, w.got.Bytes()...)
	if !bytes.Equal(got, want) {
		t.Fatalf("direct %d + buffered %d bytes do not join up to what was sent", direct, w.got.Len())
	}
	// The caller's pieces are unchanged (Send changed only its own slice).
	for i, b := range bufs {
		if len(b) != []int{1000, 600_000, 10, 300_000}[i] {
			t.Fatalf("piece %d changed length to %d", i, len(b))
		}
	}
}

func TestSendWithoutSocket(t *testing.T) {
	bufs, want := pieces(5, 0, 9)
	var w collector
	if err := Send(-1, &w, bufs); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(w.got.Bytes(), want) || w.flushes != 1 {
		t.Fatalf("got %q with %d flushes", w.got.Bytes(), w.flushes)
	}
}

func TestSendErrors(t *testing.T) {
	fd, peer := socketPair(t, 0)
	peer.Close()
	var w collector
	if err := Send(fd, &w, [][]byte{[]byte("x")}); !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("writing to a closed peer: %v, want EPIPE", err)
	}
	w.err = errors.New("closed")
	if err := Send(-1, &w, [][]byte{[]byte("x")}); err != w.err {
		t.Fatalf("buffered writer's error: %v", err)
	}
}

func TestSkip(t *testing.T) {
	bufs := [][]byte{[]byte("ab"), nil, []byte("cde"), []byte("f")}
	for n, want := range map[int]string{0: "abcdef", 1: "bcdef", 2: "cdef", 4: "ef", 5: "f", 6: ""} {
		got := bytes.Join(skip(append([][]byte(nil), bufs...), n), nil)
		if string(got) != want {
			t.Errorf("skip %d: %q, want %q", n, got, want)
		}
	}
}

func TestFD(t *testing.T) {
	if FD(struct{}{}) != -1 || FD(nil) != -1 {
		t.Fatal("no socket should be -1")
	}
}
