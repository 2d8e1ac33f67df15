package supervisor

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
	"golang.org/x/sys/unix"

	"github.com/sluice-gw/sluice/cells"
	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/enduser"
	"github.com/sluice-gw/sluice/hotreload"
	"github.com/sluice-gw/sluice/quota"
	"github.com/sluice-gw/sluice/shm"
)

// Reload, supervisor side (SIGHUP, `sluice reload`, systemctl reload):
// re-read and validate the file; refuse what a reload cannot apply; give
// every name of the new configuration its cell (names that stay keep the
// very same cells: counters carry on); send the configuration to every
// worker, which swaps its routes without a restart. Workers started later
// get the new configuration. A failed reload changes nothing and is
// reported in the log, in /metrics and in /status.

// current returns the running configuration, its bytes and generation.
func (s *supervisor) current() (*config.Config, []byte, int64) {
	s.cfgMu.Lock()
	defer s.cfgMu.Unlock()
	return s.cfg, s.cfgData, s.gen
}

// reload applies the configuration file again and returns why it could not.
func (s *supervisor) reload() error {
	notify(fmt.Sprintf("RELOADING=1\nMONOTONIC_USEC=%d", monotonicUsec()))
	defer notify("READY=1")
	err := s.applyFile()
	s.cfgMu.Lock()
	s.lastReloadErr, s.lastReloadAt = "", time.Now()
	if err != nil {
		s.lastReloadErr = err.Error()
	}
	s.reloads.Add(1) // with the verdict: /status never shows a count without its error
	s.cfgMu.Unlock()
	if err != nil {
		s.metrics.reloads.WithLabelValues("error").Inc()
		s.log.Error("reload failed; still serving the previous configuration", "config", s.o.ConfigName, "err", err)
		return err
	}
	s.metrics.reloads.WithLabelValues("ok").Inc()
	return nil
}

func (s *supervisor) applyFile() error {
	data, err := os.ReadFile(s.o.ConfigName)
	if err != nil {
		return fmt.Errorf("read config: %w", err)
	}
	cfg, err := config.Parse(s.o.ConfigName, data)
	if err != nil {
		return err
	}
	old, _, _ := s.current()
	if ch := config.RestartChanges(old, cfg); len(ch) > 0 {
		return fmt.Errorf("%s: %s: a reload cannot apply this; restart sluice to apply it", s.o.ConfigName, strings.Join(ch, "; "))
	}
	if cfg.HasEndUsers() && s.region.EndUserCapacity() != cfg.EndUserEntries() {
		// The region was inherited from a sluice with another table, or
		// none: its end users would all go untracked.
		return fmt.Errorf("%s: end_user_table: the running region's end-user table holds %d entries, not %d: restart sluice to give keys end_user limits",
			s.o.ConfigName, s.region.EndUserCapacity(), cfg.EndUserEntries())
	}
	if ch := config.ProcessChanges(old, cfg); len(ch) > 0 {
		// New sockets or processes: a new supervisor of this very binary
		// takes over (as in a binary upgrade), starts its workers with the
		// new configuration and, once they listen, these drain.
		s.log.Info("reload needs new sockets or worker processes: replacing the workers", "changes", strings.Join(ch, "; "))
		return s.replaceSelf()
	}
	if err := checkUsageLog(cfg.UsageLog); err != nil {
		return err
	}
	adminTLS, err := adminTLSOf(cfg)
	if err != nil {
		return err
	}
	if err := s.install(cfg, data); err != nil {
		return err
	}
	if adminTLS != nil {
		s.adminTLS.Store(adminTLS) // new handshakes from now; open connections keep theirs
	}
	s.log.Info("configuration reloaded", "config", s.o.ConfigName)
	return nil
}

// install makes static (the file, with data its bytes) plus the backends
// discovery found the running configuration: cells for its names, a new
// generation, every worker told. Reloads and discovery changes both come
// through here, one at a time.
//
// When the region cannot hold every discovered backend, the discovery
// changes are applied without their additions — backends that left go (and
// their cells free once unused), new ones wait — and retryDiscovery tries
// again; why shows in /status and sluice_discovery_pending. Cells are
// allocated under cfgMu, so that sweep cannot free a retired name this
// configuration takes back between its allocation and Replace.
func (s *supervisor) install(static *config.Config, data []byte) error {
	s.installMu.Lock()
	defer s.installMu.Unlock()
	s.cfgMu.Lock()
	applied := s.disc
	eff := static.WithDiscovered(applied)
	fresh := quotaCells(s.region, eff) // a key added back finds what it spent (quotastate.go)
	err := cells.Alloc(s.region, eff)
	var deferred error
	if errors.Is(err, shm.ErrFull) {
		if kept, fewer := keptBackends(applied, s.cfg); fewer {
			if k := static.WithDiscovered(kept); cells.Alloc(s.region, k) == nil {
				applied, eff, deferred, err = kept, k, err, nil
			}
		}
	}
	if err != nil {
		s.cfgMu.Unlock()
		return fmt.Errorf("%w (cells of removed names are freed once nothing uses them; retry shortly)", err)
	}
	s.setDiscoveryErrLocked(deferred)
	old := s.cfg
	s.quota.restoreNew(s.region, fresh)
	s.static, s.cfg, s.cfgData, s.applied = static, eff, data, applied
	s.gen++
	gen := s.gen
	s.region.SetGeneration(gen)
	s.retired.Replace(cells.ConfigNames(old), cells.ConfigNames(eff), gen)
	frame := s.frameLocked()
	s.cfgMu.Unlock()

	// Every live worker applies it; one that cannot is restarted, and comes
	// back with the new configuration.
	for _, sl := range s.slots {
		if err := sl.sendReload(frame); err != nil {
			s.log.Error("a worker could not apply the new configuration; restarting it", "slot", sl.n, "err", err)
			sl.signal(unix.SIGTERM)
		}
	}
	s.syncDiscovery(static)
	s.syncScrapers(eff)
	return nil
}

