// Package cells says which shared-memory cells a configuration uses and
// allocates them in the region: the one place that knows both the
// configuration (package config) and the region's cells (package shm), so
// that shm knows names and offsets only.
package cells

import (
	"fmt"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/shm"
)

// ConfigNames lists the cells of the configuration's keys (their quotas'
// and budgets' too), models, backends and backends' provider keys (not the
// fixed stats cells).
func ConfigNames(c *config.Config) []string {
	var names []string
	fleet := c.Fleet.SpendEvery() > 0 // the other replicas' spend, exchanged (package fleetspend)
	for _, k := range c.Keys {
		names = append(names, shm.KeyCell(k.Name))
		if k.HasQuotas() {
			names = append(names, shm.QuotaCell(k.Name))
			if fleet {
				names = append(names, shm.FleetQuotaCell(k.Name))
			}
		}
		if k.Budget != nil {
			names = append(names, shm.BudgetCell(k.Name))
			if fleet {
				names = append(names, shm.FleetBudgetCell(k.Name))
			}
		}
	}
	for _, m := range c.Models {
		names = append(names, shm.QueueCell(m.Name))
		for _, b := range m.Backends {
			names = append(names, shm.BackendCell(m.Name, b.URL))
			for _, env := range b.APIKeysEnv {
				names = append(names, shm.BackendKeyCell(m.Name, b.URL, env))
			}
		}
	}
	return names
}

// Names lists every cell a configuration uses: the stats cells and its
// keys', models' and backends'. A cell whose name is not in the list of the
// configuration in force is one a reload or an upgrade may retire.
func Names(c *config.Config) []string {
	return append(shm.StatsCellNames(), ConfigNames(c)...)
}

// Alloc allocates every cell the configuration names, and the stats cells
// (the supervisor's job); names already allocated keep their cells. It
// allocates all or nothing: when the region cannot hold them all, the cells
// it allocated for new names are freed again (no configuration names them
// and no worker has seen them), so a refused configuration — a reload, or
// a discovery change retried until cells free — leaks none.
func Alloc(r *shm.Region, c *config.Config) error {
	var fresh []string
	for _, name := range Names(c) {
		if r.Lookup(name) != nil {
			continue
		}
		if _, err := r.Alloc(name); err != nil {
			for _, n := range fresh {
				r.Free(n)
			}
			return fmt.Errorf("%s: %w (shm_cells is %d)", name, err, r.Capacity())
		}
		fresh = append(fresh, name)
	}
	return nil
}
