package proxy

// Compiling a configuration into a route table: the keys, the models
// and their backends, each with its cells in the shared region.

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/proxy/admission"
	"github.com/sluice-gw/sluice/proxy/affinity"
	"github.com/sluice-gw/sluice/proxy/provkeys"
	"github.com/sluice-gw/sluice/proxy/queue"
	"github.com/sluice-gw/sluice/proxy/usage"
	"github.com/sluice-gw/sluice/quota"
	"github.com/sluice-gw/sluice/shm"
)

// linkSiblings gives every backend the cells of the same server (same URL)
// under the other models of t.
func linkSiblings(t *routeTable) {
	type listed struct {
		b *backendRoute
		m *modelRoute
	}
	byURL := map[string][]listed{}
	for _, m := range t.order {
		for _, b := range m.backends {
			byURL[b.url] = append(byURL[b.url], listed{b, m})
		}
	}
	for _, same := range byURL {
		for _, x := range same {
			for _, o := range same {
				if o.b != x.b && o.b.cell != nil {
					x.b.siblings = append(x.b.siblings, o.b.cell)
					if o.m != x.m && o.m.queue != nil {
						x.b.siblingQueues = append(x.b.siblingQueues, o.m.queue.Cell())
					}
				}
			}
		}
	}
}

// compileRoutes builds a routeTable from a validated configuration, finding
// its cells in the shared region (the supervisor allocated them). Backend
// API keys are read from the environment here, once, not per request;
// reach makes each backend's Upstream; log
// (nil: none) is where provider keys say they went out of rotation.
func compileRoutes(c *config.Config, region Region, q *queue.Set[*backendRoute], reach Backends, log *slog.Logger) (*routeTable, error) {
	var missing []string
	cell := func(name string) *shm.Cell {
		c := region.Lookup(name)
		if c == nil {
			missing = append(missing, name)
		}
		return c
	}
	t := &routeTable{
		keys:     make(map[[sha256.Size]byte]*keyRoute, len(c.Keys)),
		certKeys: map[[sha256.Size]byte]*keyRoute{},
		models:   make(map[string]*modelRoute, len(c.Models)),
	}
	t.calendar = quota.NewCalendar(c.QuotaLocation())
	for _, k := range c.Keys {
		kr := compileKey(k, cell, region.EndUserSeed(), c.Fleet.SpendEvery() > 0)
		if k.SHA256 != "" {
			t.keys[kr.hash] = kr
		}
		if sum, ok := config.CertFingerprint(k.ClientCertSHA256); ok {
			t.certKeys[sum] = kr
		}
		if k.JWT {
			if t.jwtKeys == nil {
				t.jwtKeys = map[string]*keyRoute{}
			}
			t.jwtKeys[k.Name] = kr
		}
	}
	for _, m := range c.Models {
		mr := compileModel(c, m, region.PrefixCapacity() > 0)
		mr.queue = q.ForModel(m.Name, cell(shm.QueueCell(m.Name)))
		mr.region = region
		if err := mr.addBackends(m, region, reach, cell, log); err != nil {
			return nil, err
		}
		t.models[m.Name] = mr
		t.order = append(t.order, mr)
	}
	linkSiblings(t)
	for _, m := range c.Models {
		mr := t.models[m.Name]
		for _, f := range m.Fallbacks {
			mr.fallbacks = append(mr.fallbacks, t.models[f]) // validated: each is a model
		}
		for _, f := range m.ContextFallbacks {
			mr.contextFallbacks = append(mr.contextFallbacks, t.models[f])
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("shared region lacks the cells %s: the supervisor did not allocate them", strings.Join(missing, ", "))
	}
	return t, nil
}

// compileKey is the route of key k, its cell found by cell (seed: the
// end-user table's, for its end users' owner hashes).
//
// fleet says the replicas exchange their spend (fleet.spend_exchange):
// the key's quotas then count the others' spend too.
func compileKey(k config.Key, cell func(string) *shm.Cell, seed [16]byte, fleet bool) *keyRoute {
	kr := &keyRoute{name: k.Name, models: map[string]bool{}, cell: cell(shm.KeyCell(k.Name)),
		limits: admission.Limits{RequestsPerMinute: int64(k.RequestsPerMinute), TokensPerMinute: int64(k.TokensPerMinute), MaxConcurrent: int64(k.MaxConcurrent)}}
	kr.fair = queue.Key{Name: k.Name, Cell: kr.cell, Weight: k.Weight, Priority: k.Priority}
	kr.cacheSalt = groupSalt(cmp.Or(k.CacheGroup, k.Name))
	if k.HasQuotas() {
		kr.quotas.tokens = cell(shm.QuotaCell(k.Name))
		kr.quotas.tokensJ = quota.NewJournaled(shm.QuotaCell(k.Name), kr.quotas.tokens)
		if fleet {
			kr.quotas.tokensFleet = cell(shm.FleetQuotaCell(k.Name))
		}
		for _, q := range []struct {
			p quota.Period
			v int64
		}{{quota.Day, k.Quotas.Day}, {quota.Week, k.Quotas.Week}, {quota.Month, k.Quotas.Month}} {
			if q.v > 0 {
				kr.quotas.tokenLimits = append(kr.quotas.tokenLimits, quota.Limit{P: q.p, Max: q.v})
			}
		}
	}
	if b := k.Budget; b != nil {
		per, _ := quota.ParsePeriod(b.Per) // validated
		kr.quotas.spend = cell(shm.BudgetCell(k.Name))
		kr.quotas.spendJ = quota.NewJournaled(shm.BudgetCell(k.Name), kr.quotas.spend)
		if fleet {
			kr.quotas.spendFleet = cell(shm.FleetBudgetCell(k.Name))
		}
		kr.quotas.spendLimit = []quota.Limit{{P: per, Max: b.BudgetPico()}}
	}
	kr.endUsers = compileEndUsers(k, kr.cell, seed)
	if kr.fair.Weight == 0 {
		kr.fair.Weight = config.DefaultKeyWeight
	}
	raw, _ := hex.DecodeString(k.SHA256) // validated by config
	copy(kr.hash[:], raw)
	for _, m := range k.Models {
		if m == "*" {
			kr.allModel = true
		}
		kr.models[m] = true
	}
	return kr
}

// compileModel is the route of model m of c, its backends and queue not
// yet added; prefix says whether the region has a prefix index. The
// defaults are applied again for a config built in code, not decoded.
func compileModel(c *config.Config, m config.Model, prefix bool) *modelRoute {
	mr := &modelRoute{name: m.Name, rewrite: rewriteRules{upstreamModel: m.UpstreamModel}, attempts: attemptRules{retries: config.DefaultRetries}}
	mr.place.affinity, mr.place.loadCap = m.Affinity, m.AffinityLoadCap
	if m.Affinity == "prefix" && prefix {
		mr.place.prefixBlock = cmp.Or(c.PrefixIndex.Block, config.DefaultPrefixBlock)
		mr.place.prefixMax = cmp.Or(c.PrefixIndex.MaxBlocks, config.DefaultPrefixMaxBlocks)
		mr.place.prefixSeed = affinity.PrefixSeed(cmp.Or(m.UpstreamModel, m.Name))
	}
	if m.Retries != nil {
		mr.attempts.retries = *m.Retries
	}
	if len(m.Endpoints) > 0 {
		mr.endpoints = map[string]bool{}
		for _, e := range m.Endpoints {
			mr.endpoints[e] = true
		}
	}
	mr.attempts.connect, mr.attempts.streamIdle, mr.attempts.total = time.Duration(m.Timeouts.Connect), time.Duration(m.Timeouts.StreamIdle), time.Duration(m.Timeouts.Total)
	if mr.attempts.connect == 0 { // a config built in code, not decoded
		mr.attempts.connect, mr.attempts.streamIdle, mr.attempts.total = 2*time.Second, time.Minute, 10*time.Minute
	}
	mr.attempts.firstToken = time.Duration(m.Timeouts.FirstTokenDeadline)
	mr.health.path, mr.health.interval = m.Health.Path, time.Duration(m.Health.Interval)
	if mr.health.path == "" {
		mr.health.path, mr.health.interval = "/health", config.DefaultHealthInterval
	}
	mr.limits.queue.Max, mr.limits.queue.Timeout = int64(config.DefaultQueueMax), config.DefaultQueueTimeout
	if m.Queue.Max != nil {
		mr.limits.queue.Max, mr.limits.queue.Timeout = int64(*m.Queue.Max), time.Duration(m.Queue.Timeout)
	}
	mr.limits.queue.MaxPerKey = int64(config.DefaultQueueMaxPerKey(int(mr.limits.queue.Max)))
	if m.Queue.MaxPerKey != nil {
		mr.limits.queue.MaxPerKey = int64(*m.Queue.MaxPerKey)
	}
	mr.limits.maxContext = int64(m.MaxContext)
	if m.Price != nil {
		in, cached, out := m.Price.PicoPerToken()
		mr.limits.price = &usage.Price{Input: in, Cached: cached, Output: out}
	}
	mr.rewrite.sendCacheSalt = m.CacheSalt == nil || *m.CacheSalt
	mr.limits.defaultMaxTokens = cmp.Or(m.DefaultMaxTokens, config.DefaultMaxTokens)
	mr.place.kvSaturation = cmp.Or(m.KVSaturation, config.DefaultKVSaturation)
	return mr
}

// addBackends adds the routes of m's backends to mr, each with its cell
// (found by cell), its Upstream (made by reach) and its provider keys.
func (mr *modelRoute) addBackends(m config.Model, region Region, reach Backends, cell func(string) *shm.Cell, log *slog.Logger) error {
	for _, b := range m.Backends {
		br := &backendRoute{url: strings.TrimSuffix(b.URL, "/"), slots: int64(b.Slots), cell: cell(shm.BackendCell(m.Name, b.URL)),
			kvSaturation: int64(mr.place.kvSaturation * 1e6)}
		br.urlHash = holderHash(br.url)
		pool, err := reach.dial(br.url, mr.attempts.connect)
		if err != nil { // the supervisor validated it: a bug, but not a reason to crash every worker
			return fmt.Errorf("backend %q of model %s: %w", br.url, m.Name, err)
		}
		br.pool = pool
		mr.place.seeds = append(mr.place.seeds, affinity.Seed(br.url))
		if b.APIKeyEnv != "" {
			br.authHeader = "Bearer " + os.Getenv(b.APIKeyEnv)
		}
		if len(b.APIKeysEnv) > 0 {
			br.keys = providerKeys(region, m.Name, b, cell, log)
		}
		mr.backends = append(mr.backends, br)
	}
	return nil
}

// providerKeys is the provkeys.Set of backend b of model: its api_keys_env
// values and their cells (nil when a cell is missing: compileRoutes fails).
func providerKeys(region Region, model string, b config.Backend, cell func(string) *shm.Cell, log *slog.Logger) *provkeys.Set {
	values := make([]string, len(b.APIKeysEnv))
	cells := make([]*shm.Cell, len(b.APIKeysEnv))
	for i, env := range b.APIKeysEnv {
		values[i] = os.Getenv(env)
		if cells[i] = cell(shm.BackendKeyCell(model, b.URL, env)); cells[i] == nil {
			return nil
		}
	}
	if log != nil {
		log = log.With("model", model, "backend", strings.TrimSuffix(b.URL, "/"))
	}
	return provkeys.New(region, b.APIKeysEnv, values, cells, log)
}
