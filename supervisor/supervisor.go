// Package supervisor is sluice's master process. It owns what must outlive a
// worker: the per-slot listening sockets and the admin listener. It starts
// one worker process per slot (a re-exec of the same binary), restarts a
// worker that dies, with backoff, and on SIGTERM/SIGINT/SIGQUIT lets every
// worker drain before it exits.
package supervisor

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/hotreload"
	"github.com/sluice-gw/sluice/shm"
	"github.com/sluice-gw/sluice/supervisor/adminguard"
)

// Options is what the supervisor runs.
type Options struct {
	ConfigName string         // file name, for messages
	ConfigData []byte         // the file's bytes, handed verbatim to workers
	Config     *config.Config // the validated configuration
	Exe        string         // the binary workers are started from; default /proc/self/exe
	Log        *slog.Logger
	// Handover takes sockets and the region over from a previous supervisor
	// and hands them on (binary upgrade); nil: every socket is opened here
	// and nothing is handed on.
	Handover *hotreload.Handover
}

// Restart backoff for a worker that exits unexpectedly.
const (
	minBackoff   = 100 * time.Millisecond
	maxBackoff   = 5 * time.Second
	stableUptime = 10 * time.Second // a worker that lived this long restarts at minBackoff
	killGrace    = 5 * time.Second  // beyond shutdown_timeout, before SIGKILL
)

// slot is one worker position: its socket lives as long as the supervisor;
// its process comes and goes.
type slot struct {
	n   int
	col int // its worker's column in the shared region
	cpu int // -1 when not pinned
	// sockets are its listening sockets, one per listener, in the order
	// of listen.
	sockets []*os.File
	wake    wakePipe
	ready   atomic.Bool
	// restarts counts the slot's workers that exited unexpectedly (the
	// status page's per-slot figure; sluice_worker_restarts_total sums them).
	restarts atomic.Int64
	mu       sync.Mutex
	proc     *os.Process // nil while no worker runs

	control  *os.File // the worker's control socket (reloads); nil while no worker runs
	controlR *bufio.Reader
}

type supervisor struct {
	o        Options
	log      *slog.Logger
	exe      string
	slots    []*slot
	stopping atomic.Bool
	stopCh   chan struct{}
	region   *shm.Region
	metrics  *metrics
	notified atomic.Bool // READY=1 sent to systemd

	installMu     sync.Mutex     // one install (reload or discovery change) at a time
	bg            sync.WaitGroup // goroutines that use the region: sweep, watches, scrapers
	discMu        sync.Mutex     // guards watches, scrapers and bgStopped
	bgStopped     bool
	bgDone        chan struct{} // closed when the background goroutines must end
	watches       map[string]*watch
	scrapers      map[string]*scraper
	prefixMu      sync.Mutex               // guards prefix
	prefix        map[string]prefixFigures // by backend cell: see recordPrefix
	cfgMu         sync.Mutex
	static        *config.Config     // the configuration file as parsed
	disc          config.Discovered  // backends found by service discovery, all of them
	applied       config.Discovered  // those of them the running configuration has (disc, unless the region was full)
	discErr       string             // why some discovered backends are not applied (retried); "" when all are
	discRetry     chan struct{}      // wakes retryDiscovery
	cfg           *config.Config     // the running configuration: static + applied
	cfgData       []byte             // its bytes, handed to workers
	gen           int64              // its generation: 1 at start, +1 per reload
	retired       *hotreload.Retired // cells of names reloads removed, until freed
	reloads       atomic.Int64
	lastReloadErr string
	lastReloadAt  time.Time // when the last reload ended (zero: none yet), for the status page

	upgrades       atomic.Int64
	lastUpgradeErr string
	upgraded       atomic.Bool // a new supervisor took over: drain and exit quietly
	graceful       atomic.Bool // SIGQUIT: workers drain with no deadline, none is killed

	socketsOnce sync.Once
	sockets     []*os.File

	certs      certificates                     // the TLS listeners' certificates, for /metrics and the status page
	fds        *fdReserve                       // descriptors kept for a worker's start
	adminConns atomic.Pointer[adminguard.Conns] // the admin listener's cap, for /metrics
	adminTLS   atomic.Pointer[tls.Config]       // the admin listener's TLS settings (admin_tls), swapped by a reload
	quota      *quotaState                      // the keys' quotas and budgets in state_dir (quotastate.go)
}

