package shm

import "strings"

// The names of the cells. Those of a configuration's keys, models and
// backends depend only on their names, never on positions, so a reload
// that keeps a key, a model or a backend keeps its cell. Which cells a
// configuration needs is package cells' to say: the region knows names and
// offsets only.

// KeyCell is the cell of a client key: its limiters and its requests in flight.
func KeyCell(key string) string { return "key/" + key }

// QuotaCell is the cell of a key's token quotas (package quota): tokens
// settled, each period's base, and the tokens its requests in flight
// reserved, a column per worker.
func QuotaCell(key string) string { return "quota/" + key }

// BudgetCell is the cell of a key's spend budget (package quota), in
// pico-USD, laid out as a QuotaCell.
func BudgetCell(key string) string { return "budget/" + key }

// FleetQuotaCell holds what the gateway's other replicas used of a key's
// token quotas, as the last spend exchange learned (package fleetspend;
// package quota's fleet.go reads it).
func FleetQuotaCell(key string) string { return "fleet-quota/" + key }

// FleetBudgetCell is FleetQuotaCell for the key's budget, in pico-USD.
func FleetBudgetCell(key string) string { return "fleet-budget/" + key }

// countsPlaces reports whether a cell's columns hold places (slots, queue
// and concurrency places), which ReleaseColumn counts, rather than bytes,
// tokens or pico-USD.
func countsPlaces(name string) bool {
	for _, prefix := range []string{statsPrefix, "quota/", "budget/", "fleet-quota/", "fleet-budget/"} {
		if strings.HasPrefix(name, prefix) {
			return false
		}
	}
	return true
}

// QueueCell is the cell of a model's queue: its depth and tickets.
func QueueCell(model string) string { return "queue/" + model }

// Scalars of a KeyCell beyond its limiters (RequestTAT, TokenTAT), for
// the fair queue between keys. A key's cell also counts, as each worker's
// mark (AddMarkCount, MarkCount), its requests waiting in that worker's
// queues: a dead worker's are cleared with the rest of its column.
const (
	// KeyServedScalar is the key's finish tag in the fair queue: the
	// tokens of its requests (served or waiting) divided by its weight, in
	// units of 1/ServedUnitsPerToken token, from no earlier than the
	// model's virtual time when it was idle (see proxy/queue/fair.go).
	KeyServedScalar = 2
	// KeyQueuedScalar counts the key's requests that waited for a slot.
	KeyQueuedScalar = 3
	// KeyQueueWaitScalar sums their waits, in nanoseconds.
	KeyQueueWaitScalar = 4
	// KeyMeanRestScalar is a moving mean of what the key's requests used
	// beyond their prompt's estimate (their answers, mostly), in tokens:
	// charged with the prompt when a request takes its slot.
	KeyMeanRestScalar = 5
	// KeyEndUsersScalar counts the key's entries of the end-user table
	// whose state counts (package enduser: bounded by its max_tracked at
	// every claim, recounted by the supervisor's sweep).
	KeyEndUsersScalar = 6
	// KeyEndUserOverflowScalar counts the key's requests held to its
	// overflow end user (end users it could not track).
	KeyEndUserOverflowScalar = 7
)

// ServedUnitsPerToken is what one token adds to the KeyServedScalar of a
// key of weight 1: 1,024 units, so that a key of the largest weight (100)
// is still charged 10 units a token (charges are rounded down), and a
// counter holds 9×10^15 tokens at weight 1 (10^13 at the smallest weight,
// 0.01) before it saturates.
const ServedUnitsPerToken = 1024

// QueueVirtualScalar, in a QueueCell (beyond Ticket and LastRelease), is
// the model's virtual time: the start tag of the last request that took
// one of the model's slots (the largest, if they came out of order).
const QueueVirtualScalar = 4

// QueueEpochScalar, in a QueueCell, is what the fair queue's marks count
// start tags from: the virtual time as it was when the queue last drained
// (see proxy/queue/fair.go, rebaseEpoch).
const QueueEpochScalar = 5

// BackendCell is the cell of one backend of a model: its slots in use.
func BackendCell(model, url string) string {
	return "backend/" + model + "/" + strings.TrimSuffix(url, "/")
}

// BackendKeyCell is the cell of one provider key (api_keys_env) of a
// backend of a model, named by its environment variable: whether it is in
// rotation, how long it rests, its counters (the BackendKey* scalars).
func BackendKeyCell(model, url, keyEnv string) string {
	return "backend-key/" + model + "/" + strings.TrimSuffix(url, "/") + "#" + keyEnv
}

// Scalars of a BackendKeyCell. Counters only grow (the supervisor reads
// them for /metrics); none is held in a worker's column.
const (
	// BackendKeyOutScalar is the first configuration generation
	// (Region.Generation) under which the key is back in rotation: one past
	// the generation under which it was answered 401 or 403. The key is
	// out while the running generation is below it (0: never out), so the
	// next reload brings it back.
	BackendKeyOutScalar = 0
	// BackendKeyRestScalar is when (region clock) a key answered 429 may be
	// used again; 0 or past: not resting.
	BackendKeyRestScalar = 1
	// BackendKeyRequestsScalar counts the requests sent with the key.
	BackendKeyRequestsScalar = 2
	// BackendKeyRateLimitedScalar counts its 429 answers.
	BackendKeyRateLimitedScalar = 3
	// BackendKeyRejectedScalar counts its 401 and 403 answers.
	BackendKeyRejectedScalar = 4
	// BackendKeyCursorScalar, in the cell of a backend's first key, is the
	// round-robin cursor over its keys, shared by all workers.
	BackendKeyCursorScalar = 5
)

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

// StatsCellNames returns the names of the fixed cells every configuration
// has (the gateway's own gauges and counters).
func StatsCellNames() []string { return append([]string(nil), statsCellNames...) }
