package proxy

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/proxy/reqscan"
)

// prefixModel is model m of n backends of 8 slots, affinity prefix, all up,
// over a private region with the default prefix index.
func prefixModel(t testing.TB, n int) *modelRoute {
	t.Helper()
	var backends []config.Backend
	for i := 0; i < n; i++ {
		backends = append(backends, config.Backend{URL: "http://h:" + string(rune('1'+i)), Slots: 8})
	}
	rt := mustCompile(t, &config.Config{Models: []config.Model{{Name: "m", Affinity: "prefix", AffinityLoadCap: 1.25, Backends: backends}}})
	allUp(rt)
	return rt.models["m"]
}

// blocksOf is the index's blocks of a chat body for m.
func blocksOf(t *testing.T, m *modelRoute, body string) []uint64 {
	t.Helper()
	r, err := reqscan.Scan([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	b := m.prefixBlocks([]byte(body), &r, 0)
	if b == nil {
		return nil
	}
	return append([]uint64(nil), *b...)
}

func commonPrefix(a, b []uint64) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func chat(msgs ...string) string {
	var sb strings.Builder
	sb.WriteString(`{"model":"m","messages":[`)
	for i, c := range msgs {
		if i > 0 {
			sb.WriteByte(',')
		}
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		sb.WriteString(`{"role":"` + role + `","content":"` + c + `"}`)
	}
	sb.WriteString(`]}`)
	return sb.String()
}

// With a warm index the backend that was sent the longest prefix goes
// first, whatever the conversation key's ranking says; a cold index, and
// a match every backend has alike, leave the ranking deciding.
func TestCandidatesPrefixIndex(t *testing.T) {
	m := prefixModel(t, 3)
	region := m.region
	doc := strings.Repeat("a shared document. ", 1000) // ~19 KB
	// Cold: the ranking of the key decides.
	const key = 42
	blocks := blocksOf(t, m, chat(doc+" question one"))
	if len(blocks) < 50 {
		t.Fatalf("%d blocks of a 19 KB prompt", len(blocks))
	}
	home := m.candidates(key, true, nil, nil)[0]
	if c := m.candidates(key, true, &prefixQuery{blocks: blocks}, nil)[0]; c != home {
		t.Fatalf("cold index: %s first, the ranking says %s", c.url, home.url)
	}
	// Another backend was sent the document (another user's question
	// after it): this request, whose own key ranks home first, follows it.
	var other *backendRoute
	for _, b := range m.backends {
		if b != home {
			other = b
			break
		}
	}
	sent := blocksOf(t, m, chat(doc+" another user's question"))
	region.NotePrefix(other.urlHash, sent)
	q := &prefixQuery{blocks: blocks}
	if c := m.candidates(key, true, q, nil); c[0] != other || len(c) != 3 {
		t.Fatalf("warm index: %s first of %d, want %s (holds the document)", c[0].url, len(c), other.url)
	}
	// The match is the leading blocks both prompts share: the document's.
	if shared := commonPrefix(blocks, sent); q.matched != shared || shared < 70 {
		t.Fatalf("matched %d blocks, the prompts share %d", q.matched, shared)
	}
	// Home was sent the same document too: a tie, the ranking decides.
	region.NotePrefix(home.urlHash, sent)
	if c := m.candidates(key, true, &prefixQuery{blocks: blocks}, nil)[0]; c != home {
		t.Fatalf("equal matches: %s first, the ranking says %s", c.url, home.url)
	}
	// A conversation that outgrew its first turn: its later turn resends
	// the first, so the backend that had the first turn holds the most.
	turn1 := chat(doc+" my question", "the answer "+strings.Repeat("x", 600))
	region.NotePrefix(other.urlHash, blocksOf(t, m, turn1))
	turn2 := blocksOf(t, m, chat(doc+" my question", "the answer "+strings.Repeat("x", 600), "and a follow-up"))
	if c := m.candidates(key, true, &prefixQuery{blocks: turn2}, nil)[0]; c != other {
		t.Fatalf("a later turn went to %s, not to %s that had its first", c.url, other.url)
	}
}

// The load bound still spills a hot prefix. A backend draws first turns
// by its prefix only within the even share's bound (not full, under
// ⌈1.25 × (in flight + 1) / backends⌉), even while it is nowhere near
// busy: else one prefix that every request shares would pull them all onto
// one backend — its keys' own first turns too. Past it, a first turn goes
// to the less loaded of the first two others in its key's ranking, which is
// then recorded as holding the prefix too.
func TestCandidatesPrefixSpills(t *testing.T) {
	m := prefixModel(t, 3)
	region := m.region
	blocks := blocksOf(t, m, chat(strings.Repeat("hot prefix ", 500)))
	hot := m.backends[1]
	region.NotePrefix(hot.urlHash, blocks)
	for key := uint64(1); key < 30; key++ { // whatever the key's ranking
		if c := m.candidates(key, true, &prefixQuery{blocks: blocks}, nil)[0]; c != hot {
			t.Fatalf("key %d: %s first, not the backend holding its prefix", key, c.url)
		}
	}
	// 1 in flight on hot, 1 model-wide: the share's bound is
	// ceil(1.25 × 2 / 3) = 1, so hot draws no first turn: each goes to the
	// first other backend in its key's ranking (both idle: a tie).
	hot.cell.Add(0, 1)
	firstOther := func(key uint64) *backendRoute {
		for _, b := range m.candidates(key, true, nil, nil) {
			if b != hot {
				return b
			}
		}
		return nil
	}
	first := map[*backendRoute]bool{}
	for key := uint64(1); key < 30; key++ {
		c := m.candidates(key, true, &prefixQuery{blocks: blocks}, nil)
		if c[0] != firstOther(key) || len(c) != 3 {
			t.Fatalf("key %d: %s first past the share's bound, want %s", key, c[0].url, firstOther(key).url)
		}
		first[c[0]] = true
	}
	if len(first) != 2 {
		t.Fatalf("spilled first turns went to %d backends: their ranking should spread them over the other 2", len(first))
	}
	// Once a second backend is recorded, it draws the prefix while the
	// first is past the bound.
	region.NotePrefix(m.backends[2].urlHash, blocks)
	for key := uint64(1); key < 30; key++ {
		if c := m.candidates(key, true, &prefixQuery{blocks: blocks}, nil)[0]; c != m.backends[2] {
			t.Fatalf("key %d: %s first, not the second holder", key, c.url)
		}
	}
}

// A large body costs at most max_blocks; a model that does not use the
// index (affinity user or none, no index in the region) cuts nothing.
func TestPrefixBlocksBounded(t *testing.T) {
	m := prefixModel(t, 2)
	big := chat(strings.Repeat("y", 10<<20))
	if n := len(blocksOf(t, m, big)); n != config.DefaultPrefixMaxBlocks {
		t.Fatalf("a 10 MB prompt: %d blocks, want the cap %d", n, config.DefaultPrefixMaxBlocks)
	}
	if b := blocksOf(t, m, chat("short")); b != nil {
		t.Fatalf("a prompt under one block gave %d blocks", len(b))
	}
	// Instructions and system are the head, before the prompt.
	// Instructions or system are the head, before the prompt: their last
	// partial block counts, the prompt's does not.
	body := []byte(`{"model":"m","system":"` + strings.Repeat("s", 300) + `","messages":[{"role":"user","content":"` + strings.Repeat("u", 600) + `"}]}`)
	r, err := reqscan.ScanWith(body, reqscan.MessagesFields)
	if err != nil {
		t.Fatal(err)
	}
	if b := m.prefixBlocks(body, &r, 0); b == nil || len(*b) != 2+2 { // 302 bytes of system, 632 of messages
		t.Fatalf("system and messages: %v", b)
	}
	for _, aff := range []string{"user", "none"} {
		rt := mustCompile(t, &config.Config{Models: []config.Model{{Name: "m", Affinity: aff, Backends: []config.Backend{{URL: "http://h:1", Slots: 1}}}}})
		if b := blocksOf(t, rt.models["m"], big); b != nil {
			t.Fatalf("affinity %s: %d blocks", aff, len(b))
		}
	}
	off := 0
	rt := mustCompile(t, &config.Config{PrefixIndex: config.PrefixIndex{Entries: &off},
		Models: []config.Model{{Name: "m", Affinity: "prefix", Backends: []config.Backend{{URL: "http://h:1", Slots: 1}}}}})
	if b := blocksOf(t, rt.models["m"], big); b != nil {
		t.Fatalf("prefix_index.entries 0: %d blocks", len(b))
	}
}

// The index's cost per request: cut the prompt into blocks, rank the
// backends by their match (one backend holds the whole prompt, as a
// conversation's next turn finds it), record the blocks for the chosen
// one, give the buffer back. Against BenchmarkCandidatesNoIndex, the
// same ranking without the index.
func BenchmarkPrefixIndex(b *testing.B) {
	for _, size := range []int{2 << 10, 100 << 10} {
		b.Run(strconv.Itoa(size>>10)+"KB", func(b *testing.B) {
			m := prefixModel(b, 3)
			body := []byte(chat(strings.Repeat("w", size-60)))
			r, err := reqscan.Scan(body)
			if err != nil {
				b.Fatal(err)
			}
			region := m.region
			warm := m.prefixBlocks(body, &r, 0)
			region.NotePrefix(m.backends[2].urlHash, *warm)
			var stack [16]*backendRoute
			b.ReportAllocs()
			for b.Loop() {
				x := exchange{place: placement{blocks: m.prefixBlocks(body, &r, 0)}}
				c := m.candidates(7, true, &prefixQuery{blocks: *x.place.blocks}, stack[:0])
				region.NotePrefix(c[0].urlHash, *x.place.blocks)
				x.releaseBlocks()
			}
		})
	}
}

func BenchmarkCandidatesNoIndex(b *testing.B) {
	m := prefixModel(b, 3)
	var stack [16]*backendRoute
	b.ReportAllocs()
	for b.Loop() {
		m.candidates(7, true, nil, stack[:0])
	}
}

// sendTurn places a chat body as pickBackends does for a key of cache group
// salt and sends it to the first candidate (notePrefix: the prefix index,
// the recall table, what the backend carries). It returns the exchange.
func sendTurn(t *testing.T, g *Gateway, m *modelRoute, salt, body string) *exchange {
	t.Helper()
	scan, err := reqscan.Scan([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	x := &exchange{api: apis[0], req: admitted{model: m, payload: []byte(body), scan: scan, salt: salt}}
	if e := g.pickBackends(context.Background(), nil, x); e != nil {
		t.Fatal(e)
	}
	g.notePrefix(x, x.place.candidates[0])
	x.releaseBlocks()
	return x
}

// conversation is the messages of a chat conversation after turns turns
// (system prompt, then user and assistant turns), as JSON.
func conversation(system string, id, turns int) string {
	var sb strings.Builder
	sb.WriteString(`{"model":"m","messages":[{"role":"system","content":"` + system + `"}`)
	for i := 0; i < turns; i++ {
		if i > 0 {
			sb.WriteString(`,{"role":"assistant","content":"answer ` + strconv.Itoa(i) + ` of conversation ` + strconv.Itoa(id) + `: ` + strings.Repeat("words ", 20) + `"}`)
		}
		sb.WriteString(`,{"role":"user","content":"conversation ` + strconv.Itoa(id) + `, turn ` + strconv.Itoa(i) + `: ` + strings.Repeat("a question ", 15) + `"}`)
	}
	sb.WriteString(`]}`)
	return sb.String()
}

// keyHome is the backend a chat body's conversation key ranks first (for
// the cache group of salt), load aside.
func keyHome(t *testing.T, m *modelRoute, salt, body string) *backendRoute {
	t.Helper()
	scan, err := reqscan.Scan([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	key, _ := m.affinityKey([]byte(body), &scan)
	return m.candidates(key^saltSeed(salt), true, nil, nil)[0]
}

// A conversation is placed once, when it starts, and then stays whole on
// its backend (the recall table remembers it), whatever its key's ranking
// says: on 011fb07 a later turn went back to the key's own backend as soon
// as the conversation's backend was past the even share's bound (1 in
// flight of 1, far from busy), so its turns were cut over two caches.
func TestConversationStaysOnItsBackend(t *testing.T) {
	m := prefixModel(t, 3)
	g := &Gateway{region: m.region}
	system := strings.Repeat("You are the assistant of an example app. ", 60) // ~2.5 KB, shared
	for c := 0; c < 20; c++ {
		// The key's own backend is busy (4 of 8) and past the bound when
		// the conversation starts: it starts elsewhere.
		own := keyHome(t, m, "", conversation(system, c, 1))
		own.cell.Add(0, 4)
		home := sendTurn(t, g, m, "", conversation(system, c, 1)).place.candidates[0]
		own.cell.Add(0, -4)
		if home == own {
			t.Fatalf("conversation %d started on its key's backend while that was busy", c)
		}
		// Its backend is past the share's bound (1 in flight, none
		// elsewhere: ceil(1.25 × 2 / 3) = 1) but far from busy: the
		// conversation stays there.
		home.cell.Add(0, 1)
		for turn := 2; turn <= 4; turn++ {
			if b := sendTurn(t, g, m, "", conversation(system, c, turn)).place.candidates[0]; b != home {
				t.Fatalf("conversation %d: turn 1 on %s, turn %d on %s (its key's: %s)", c, home.url, turn, b.url, own.url)
			}
		}
		home.cell.Add(0, -1)
	}
}

// A conversation whose backend is saturated for real (busy and past the
// bound) moves, whole: its next turns stay on the backend it moved to once
// the first is idle again, rather than going back and forth.
func TestConversationMovesWhole(t *testing.T) {
	m := prefixModel(t, 3)
	g := &Gateway{region: m.region}
	system := strings.Repeat("You are the assistant of an example app. ", 60)
	for c := 0; c < 20; c++ {
		first := sendTurn(t, g, m, "", conversation(system, c, 1)).place.candidates[0]
		if b := sendTurn(t, g, m, "", conversation(system, c, 2)).place.candidates[0]; b != first {
			t.Fatalf("conversation %d: turn 1 on %s, turn 2 on %s", c, first.url, b.url)
		}
		first.cell.Add(0, 4) // busy, past the bound
		moved := sendTurn(t, g, m, "", conversation(system, c, 3)).place.candidates[0]
		first.cell.Add(0, -4)
		if moved == first {
			t.Fatalf("conversation %d stayed on a busy backend past the bound", c)
		}
		for turn := 4; turn <= 6; turn++ {
			if b := sendTurn(t, g, m, "", conversation(system, c, turn)).place.candidates[0]; b != moved {
				t.Fatalf("conversation %d moved to %s at turn 3, went to %s at turn %d", c, moved.url, b.url, turn)
			}
		}
	}
}

// Conversations that start are spread by what each backend carries (the
// prompt blocks sent it of late), not left to the luck of their keys, and one cache group's conversation is
// never placed by another's: the same bodies under another group match
// nothing and have another entry in the recall table.
func TestConversationsStartBalancedPerGroup(t *testing.T) {
	m := prefixModel(t, 3)
	g := &Gateway{region: m.region}
	system := strings.Repeat("You are the assistant of an example app. ", 60)
	// Every backend was sent the system prompt (as soon as requests
	// overlap: one at a time, the first backend it was sent to draws
	// every conversation within the even share).
	warm := conversation(system, 999, 1)
	scan, _ := reqscan.Scan([]byte(warm))
	blocks := m.prefixBlocks([]byte(warm), &scan, saltSeed("group-a"))
	for _, b := range m.backends {
		m.region.NotePrefix(b.urlHash, *blocks)
	}
	per := map[*backendRoute]int{}
	for c := 0; c < 60; c++ {
		b := sendTurn(t, g, m, "group-a", conversation(system, c, 1)).place.candidates[0]
		per[b]++
		for turn := 2; turn <= 3; turn++ {
			if sendTurn(t, g, m, "group-a", conversation(system, c, turn)).place.candidates[0] != b {
				t.Fatalf("conversation %d left its backend", c)
			}
		}
	}
	for _, b := range m.backends {
		// By their keys alone (011fb07) they were 20, 22 and 18.
		if per[b] < 19 || per[b] > 21 {
			t.Fatalf("60 conversations started %v per backend, want 19-21 each", per)
		}
	}
	a := sendTurn(t, g, m, "group-a", conversation(system, 7, 4))
	b := sendTurn(t, g, m, "group-b", conversation(system, 7, 4))
	if a.place.conv == 0 || b.place.conv == 0 || a.place.conv == b.place.conv {
		t.Fatalf("conversation entries %x and %x for two cache groups", a.place.conv, b.place.conv)
	}
	if a.rec.PrefixMatched == 0 || b.rec.PrefixMatched != 0 {
		t.Fatalf("prefix matched: %d blocks in the group that sent them, %d in another", a.rec.PrefixMatched, b.rec.PrefixMatched)
	}
}
