// Command sluice is an LLM inference gateway: one door in front of many
// OpenAI-compatible backends. See README.md.
//
//	sluice serve -c FILE     run the gateway (supervisor + workers)
//	sluice check -c FILE     validate a config, like nginx -t
//	sluice reload -c FILE    validate, then make the running gateway reload it
//	sluice upgrade -c FILE   validate, then replace the running gateway by this binary
//	sluice demo              run on a built-in config with a mock upstream
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"
	_ "time/tzdata" // quota_timezone on a machine without a zone database (a container)

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/hotreload"
	"github.com/sluice-gw/sluice/shm"
	"github.com/sluice-gw/sluice/supervisor"
	"github.com/sluice-gw/sluice/worker"
)

const usage = `usage: sluice <command> [flags]

commands:
  serve -c FILE    run the gateway: a supervisor and its worker processes
  check -c FILE    validate a configuration file; prints OK or every error (exit 0/1)
  reload -c FILE   validate the file, signal the running supervisor (pid_file) to
                   reload it, and report how the reload went (exit 0/1)
  upgrade -c FILE  validate the file, then have the running supervisor (pid_file)
                   start the binary now on disk in its place, handing over its
                   sockets and shared memory; reports how it went (exit 0/1)
  demo [--listen ADDR] [--admin ADDR]
                   run the gateway on a built-in config in front of a built-in
                   mock upstream, and print a curl command to try it
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	cmd, args := os.Args[1], os.Args[2:]
	var err error
	switch cmd {
	case "serve":
		err = serve(args)
	case "check":
		os.Exit(check(args, os.Stdout, os.Stderr))
	case "reload":
		os.Exit(signalSupervisor("reload", args, os.Stdout, os.Stderr))
	case "upgrade":
		os.Exit(signalSupervisor("upgrade", args, os.Stdout, os.Stderr))
	case "demo":
		err = demo(args)
	case "worker": // internal: started by the supervisor, not by people
		err = runWorker(args)
	case "help", "-h", "--help":
		fmt.Print(usage)
		return
	default:
		fmt.Fprintf(os.Stderr, "sluice: unknown command %q\n\n%s", cmd, usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "sluice %s: %v\n", cmd, err)
		os.Exit(1)
	}
}

func newLogger(attrs ...any) *slog.Logger {
	return slog.New(slog.NewJSONHandler(os.Stderr, nil)).With(attrs...)
}

func configFlag(name string, args []string) (string, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	path := fs.String("c", "", "configuration file")
	if err := fs.Parse(args); err != nil {
		return "", err
	}
	if *path == "" {
		return "", fmt.Errorf("missing -c FILE")
	}
	return *path, nil
}

func serve(args []string) error {
	path, err := configFlag("serve", args)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	cfg, err := config.Parse(path, data)
	if err != nil {
		return fmt.Errorf("invalid configuration:\n%w", err)
	}
	// The upgrader takes over sockets and the shared region from a running
	// supervisor that started this one (binary upgrade), and hands them on.
	h, err := hotreload.NewHandover(cfg.PidFile)
	if err != nil {
		return err
	}
	defer h.Stop()
	return supervisor.Run(context.Background(), supervisor.Options{
		ConfigName: path, ConfigData: data, Config: cfg, Log: newLogger("proc", "supervisor"), Handover: h,
	})
}

// check validates a configuration file the way `nginx -t` does.
func check(args []string, stdout, stderr io.Writer) int {
	path, err := configFlag("check", args)
	if err != nil {
		fmt.Fprintln(stderr, "sluice check:", err)
		return 2
	}
	cfg, err := config.Load(path)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	for _, w := range cfg.CertificateWarnings(time.Now()) {
		fmt.Fprintf(stdout, "%s: %s\n", path, w)
	}
	fmt.Fprintf(stdout, "%s: OK\n", path)
	return 0
}

// runWorker is one worker process: it adopts the fds the supervisor handed
// it (see supervisor.Worker*FD) and serves until told to stop.
func runWorker(args []string) error {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	slot := fs.Int("slot", 0, "worker slot")
	wakes := fs.Int("wake", 0, "number of wake pipes handed over, one per slot")
	column := fs.Int("column", -1, "worker column in the shared region (default: the slot)")
	listeners := fs.Int("listeners", 1, "number of listening sockets handed over, one per listener")
	if err := fs.Parse(args); err != nil {
		return err
	}
	log := newLogger("proc", "worker", "slot", *slot, "pid", os.Getpid())
	servePprof(*slot, log)

	cfgPipe := os.NewFile(supervisor.WorkerConfigFD, "config")
	frame, err := hotreload.ReadConfig(bufio.NewReader(cfgPipe))
	cfgPipe.Close()
	if err != nil {
		return fmt.Errorf("read config from supervisor: %w", err)
	}
	cfg, err := frame.Config()
	if err != nil {
		return err
	}
	sock := os.NewFile(supervisor.WorkerListenFD, "listener")
	ln, err := net.FileListener(sock)
	sock.Close()
	if err != nil {
		return fmt.Errorf("adopt listener: %w", err)
	}
	var more []net.Listener
	for k := 1; k < *listeners; k++ {
		f := os.NewFile(uintptr(supervisor.WorkerWakeAllFD+*wakes+k-1), "listener")
		l, err := net.FileListener(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("adopt listener %d: %w", k, err)
		}
		more = append(more, l)
	}
	readyPipe := os.NewFile(supervisor.WorkerReadyFD, "ready")
	region, err := shm.Open(os.NewFile(supervisor.WorkerRegionFD, "region"))
	if err != nil {
		return err
	}
	defer region.Close()
	// The wake pipes are used as raw fds: an os.File of a write end could
	// block when the pipe is full, and Fd() would clear O_NONBLOCK.
	// Indexed by column: this supervisor's workers hold columns base..base+wakes-1.
	if *column < 0 {
		*column = *slot
	}
	base := *column - *slot
	wakeW := make([]int, base+*wakes)
	for i := range wakeW {
		wakeW[i] = -1
		if i >= base {
			wakeW[i] = supervisor.WorkerWakeAllFD + i - base
		}
	}

	// TERM, INT, QUIT, USR2: drain and exit. HUP belongs to the
	// supervisor; a worker must not die of it (its default action).
	// USR1 (reopen the usage log) is handled in worker.Run.
	// QUIT is nginx's graceful stop: drain with no deadline. USR2, from
	// the supervisor at a binary upgrade, is a hand-over: the new
	// supervisor's workers accept on the same sockets. (Not WINCH, which a
	// terminal sends the whole process group when its window is resized.)
	ctx, stop := context.WithCancelCause(context.Background())
	defer stop(nil)
	stopSigs := make(chan os.Signal, 1)
	signal.Notify(stopSigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGUSR2)
	go func() {
		switch <-stopSigs {
		case syscall.SIGQUIT:
			stop(worker.ErrGracefulStop)
		case syscall.SIGUSR2:
			stop(worker.ErrHandover)
		default:
			stop(nil)
		}
	}()
	signal.Ignore(syscall.SIGHUP, syscall.SIGUSR1)

	return worker.Run(ctx, worker.Options{
		Slot: *slot, Listener: ln, More: more, Config: cfg, Log: log,
		Region: region, Column: *column, WakeRead: os.NewFile(supervisor.WorkerWakeFD, "wake"), WakeWrite: wakeW,
		Control: os.NewFile(supervisor.WorkerControlFD, "control"), Generation: frame.Gen,
		Ready: func() {
			readyPipe.WriteString("ready\n") //nolint:errcheck
			readyPipe.Close()
		},
	})
}
