package proxy

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/proxy/queue"
	"github.com/sluice-gw/sluice/proxy/reqscan"
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
		k := rt.authenticate(bearerToken([]byte(header)))
		got := ""
		if k != nil {
			got = k.name
		}
		if got != want {
			t.Errorf("authenticate(%q) = %q, want %q", header, got, want)
		}
	}
	one := rt.authenticate([]byte("sk-one"))
	if !one.allows("a") || one.allows("b") || !rt.authenticate([]byte("sk-all")).allows("b") {
		t.Error("model permissions wrong")
	}
	if b := rt.models["a"].backends[0]; b.url != "http://h:1" || b.authHeader != "Bearer be-key" {
		t.Errorf("backend compiled as %+v", b)
	}
	allUp(rt)
	seen := map[string]int{}
	for i := 0; i < 10; i++ {
		seen[rt.models["b"].candidates(0, false, nil, nil)[0].url]++
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
	home := m.candidates(42, true, nil, nil)[0]
	for i := 0; i < 5; i++ {
		if b := m.candidates(42, true, nil, nil)[0]; b != home {
			t.Fatalf("same key went to %s, then %s", home.url, b.url)
		}
	}
	// Load the home backend below half its slots: 3 in flight of 3
	// model-wide is past the even share's bound, ceil(1.25 × 4 / 4) = 2,
	// but the backend is not busy: the key stays where its prefix is.
	home.cell.Add(0, 3)
	if b := m.candidates(42, true, nil, nil)[0]; b != home {
		t.Fatal("a key left a backend at 3 of 8 slots while the others were idle")
	}
	// At half its slots (4 of 8) it is busy, and past the bound: the key spills.
	home.cell.Add(0, 1)
	if b := m.candidates(42, true, nil, nil)[0]; b == home {
		t.Fatal("a busy backend past the bound kept taking its key")
	}
	home.cell.Add(0, -4)
	if b := m.candidates(42, true, nil, nil)[0]; b != home {
		t.Fatal("key did not come home once the load fell")
	}
	// With the others as busy (4 each: the bound is ceil(1.25 × 17 / 4) = 6),
	// home at 5 keeps its key; full (8 of 8) it never does.
	for _, b := range m.backends {
		if b != home {
			b.cell.Add(0, 4)
		}
	}
	home.cell.Add(0, 5)
	if b := m.candidates(42, true, nil, nil)[0]; b != home {
		t.Fatal("a key left its backend within the even share's bound")
	}
	home.cell.Add(0, 3)
	if b := m.candidates(42, true, nil, nil)[0]; b == home {
		t.Fatal("a full backend kept taking its key")
	}
}

// A backend with api_keys_env gets a provkeys.Set of its keys, in order,
// with their values from the environment; one without gets none.
func TestCompileProviderKeys(t *testing.T) {
	t.Setenv("ROUTES_TEST_K1", "sk-1")
	t.Setenv("ROUTES_TEST_K2", "sk-2")
	rt := mustCompile(t, &config.Config{
		Keys: []config.Key{{Name: "all", SHA256: hashOf("sk-all"), Models: []string{"*"}}},
		Models: []config.Model{{Name: "a", Backends: []config.Backend{
			{URL: "https://api.example:443/", Slots: 8, APIKeysEnv: []string{"ROUTES_TEST_K1", "ROUTES_TEST_K2"}},
			{URL: "http://h:1", Slots: 1},
		}}},
	})
	b := rt.models["a"].backends
	if b[1].keys != nil || b[0].keys == nil || b[0].keys.Len() != 2 || b[0].authHeader != "" {
		t.Fatalf("compiled %+v and %+v", b[0], b[1])
	}
	var got []string
	for range 3 {
		k, ok := b[0].keys.Pick(0)
		if !ok {
			t.Fatal("no key")
		}
		got = append(got, k.Name()+"="+k.Header())
	}
	if s := strings.Join(got, " "); s != "ROUTES_TEST_K1=Bearer sk-1 ROUTES_TEST_K2=Bearer sk-2 ROUTES_TEST_K1=Bearer sk-1" {
		t.Fatalf("picked %s", s)
	}
}

