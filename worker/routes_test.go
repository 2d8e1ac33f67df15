package worker

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/config"
)

func hashOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func TestAuthenticateAndAllow(t *testing.T) {
	t.Setenv("ROUTES_TEST_KEY", "be-key")
	rt := mustCompile(t, &config.Config{
		Keys: []config.Key{
			{Name: "all", SHA256: hashOf("sk-all"), Models: []string{"*"}},
			{Name: "one", SHA256: hashOf("sk-one"), Models: []string{"a"}},
		},
		Models: []config.Model{
			{Name: "a", Backends: []config.Backend{{URL: "http://h:1/", Slots: 1, APIKeyEnv: "ROUTES_TEST_KEY"}}},
			{Name: "b", Backends: []config.Backend{{URL: "http://h:2", Slots: 1}, {URL: "http://h:3", Slots: 1}}},
		},
	})
	for header, want := range map[string]string{
		"Bearer sk-all": "all", "bearer sk-one": "one", "Bearer sk-none": "", "sk-all": "", "Bearer ": "", "": "",
	} {
		k := rt.authenticate([]byte(header))
		got := ""
		if k != nil {
			got = k.name
		}
		if got != want {
			t.Errorf("authenticate(%q) = %q, want %q", header, got, want)
		}
	}
	one := rt.authenticate([]byte("Bearer sk-one"))
	if !one.allows("a") || one.allows("b") || !rt.authenticate([]byte("Bearer sk-all")).allows("b") {
		t.Error("model permissions wrong")
	}
	if b := rt.models["a"].backends[0]; b.url != "http://h:1" || b.authHeader != "Bearer be-key" {
		t.Errorf("backend compiled as %+v", b)
	}
	allUp(rt)
	seen := map[string]int{}
	for i := 0; i < 10; i++ {
		seen[rt.models["b"].candidates(0, false, nil)[0].url]++
	}
	if seen["http://h:2"] != 5 || seen["http://h:3"] != 5 {
		t.Errorf("round robin without an affinity key: %v", seen)
	}
}

// The same key goes to the same backend until that backend's load passes
// the bound, then spills to the next in its ranking.
func TestAffinityBoundedByLoad(t *testing.T) {
	var backends []config.Backend
	for i := 0; i < 4; i++ {
		backends = append(backends, config.Backend{URL: "http://h:" + string(rune('1'+i)), Slots: 8})
	}
	rt := mustCompile(t, &config.Config{Models: []config.Model{{Name: "m", Affinity: "prefix", AffinityLoadCap: 1.25, Backends: backends}}})
	m := rt.models["m"]
	allUp(rt)
	home := m.candidates(42, true, nil)[0]
	for i := 0; i < 5; i++ {
		if b := m.candidates(42, true, nil)[0]; b != home {
			t.Fatalf("same key went to %s, then %s", home.url, b.url)
		}
	}
	// Load the home backend: 2 in flight of 2 model-wide; the bound is
	// ceil(1.25 × 3 / 4) = 1, so the key spills.
	home.cell.Add(0, 2)
	if b := m.candidates(42, true, nil)[0]; b == home {
		t.Fatal("a loaded backend kept taking its key")
	}
	home.cell.Add(0, -2)
	if b := m.candidates(42, true, nil)[0]; b != home {
		t.Fatal("key did not come home once the load fell")
	}
}

// mustCompile compiles routes over a private shared region.
func mustCompile(t testing.TB, c *config.Config) *routeTable {
	t.Helper()
	r, err := privateRegion(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	rt, err := compileRoutes(c, r, newQueues(0, r, nil))
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

func allUp(rt *routeTable) {
	for _, m := range rt.order {
		for _, b := range m.backends {
			b.up.Store(true)
		}
	}
}

// Unhealthy and ejected backends are skipped; a key's ranking does not
// change, so its home takes it back when healthy again.
func TestCandidatesSkipUnhealthy(t *testing.T) {
	var backends []config.Backend
	for i := 0; i < 3; i++ {
		backends = append(backends, config.Backend{URL: "http://h:" + string(rune('1'+i)), Slots: 8})
	}
	rt := mustCompile(t, &config.Config{Models: []config.Model{{Name: "m", Affinity: "prefix", AffinityLoadCap: 1.25, Backends: backends}}})
	allUp(rt)
	m := rt.models["m"]
	home := m.candidates(7, true, nil)[0]
	home.up.Store(false)
	if c := m.candidates(7, true, nil); len(c) != 2 || c[0] == home {
		t.Fatalf("unhealthy home still a candidate: %v", c)
	}
	home.up.Store(true)
	home.eject(time.Now())
	if c := m.candidates(7, true, nil); len(c) != 2 || c[0] == home {
		t.Fatalf("ejected home still a candidate")
	}
	home.ejectedUntil.Store(0)
	if m.candidates(7, true, nil)[0] != home {
		t.Fatal("home not back")
	}
	for _, b := range m.backends {
		b.up.Store(false)
	}
	if c := m.candidates(7, true, nil); len(c) != 0 {
		t.Fatalf("candidates with every backend down: %d", len(c))
	}
}

// A reload compiles a new table over the same cells: a model that stays
// keeps its local queue, so requests waiting in it are still served.
func TestReloadKeepsLocalQueue(t *testing.T) {
	cfg := &config.Config{Models: []config.Model{{Name: "m", Backends: []config.Backend{{URL: "http://h:1", Slots: 1}}}}}
	r, err := privateRegion(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	q := newQueues(0, r, nil)
	before, err := compileRoutes(cfg, r, q)
	if err != nil {
		t.Fatal(err)
	}
	after, err := compileRoutes(cfg, r, q)
	if err != nil {
		t.Fatal(err)
	}
	if before.models["m"].queue != after.models["m"].queue {
		t.Fatal("a reload replaced the local queue of a model that stayed: its waiters would never be served")
	}
}