// Run starts the workers and serves until SIGTERM, SIGINT or SIGQUIT (or
// ctx is cancelled), then drains them and returns nil once all have exited.
func Run(ctx context.Context, o Options) error {
	s := &supervisor{o: o, log: o.Log, exe: o.Exe, stopCh: make(chan struct{}),
		static: o.Config, cfg: o.Config, cfgData: o.ConfigData, gen: 1, retired: hotreload.NewRetired(),
		disc: config.Discovered{}, discRetry: make(chan struct{}, 1), watches: map[string]*watch{}, scrapers: map[string]*scraper{}, bgDone: make(chan struct{})}
	if s.exe == "" {
		// The running image, even once a new binary replaced the file on
		// disk: a restarted worker always matches its supervisor.
		s.exe = "/proc/self/exe"
	}
	cfg := o.Config
	if err := checkUsageLog(cfg.UsageLog); err != nil {
		return err
	}

	cpus := allowedCPUs()
	n := cfg.Workers.Count(len(cpus))
	s.quota = newQuotaState(cfg.StateDir, s.log)
	region, base, gen, err := s.openRegion(cfg, n)
	if err != nil {
		return err
	}
	defer region.Close()
	s.region, s.gen = region, gen
	s.metrics = newMetrics(s)
	// One SO_REUSEPORT socket per slot for each listener: perListener[k][i]
	// is slot i's socket of listener k.
	perListener := make([][]*os.File, len(cfg.Listen))
	bound := make([]string, len(cfg.Listen))
	defer s.closeSockets()
	for k, l := range cfg.Listen {
		sockets, addr, inherited, err := o.Handover.Sockets(l.Address, n, openSlotSockets)
		if err != nil {
			return err
		}
		if inherited > 0 {
			s.log.Info("took over listening sockets from the previous supervisor", "listen", addr, "sockets", inherited)
		}
		perListener[k], bound[k] = sockets, addr
		s.sockets = append(s.sockets, sockets...)
	}
	listenAddr := bound[0]
	for i := range n {
		sl := &slot{n: i, col: base + i, cpu: -1}
		for k := range perListener {
			sl.sockets = append(sl.sockets, perListener[k][i])
		}
		if cfg.PinCPUs {
			sl.cpu = cpus[i%len(cpus)]
		}
		if sl.wake, err = newWakePipe(); err != nil {
			return fmt.Errorf("wake pipe: %w", err)
		}
		defer sl.wake.r.Close()
		defer sl.wake.w.Close()
		s.slots = append(s.slots, sl)
	}

	s.bg.Add(1)
	go func() { defer s.bg.Done(); s.sweep() }()
	s.bg.Add(1)
	go func() { defer s.bg.Done(); s.retryDiscovery() }()
	// The TLS listeners' session ticket keys, before the first worker reads them.
	tickets := &ticketKeeper{region: region}
	tickets.rotate(cfg, time.Now())
	s.bg.Add(1)
	go func() { defer s.bg.Done(); s.rotateTickets(tickets) }()
	s.bg.Add(1)
	go func() { defer s.bg.Done(); s.keepCheckpointing(s.bgDone) }()
	spend := s.newSpendExchange() // the cells as the start left them, before a worker serves
	s.bg.Add(1)
	go func() { defer s.bg.Done(); s.exchangeSpend(spend, s.bgDone) }()
	// Background users of the region end before it is unmapped.
	defer s.stopBackground()
	// Nomad's first answers come before the workers start, so they start
	// with the backends (bounded: without Nomad they start without them).
	s.syncDiscovery(cfg)
	s.awaitDiscovery()
	s.syncScrapers(s.cfg)
	if o.Handover == nil { // else the handover writes it once every worker listens
		if err := writePidFile(cfg.PidFile); err != nil {
			return err
		}
	}
	defer func() {
		if cfg.PidFile != "" && !s.upgraded.Load() {
			os.Remove(cfg.PidFile)
		}
	}()

	// The reserve is taken before the admin listener sizes its cap on
	// what is left.
	s.fds = newFDReserve(fdReserveSize)
	admin, adminAddr, err := s.startAdmin(cfg)
	if err != nil {
		return err
	}
	defer admin.Close()
	upgradedCh := o.Handover.Done() // closed once a new supervisor took over

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2)
	defer signal.Stop(sigs)

	s.log.Info("sluice starting", "listen", listenAddr, "listeners", strings.Join(bound, ","), "admin", adminAddr, "workers", n,
		"pin_cpus", cfg.PinCPUs, "allowed_cpus", cpus, "pid", os.Getpid())
	var wg sync.WaitGroup
	for _, sl := range s.slots {
		wg.Add(1)
		go func() { defer wg.Done(); s.runSlot(sl) }()
	}

	for !s.stopping.Load() {
		select {
		case sig := <-sigs:
			switch sig {
			case syscall.SIGTERM, syscall.SIGINT:
				s.log.Info("stopping: workers drain in-flight requests", "signal", sig.String(),
					"shutdown_timeout", s.shutdownTimeout().String())
				s.stop(syscall.SIGTERM)
			case syscall.SIGQUIT:
				s.log.Info("graceful stop: workers drain every request and stream, with no deadline", "signal", sig.String())
				s.graceful.Store(true)
				s.stop(syscall.SIGQUIT)
			case syscall.SIGHUP:
				s.log.Info("reloading", "config", o.ConfigName)
				s.reload() //nolint:errcheck // logged and counted inside
			case syscall.SIGUSR1:
				s.log.Info("reopening log files")
				s.signalWorkers(syscall.SIGUSR1)
			case syscall.SIGUSR2:
				s.upgrade() //nolint:errcheck // logged and counted inside; on success upgradedCh closes
			}
		case <-upgradedCh:
			s.log.Info("binary upgrade: the new supervisor is ready; draining and exiting",
				"shutdown_timeout", s.shutdownTimeout().String())
			s.upgraded.Store(true)
			admin.Close() // the new supervisor answers on the admin listener now
			// A hand-over: the new workers accept on the same sockets.
			s.stop(syscall.SIGUSR2)
		case <-ctx.Done():
			s.log.Info("stopping: workers drain in-flight requests")
			s.stop(syscall.SIGTERM)
		}
	}

	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-s.killAfter(s.shutdownTimeout() + killGrace):
		s.log.Error("workers did not exit in time; killing them")
		s.signalWorkers(syscall.SIGKILL)
		<-done
	}
	// Every worker is gone: what they settled is all in the region, and
	// written once more, so that a clean stop loses nothing (an upgrade's
	// successor writes on: the file is its own now).
	if !s.upgraded.Load() {
		if err := s.checkpointQuotas(); err != nil {
			s.log.Error("quota state: the last checkpoint failed", "dir", s.quota.dir, "err", err)
		}
	}
	s.log.Info("sluice stopped")
	return nil
}

