package proxy

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-gw/sluice/proxy/admission"
	"github.com/sluice-gw/sluice/proxy/provkeys"
	"github.com/sluice-gw/sluice/proxy/queue"
	"github.com/sluice-gw/sluice/proxy/usage"
	"github.com/sluice-gw/sluice/quota"
	"github.com/sluice-gw/sluice/shm"
)

// routeTable is the immutable, compiled form of one configuration: what a
// request needs to find its key, its model and a backend. A reload will build
// a new table and swap the pointer; a request keeps the table it started on.
type routeTable struct {
	gen       int64        // the configuration generation it was compiled from
	refs      atomic.Int64 // requests running on it
	retiredAt time.Time    // when a reload replaced it

	// calendar is quota_timezone's, for the keys' quotas and budgets.
	calendar quota.Calendar

	keys map[[sha256.Size]byte]*keyRoute
	// certKeys are the keys by client certificate (client_cert_sha256).
	certKeys map[[sha256.Size]byte]*keyRoute
	models   map[string]*modelRoute
	order    []*modelRoute // config order, for /v1/models

	// jwt is auth.jwt's verifier (jwt.go); nil: off. jwtKeys are the
	// keys with jwt: true, by name (a token's key_claim).
	jwt     *jwtAuth
	jwtKeys map[string]*keyRoute
}

// keyRoute is one client API key.
type keyRoute struct {
	name     string
	hash     [sha256.Size]byte
	allModel bool
	models   map[string]bool

	cell      *shm.Cell        // limiter state and requests in flight, shared by all workers
	limits    admission.Limits // as configured (each gateway enforces its fleetShare)
	fair      queue.Key        // its place in the queues: weight, priority, served counter
	cacheSalt string           // its cache group's cache_salt (groupSalt)
	quotas    keyQuotas        // its quotas and budget (quotas.go)
	endUsers  *keyEndUsers     // its end users' limits (endusers.go); nil: none
}

// modelRoute is one entry of models[].
type modelRoute struct {
	name      string
	backends  []*backendRoute
	endpoints map[string]bool             // the APIs it serves, by apiSpec name (models[].endpoints); nil: all
	queue     *queue.Queue[*backendRoute] // this worker's waiters; depth and order are shared
	region    Region                      // the shared region: the prefix index, the clock
	limits    modelLimits
	attempts  attemptRules
	health    healthCheck
	rewrite   rewriteRules
	place     placer
	// fallbacks and contextFallbacks are models[].fallbacks and
	// context_fallbacks: where a request goes when this model cannot
	// serve it (fallback.go).
	fallbacks, contextFallbacks []*modelRoute
}

// modelLimits bound what a request of the model may take.
type modelLimits struct {
	price            *usage.Price // price: what its tokens cost (nil: unpriced)
	queue            queue.Limits // queue.max, queue.max_per_key, queue.timeout
	maxContext       int64        // max_context: the most tokens a request's prompt and answer take together (0: not set)
	defaultMaxTokens int64        // default_max_tokens: what a token limit reserves without max_tokens
}

// attemptRules are how its requests go upstream.
type attemptRules struct {
	retries    int           // further attempts before the first byte
	connect    time.Duration // connect timeout of its backends' pools
	streamIdle time.Duration
	total      time.Duration
	firstToken time.Duration // 0: off
}

// healthCheck is its backends' active health check.
type healthCheck struct {
	path     string
	interval time.Duration
}

// rewriteRules are its edits of the body as it goes upstream.
type rewriteRules struct {
	upstreamModel string // "" : the name as sent
	sendCacheSalt bool   // cache_salt: send each request's salt to the backends
}

// placer is how the model's requests are placed on its backends
// (placement.go), and what this worker remembers of where they went.
type placer struct {
	seeds        []uint64 // affinity.Seed of each backend, same order
	affinity     string   // prefix | user | none
	loadCap      float64
	next         atomic.Uint32 // round-robin cursor (affinity none, or no key)
	kvSaturation float64       // a backend above this KV-cache usage takes nothing new
	// The prefix index (affinity prefix, with a region that has one): a
	// request's prompt in blocks of prefixBlock bytes, at most prefixMax
	// of them, chained from prefixSeed (the upstream model's name);
	// prefixMax 0: the model does not use the index.
	prefixSeed  uint64
	prefixBlock int
	prefixMax   int
	// sent is, for each backend (same order), the prompt blocks this
	// worker sent it, decayed by each request sent by 1/sentWindow: its
	// share of the prompts of late, what its KV cache holds of the
	// conversations it carries (a conversation resends its whole history
	// each turn). A conversation that starts goes where it is least
	// (placeByIndex). The requests each worker sends are a fair sample of
	// all; it starts again at 0 with each route table.
	sentMu sync.Mutex
	sent   []float64
}

// backendRoute is one upstream server of a model.
type backendRoute struct {
	url        string    // base URL without trailing slash
	urlHash    uint64    // holderHash(url): how the shared region names it as the holder of stored responses
	pool       Upstream  // keep-alive connections; carried over reloads with the URL
	authHeader string    // "Bearer …" from api_key_env, or empty
	cell       *shm.Cell // slots in use, counted across all workers
	slots      int64
	// keys are the backend's provider keys (api_keys_env), nil without:
	// each attempt sends the one keys.Pick gives, in place of authHeader.
	keys *provkeys.Set
	// siblings are the same server's cells under the other models that
	// list it: the load it reports counts their requests too.
	siblings []*shm.Cell
	// siblingQueues are those models' queue cells: a slot this backend
	// frees may be one their waiters can take (the server's load is shared).
	siblingQueues []*shm.Cell
	// kvSaturation, in millionths: above it the backend takes nothing new.
	kvSaturation int64

	state backendState // in rotation or not (health.go)

	meter atomic.Pointer[backendSeries] // its /metrics series, resolved on first use
}

