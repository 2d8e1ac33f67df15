package supervisor

import (
	"context"
	"fmt"
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// openSlotSockets opens one SO_REUSEPORT listening socket per worker slot,
// all bound to addr, and returns them as files to hand to workers. The
// supervisor keeps them open for its whole life: closing a reuseport socket
// drops the connections queued on it, so a dead worker's socket waits, with
// its queue, for the replacement. It also returns the address bound (the
// port the kernel chose when addr's port is 0).
func openSlotSockets(addr string, n int) ([]*os.File, string, error) {
	lc := net.ListenConfig{Control: func(network, address string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	files := make([]*os.File, 0, n)
	for i := 0; i < n; i++ {
		ln, err := lc.Listen(context.Background(), "tcp", addr)
		if err != nil {
			closeAll(files)
			return nil, "", fmt.Errorf("listen %s (slot %d): %w", addr, i, err)
		}
		if i == 0 {
			// With port 0, every other slot must share the port the kernel chose.
			addr = ln.Addr().String()
		}
		f, err := ln.(*net.TCPListener).File() // a dup the workers inherit
		ln.Close()                             // the dup keeps the socket open
		if err != nil {
			closeAll(files)
			return nil, "", fmt.Errorf("listen %s (slot %d): %w", addr, i, err)
		}
		files = append(files, f)
	}
	return files, addr, nil
}

func closeAll(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}
