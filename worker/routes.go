package worker

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"os"
	"strings"
	"sync/atomic"

	"github.com/sluice-gw/sluice/config"
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
	next          atomic.Uint32 // round-robin cursor
}

// backendRoute is one upstream server of a model.
type backendRoute struct {
	url        string // base URL without trailing slash
	authHeader string // "Bearer …" from api_key_env, or empty
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
		mr := &modelRoute{name: m.Name, upstreamModel: m.UpstreamModel}
		for _, b := range m.Backends {
			br := &backendRoute{url: strings.TrimSuffix(b.URL, "/")}
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

// pickBackend chooses a backend by round robin. The issue "LLM-aware request
// handling" replaces this with rendezvous hashing over healthy backends.
func (m *modelRoute) pickBackend() *backendRoute {
	n := m.next.Add(1)
	return m.backends[int(n-1)%len(m.backends)]
}
