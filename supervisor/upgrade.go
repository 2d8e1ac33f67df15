package supervisor

import (
	"fmt"
	"os"

	"github.com/sluice-gw/sluice/cells"
	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/shm"
)

// Binary upgrade (SIGUSR2, `sluice upgrade`) and replacement (a reload that
// needs new sockets or processes) hand sockets and the region to a new
// supervisor through hotreload.Handover; this file is the supervisor's
// policy around it.

// openRegion creates the shared region, or maps the one the previous
// supervisor handed over. It returns the region, the first worker column
// of this supervisor and the configuration generation to start at.
// Supervisors that hand over alternate between the two halves of the
// columns, so old workers, draining, and new ones never share a column.
func (s *supervisor) openRegion(cfg *config.Config, n int) (*shm.Region, int, int64, error) {
	region, inherited, err := s.o.Handover.Region(func() (*shm.Region, error) {
		// A column per worker slot, and as many again for the workers of
		// the next supervisor while these drain.
		// The prefix index is sized here, once (prefix_index.entries); an
		// inherited region keeps its own, or none when an older sluice
		// made it (the index then misses: placement by rendezvous alone).
		return shm.CreateWith(cfg.ShmCells, (2*n+7)&^7, shm.Tables{Recall: shm.DefaultRecallEntries, Prefix: cfg.PrefixEntries(), EndUsers: cfg.EndUserEntries()})
	})
	if err != nil {
		return nil, 0, 0, err
	}
	base, gen := 0, int64(1)
	if inherited {
		half := region.Columns() / 2
		switch {
		case n > half:
			err = fmt.Errorf("%d workers do not fit in the running region's %d columns per supervisor: "+
				"restart sluice to change the worker count this much", n, half)
		case region.Capacity() != cfg.ShmCells:
			err = fmt.Errorf("shm_cells changed from %d to %d: restart sluice to resize the region", region.Capacity(), cfg.ShmCells)
		case region.EndUserCapacity() != cfg.EndUserEntries() && cfg.HasEndUsers():
			err = fmt.Errorf("the running region's end-user table holds %d entries and end_user_table says %d: restart sluice to resize it "+
				"(a region made by a sluice before the end-user table has none)", region.EndUserCapacity(), cfg.EndUserEntries())
		}
		if err != nil {
			region.Close()
			return nil, 0, 0, err
		}
		gen = region.Generation() + 1
		if region.ColumnBase() == 0 {
			base = half
		}
		s.log.Info("took over the shared region from the previous supervisor", "cells_used", region.Used(),
			"columns", fmt.Sprintf("%d-%d", base, base+n-1), "generation", gen)
		// Names the previous configuration had and this one has not: their
		// cells are freed once the old workers no longer use them. The
		// stats cells are every configuration's: retiring them (as this did
		// with the configuration's names alone) freed them under the new
		// workers, and the next upgrade allocated them afresh, zeroed, under
		// running workers (a held body then counted negative).
		var all []string
		region.Cells(func(name string, _ *shm.Cell) { all = append(all, name) })
		s.retired.Replace(all, cells.Names(cfg), gen)
	}
	// The quotas and budgets spent before a restart: a fresh region takes
	// them from the state file; an inherited one holds its own, and takes
	// from the file only the entries of keys it lacks (removed before the
	// upgrade), for when they come back — this configuration's among them.
	fresh := quotaCells(region, cfg)
	if inherited {
		if err := s.quota.load(region, true); err != nil {
			region.Close()
			return nil, 0, 0, err
		}
	}
	if err := cells.Alloc(region, cfg); err != nil {
		region.Close()
		return nil, 0, 0, err
	}
	if inherited {
		s.quota.restoreNew(region, fresh)
	} else {
		if err := s.quota.load(region, false); err != nil {
			region.Close()
			return nil, 0, 0, err
		}
		s.quota.loadEndUsers(region, cfg)
	}
	region.SetColumnBase(base)
	region.SetGeneration(gen)
	return region, base, gen, nil
}

// upgrade starts the binary on disk as a new supervisor and returns once
// it is ready (Handover.Done then closes: drain and exit) or has failed.
func (s *supervisor) upgrade() error {
	s.log.Info("binary upgrade: starting the new supervisor", "binary", os.Args[0])
	err := s.o.Handover.Upgrade()
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

// replaceSelf starts the running image as a new supervisor, which reads
// the configuration file again: a reload whose changes need new sockets or
// processes.
func (s *supervisor) replaceSelf() error {
	if err := s.o.Handover.Restart(); err != nil {
		s.log.Error("replacing the workers failed; still serving", "err", err)
		return fmt.Errorf("the new workers could not start: %w", err)
	}
	s.metrics.upgrades.WithLabelValues("ok").Inc()
	return nil
}