// frameLocked is the running configuration as workers receive it (cfgMu held).
func (s *supervisor) frameLocked() hotreload.Frame {
	f := hotreload.Frame{Name: s.o.ConfigName, Data: s.cfgData, Gen: s.gen, Files: hotreload.FilesOf(s.cfg)}
	if len(s.applied) > 0 {
		f.Discovered, _ = json.Marshal(s.applied)
	}
	return f
}

// sweep frees, now and then, the cells of names a reload removed, once no
// worker runs a request on a configuration that had them and nothing is
// held in them; and recounts the end-user table (sweepEndUsers).
func (s *supervisor) sweep() {
	for {
		select {
		case <-s.bgDone:
			return
		case <-time.After(time.Second):
		}
		s.cfgMu.Lock()
		s.metrics.freed.Add(float64(s.retired.Sweep(s.region, s.quota.freeing)))
		cfg := s.cfg
		s.cfgMu.Unlock()
		s.sweepEndUsers(cfg)
	}
}

// replyTimeout bounds how long a worker may take to apply a configuration
// (it runs the first health check of new backends).
const replyTimeout = 15 * time.Second

// sendReload sends a configuration to the slot's worker, if one runs, and
// waits for its answer.
func (sl *slot) sendReload(f hotreload.Frame) error {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.control == nil {
		return nil // no worker now: the next one starts with the new configuration
	}
	sl.control.SetDeadline(time.Now().Add(replyTimeout)) //nolint:errcheck
	if err := hotreload.WriteConfig(sl.control, f); err != nil {
		return err
	}
	return hotreload.ReadReply(sl.controlR, f.Gen)
}

// newControlPair is a worker's control socket: the supervisor's end (non-
// blocking, so reads have deadlines) and the worker's (blocking).
func newControlPair() (parent, child *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	// The child's end is made an os.File while blocking (see newWakePipe);
	// the parent's becomes non-blocking first, so os.File polls it.
	child = os.NewFile(uintptr(fds[1]), "control-child")
	if err := unix.SetNonblock(fds[0], true); err != nil {
		child.Close()
		unix.Close(fds[0])
		return nil, nil, err
	}
	return os.NewFile(uintptr(fds[0]), "control"), child, nil
}

func (sl *slot) setControl(f *os.File) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.control != nil {
		sl.control.Close()
	}
	sl.control = f
	sl.controlR = nil
	if f != nil {
		sl.controlR = bufio.NewReader(f)
	}
}

func (sl *slot) signal(sig unix.Signal) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.proc != nil {
		sl.proc.Signal(sig) //nolint:errcheck // it may have just exited
	}
}

// Status is the admin listener's GET /status: what `sluice reload` and
// `sluice upgrade` read to learn how their signal was taken.
type Status struct {
	PID              int    `json:"pid"`
	Config           string `json:"config"`
	Generation       int64  `json:"generation"`
	Reloads          int64  `json:"reloads"`
	LastReloadError  string `json:"last_reload_error"`
	Upgrades         int64  `json:"upgrades"`
	LastUpgradeError string `json:"last_upgrade_error"`
	// DiscoveryError says why backends Nomad lists are not in use yet (the
	// shared region is full; retried), "" when every one is.
	DiscoveryError string `json:"discovery_error"`
}

// status serves GET /status.
func (s *supervisor) status(w http.ResponseWriter, r *http.Request) {
	s.cfgMu.Lock()
	st := Status{os.Getpid(), s.o.ConfigName, s.gen, s.reloads.Load(), s.lastReloadErr, s.upgrades.Load(), s.lastUpgradeErr, s.discErr}
	s.cfgMu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(st) //nolint:errcheck
}

// notify tells systemd (Type=notify) about the service's state; a no-op
// when not run by systemd.
func notify(state string) {
	daemon.SdNotify(false, state) //nolint:errcheck
}

func monotonicUsec() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) //nolint:errcheck
	return ts.Nano() / 1000
}

// writePidFile writes the supervisor's pid, for `sluice reload`.
func writePidFile(path string) error {
	if path == "" {
		return nil
	}
	if err := os.WriteFile(path, fmt.Appendf(nil, "%d\n", os.Getpid()), 0o644); err != nil {
		return fmt.Errorf("pid_file: %w", err)
	}
	return nil
}

// sweepEndUsers recounts each key's live entries of the end-user table
// against its max_tracked and frees the entries of keys without end_user
// now (package enduser).
func (s *supervisor) sweepEndUsers(cfg *config.Config) {
	if s.region.EndUserCapacity() == 0 || s.upgraded.Load() {
		return // (a supervisor handing over leaves the table to its successor's configuration)
	}
	cal := quota.NewCalendar(cfg.QuotaLocation())
	enduser.Sweep(s.region, endUserKeys(s.region, cfg), s.region.Now(), &enduser.Clock{Cal: cal, Now: cal.Now()})
}
