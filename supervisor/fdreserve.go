package supervisor

import (
	"errors"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// fdReserveSize is how many descriptors the supervisor holds in reserve:
// a worker's start takes about ten (three pipes and a socket pair, exec's
// own pipe, /dev/null for its stdin).
const fdReserveSize = 16

// fdReserve holds descriptors open on /dev/null so that a worker can be
// started when the supervisor has run out of them: a start that fails
// with EMFILE or ENFILE closes the reserve, starts again, and refills it.
//
// Why: on 011fb07, idle admin connections took every descriptor under a
// limit of 256 and a killed worker was never restarted ("pipe2: too many
// open files"), its slot's socket queueing clients nobody accepted (issue
// 30 item 5). The admin connection cap (admin_max_conns, lowered to half
// the free descriptors) keeps the admin listener from getting there; the
// reserve covers whatever else does.
type fdReserve struct {
	n     int
	mu    sync.Mutex // one release-start-refill at a time; guards files
	files []*os.File
}

func newFDReserve(n int) *fdReserve {
	r := &fdReserve{n: n}
	r.mu.Lock()
	r.fillLocked()
	r.mu.Unlock()
	return r
}

// fillLocked opens descriptors until the reserve is full or none is left.
// They are close-on-exec: no worker inherits them.
func (r *fdReserve) fillLocked() {
	for len(r.files) < r.n {
		f, err := os.Open(os.DevNull)
		if err != nil {
			return
		}
		r.files = append(r.files, f)
	}
}

// held is how many descriptors the reserve holds.
func (r *fdReserve) held() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.files)
}

// run runs start; when it fails for want of descriptors, it closes the
// reserve, runs start again and refills the reserve, and reports that it
// released it. A reserve left short by an earlier refill is topped up.
func (r *fdReserve) run(start func() error) (released bool, err error) {
	err = start()
	if err != nil && !outOfFDs(err) {
		return false, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil {
		r.fillLocked()
		return false, nil
	}
	closeAll(r.files)
	r.files = r.files[:0]
	err = start()
	r.fillLocked()
	return true, err
}

// outOfFDs reports whether err is the process's or the system's file
// table being full.
func outOfFDs(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

// fdHeadroom reports the soft RLIMIT_NOFILE and the descriptors the
// process has open (those in /proc/self/fd).
func fdHeadroom() (limit uint64, open int, err error) {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		return 0, 0, err
	}
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0, 0, err
	}
	return rl.Cur, len(entries) - 1, nil // less the one ReadDir had open
}

// adminConnsCap is the admin connection cap for admin_max_conns: at most
// half the descriptors the process has free, so that admin connections
// leave the other half to workers' starts and the supervisor's own
// clients (Nomad, backends' /metrics). lowered reports a cap under max.
func adminConnsCap(maxConns int, limit uint64, open int) (capped int, lowered bool) {
	free := int64(min(limit, 1<<30)) - int64(open)
	half := int(max(free/2, 1))
	if half < maxConns {
		return half, true
	}
	return maxConns, false
}
