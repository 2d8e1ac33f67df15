package tests

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// A long document shared by many conversations (RAG: the same 20 KB
// sent by many users, each with a question of their own after it, so
// their conversation keys differ) goes, once the shared prefix index has
// seen it, where it was sent before; a conversation that outgrew its
// first turn follows its turns, not its key. With the index off
// (prefix_index.entries: 0) the same traffic spreads by conversation key:
// the test's traffic does not land on one backend by itself.
func TestPrefixIndexSharedDocument(t *testing.T) {
	doc := strings.Repeat("Section of the shared reference document, the same bytes for every user. ", 270) // ~20 KB
	firstTurn := func(i int) string {
		return fmt.Sprintf(`{"role":"system","content":%q},{"role":"user","content":"question %d on the document: what does section %d say?"}`, doc, i, i)
	}
	const convs = 30
	run := func(t *testing.T, extra string) (first []int, bes []*fakevllm.Server, send func(string) int, g *gateway) {
		var urls []string
		for range 3 {
			be := startBackend(t, fakevllm.Options{Tokens: 2, PrefixCache: &fakevllm.PrefixCacheOptions{}})
			bes = append(bes, be)
			urls = append(urls, fmt.Sprintf("      - url: %s\n        slots: 8", be.URL()))
		}
		// load_interval 0s: the placement rests on the gateway's own
		// counts alone (a /metrics read racing a request's end could show
		// a backend busy for a moment and move a request for a reason
		// that is not the index's).
		usage := filepath.Join(t.TempDir(), "u.log")
		cfg := strings.Replace(baseConfig(bes[0].URL(), usage, extra),
			"      - url: "+bes[0].URL()+"\n        slots: 64\n        api_key_env: SLUICE_TEST_BACKEND_KEY",
			strings.Join(urls, "\n")+"\n    load_interval: 0s", 1)
		g = startGateway(t, cfg)
		g.UsageLog = usage
		client := freshClient() // a connection per request: both workers take part
		send = func(messages string) int {
			t.Helper()
			before := make([]int, len(bes))
			for i, be := range bes {
				before[i] = len(be.Received())
			}
			if res, out := post(t, client, g.URL+"/v1/chat/completions", keyAll, []byte(`{"model":"m","messages":[`+messages+`]}`), nil); res.StatusCode != 200 {
				t.Fatalf("status %d: %s", res.StatusCode, out)
			}
			for i, be := range bes {
				if len(be.Received()) != before[i] {
					return i
				}
			}
			t.Fatal("no backend received the request")
			return -1
		}
		for i := range convs {
			first = append(first, send(firstTurn(i)))
		}
		return first, bes, send, g
	}
	count := func(at []int) []int {
		n := make([]int, 3)
		for _, b := range at {
			n[b]++
		}
		return n
	}

	t.Run("on", func(t *testing.T) {
		first, bes, send, g := run(t, "")
		// Every request after the first finds the document on the
		// backend the first went to (one request at a time: that backend
		// is always within the even share).
		n := count(first)
		if n[first[0]] != convs {
			t.Fatalf("%d conversations sharing a 20 KB document: %v per backend, want all on backend %d", convs, n, first[0])
		}
		// Their later turns resend the first: they stay on that backend,
		// whatever their conversation key ranks first.
		for i := range 10 {
			history := firstTurn(i) + `,{"role":"assistant","content":"tok tok"},{"role":"user","content":"and a follow-up question"}`
			if b := send(history); b != first[i] {
				t.Fatalf("conversation %d: turn 1 on backend %d, turn 2 on %d", i, first[i], b)
			}
		}
		// The usage lines say what the index saw: every request's blocks,
		// and for all but the very first the document's blocks matched.
		await(t, "40 usage lines", func() bool { return len(g.usageLines()) >= convs+10 })
		matched := 0
		for _, l := range g.usageLines() {
			if l["prefix_blocks"].(float64) < 75 {
				t.Fatalf("a request of a 20 KB prompt with %v blocks", l["prefix_blocks"])
			}
			if l["prefix_matched"].(float64) >= 75 {
				matched++
			}
		}
		if matched < convs+10-1 {
			t.Fatalf("%d of %d requests matched the document in the index", matched, convs+10)
		}
		var hits, queries int
		for _, be := range bes {
			for _, r := range be.Received() {
				hits, queries = hits+r.CachedTokens, queries+r.QueriedTokens
			}
		}
		t.Logf("prefix-cache hits %d of %d tokens (%.2f)", hits, queries, float64(hits)/float64(queries))
	})
	t.Run("off", func(t *testing.T) {
		first, _, _, _ := run(t, "prefix_index: {entries: 0}")
		if n := count(first); n[0] > convs*2/3 || n[1] > convs*2/3 || n[2] > convs*2/3 {
			t.Fatalf("without the index %v per backend: the conversation keys should spread them", n)
		}
	})
}

