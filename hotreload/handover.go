package hotreload

import (
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/cloudflare/tableflip"

	"github.com/sluice-gw/sluice/shm"
)

// Handover is what passes from a running supervisor to the one that
// replaces it — in a binary upgrade, or a reload that needs new processes —
// through cloudflare/tableflip: each slot's listening socket, the admin
// listener and the shared region. The new supervisor starts its workers on
// the same sockets (the kernel never refuses a connection) and over the
// same cells (counters carry on); once they listen it reports Ready, and
// the old supervisor's Done channel closes: it drains and exits. A new
// supervisor that fails to start, or to become ready within Timeout, is
// reaped and the old one keeps serving.
//
// A nil *Handover is valid: nothing is inherited or handed on.
type Handover struct {
	upg *tableflip.Upgrader
}

// Timeout bounds how long a new supervisor may take to become ready.
const Timeout = 60 * time.Second

// ArgvEnv carries the binary's name to a supervisor started from the
// running image (Restart), so that its own upgrades run the binary on disk.
const ArgvEnv = "SLUICE_ARGV0"

// NewHandover takes over what a previous supervisor handed on, if this
// process was started by one. pidFile (may be empty) is written on Ready.
// Only one per process.
func NewHandover(pidFile string) (*Handover, error) {
	if name := os.Getenv(ArgvEnv); name != "" {
		os.Args[0] = name // started through /proc/self/exe by Restart
		os.Unsetenv(ArgvEnv)
	}
	upg, err := tableflip.New(tableflip.Options{PIDFile: pidFile, UpgradeTimeout: Timeout})
	if err != nil {
		return nil, err
	}
	return &Handover{upg: upg}, nil
}

// Inherited reports whether a previous supervisor handed over to this one.
func (h *Handover) Inherited() bool { return h != nil && h.upg.HasParent() }

// Names of the files handed on.
func slotName(listen string, i int) string { return fmt.Sprintf("slot/%s/%d", listen, i) }

const regionName = "shm"

// Sockets returns n listening sockets for listen: those the previous
// supervisor handed over for the same listen address first, then new ones
// from open (given the address to bind and how many). Every one is kept to
// hand on. It returns the sockets, the address they are bound to, and how
// many were inherited.
func (h *Handover) Sockets(listen string, n int, open func(addr string, n int) ([]*os.File, string, error)) ([]*os.File, string, int, error) {
	var files []*os.File
	fail := func(err error) ([]*os.File, string, int, error) {
		for _, f := range files {
			f.Close()
		}
		return nil, "", 0, err
	}
	if h != nil {
		for i := 0; i < n; i++ {
			f, err := h.upg.File(slotName(listen, i))
			if err != nil {
				return fail(err)
			}
			if f == nil {
				break
			}
			files = append(files, f)
		}
	}
	inherited, addr := len(files), listen
	if inherited > 0 {
		ln, err := net.FileListener(files[0])
		if err != nil {
			return fail(fmt.Errorf("inherited socket: %w", err))
		}
		addr = ln.Addr().String() // the port bound, when listen asks for port 0
		ln.Close()
	}
	if len(files) < n {
		more, bound, err := open(addr, n-len(files))
		if err != nil {
			return fail(err)
		}
		files, addr = append(files, more...), bound
	}
	if h != nil {
		for i, f := range files {
			if err := h.upg.AddFile(slotName(listen, i), f); err != nil {
				return fail(err)
			}
		}
	}
	return files, addr, inherited, nil
}

// Region maps the shared region the previous supervisor handed over, or
// makes a fresh one with create; either way it is kept to hand on.
func (h *Handover) Region(create func() (*shm.Region, error)) (*shm.Region, bool, error) {
	var r *shm.Region
	inherited := false
	if h != nil {
		f, err := h.upg.File(regionName)
		if err != nil {
			return nil, false, err
		}
		if f != nil {
			if r, err = shm.Open(f); err != nil {
				f.Close()
				return nil, false, fmt.Errorf("the shared region of the running sluice: %w", err)
			}
			inherited = true
		}
	}
	if r == nil {
		var err error
		if r, err = create(); err != nil {
			return nil, false, err
		}
	}
	if h != nil {
		if err := h.upg.AddFile(regionName, r.File()); err != nil {
			r.Close()
			return nil, false, err
		}
	}
	return r, inherited, nil
}

// Listen opens a TCP listener on addr, or takes over the previous
// supervisor's, and keeps it to hand on.
func (h *Handover) Listen(addr string) (net.Listener, error) {
	if h == nil {
		return net.Listen("tcp", addr)
	}
	return h.upg.Listen("tcp", addr)
}

// Ready reports that every worker listens: the pid file is written and the
// previous supervisor, if any, may go.
func (h *Handover) Ready() error {
	if h == nil {
		return nil
	}
	return h.upg.Ready()
}

// Done is closed once a new supervisor has taken over (nil: never).
func (h *Handover) Done() <-chan struct{} {
	if h == nil {
		return nil
	}
	return h.upg.Exit()
}

// Stop ends handing on: what was kept for a successor is closed (a
// stopping supervisor must not keep its sockets open).
func (h *Handover) Stop() {
	if h != nil {
		h.upg.Stop()
	}
}

var errNoHandover = errors.New("the supervisor was not started by `sluice serve`, so it cannot hand over")

// Upgrade starts the binary now on disk as the new supervisor and returns
// once it is ready, or why it failed.
func (h *Handover) Upgrade() error {
	if h == nil {
		return errNoHandover
	}
	return h.upg.Upgrade()
}

// Restart starts the running image — not what is on disk now — as the new
// supervisor: a reload whose changes need new sockets or processes.
func (h *Handover) Restart() error {
	if h == nil {
		return errNoHandover
	}
	// tableflip runs os.Args[0]: point it at the running image for this one
	// start, and tell the new supervisor the real name.
	name := os.Args[0]
	os.Setenv(ArgvEnv, name)
	defer os.Unsetenv(ArgvEnv)
	os.Args[0] = "/proc/self/exe"
	defer func() { os.Args[0] = name }()
	return h.upg.Upgrade()
}
