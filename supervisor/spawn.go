package supervisor

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Worker process interface: the file descriptors a worker inherits.
const (
	// WorkerListenFD is the slot's listening socket.
	WorkerListenFD = 3
	// WorkerConfigFD is a pipe carrying the configuration as one
	// hotreload.Frame, then EOF.
	WorkerConfigFD = 4
	// WorkerReadyFD is a pipe the worker writes "ready\n" to once it serves.
	WorkerReadyFD = 5
	// WorkerRegionFD is the shared-memory region (a memfd).
	WorkerRegionFD = 6
	// WorkerWakeFD is the read end of the worker's wake pipe: another
	// worker writes a byte to it when a slot frees for this worker's
	// oldest queued request.
	WorkerWakeFD = 7
	// WorkerControlFD is the worker's end of its control socket: the
	// supervisor sends reloads on it and reads the answers.
	WorkerControlFD = 8
	// WorkerWakeAllFD is the first of the write ends of every slot's wake
	// pipe, in slot order (as many as the --wake flag says).
	WorkerWakeAllFD = 9
	// The listening sockets of the listeners after the first (listen's
	// second on) follow the wake pipes: fd WorkerWakeAllFD + wakes + k - 1
	// is listener k's (as many as the --listeners flag says, less one).
)

// allowedCPUs returns the CPUs this process may run on, from its affinity
// mask (not 0..N-1: under systemd CPUAffinity, cgroups or Nomad's reserved
// cores the allowed set is rarely a prefix).
func allowedCPUs() []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		cpus := make([]int, runtime.NumCPU())
		for i := range cpus {
			cpus[i] = i
		}
		return cpus
	}
	var cpus []int
	for i := 0; i < len(set)*64; i++ {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	return cpus
}

// startWorker starts one worker process. It must run on an OS thread locked
// for the worker's whole life: Pdeathsig fires when the thread that started
// the child exits (golang/go#27505), and when cpu >= 0 the thread's affinity
// is set to that CPU first, so the child starts pinned and its runtime sizes
// itself for that one CPU.
func startWorker(exe string, sl *slot, gomaxprocs int, files []*os.File, wakes, listeners int) (*exec.Cmd, error) {
	if sl.cpu >= 0 {
		var set unix.CPUSet
		set.Set(sl.cpu)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(exe, "worker", "--slot", strconv.Itoa(sl.n), "--column", strconv.Itoa(sl.col),
		"--wake", strconv.Itoa(wakes), "--listeners", strconv.Itoa(listeners))
	cmd.Args[0] = os.Args[0] // what ps shows, not /proc/self/exe
	cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(gomaxprocs))
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.ExtraFiles = files // fd 3, 4, …: exec clears FD_CLOEXEC on these
	// SIGTERM, not SIGKILL: a worker orphaned by a killed supervisor still
	// drains its streams before it exits.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	return cmd, cmd.Start()
}

// wakePipe is one slot's wake pipe. Both ends are non-blocking: a writer
// finding it full knows a wake-up is already pending. The supervisor keeps
// both ends open for its whole life, so a pipe outlives its worker the way
// the slot's socket does.
type wakePipe struct {
	r, w *os.File // for ExtraFiles
	wfd  int      // the write end, for raw non-blocking writes
}

func newWakePipe() (wakePipe, error) {
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		return wakePipe{}, err
	}
	// The files are made while the fds still block, so os.File treats them
	// as plain blocking files and its Fd (which exec calls on ExtraFiles)
	// leaves their flags alone; O_NONBLOCK is set behind its back. Had
	// os.File seen them non-blocking, Fd would make them blocking again —
	// for every process sharing the pipe.
	p := wakePipe{r: os.NewFile(uintptr(fds[0]), "wake-r"), w: os.NewFile(uintptr(fds[1]), "wake-w"), wfd: fds[1]}
	for _, fd := range fds {
		if err := unix.SetNonblock(fd, true); err != nil {
			p.r.Close()
			p.w.Close()
			return wakePipe{}, err
		}
	}
	return p, nil
}

// poke writes one wake-up byte; a full pipe already has one pending.
func (p wakePipe) poke() {
	unix.Write(p.wfd, []byte{1}) //nolint:errcheck // EAGAIN: a wake-up is pending
}
