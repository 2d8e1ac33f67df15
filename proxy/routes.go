package proxy

import (
	"cmp"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/proxy/admission"
	"github.com/sluice-gw/sluice/proxy/affinity"
	"github.com/sluice-gw/sluice/proxy/provkeys"
	"github.com/sluice-gw/sluice/proxy/reqscan"
	"github.com/sluice-gw/sluice/shm"
)

// routeTable is the immutable, compiled form of one configuration: what a
// request needs to find its key, its model and a backend. A reload will build
// a new table and swap the pointer; a request keeps the table it started on.
type routeTable struct {
	gen       int64        // the configuration generation it was compiled from
	refs      atomic.Int64 // requests running on it
	retiredAt time.Time    // when a reload replaced it

	keys   map[[sha256.Size]byte]*keyRoute
	models map[string]*modelRoute
	order  []*modelRoute // config order, for /v1/models
}

// keyRoute is one client API key.
type keyRoute struct {
	name     string
	hash     [sha256.Size]byte
	allModel bool
	models   map[string]bool

	cell      *shm.Cell        // limiter state and requests in flight, shared by all workers
	limits    admission.Limits // as configured (each gateway enforces its fleetShare)
	fair      fairKey          // its place in the queues: weight, priority, served counter
	cacheSalt string           // its cache group's cache_salt (groupSalt)
}