// stop begins a graceful stop: workers stop accepting and drain, and the
// supervisor closes its copies of the sockets, so that new connections are
// refused at once (a load balancer moves on) instead of queueing for a
// worker that will never accept them.
func (s *supervisor) stop(sig syscall.Signal) {
	if s.stopping.CompareAndSwap(false, true) {
		if !s.upgraded.Load() {
			notify("STOPPING=1")
			s.o.Handover.Stop() // closes its copies of the sockets, kept for a successor
		}
		close(s.stopCh)
		// TERM: drain for shutdown_timeout; QUIT: drain, no deadline;
		// USR2: hand the sockets over and drain for shutdown_timeout.
		s.signalWorkers(sig)
		s.closeSockets()
	}
}

func (s *supervisor) closeSockets() {
	s.socketsOnce.Do(func() { closeAll(s.sockets) })
}

func (s *supervisor) signalWorkers(sig syscall.Signal) {
	for _, sl := range s.slots {
		sl.mu.Lock()
		if sl.proc != nil {
			sl.proc.Signal(sig) //nolint:errcheck // it may have just exited
		}
		sl.mu.Unlock()
	}
}

// runSlot keeps a worker running in slot sl until the supervisor stops. It
// holds its OS thread for good (see startWorker); when the goroutine ends
// the locked thread ends with it.
func (s *supervisor) runSlot(sl *slot) {
	runtime.LockOSThread()
	backoff := minBackoff
	for !s.stopping.Load() {
		began := time.Now()
		cmd, err := s.spawnReserved(sl)
		if err != nil {
			s.log.Error("worker failed to start", "slot", sl.n, "err", err, "retry_in", backoff.String())
		} else {
			err = cmd.Wait()
			sl.ready.Store(false)
			sl.mu.Lock()
			sl.proc = nil
			sl.mu.Unlock()
			sl.setControl(nil)
			s.releaseWorker(sl, cmd.Process.Pid, !s.stopping.Load())
			if s.stopping.Load() {
				s.log.Info("worker exited", "slot", sl.n, "pid", cmd.Process.Pid, "status", exitReason(err))
				return
			}
			if time.Since(began) > stableUptime {
				backoff = minBackoff
			}
			s.metrics.restarts.Inc()
			sl.restarts.Add(1)
			s.log.Error("worker exited unexpectedly; restarting", "slot", sl.n, "pid", cmd.Process.Pid,
				"status", exitReason(err), "uptime", time.Since(began).Round(time.Millisecond).String(),
				"restart_in", backoff.String())
		}
		select {
		case <-time.After(backoff):
		case <-s.stopCh:
			return
		}
		backoff = min(backoff*2, maxBackoff)
	}
}

