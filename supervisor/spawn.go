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
	// WorkerConfigFD is a pipe carrying the config: its name, a newline,
	// then the file's bytes, then EOF.
	WorkerConfigFD = 4
	// WorkerReadyFD is a pipe the worker writes "ready\n" to once it serves.
	WorkerReadyFD = 5
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
func startWorker(exe string, slot, cpu, gomaxprocs int, files []*os.File) (*exec.Cmd, error) {
	if cpu >= 0 {
		var set unix.CPUSet
		set.Set(cpu)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(exe, "worker", "--slot", strconv.Itoa(slot))
	cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(gomaxprocs))
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.ExtraFiles = files // fd 3, 4, 5: exec clears FD_CLOEXEC on these
	// SIGTERM, not SIGKILL: a worker orphaned by a killed supervisor still
	// drains its streams before it exits.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	return cmd, cmd.Start()
}