// modelRoute is one entry of models[].
type modelRoute struct {
	name           string
	upstreamModel  string
	backends       []*backendRoute
	seeds          []uint64 // affinity.Seed of each backend, same order
	affinity       string   // prefix | user | none
	loadCap        float64
	next           atomic.Uint32 // round-robin cursor (affinity none, or no key)
	retries        int           // further attempts before the first byte
	healthPath     string
	healthInterval time.Duration
	connect        time.Duration // connect timeout of its backends' pools
	streamIdle     time.Duration
	total          time.Duration
	firstToken     time.Duration // 0: off

	kvSaturation     float64     // a backend above this KV-cache usage takes nothing new
	queue            *localQueue // this worker's waiters; depth and order are shared
	queueMax         int64
	queueMaxPerKey   int64 // of queueMax, the places one key may hold (0: no bound of its own)
	maxContext       int64 // max_context: the most tokens a request's prompt and answer take together (0: not set)
	sendCacheSalt    bool  // cache_salt: send each request's salt to the backends
	queueTimeout     time.Duration
	defaultMaxTokens int64
	// endpoints are the APIs it serves, by apiSpec name (models[].endpoints);
	// nil: all.
	endpoints map[string]bool

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

// sentWindow is about how many requests modelRoute.sent remembers. The
// in-flight count of a moment says little of what a backend carries while
// few requests overlap (at 8 in flight over 3 backends it is 0-5, whichever
// conversations happen to be mid-turn); ~1,000 requests say it to a few
// percent.
const sentWindow = 1024

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

	up           atomic.Bool  // the last active health check passed
	ejectedUntil atomic.Int64 // unix ns: out of rotation until then (passive ejection)
	failures     atomic.Int32 // connection failures since the last passing check
	carried      bool         // health state carried over from the table a reload replaced

	meter atomic.Pointer[backendSeries] // its /metrics series, resolved on first use
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
						x.b.siblingQueues = append(x.b.siblingQueues, o.m.queue.cell)
					}
				}
			}
		}
	}
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
					b.up.Store(ob.up.Load())
					b.ejectedUntil.Store(ob.ejectedUntil.Load())
					b.failures.Store(ob.failures.Load())
					b.carried = true
					if m.connect == om.connect {
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

// compileRoutes builds a routeTable from a validated configuration, finding
// its cells in the shared region (the supervisor allocated them). Backend
// API keys are read from the environment here, once, not per request;
// reach makes each backend's Upstream; log
// (nil: none) is where provider keys say they went out of rotation.
func compileRoutes(c *config.Config, region *shm.Region, q *queues, reach Backends, log *slog.Logger) (*routeTable, error) {
	var missing []string
	cell := func(name string) *shm.Cell {
		c := region.Lookup(name)
		if c == nil {
			missing = append(missing, name)
		}
		return c
	}
	t := &routeTable{
		keys:   make(map[[sha256.Size]byte]*keyRoute, len(c.Keys)),
		models: make(map[string]*modelRoute, len(c.Models)),
	}
	for _, k := range c.Keys {
		kr := &keyRoute{name: k.Name, models: map[string]bool{}, cell: cell(shm.KeyCell(k.Name)),
			limits: admission.Limits{RequestsPerMinute: int64(k.RequestsPerMinute), TokensPerMinute: int64(k.TokensPerMinute), MaxConcurrent: int64(k.MaxConcurrent)}}
		kr.fair = fairKey{name: k.Name, cell: kr.cell, weight: k.Weight, priority: k.Priority}
		kr.cacheSalt = groupSalt(cmp.Or(k.CacheGroup, k.Name))
		if kr.fair.weight == 0 {
			kr.fair.weight = config.DefaultKeyWeight
		}
		raw, _ := hex.DecodeString(k.SHA256) // validated by config
		copy(kr.hash[:], raw)
		for _, m := range k.Models {
			if m == "*" {
				kr.allModel = true
			}
			kr.models[m] = true
		}
		t.keys[kr.hash] = kr
	}
	for _, m := range c.Models {
		mr := &modelRoute{name: m.Name, upstreamModel: m.UpstreamModel, affinity: m.Affinity, loadCap: m.AffinityLoadCap, retries: config.DefaultRetries}
		if m.Affinity == "prefix" && region.PrefixCapacity() > 0 {
			// (The defaults again for a config built in code, not decoded.)
			mr.prefixBlock = cmp.Or(c.PrefixIndex.Block, config.DefaultPrefixBlock)
			mr.prefixMax = cmp.Or(c.PrefixIndex.MaxBlocks, config.DefaultPrefixMaxBlocks)
			mr.prefixSeed = affinity.PrefixSeed(cmp.Or(m.UpstreamModel, m.Name))
		}
		if m.Retries != nil {
			mr.retries = *m.Retries
		}
		if len(m.Endpoints) > 0 {
			mr.endpoints = map[string]bool{}
			for _, e := range m.Endpoints {
				mr.endpoints[e] = true
			}
		}
		connect, idle, total := time.Duration(m.Timeouts.Connect), time.Duration(m.Timeouts.StreamIdle), time.Duration(m.Timeouts.Total)
		if connect == 0 { // a config built in code, not decoded
			connect, idle, total = 2*time.Second, time.Minute, 10*time.Minute
		}
		mr.connect, mr.streamIdle, mr.total = connect, idle, total
		mr.firstToken = time.Duration(m.Timeouts.FirstTokenDeadline)
		mr.healthPath, mr.healthInterval = m.Health.Path, time.Duration(m.Health.Interval)
		mr.queueMax, mr.queueTimeout, mr.defaultMaxTokens = int64(config.DefaultQueueMax), config.DefaultQueueTimeout, m.DefaultMaxTokens
		if m.Queue.Max != nil {
			mr.queueMax, mr.queueTimeout = int64(*m.Queue.Max), time.Duration(m.Queue.Timeout)
		}
		mr.maxContext = int64(m.MaxContext)
		mr.sendCacheSalt = m.CacheSalt == nil || *m.CacheSalt
		mr.queueMaxPerKey = int64(config.DefaultQueueMaxPerKey(int(mr.queueMax)))
		if m.Queue.MaxPerKey != nil {
			mr.queueMaxPerKey = int64(*m.Queue.MaxPerKey)
		}
		if mr.defaultMaxTokens == 0 {
			mr.defaultMaxTokens = config.DefaultMaxTokens
		}
		mr.queue = q.forModel(m.Name, cell(shm.QueueCell(m.Name)))
		mr.kvSaturation = m.KVSaturation
		if mr.kvSaturation == 0 {
			mr.kvSaturation = config.DefaultKVSaturation
		}
		if mr.healthPath == "" {
			mr.healthPath, mr.healthInterval = "/health", config.DefaultHealthInterval
		}
		for _, b := range m.Backends {
			br := &backendRoute{url: strings.TrimSuffix(b.URL, "/"), slots: int64(b.Slots), cell: cell(shm.BackendCell(m.Name, b.URL)),
				kvSaturation: int64(mr.kvSaturation * 1e6)}
			br.urlHash = holderHash(br.url)
			pool, err := reach.dial(br.url, connect)
			if err != nil { // the supervisor validated it: a bug, but not a reason to crash every worker
				return nil, fmt.Errorf("backend %q of model %s: %w", br.url, m.Name, err)
			}
			br.pool = pool
			mr.seeds = append(mr.seeds, affinity.Seed(br.url))
			if b.APIKeyEnv != "" {
				br.authHeader = "Bearer " + os.Getenv(b.APIKeyEnv)
			}
			if len(b.APIKeysEnv) > 0 {
				br.keys = providerKeys(region, m.Name, b, cell, log)
			}
			mr.backends = append(mr.backends, br)
		}
		t.models[m.Name] = mr
		t.order = append(t.order, mr)
	}
	linkSiblings(t)
	if len(missing) > 0 {
		return nil, fmt.Errorf("shared region lacks the cells %s: the supervisor did not allocate them", strings.Join(missing, ", "))
	}
	return t, nil
}

// providerKeys is the provkeys.Set of backend b of model: its api_keys_env
// values and their cells (nil when a cell is missing: compileRoutes fails).
func providerKeys(region *shm.Region, model string, b config.Backend, cell func(string) *shm.Cell, log *slog.Logger) *provkeys.Set {
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

// busyAt is the load from which a backend's keys are bounded by the even
// share (affinity_load_cap): half its slots.
func busyAt(slots int64) int64 { return (slots + 1) / 2 }

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

// placeByIndex is candidates' choice, as an index into order, for a
// request the prefix index places (q); home is the key's own choice, kept
// when no backend is within the even share. A conversation stays where
// it is and moves only whole:
//
//   - A later turn (q.history) goes to the conversation's backend while
//     that backend keeps its keys (candidates: it is not saturated for
//     real): the one its last turn was sent to, as the region's recall
//     table remembers it (q.conv: notePrefix), or, forgotten, the one the
//     index holds the most of its own turns for (more than the app's
//     shared head, q.shared). Its key's ranking says nothing there: where
//     the conversation went is what counts.
//   - A first turn, or a later one whose backend is saturated, is placed
//     afresh: among the backends within the even share's bound (not full,
//     in flight under limit), those holding about the longest run of its
//     leading blocks (matchSlack) — an app's system prompt, a RAG
//     document, what a moving conversation left on a backend before —,
//     and of those the less loaded of the first choices in the key's
//     ranking (ties: the first). The bound is the even share, not "busy": a prefix every
//     request shares would otherwise pull all of them onto the first
//     backend it was sent to. The backend chosen is recorded as holding
//     the prompt, so the conversation's next turn finds it there: a
//     conversation that moved has moved whole.
//
// With a cold index, or a prefix every backend holds alike, the ranking
// and the load decide; gateway replicas (each with its own region) agree
// while the backends carry the same load.
func (m *modelRoute) placeByIndex(q *prefixQuery, order []int, load []int64, full []bool, limit int64, keeps func(int) bool, home int, now time.Time) int {
	region := m.queue.q.region
	var matches [16]int
	match := matches[:]
	if len(order) > len(matches) {
		match = make([]int, len(order))
	}
	own := -1 // the conversation's backend, if it has one
	for k, i := range order {
		b := m.backends[i]
		if !b.healthy(now) {
			match[k] = -1
			continue
		}
		match[k] = region.PrefixMatch(b.urlHash, q.blocks)
		// Not remembered (forgotten, or another replica's): the backend
		// that holds the most of its own turns, earliest in the ranking.
		if q.history && match[k] > q.shared && (own < 0 || match[k] > match[own]) {
			own = k
		}
	}
	if q.history && q.conv != 0 {
		if v, ok := region.Recall(q.conv); ok {
			for k, i := range order {
				if match[k] >= 0 && m.backends[i].urlHash == v&holderMask {
					own = k
					break
				}
			}
		}
	}
	if own >= 0 && keeps(order[own]) {
		// Unless another within the bound holds more of the prompt than
		// its backend by more than the conversation's own turns (what
		// moving loses): its backend has evicted a RAG document since.
		stay := true
		for k, i := range order {
			if k != own && match[k]-match[own] > len(q.blocks)-q.shared && !full[i] && load[i] < limit {
				stay = false
				break
			}
		}
		if stay {
			q.matched = match[own]
			return own
		}
	}
	// Placed afresh: of the backends within the bound that hold about the
	// longest run (within matchSlack of it), the first choices in the
	// ranking, and of those the one that carries least (m.sent).
	top := -1
	for k, i := range order {
		if match[k] >= 0 && !full[i] && load[i] < limit {
			top = max(top, match[k])
		}
	}
	if top < 0 { // none within the bound: the key's own choice
		q.matched = max(match[home], 0)
		return home
	}
	var sents [16]float64
	sent := sents[:]
	if len(order) > len(sents) {
		sent = make([]float64, len(order))
	}
	m.sentMu.Lock()
	if len(m.sent) == len(order) {
		copy(sent, m.sent)
	} else {
		clear(sent)
	}
	m.sentMu.Unlock()
	first, picked := -1, 0
	for k, i := range order {
		if picked == choices {
			break
		}
		if match[k] < 0 || full[i] || load[i] >= limit || match[k] < top-matchSlack {
			continue
		}
		if first < 0 || sent[i] < sent[order[first]] {
			first = k
		}
		picked++
	}
	q.matched = match[first]
	return first
}

// noteSent counts blocks prompt blocks sent to backend b in m.sent.
func (m *modelRoute) noteSent(b *backendRoute, blocks int) {
	m.sentMu.Lock()
	if len(m.sent) != len(m.backends) {
		m.sent = make([]float64, len(m.backends))
	}
	for i, o := range m.backends {
		m.sent[i] -= m.sent[i] / sentWindow
		if o == b {
			m.sent[i] += float64(blocks)
		}
	}
	m.sentMu.Unlock()
}

// affinityKey returns the request's affinity key and whether it has one:
// its "user" when present, else (affinity prefix) its conversation key,
// the raw bytes of its instructions (Responses) or system (Messages)
// followed by its conversation (reqscan.Request.Conversation: the
// messages up to the end of the first user turn, a prompt's head), hashed
// as one. A shared system prompt then no longer sends a whole app to one
// backend, and a conversation's later turns, which resend its head, keep
// the key of its first.
func (m *modelRoute) affinityKey(body []byte, r *reqscan.Request) (uint64, bool) {
	switch {
	case m.affinity == "none":
		return 0, false
	case r.User.Len() > 0:
		return affinity.Key(body[r.User.Start:r.User.End]), true
	case m.affinity != "prefix":
		return 0, false
	}
	head := r.Instructions
	if head.Len() == 0 {
		head = r.System
	}
	if head.Len() == 0 && r.Conversation.Len() == 0 {
		return 0, false
	}
	return affinity.KeyOf(body[head.Start:head.End], body[r.Conversation.Start:r.Conversation.End]), true
}

// prefixQuery is what candidates asks the prefix index, and its answer.
type prefixQuery struct {
	blocks []uint64 // the request's prompt blocks (affinity.AppendBlocks)
	// shared is how many of blocks lie before the first user turn (an
	// app's system prompt: conversationShape); a backend that holds more
	// holds some of this conversation's own.
	shared int
	// history: the request continues a conversation (its prompt goes on
	// past the first user turn).
	history bool
	// conv is the conversation's key in the recall table
	// (affinity.ConversationEntry; 0: none), whose value is the backend
	// its last turn was sent to.
	conv uint64
	// matched is set by candidates: how many leading blocks the index
	// held for the backend it put first (0 when it was not consulted).
	matched int
}

// choices is how many backends, in the key's ranking, a conversation that
// starts (or must move) chooses from by what they carry: the less loaded
// of two (the "power of two choices", which keeps every backend near the
// mean where one choice — a hash — leaves the luck of the draw), so gateway
// replicas, each with its own region, still agree whenever the two carry
// about the same.
const choices = 2

// matchSlack is how many blocks less than the longest run a backend may
// hold and still count as holding it when a conversation is placed: one,
// the block where a system prompt ends and the first user turn's opening
// words, which many conversations share, begin (10 blocks against 9 is no
// reason to load one backend more than another). More would spread a RAG
// document over every backend that holds most of it, where the longest
// run gathers it on one (W3 in bench/placement: 0.90 against 0.95 at 48
// in flight with a slack of an eighth).
const matchSlack = 1

// candidates returns the backends to try, in order, appended to dst: for a
// request with an affinity key, its rendezvous ranking with the first
// backend that keeps its keys (not saturated: see below) moved to the
// front — or, with q (nil: none), the one the prefix index places it on
// (see the comment there); without a key, round robin.
func (m *modelRoute) candidates(key uint64, hasKey bool, q *prefixQuery, dst []*backendRoute) []*backendRoute {
	now := time.Now()
	n := len(m.backends)
	if n == 0 { // discovery found no instance (yet)
		return dst
	}
	if !hasKey {
		start := int(m.next.Add(1)-1) % n
		for i := 0; i < n; i++ {
			if b := m.backends[(start+i)%n]; b.healthy(now) {
				dst = append(dst, b)
			}
		}
		return dst
	}
	var stack [16]int
	order := stack[:]
	if n > len(stack) {
		order = make([]int, n)
	}
	order = affinity.Rank(key, m.seeds, order)
	// The ranking is over every backend (so keys do not move when another
	// backend goes down and comes back); unhealthy ones are skipped.
	healthy := 0
	for _, b := range m.backends {
		if b.healthy(now) {
			healthy++
		}
	}
	// In-flight counts are the shared ones: every worker's requests.
	var loads [16]int64
	load := loads[:]
	if n > len(loads) {
		load = make([]int64, n)
	}
	var total int64
	var fulls [16]bool
	full := fulls[:]
	if n > len(fulls) {
		full = make([]bool, n)
	}
	regionNow := m.queue.q.region.Now()
	for i, b := range m.backends {
		load[i], full[i] = b.load(regionNow)
		total += load[i]
	}
	limit := int64(affinity.LoadCap(m.loadCap, int(total), max(healthy, 1)))
	// A backend keeps its keys until it is saturated for real: never
	// while it is full (its slots, or its KV cache past kv_saturation: it
	// would queue work another backend could start now), and past the even
	// share's bound only once it is busy — at half its slots or more. While
	// every backend is nearly idle a key stays home, where its prefix is
	// cached: the bound alone moved keys off at 4 in flight of 3×64 slots.
	keeps := func(i int) bool {
		return !full[i] && (load[i] < limit || load[i] < busyAt(m.backends[i].slots))
	}
	// The best healthy backend that keeps its keys, else the best healthy one.
	first := -1
	for k, i := range order {
		if !m.backends[i].healthy(now) {
			continue
		}
		if first < 0 {
			first = k
		}
		if keeps(i) {
			first = k
			break
		}
	}
	if first < 0 {
		return dst
	}
	if q != nil && len(q.blocks) > 0 {
		first = m.placeByIndex(q, order, load, full, limit, keeps, first, now)
	}
	dst = append(dst, m.backends[order[first]])
	for k, i := range order {
		if b := m.backends[i]; k != first && b.healthy(now) {
			dst = append(dst, b)
		}
	}
	return dst
}