// backendState is whether a backend is in rotation: its active checks'
// verdict and its passive ejection, carried over a reload for a backend
// that stays.
type backendState struct {
	up           atomic.Bool  // the last active health check passed
	ejectedUntil atomic.Int64 // unix ns: out of rotation until then (passive ejection)
	failures     atomic.Int32 // connection failures since the last passing check
	carried      bool         // carried over from the table a reload replaced
}

// load is the backend's slots in use: this gateway's requests in flight
// now (all workers). While the supervisor's last read of the backend's
// /metrics is fresh, it is the server's whole load instead: the gateway's
// requests to it now under every model that lists it, plus the part of
// its own count of requests running and waiting that was not the
// gateway's when it was read — other gateways, and clients that go
// straight to the backend, use its slots too. (The whole figure read
// would count the gateway's requests of that moment, ended since, and
// hold newcomers in the queue behind free slots until the next read.)
// full also reports a KV cache above kv_saturation.
func (b *backendRoute) load(regionNow int64) (used int64, full bool) {
	used = b.cell.Total()
	if others, kv, fresh := b.cell.OthersLoad(regionNow); fresh {
		used += others
		for _, c := range b.siblings {
			used += c.Total()
		}
		full = kv > b.kvSaturation
	}
	return used, full || used >= b.slots
}

// carryHealth copies, for every backend that the old table also had (same
// model, same URL), its health state: a reload must not take a healthy
// backend out of rotation until its next check, nor put an ejected one back.
// Its keep-alive pool is carried too (when the connect timeout is the same).
func (t *routeTable) carryHealth(old *routeTable) {
	if old == nil {
		return
	}
	for _, m := range t.order {
		om := old.models[m.name]
		if om == nil {
			continue
		}
		for _, b := range m.backends {
			for _, ob := range om.backends {
				if ob.url == b.url {
					b.state.up.Store(ob.state.up.Load())
					b.state.ejectedUntil.Store(ob.state.ejectedUntil.Load())
					b.state.failures.Store(ob.state.failures.Load())
					b.state.carried = true
					if m.attempts.connect == om.attempts.connect {
						b.pool.Close()
						b.pool = ob.pool
					}
				}
			}
		}
	}
}

// closePools closes the pools of t's backends that the current table does
// not use: t was retired and no request runs on it any more.
func (t *routeTable) closePools(current *routeTable) {
	kept := map[Upstream]bool{}
	for _, m := range current.order {
		for _, b := range m.backends {
			kept[b.pool] = true
		}
	}
	for _, m := range t.order {
		for _, b := range m.backends {
			if !kept[b.pool] {
				b.pool.Close()
			}
		}
	}
}

// authenticate returns the key whose SHA-256 matches the token the client
// sent (apiSpec.clientKey), or nil. The lookup is by digest: what a timing
// difference could reveal is the digest of a guess, which is of no use for
// finding a key; the final comparison is constant-time all the same.
func (t *routeTable) authenticate(token []byte) *keyRoute {
	if len(token) == 0 {
		return nil
	}
	sum := sha256.Sum256(token)
	k := t.keys[sum]
	if k == nil || subtle.ConstantTimeCompare(k.hash[:], sum[:]) != 1 {
		return nil
	}
	return k
}

// byCert returns the key of the verified client certificate of the
// connection a request came on (ctx's Conn), or nil; presented says
// whether there was such a certificate at all.
func (t *routeTable) byCert(ctx context.Context) (key *keyRoute, presented bool) {
	if len(t.certKeys) == 0 {
		return nil, false
	}
	conn, _ := ctx.Value(ConnKey{}).(Conn)
	if conn == nil {
		return nil, false
	}
	sum, ok := conn.ClientCert()
	if !ok {
		return nil, false
	}
	return t.certKeys[sum], true
}

// keysRest is how long until a backend of m that is out of candidacy only
// because its provider keys rest (api_keys_env, after 429s) may take
// requests again: the soonest such wait; ok false when none is.
func (m *modelRoute) keysRest(regionNow int64) (wait time.Duration, ok bool) {
	now := time.Now()
	for _, b := range m.backends {
		if b.keys == nil || !b.passing(now) {
			continue
		}
		if d, resting := b.keys.RestLeft(regionNow); resting && (!ok || d < wait) {
			wait, ok = d, true
		}
	}
	return wait, ok
}

// lists reports whether one of the model's backends, in rotation or not,
// is the server whose holderHash is h.
func (m *modelRoute) lists(h uint64) bool {
	for _, b := range m.backends {
		if b.urlHash == h {
			return true
		}
	}
	return false
}

// serves reports whether the model serves the API (models[].endpoints).
func (m *modelRoute) serves(a *apiSpec) bool { return m.endpoints == nil || m.endpoints[a.name] }

// allows reports whether the key may use the model.
func (k *keyRoute) allows(model string) bool {
	return k.allModel || k.models[model]
}
