package cells

import (
	"errors"
	"testing"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/shm"
)

// A configuration the region cannot hold whole allocates nothing: the
// cells it took for new names before the region filled are freed again,
// and cells of names it shares with the running one stay.
func TestAllocAllOrNothing(t *testing.T) {
	cfg := &config.Config{Keys: []config.Key{{Name: "a"}}, Models: []config.Model{{Name: "m"}}}
	r, _ := shm.Create(len(Names(cfg))+1, 1)
	defer r.Close()
	if err := Alloc(r, cfg); err != nil {
		t.Fatal(err)
	}
	used := r.Used()
	bigger := &config.Config{Keys: cfg.Keys, Models: []config.Model{{Name: "m", Backends: []config.Backend{
		{URL: "http://a:1"}, {URL: "http://b:1"}, {URL: "http://c:1"}}}}}
	if err := Alloc(r, bigger); !errors.Is(err, shm.ErrFull) {
		t.Fatalf("a configuration over the region's capacity: %v", err)
	}
	if r.Used() != used {
		t.Fatalf("a refused configuration left %d cells allocated (%d before)", r.Used(), used)
	}
	for _, name := range Names(cfg) {
		if r.Lookup(name) == nil {
			t.Fatalf("%s lost its cell", name)
		}
	}
	one := &config.Config{Keys: cfg.Keys, Models: []config.Model{{Name: "m", Backends: []config.Backend{{URL: "http://c:1"}}}}}
	if err := Alloc(r, one); err != nil {
		t.Fatalf("the last free cell: %v", err)
	}
}

// config counts the stats cells without importing shm (config imports
// nothing of sluice's): the two must agree, or a region sized by
// CellsNeeded is short of the cells Alloc takes. Provider keys
// (api_keys_env) take a cell each.
func TestCellsNeededCountsStatsCells(t *testing.T) {
	cfg := &config.Config{Keys: []config.Key{{Name: "a"}}, Models: []config.Model{{Name: "m",
		Backends: []config.Backend{{URL: "http://a:1"}, {URL: "http://b:1", APIKeysEnv: []string{"K1", "K2"}}}}}}
	if need, names := cfg.CellsNeeded(), len(Names(cfg)); need != names {
		t.Fatalf("config.CellsNeeded says %d cells, cells.Names lists %d", need, names)
	}
}

// The longest key name the configuration allows names each of its cells
// whole in the region: the quota state and an upgrade's new supervisor
// read names back from the region and must find the same cells.
func TestLongestKeyNameFits(t *testing.T) {
	r, err := shm.Create(8, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	name := string(make([]byte, config.MaxKeyName))
	for _, cell := range []string{shm.KeyCell(name), shm.QuotaCell(name), shm.BudgetCell(name)} {
		c, err := r.Alloc(cell)
		if err != nil {
			t.Fatal(err)
		}
		if c.Name() != cell {
			t.Errorf("cell %q is displayed as %q: cut at %d bytes", cell[:10], c.Name()[:10], shm.NameDisplayMax)
		}
	}
}