// mustCompile compiles routes over a private shared region.
func mustCompile(t testing.TB, c *config.Config) *routeTable {
	t.Helper()
	r, err := PrivateRegion(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	rt, err := compileRoutes(c, r, queue.NewSet[*backendRoute](0, r, nil), Backends{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

func allUp(rt *routeTable) {
	for _, m := range rt.order {
		for _, b := range m.backends {
			b.state.up.Store(true)
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
	home := m.candidates(7, true, nil, nil)[0]
	home.state.up.Store(false)
	if c := m.candidates(7, true, nil, nil); len(c) != 2 || c[0] == home {
		t.Fatalf("unhealthy home still a candidate: %v", c)
	}
	home.state.up.Store(true)
	home.eject(time.Now())
	if c := m.candidates(7, true, nil, nil); len(c) != 2 || c[0] == home {
		t.Fatalf("ejected home still a candidate")
	}
	home.state.ejectedUntil.Store(0)
	if m.candidates(7, true, nil, nil)[0] != home {
		t.Fatal("home not back")
	}
	for _, b := range m.backends {
		b.state.up.Store(false)
	}
	if c := m.candidates(7, true, nil, nil); len(c) != 0 {
		t.Fatalf("candidates with every backend down: %d", len(c))
	}
}

// A reload compiles a new table over the same cells: a model that stays
// keeps its local queue, so requests waiting in it are still served.
func TestReloadKeepsLocalQueue(t *testing.T) {
	cfg := &config.Config{Models: []config.Model{{Name: "m", Backends: []config.Backend{{URL: "http://h:1", Slots: 1}}}}}
	r, err := PrivateRegion(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	q := queue.NewSet[*backendRoute](0, r, nil)
	before, err := compileRoutes(cfg, r, q, Backends{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	after, err := compileRoutes(cfg, r, q, Backends{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if before.models["m"].queue != after.models["m"].queue {
		t.Fatal("a reload replaced the local queue of a model that stayed: its waiters would never be served")
	}
}

// A server listed under two models reports its whole load: while that
// read is fresh, each model's backend counts the gateway's requests to the
// server now under both models, plus what the read held beyond the
// gateway's own, so requests under either model that end count at once.
func TestLoadOfServerSharedByModels(t *testing.T) {
	rt := mustCompile(t, &config.Config{Models: []config.Model{
		{Name: "a", Backends: []config.Backend{{URL: "http://h:1", Slots: 4}, {URL: "http://h:2", Slots: 4}}},
		{Name: "b", Backends: []config.Backend{{URL: "http://h:1/", Slots: 4}}},
	}})
	a, b := rt.models["a"].backends[0], rt.models["b"].backends[0]
	if len(a.siblings) != 1 || !a.siblings[0].Same(b.cell) || len(b.siblings) != 1 || len(rt.models["a"].backends[1].siblings) != 0 {
		t.Fatal("the server's cells under the other model are not linked (and only they)")
	}
	a.cell.Add(0, 2)
	b.cell.Add(0, 1)
	if used, _ := a.load(0); used != 2 {
		t.Fatalf("without a read of the server's load, a counts %d, want its own 2", used)
	}
	const now = 1000
	a.cell.SetReportedLoad(4, 3, 0, now) // 3 of the server's 4 were the gateway's: 1 is another's
	if used, full := a.load(now); used != 4 || !full {
		t.Fatalf("a counts %d (full %v), want 2 + 1 (b) + 1 (another's) = 4, full", used, full)
	}
	b.cell.Add(0, -1) // b's request ends
	a.cell.Add(0, -2) // and a's two
	if used, full := a.load(now); used != 1 || full {
		t.Fatalf("with the gateway's requests ended, a counts %d (full %v), want the other's 1", used, full)
	}
}

// A slot freed on a server listed under two models wakes the oldest waiter
// of the other model too: the server's load counts both models' requests,
// so that waiter may have been kept out by this very request (else it
// waited for the queue's 50 ms tick).
func TestReleaseWakesOtherModelsOfTheServer(t *testing.T) {
	c := &config.Config{Models: []config.Model{
		{Name: "a", Backends: []config.Backend{{URL: "http://h:1", Slots: 4}}},
		{Name: "b", Backends: []config.Backend{{URL: "http://h:1", Slots: 4}}},
	}}
	r, err := PrivateRegion(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	q := queue.NewSet[*backendRoute](0, r, nil)
	rt, err := compileRoutes(c, r, q, Backends{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ma, mb := rt.models["a"], rt.models["b"]
	// A waiter of b in this worker (column 0): counted and marked.
	mb.queue.Cell().Add(0, 1)
	mb.queue.Cell().SetMark(0, 1)
	defer mb.queue.Cell().Add(0, -1)
	a := ma.backends[0]
	a.cell.Add(0, 1)
	q.TakeWakeUp() // none before
	(&Gateway{queues: q}).releaseSlot(ma, a)
	if !q.TakeWakeUp() {
		t.Fatal("a's release did not wake b's waiter")
	}
}

// The conversation key names a conversation, not an app: users sharing a
// system prompt (or instructions) get different keys, and a
// conversation's later turns, which resend its head, keep its first turn's
// key, in each API; "user" still wins.
func TestConversationKey(t *testing.T) {
	rt := mustCompile(t, &config.Config{Models: []config.Model{
		{Name: "m", Affinity: "prefix", Backends: []config.Backend{{URL: "http://h:1", Slots: 1}}},
		{Name: "u", Affinity: "user", Backends: []config.Backend{{URL: "http://h:1", Slots: 1}}},
	}})
	key := func(model string, set reqscan.Fields, body string) uint64 {
		t.Helper()
		r, err := reqscan.ScanWith([]byte(body), set)
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		k, ok := rt.models[model].affinityKey([]byte(body), &r)
		if !ok {
			t.Fatalf("no key for %s", body)
		}
		return k
	}
	m := func(set reqscan.Fields, body string) uint64 { return key("m", set, body) }
	const sys = `{"role":"system","content":"You are the helpful assistant of ExampleApp."}`
	chat := func(user, msgs string) string {
		return `{"model":"m",` + user + `"messages":[` + sys + `,{"role":"user","content":"` + msgs + `"}` + `]}`
	}
	alice1 := chat("", "I am Alice")
	bob1 := chat("", "I am Bob")
	if m(reqscan.ChatFields, alice1) == m(reqscan.ChatFields, bob1) {
		t.Error("chat: two users sharing a system prompt got one key")
	}
	alice3 := `{"model":"m","messages":[` + sys + `,{"role":"user","content":"I am Alice"},{"role":"assistant","content":"Hi"},` +
		`{"role":"user","content":"more"},{"role":"assistant","content":"ok"},{"role":"user","content":"and more"}],"stream":true}`
	if m(reqscan.ChatFields, alice1) != m(reqscan.ChatFields, alice3) {
		t.Error("chat: turn 3 of a conversation left turn 1's key")
	}
	if m(reqscan.ChatFields, chat(`"user":"u1",`, "I am Alice")) != m(reqscan.ChatFields, chat(`"user":"u1",`, "I am Bob")) {
		t.Error(`chat: "user" did not win`)
	}

	const ins = `"instructions":"You are the helpful assistant of ExampleApp.",`
	resp1 := func(first string) string {
		return `{"model":"m",` + ins + `"input":[{"role":"user","content":"` + first + `"}]}`
	}
	resp3 := `{"model":"m",` + ins + `"input":[{"role":"user","content":"I am Alice"},{"type":"message","role":"assistant","content":"Hi"},{"role":"user","content":"more"}]}`
	if m(reqscan.ResponsesFields, resp1("I am Alice")) == m(reqscan.ResponsesFields, resp1("I am Bob")) {
		t.Error("responses: two users sharing instructions got one key")
	}
	if m(reqscan.ResponsesFields, resp1("I am Alice")) != m(reqscan.ResponsesFields, resp3) {
		t.Error("responses: a longer input left the first turn's key")
	}
	other := strings.Replace(resp1("I am Alice"), "ExampleApp", "OtherApp", 1)
	if m(reqscan.ResponsesFields, resp1("I am Alice")) == m(reqscan.ResponsesFields, other) {
		t.Error("responses: instructions are not in the key")
	}
	if m(reqscan.ResponsesFields, `{"model":"m",`+ins+`"input":"I am Alice"}`) == m(reqscan.ResponsesFields, `{"model":"m",`+ins+`"input":"I am Bob"}`) {
		t.Error("responses: string inputs of two users got one key")
	}

	const system = `"system":"You are the helpful assistant of ExampleApp.","max_tokens":64,`
	msg1 := func(first string) string {
		return `{"model":"m",` + system + `"messages":[{"role":"user","content":"` + first + `"}]}`
	}
	msg3 := `{"model":"m",` + system + `"messages":[{"role":"user","content":"I am Alice"},{"role":"assistant","content":"Hi"},{"role":"user","content":"more"}]}`
	if m(reqscan.MessagesFields, msg1("I am Alice")) == m(reqscan.MessagesFields, msg1("I am Bob")) {
		t.Error("messages: two users sharing a system prompt got one key")
	}
	if m(reqscan.MessagesFields, msg1("I am Alice")) != m(reqscan.MessagesFields, msg3) {
		t.Error("messages: turn 3 left turn 1's key")
	}
	if m(reqscan.MessagesFields, msg1("I am Alice")) == m(reqscan.MessagesFields, strings.Replace(msg1("I am Alice"), "ExampleApp", "OtherApp", 1)) {
		t.Error("messages: system is not in the key")
	}

	long := strings.Repeat("few-shot example. ", 300) // > 4 KiB
	if m(reqscan.ChatFields, `{"model":"m","prompt":"`+long+`A"}`) != m(reqscan.ChatFields, `{"model":"m","prompt":"`+long+`B"}`) {
		t.Error("completions: prompts sharing their first 4 KiB got different keys")
	}
	if m(reqscan.ChatFields, `{"model":"m","prompt":"Alice"}`) == m(reqscan.ChatFields, `{"model":"m","prompt":"Bob"}`) {
		t.Error("completions: different prompts got one key")
	}

	// affinity: user keys on "user" only.
	r, _ := reqscan.Scan([]byte(alice1))
	if _, ok := rt.models["u"].affinityKey([]byte(alice1), &r); ok {
		t.Error("affinity user: a key without a user")
	}
	if key("u", reqscan.ChatFields, chat(`"user":"u1",`, "x")) != m(reqscan.ChatFields, chat(`"user":"u1",`, "y")) {
		t.Error("affinity user: the user's key differs from prefix's")
	}
}
