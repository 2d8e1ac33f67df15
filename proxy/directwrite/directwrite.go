// Package directwrite sends bytes on a netpoll connection with one writev(2)
// from the calling goroutine, around netpoll's output buffer.
//
// Why not netpoll's own Writer: its output buffer keeps its last node — a
// 4 KiB slab — for the life of the connection once anything was written
// through it, and copies every piece under 4 KiB into it. An open stream
// has two connections (client and backend) that are written a few times and
// then wait for minutes: in the heap profile of 1,000 open streams
// (scenario c of the rig) those slabs were 7.2 of the 47 KiB live per stream.
// writev from the caller costs the same one system call netpoll makes when
// its buffer was empty (it too sends from the caller), copies nothing and
// keeps nothing. Only what the socket does not take at once — a slow reader,
// a full send buffer — goes through netpoll's buffered writer, which waits
// for the socket.
package directwrite

import (
	"errors"
	"syscall"
	"unsafe"
)

// Buffered is netpoll's (and hertz's) buffered writer of the same connection,
// used for what the socket does not take at once. It must hold nothing
// unsent when Send is called: Send's bytes would otherwise overtake it.
type Buffered interface {
	WriteBinary(b []byte) (int, error)
	Flush() error
}

// Send writes bufs, in order, on the non-blocking socket fd; the rest of
// what the socket does not take goes through w, whose Flush waits until it
// is sent. bufs is free again when Send returns; Send may change the slice
// (not the bytes): pass one of your own. With fd < 0 (no socket to
// write to directly, e.g. TLS or a test transport) everything goes through w.
func Send(fd int, w Buffered, bufs [][]byte) error {
	if fd >= 0 {
		for len(bufs) > 0 {
			n, err := writev(fd, bufs)
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if errors.Is(err, syscall.EAGAIN) {
				break
			}
			if err != nil {
				return err
			}
			bufs = skip(bufs, n)
		}
		if len(bufs) == 0 {
			return nil
		}
	}
	for _, b := range bufs {
		if len(b) == 0 {
			continue
		}
		if _, err := w.WriteBinary(b); err != nil {
			return err
		}
	}
	return w.Flush()
}

// skip drops the first n bytes of bufs (empty pieces included).
func skip(bufs [][]byte, n int) [][]byte {
	for len(bufs) > 0 && n >= len(bufs[0]) {
		n -= len(bufs[0])
		bufs = bufs[1:]
	}
	if n > 0 {
		bufs[0] = bufs[0][n:]
	}
	return bufs
}

// FD returns the socket of a netpoll connection, or -1 when conn has none
// to write to directly.
func FD(conn any) int {
	if f, ok := conn.(interface{ Fd() int }); ok {
		return f.Fd()
	}
	return -1
}

// maxIovecs is how many pieces one writev takes (Linux's IOV_MAX is 1024);
// the rest go in the next call.
const maxIovecs = 64

// writev is writev(2) made as a raw system call, like netpoll's own reads
// and writes: the socket is non-blocking, so the call never blocks, and a
// raw call does not tell the Go scheduler it is entering a system call.
// That telling (entersyscall) wakes the runtime's monitor thread (sysmon)
// from its idle sleep and sets it polling every 20 µs again, and with one
// P sysmon hands the P to another thread when a write is slow: measured
// on rig scenario e, sysmon's thread alone used a fifth of the worker's
// CPU at low load (docs/benchmarks-analysis.md, issue 22).
func writev(fd int, bufs [][]byte) (int, error) {
	var iovs [maxIovecs]syscall.Iovec
	n := 0
	for _, b := range bufs {
		if n == maxIovecs {
			break
		}
		if len(b) == 0 {
			continue
		}
		iovs[n].Base = &b[0]
		iovs[n].SetLen(len(b))
		n++
	}
	if n == 0 {
		return 0, nil
	}
	r, _, e := syscall.RawSyscall(syscall.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&iovs[0])), uintptr(n))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}
