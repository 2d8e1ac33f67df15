package supervisor

import (
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/cloudflare/tableflip"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/shm"
)

// Binary upgrade (SIGUSR2, `sluice upgrade`), nginx's way, through
// cloudflare/tableflip: the running supervisor starts the binary now on
// disk as a new supervisor and hands it its listening sockets (each slot's
// and the admin listener) and the shared region. The new one starts its
// workers on the same sockets — the kernel never refuses a connection — in
// the other half of the region's worker columns, so counters, limits and
// queues carry on; once every new worker listens it reports ready and the
// old supervisor stops accepting, lets its workers drain and exits. A new
// binary that fails to start (or to become ready in upgradeTimeout) is
// reaped and the old one keeps serving.

// upgradeTimeout bounds how long a new supervisor may take to become ready.
const upgradeTimeout = 60 * time.Second

// NewUpgrader returns the process's tableflip upgrader (one per process).
func NewUpgrader(pidFile string) (*tableflip.Upgrader, error) {
	return tableflip.New(tableflip.Options{PIDFile: pidFile, UpgradeTimeout: upgradeTimeout})
}

// Names of the files handed to a new supervisor.
func slotFileName(listen string, i int) string { return fmt.Sprintf("slot/%s/%d", listen, i) }

const regionFileName = "shm"

// slotSockets returns n listening sockets for listen: those the previous
// supervisor handed over (same listen address), then new ones. It records
// every one for the next upgrade, and returns the address bound.
func (s *supervisor) slotSockets(listen string, n int) ([]*os.File, string, error) {
	upg := s.o.Upgrader
	var files []*os.File
	if upg != nil {
		for i := 0; i < n; i++ {
			f, err := upg.File(slotFileName(listen, i))
			if err != nil {
				closeAll(files)
				return nil, "", err
			}
			if f == nil {
				break
			}
			files = append(files, f)
		}
	}
	addr := listen
	if len(files) > 0 {
		ln, err := net.FileListener(files[0])
		if err != nil {
			closeAll(files)
			return nil, "", fmt.Errorf("inherited socket: %w", err)
		}
		addr = ln.Addr().String()
		ln.Close()
		s.log.Info("took over listening sockets from the previous supervisor", "listen", addr, "sockets", len(files))
	}
	if len(files) < n {
		more, bound, err := openSlotSockets(addr, n-len(files))
		if err != nil {
			closeAll(files)
			return nil, "", err
		}
		files, addr = append(files, more...), bound
	}
	if upg != nil {
		for i, f := range files {
			if err := upg.AddFile(slotFileName(listen, i), f); err != nil {
				closeAll(files)
				return nil, "", err
			}
		}
	}
	return files, addr, nil
}

