package worker

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

// The gate hands out connections until stopped, counts them, and after stop
// takes none: a connection waiting then stays in the socket's queue for
// another worker, and the error is one netpoll reads as a closed listener.
func TestAcceptGateStops(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	g, err := newAcceptGate(ln) // not closed: netpoll's Close closes its descriptor twice
	if err != nil {
		t.Fatal(err)
	}
	accept := func() net.Conn { // the gate's socket is non-blocking
		t.Helper()
		for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
			c, err := g.Accept()
			if err != nil {
				t.Fatal(err)
			}
			if c != nil {
				return c
			}
		}
		t.Fatal("no connection accepted")
		return nil
	}
	for range 2 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		accept().Close()
	}
	if n := g.stop(); n != 2 {
		t.Errorf("stop counted %d connections, want 2", n)
	}
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, err := g.Accept(); got != nil || !errors.Is(err, errDraining) || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("Accept after stop: %v, %v", got, err)
	}
	// Still queued: another acceptor of the socket takes it.
	other, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	other.Close()
	if n := g.stop(); n != 2 {
		t.Errorf("a second stop counted %d, want 2", n)
	}
}
