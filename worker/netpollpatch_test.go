package worker

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/netpoll"
)

// TestNetpollPollerParksWhenIdle checks the patch in third_party/netpoll:
// an idle netpoll poller waits parked on the Go runtime's poller ("IO
// wait"), not blocked in an epoll_wait system call ("syscall"), which with
// one P costs a thread hand-off per wake-up and keeps the runtime's
// monitor polling every 20 µs (docs/benchmarks-analysis.md, issue 22).
// Built against upstream netpoll the goroutine stays in "syscall" and the
// test fails.
func TestNetpollPollerParksWhenIdle(t *testing.T) {
	addr := startEcho(t)

	// A round trip through the loop: its poller has woken and gone idle again.
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err = c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4)
	if _, err = c.Read(got); err != nil || string(got) != "ping" {
		t.Fatalf("echo: %q, %v", got, err)
	}

	deadline := time.Now().Add(10 * time.Second)
	var state string
	for time.Now().Before(deadline) {
		state = pollerState(t)
		if state == "IO wait" {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("netpoll's poller goroutine is %q when idle, want \"IO wait\" (parked on the runtime's poller)", state)
}

// startEcho serves, on a netpoll event loop until the test ends, an echo
// of whatever each connection sends; it returns the address.
func startEcho(t *testing.T) string {
	ln, err := netpoll.CreateListener("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	loop, err := netpoll.NewEventLoop(func(ctx context.Context, c netpoll.Connection) error {
		b, err := c.Reader().Next(c.Reader().Len())
		if err != nil {
			return err
		}
		if _, err = c.Writer().WriteBinary(b); err != nil {
			return err
		}
		return c.Writer().Flush()
	})
	if err != nil {
		t.Fatal(err)
	}
	go loop.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = loop.Shutdown(ctx)
	})
	return ln.Addr().String()
}

// pollerState is the state of a goroutine running netpoll's poll loop, as
// the goroutine dump shows it ("IO wait", "syscall", "runnable"...), or ""
// when there is none.
func pollerState(t *testing.T) string {
	var b bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&b, 2); err != nil {
		t.Fatal(err)
	}
	for _, g := range strings.Split(b.String(), "\n\n") {
		if !strings.Contains(g, "netpoll.(*defaultPoll).Wait") {
			continue
		}
		head, _, _ := strings.Cut(g, "\n")
		// "goroutine 7 [IO wait]:" or "goroutine 7 [syscall, 2 minutes]:"
		if i, j := strings.Index(head, "["), strings.Index(head, "]"); i >= 0 && j > i {
			state, _, _ := strings.Cut(head[i+1:j], ",")
			return state
		}
	}
	return ""
}

// TestNetpollConnectionKeepsNoIdleBuffers checks the buffer patches in
// third_party/netpoll: a connection whose input has been read to the end
// keeps no input buffer node, and a connection keeps no write barrier
// between flushes. Upstream kept the last input node (4 KiB here, the
// worker's netpoll BufferSize) for the connection's life, and the barrier
// (~1.3 KiB of iovec arrays) from its first moment, so every open stream's
// two connections held both while they waited (docs/benchmarks-analysis.md,
// issue 22 part 2). The test dials many connections the way upstream.Pool
// does, reads what the other side sent with Read, and bounds the live heap
// each connection keeps: ~2.2 KiB with both patches (netpoll's connection
// objects, the listener's side), ~3.3 KiB with the barrier kept, ~7.8 KiB
// with the node kept too.
func TestNetpollConnectionKeepsNoIdleBuffers(t *testing.T) {
	const conns = 512
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, conns)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("event: 1\n\n"))
			accepted <- c
		}
	}()

	before := liveHeap()
	dialed := make([]netpoll.Connection, 0, conns)
	defer func() {
		for _, c := range dialed {
			_ = c.Close()
		}
	}()
	var served []net.Conn
	defer func() {
		for _, c := range served {
			_ = c.Close()
		}
	}()
	buf := make([]byte, 64)
	for range conns {
		c, err := netpoll.DialConnection("tcp", ln.Addr().String(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		dialed = append(dialed, c)
		_ = c.SetReadTimeout(10 * time.Second)
		got := 0
		for got < 10 {
			n, err := c.Read(buf[got:])
			if err != nil {
				t.Fatal(err)
			}
			got += n
		}
		served = append(served, <-accepted)
	}
	perConn := (liveHeap() - before) / conns
	t.Logf("live heap per connection: %d bytes", perConn)
	if perConn > 2816 {
		t.Errorf("each read-out connection keeps %d bytes of live heap, want at most 2.75 KiB: its input node or its write barrier was kept", perConn)
	}
}

// liveHeap is the heap in use after two collections, which also empty the
// sync.Pools that netpoll's node cache is made of.
func liveHeap() int64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestNetpollNoLostWakeups drives many connections through netpoll with one
// P, the worker's setting, in the ways the patched poller must notice:
// connects (edge-triggered), reads, and writes, round trip after round
// trip. A wake-up the parked poller missed leaves a connection waiting
// until its deadline, and the test fails on it.
func TestNetpollNoLostWakeups(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	addr := startEcho(t)

	const conns, trips = 200, 30
	errs := make(chan error, conns)
	for i := range conns {
		go func() {
			errs <- func() error {
				c, err := netpoll.DialConnection("tcp", addr, 10*time.Second)
				if err != nil {
					return err
				}
				defer c.Close()
				_ = c.SetReadTimeout(10 * time.Second)
				msg := []byte(fmt.Sprintf("conn %03d says hello", i))
				got := make([]byte, len(msg))
				for range trips {
					if _, err := c.Writer().WriteBinary(msg); err != nil {
						return err
					}
					if err := c.Writer().Flush(); err != nil {
						return err
					}
					for n := 0; n < len(got); {
						m, err := c.Read(got[n:])
						if err != nil {
							return fmt.Errorf("conn %d: %w", i, err)
						}
						n += m
					}
					if !bytes.Equal(got, msg) {
						return fmt.Errorf("conn %d: echo %q, want %q", i, got, msg)
					}
				}
				return nil
			}()
		}()
	}
	for range conns {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
