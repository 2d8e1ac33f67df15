package worker

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"os"
	"strings"
	"sync/atomic"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/worker/affinity"
	"github.com/sluice-gw/sluice/worker/reqscan"
)

// routeTable is the immutable, compiled form of one configuration: what a
// request needs to find its key, its model and a backend. A reload will build
// a new table and swap the pointer; a request keeps the table it started on.
type routeTable struct {
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
}

// modelRoute is one entry of models[].
type modelRoute struct {
	name          string
	upstreamModel string
	backends      []*backendRoute
	seeds         []uint64 // affinity.Seed of each backend, same order
	affinity      string   // prefix | user | none
	loadCap       float64
	inflight      atomic.Int64  // this worker's requests in flight to the model
	next          atomic.Uint32 // round-robin cursor (affinity none, or no key)
}

// backendRoute is one upstream server of a model.
type backendRoute struct {
	url        string // base URL without trailing slash
	authHeader string // "Bearer …" from api_key_env, or empty
	inflight   atomic.Int64
}

// compileRoutes builds a routeTable from a validated configuration. Backend
// API keys are read from the environment here, once, not per request.
func compileRoutes(c *config.Config) *routeTable {
	t := &routeTable{
		keys:   make(map[[sha256.Size]byte]*keyRoute, len(c.Keys)),
		models: make(map[string]*modelRoute, len(c.Models)),
	}
	for _, k := range c.Keys {
		kr := &keyRoute{name: k.Name, models: map[string]bool{}}
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
		mr := &modelRoute{name: m.Name, upstreamModel: m.UpstreamModel, affinity: m.Affinity, loadCap: m.AffinityLoadCap}
		for _, b := range m.Backends {
			br := &backendRoute{url: strings.TrimSuffix(b.URL, "/")}
			mr.seeds = append(mr.seeds, affinity.Seed(br.url))
			if b.APIKeyEnv != "" {
				br.authHeader = "Bearer " + os.Getenv(b.APIKeyEnv)
			}
			mr.backends = append(mr.backends, br)
		}
		t.models[m.Name] = mr
		t.order = append(t.order, mr)
	}
	return t
}

// authenticate returns the key whose SHA-256 matches the bearer token in an
// Authorization header value, or nil. The lookup is by digest: what a timing
// difference could reveal is the digest of a guess, which is of no use for
// finding a key; the final comparison is constant-time all the same.
func (t *routeTable) authenticate(authorization []byte) *keyRoute {
	const prefix = "Bearer "
	if len(authorization) <= len(prefix) || !strings.EqualFold(string(authorization[:len(prefix)]), prefix) {
		return nil
	}
	sum := sha256.Sum256(authorization[len(prefix):])
	k := t.keys[sum]
	if k == nil || subtle.ConstantTimeCompare(k.hash[:], sum[:]) != 1 {
		return nil
	}
	return k
}

// allows reports whether the key may use the model.
func (k *keyRoute) allows(model string) bool {
	return k.allModel || k.models[model]
}

// affinityKey returns the request's affinity key and whether it has one:
// its "user" when present, else (affinity prefix) its first message.
func (m *modelRoute) affinityKey(body []byte, r *reqscan.Request) (uint64, bool) {
	switch {
	case m.affinity == "none":
		return 0, false
	case r.User.Len() > 0:
		return affinity.Key(body[r.User.Start:r.User.End]), true
	case m.affinity == "prefix" && r.FirstContent.Len() > 0:
		return affinity.Key(body[r.FirstContent.Start:r.FirstContent.End]), true
	}
	return 0, false
}

// pickBackend chooses the backend for a request with affinity key key:
// the first in its rendezvous ranking whose load stays within the bound,
// or round robin when there is no key.
func (m *modelRoute) pickBackend(key uint64, hasKey bool) *backendRoute {
	if !hasKey {
		n := m.next.Add(1)
		return m.backends[int(n-1)%len(m.backends)]
	}
	var stack [16]int
	order := stack[:]
	if len(m.backends) > len(stack) {
		order = make([]int, len(m.backends))
	}
	order = affinity.Rank(key, m.seeds, order)
	limit := int64(affinity.LoadCap(m.loadCap, int(m.inflight.Load()), len(m.backends)))
	for _, i := range order {
		if m.backends[i].inflight.Load() < limit {
			return m.backends[i]
		}
	}
	return m.backends[order[0]]
}
