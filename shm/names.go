package shm

import (
	"fmt"
	"strings"

	"github.com/sluice-gw/sluice/config"
)

// The names of the cells a configuration uses. They depend only on names in
// the configuration, never on positions, so a reload that keeps a key, a
// model or a backend keeps its cell.

// KeyCell is the cell of a client key: its limiters and its requests in flight.
func KeyCell(key string) string { return "key/" + key }

// QueueCell is the cell of a model's queue: its depth and tickets.
func QueueCell(model string) string { return "queue/" + model }

// BackendCell is the cell of one backend of a model: its slots in use.
func BackendCell(model, url string) string {
	return "backend/" + model + "/" + strings.TrimSuffix(url, "/")
}

// BodyBytesCell counts the request body bytes each worker holds for
// retries (its column), for the sluice_request_body_bytes_held gauge.
const BodyBytesCell = "stats/request_body_bytes"

// BodySpillCell counts, in each worker's column, the bytes of the request
// bodies it holds in temporary files (body_memory), and in scalar
// SpilledBodiesScalar how many bodies went to a file since the region was
// made, for sluice_request_body_bytes_spilled and
// sluice_request_bodies_spilled_total.
const BodySpillCell = "stats/request_body_spilled"

// SpilledBodiesScalar is BodySpillCell's count of spilled bodies.
const SpilledBodiesScalar = 0

// GenerationCell holds, as each worker's mark, the oldest configuration
// generation a request running in that worker may still use.
const GenerationCell = "stats/route_generation"

// ConfigCellNames lists the cells of the configuration's keys, models and
// backends (not the fixed stats cells).
func ConfigCellNames(c *config.Config) []string {
	var names []string
	for _, k := range c.Keys {
		names = append(names, KeyCell(k.Name))
	}
	for _, m := range c.Models {
		names = append(names, QueueCell(m.Name))
		for _, b := range m.Backends {
			names = append(names, BackendCell(m.Name, b.URL))
		}
	}
	return names
}

// FleetCell holds, in scalar 0, the number of live gateway replicas the
// key limits are divided by (0 or 1: this gateway alone).
const FleetCell = "stats/fleet"

// ConnCell counts, in each worker's column, its open client connections
// (sluice_client_connections), and in scalar RefusedConnsScalar the
// connections closed at accept because the worker had worker_connections
// open (sluice_client_connections_refused_total).
const ConnCell = "stats/client_connections"

// RefusedConnsScalar is ConnCell's count of connections refused over the cap.
const RefusedConnsScalar = 0

// WorkerGoroutinesCell holds, as each worker's mark, its number of
// goroutines, published twice a second (sluice_worker_goroutines): a figure
// that only grows with traffic gone is a leak. An exited worker's mark is
// cleared with the rest of its column.
const WorkerGoroutinesCell = "stats/worker_goroutines"

// statsPrefix begins the names of the stats cells.
const statsPrefix = "stats/"

// statsCellNames are the fixed cells every configuration has.
var statsCellNames = []string{BodyBytesCell, BodySpillCell, GenerationCell, FleetCell, ConnCell, WorkerGoroutinesCell}

// CellNames lists every cell a configuration uses: the stats cells and its
// keys', models' and backends'. A cell whose name is not in the list of the
// configuration in force is one a reload or an upgrade may retire.
func CellNames(c *config.Config) []string {
	return append(append([]string(nil), statsCellNames...), ConfigCellNames(c)...)
}

// AllocConfig allocates every cell the configuration names, and the stats
// cells (the supervisor's job); names already allocated keep their cells.
// It allocates all or nothing: when the region cannot hold them all, the
// cells it allocated for new names are freed again (no configuration names
// them and no worker has seen them), so a refused configuration — a reload,
// or a discovery change retried until cells free — leaks none.
func AllocConfig(r *Region, c *config.Config) error {
	var fresh []string
	for _, name := range CellNames(c) {
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