// openRegion creates the shared region, or maps the one the previous
// supervisor handed over. It returns the region, the first worker column
// of this supervisor and the configuration generation to start at.
func (s *supervisor) openRegion(cfg *config.Config, n int) (*shm.Region, int, int64, error) {
	upg := s.o.Upgrader
	var inherited *os.File
	if upg != nil {
		f, err := upg.File(regionFileName)
		if err != nil {
			return nil, 0, 0, err
		}
		inherited = f
	}
	var region *shm.Region
	base, gen := 0, int64(1)
	if inherited == nil {
		// A column per worker slot, and as many again for the workers of a
		// new supervisor while these drain (binary upgrade).
		r, err := shm.Create(cfg.ShmCells, (2*n+7)&^7)
		if err != nil {
			return nil, 0, 0, err
		}
		region = r
	} else {
		r, err := shm.Open(inherited)
		if err != nil {
			inherited.Close()
			return nil, 0, 0, fmt.Errorf("the shared region of the running sluice: %w", err)
		}
		half := r.Columns() / 2
		if n > half {
			r.Close()
			return nil, 0, 0, fmt.Errorf("%d workers do not fit in the running region's %d columns per supervisor: "+
				"restart sluice (not upgrade) to change the worker count this much", n, half)
		}
		if r.Capacity() != cfg.ShmCells {
			r.Close()
			return nil, 0, 0, fmt.Errorf("shm_cells changed from %d to %d: restart sluice (not upgrade) to resize the region",
				r.Capacity(), cfg.ShmCells)
		}
		region, gen = r, r.Generation()+1
		if r.ColumnBase() == 0 {
			base = half
		}
		s.log.Info("took over the shared region from the previous supervisor", "cells_used", r.Used(),
			"columns", fmt.Sprintf("%d-%d", base, base+n-1), "generation", gen)
	}
	if _, err := shm.AllocConfig(region, cfg); err != nil {
		region.Close()
		return nil, 0, 0, err
	}
	region.SetColumnBase(base)
	region.SetGeneration(gen)
	if upg != nil {
		if err := upg.AddFile(regionFileName, region.File()); err != nil {
			region.Close()
			return nil, 0, 0, err
		}
	}
	if inherited != nil {
		// Names the previous configuration had and this one has not: their
		// cells are freed once the old workers no longer use them.
		var all []string
		region.Cells(func(name string, _ *shm.Cell) { all = append(all, name) })
		s.retired.Replace(all, shm.ConfigCellNames(cfg), gen)
	}
	return region, base, gen, nil
}

// listenAdmin opens the admin listener, or takes over the previous one's.
func (s *supervisor) listenAdmin(addr string) (net.Listener, error) {
	if s.o.Upgrader != nil {
		return s.o.Upgrader.Listen("tcp", addr)
	}
	return net.Listen("tcp", addr)
}

// replaceSelf starts this supervisor's own binary — the running image, not
// whatever is on disk now — as a new supervisor, the way upgrade does: a
// reload whose changes need new sockets or processes. The new supervisor
// reads the configuration file again.
func (s *supervisor) replaceSelf() error {
	if s.o.Upgrader == nil {
		return errors.New("changing listen, workers, pin_cpus or gomaxprocs needs the supervisor to be started by `sluice serve`")
	}
	// tableflip runs os.Args[0]: point it at the running image for this one
	// start, and tell the new supervisor the real name (see ArgvEnv).
	name := os.Args[0]
	os.Setenv(ArgvEnv, name)
	os.Args[0] = "/proc/self/exe"
	defer func() { os.Args[0] = name }()
	err := s.o.Upgrader.Upgrade()
	if err != nil {
		s.log.Error("replacing the workers failed; still serving", "err", err)
		return fmt.Errorf("the new workers could not start: %w", err)
	}
	s.metrics.upgrades.WithLabelValues("ok").Inc()
	return nil
}

// ArgvEnv carries the binary's name to a supervisor started through
// /proc/self/exe (replaceSelf), which restores os.Args[0] from it so that
// its own binary upgrades run the binary on disk again.
const ArgvEnv = "SLUICE_ARGV0"

// upgrade starts the binary on disk as a new supervisor and returns once
// it is ready (the caller then drains and exits) or has failed.
func (s *supervisor) upgrade() error {
	err := errors.New("binary upgrade needs the supervisor to be started by `sluice serve`")
	if s.o.Upgrader != nil {
		s.log.Info("binary upgrade: starting the new supervisor", "binary", os.Args[0])
		err = s.o.Upgrader.Upgrade()
	}
	s.cfgMu.Lock()
	s.lastUpgradeErr = ""
	if err != nil {
		s.lastUpgradeErr = err.Error()
	}
	s.upgrades.Add(1)
	s.cfgMu.Unlock()
	if err != nil {
		s.metrics.upgrades.WithLabelValues("error").Inc()
		s.log.Error("binary upgrade failed; still serving", "err", err)
		return err
	}
	s.metrics.upgrades.WithLabelValues("ok").Inc()
	return nil
}