// spawnReserved is spawn, with the descriptor reserve given back for a
// second try when the first fails for want of descriptors.
func (s *supervisor) spawnReserved(sl *slot) (*exec.Cmd, error) {
	if s.fds == nil {
		return s.spawn(sl)
	}
	var cmd *exec.Cmd
	released, err := s.fds.run(func() (err error) {
		cmd, err = s.spawn(sl)
		return err
	})
	if released {
		s.metrics.fdReleased.Inc()
		s.log.Warn("out of file descriptors: released the reserve to start a worker", "slot", sl.n,
			"reserve", fdReserveSize, "started", err == nil, "reserve_refilled", s.fds.held())
	}
	return cmd, err
}

// spawn starts the worker of slot sl and hands it its socket and config.
func (s *supervisor) spawn(sl *slot) (*exec.Cmd, error) {
	cfgR, cfgW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	readyR, readyW, err := os.Pipe()
	if err != nil {
		cfgR.Close()
		cfgW.Close()
		return nil, err
	}
	control, controlChild, err := newControlPair()
	if err != nil {
		cfgR.Close()
		cfgW.Close()
		readyR.Close()
		readyW.Close()
		return nil, err
	}
	// The configuration and its generation are read under the lock a
	// reload takes, so a worker starts with the one a reload would send.
	s.cfgMu.Lock()
	cfg, frame := s.cfg, s.frameLocked()
	files := []*os.File{sl.sockets[0], cfgR, readyW, s.region.File(), sl.wake.r, controlChild}
	for _, other := range s.slots {
		files = append(files, other.wake.w)
	}
	files = append(files, sl.sockets[1:]...) // WorkerMoreListenersFD on
	sl.mu.Lock()
	cmd, err := startWorker(s.exe, sl, cfg.GoMaxProcs, files, len(s.slots), len(sl.sockets))
	if err == nil {
		sl.proc = cmd.Process
	}
	sl.mu.Unlock()
	if err == nil {
		sl.setControl(control)
	}
	s.cfgMu.Unlock()
	cfgR.Close()
	readyW.Close()
	controlChild.Close()
	if err != nil {
		control.Close()
		cfgW.Close()
		readyR.Close()
		return nil, err
	}
	go func() {
		// A worker that dies before reading it all makes this fail; Wait reports why.
		hotreload.WriteConfig(cfgW, frame) //nolint:errcheck
		cfgW.Close()
	}()
	go func() {
		defer readyR.Close()
		line, _ := bufio.NewReader(readyR).ReadString('\n')
		if line == "ready\n" {
			sl.ready.Store(true)
			s.log.Info("worker ready", "slot", sl.n, "pid", cmd.Process.Pid, "cpu", sl.cpu)
			if s.allReady() && s.notified.CompareAndSwap(false, true) {
				s.ready()
			}
		}
	}()
	return cmd, nil
}