// Chat conversations of one app (a shared ~3 KB system prompt) are placed
// when they start, within the even share of what is in flight, and then
// stay whole on their backend: a later turn goes where its conversation
// is, not where its conversation key ranks first, while that backend is
// past the even share but not saturated for real (3 of its 8 slots busy,
// 3 in flight in all). On 011fb07 such a turn went to its key's backend,
// which held nothing of the conversation.
func TestChatConversationsStayWhole(t *testing.T) {
	var bes []*fakevllm.Server
	var urls []string
	for range 3 {
		be := startBackend(t, fakevllm.Options{Tokens: 2, PrefixCache: &fakevllm.PrefixCacheOptions{}})
		bes = append(bes, be)
		urls = append(urls, fmt.Sprintf("      - url: %s\n        slots: 8", be.URL()))
	}
	// load_interval 0s: placement rests on the gateway's own counts.
	cfg := strings.Replace(baseConfig(bes[0].URL(), filepath.Join(t.TempDir(), "u.log"), ""),
		"      - url: "+bes[0].URL()+"\n        slots: 64\n        api_key_env: SLUICE_TEST_BACKEND_KEY",
		strings.Join(urls, "\n")+"\n    load_interval: 0s", 1)
	g := startGateway(t, cfg)
	client := freshClient() // a connection per request: both workers take part
	inflight := func() (n []int, total int) {
		for _, be := range bes {
			v, _ := g.metric("sluice_backend_inflight", map[string]string{"model": "m", "backend": be.URL()})
			n, total = append(n, int(v)), total+int(v)
		}
		return n, total
	}
	received := func() []int {
		var n []int
		for _, be := range bes {
			n = append(n, len(be.Received()))
		}
		return n
	}
	system := strings.Repeat("You are the assistant of ExampleApp: answer briefly and politely. ", 50)
	turn1 := func(c int) string {
		return fmt.Sprintf(`{"role":"system","content":%q},{"role":"user","content":"hello, this is conversation %d: %s"}`, system, c, strings.Repeat("my question ", 10))
	}
	const convs = 9
	home := make([]int, convs)
	done := make(chan int, convs)
	// The first turns, one after another, each held in flight (before its
	// answer's headers) until released: the k-th starts with k-1 in flight.
	for c := range convs {
		before := received()
		go func() {
			req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/chat/completions",
				strings.NewReader(`{"model":"m","messages":[`+turn1(c)+`]}`))
			req.Header.Set("Authorization", "Bearer "+keyAll)
			req.Header.Set("X-Fake-Hold-Headers", fmt.Sprint("c", c))
			res, err := client.Do(req)
			if err != nil {
				done <- 0
				return
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			done <- res.StatusCode
		}()
		home[c] = -1
		await(t, fmt.Sprintf("conversation %d's first turn in flight", c), func() bool {
			for i, n := range received() {
				if n != before[i] {
					home[c] = i
				}
			}
			_, total := inflight()
			return home[c] >= 0 && total == c+1
		})
	}
	n, _ := inflight()
	for i, v := range n {
		// ⌈1.25 × (8 + 1) / 3⌉ = 4: no backend takes more.
		if v < 1 || v > 4 {
			t.Fatalf("%d conversations started, %v per backend (backend %d)", convs, n, i)
		}
	}
	// Keep 3 first turns in flight on the backend with the most, end the
	// others: that backend is past the even share (⌈1.25 × 4 / 3⌉ = 2) but
	// not busy (half its slots: 4).
	x := 0
	for i := range n {
		if n[i] > n[x] {
			x = i
		}
	}
	var held []int
	for c := range convs {
		if home[c] == x && len(held) < 3 {
			held = append(held, c)
			continue
		}
		bes[home[c]].Release(fmt.Sprint("c", c))
		if code := <-done; code != 200 {
			t.Fatalf("first turn: status %d", code)
		}
	}
	await(t, "3 in flight, all on one backend", func() bool {
		n, total := inflight()
		return total == 3 && n[x] == 3
	})
	// Every conversation's next turns, one at a time, go to its backend.
	for c := range convs {
		history := turn1(c)
		for turn := 2; turn <= 3; turn++ {
			history += fmt.Sprintf(`,{"role":"assistant","content":"tok tok"},{"role":"user","content":"turn %d of conversation %d: %s"}`, turn, c, strings.Repeat("a follow-up ", 10))
			before := received()
			if res, out := post(t, client, g.URL+"/v1/chat/completions", keyAll, []byte(`{"model":"m","messages":[`+history+`]}`), nil); res.StatusCode != 200 {
				t.Fatalf("status %d: %s", res.StatusCode, out)
			}
			for i, m := range received() {
				if m != before[i] && i != home[c] {
					t.Fatalf("conversation %d: turn 1 on backend %d, turn %d on %d (in flight %v)", c, home[c], turn, i, n)
				}
			}
		}
	}
	for _, c := range held {
		bes[x].Release(fmt.Sprint("c", c))
	}
	for range held {
		if code := <-done; code != 200 {
			t.Fatalf("first turn: status %d", code)
		}
	}
}