// releaseWorker gives back everything a worker that has exited held in the
// shared region (slots, concurrency places, queue places), before another
// worker takes its column, and wakes the others: what it held may be what
// their queued requests wait for.
func (s *supervisor) releaseWorker(sl *slot, pid int, died bool) {
	// The end-user table counts places in flight in epochs: a dead
	// worker's are forgotten with every other of its epoch (enduser). A
	// worker that exits as told (a stop, an upgrade's drain) gave its
	// places back first: no new epoch for it.
	if died {
		s.region.BumpEndUserEpoch()
	}
	switch n := s.region.ReleaseColumn(sl.col); {
	case n > 0:
		s.metrics.released.Add(float64(n))
		s.log.Warn("gave back what an exited worker held in shared memory", "slot", sl.n, "pid", pid, "places", n)
	case n < 0:
		// A worker gives back only what it took: a negative sum means a
		// cell was reset under it. Say so; never let the count fail the
		// supervisor (a Prometheus counter panics on a negative Add).
		s.log.Error("an exited worker's column in shared memory summed below zero: a cell was reset while it ran",
			"slot", sl.n, "pid", pid, "sum", n)
	}
	for _, other := range s.slots {
		other.wake.poke()
	}
}

// ready runs once every worker first listens: systemd is told, and in a
// binary upgrade the previous supervisor learns it may go.
func (s *supervisor) ready() {
	if s.o.Handover.Inherited() {
		notify(fmt.Sprintf("MAINPID=%d", os.Getpid())) // systemd follows the new supervisor
	}
	if err := s.o.Handover.Ready(); err != nil {
		s.log.Error("could not report ready to the previous supervisor or write pid_file", "err", err)
	}
	notify("READY=1")
}

// killAfter is when workers still draining are killed: after d, except in
// a graceful stop (never).
func (s *supervisor) killAfter(d time.Duration) <-chan time.Time {
	if s.graceful.Load() {
		return nil
	}
	return time.After(d)
}

// shutdownTimeout is the running configuration's shutdown_timeout (a
// reload may have changed it since the start).
func (s *supervisor) shutdownTimeout() time.Duration {
	cfg, _, _ := s.current()
	return time.Duration(cfg.ShutdownTimeout)
}

// allReady reports whether every slot has a worker accepting connections.
func (s *supervisor) allReady() bool {
	for _, sl := range s.slots {
		if !sl.ready.Load() {
			return false
		}
	}
	return true
}

// exitReason describes how a worker ended: exit code or signal.
func exitReason(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "killed by signal " + ws.Signal().String()
		}
		return fmt.Sprintf("exit code %d", ee.ExitCode())
	}
	if err != nil {
		return err.Error()
	}
	return "exit code 0"
}

// checkUsageLog fails start-up early, with a clear message, when the usage
// log cannot be opened, instead of letting every worker crash on it.
func checkUsageLog(dest string) error {
	if dest == "stdout" || dest == "off" {
		return nil
	}
	f, err := os.OpenFile(dest, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return fmt.Errorf("usage_log: %w", err)
	}
	return f.Close()
}
