package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
)

// A request of a workload: its body is fixed before the run (the fake's
// answers are known in advance: the words of Options.Words cycled), so
// every placement sends the same bytes. A request with after >= 0 is sent
// only once request after has been answered (the previous turn of the
// same user's conversation).
type request struct {
	user   int
	body   []byte
	tokens int    // answer tokens (X-Fake-Tokens)
	answer string // the answer the fake gives (checked)
	after  int    // index of the request that must end first, -1 for none
	// last: the last request of its user's conversation (W4), after which
	// the "least" placement counts it closed.
	last bool
	sys  int // W4: its system prompt
}

type workload struct {
	name, title string
	reqs        []request
	users       int
	prefixBlks  int // distinct reusable prefix blocks (see capacity)
	sharedTok   int // tokens of the prefix every request shares (W2's system prompt), 0 for none
	// shared is, for a workload of several shared prefixes (W4's system
	// prompts), each one's tokens by its sharedKey; nil for none.
	shared map[string]int
}

// sharedOf is the tokens of the shared prefix a request the fake received
// starts with: "hit past system" counts what is past it.
func (w *workload) sharedOf(firstContent string) int {
	if w.shared != nil {
		return w.shared[sharedKey(firstContent)]
	}
	return w.sharedTok
}

// Simulation constants, as the fake's defaults: 16 tokens of 4 bytes a block.
const blockBytes = 16 * 4

// answerWords are the fake's words (Options.Words): the answer of n tokens
// is them cycled, joined by spaces, as the fake writes it.
var answerWords = []string{"the", "cache", "stays", "warm", "when", "placement", "keeps", "prefixes", "home"}

func answerText(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(answerWords[i%len(answerWords)])
	}
	return b.String()
}

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatBody struct {
	Model     string    `json:"model"`
	Messages  []message `json:"messages"`
	MaxTokens int       `json:"max_tokens"`
}

func marshal(msgs []message, tokens int) []byte {
	b, err := json.Marshal(chatBody{Model: modelName, Messages: msgs, MaxTokens: tokens})
	if err != nil {
		panic(err)
	}
	return b
}

// canonLen is the length of the fake's canonical prompt of msgs (each
// message "<|role|>\n" content "<|end|>\n", then "<|assistant|>\n").
func canonLen(msgs []message) int {
	n := len("<|assistant|>\n")
	for _, m := range msgs {
		n += len("<|") + len(m.Role) + len("|>\n") + len(m.Content) + len("<|end|>\n")
	}
	return n
}

// blocksOf is the full blocks the fake caches for a request: prompt and
// answer (closed by "<|end|>\n").
func blocksOf(msgs []message, answer string) int {
	return (canonLen(msgs) + len(answer) + len("<|end|>\n")) / blockBytes
}

// vocabulary of the generated text: deterministic pseudo-words.
var vocab = func() []string {
	r := rand.New(rand.NewPCG(7, 7))
	v := make([]string, 2048)
	for i := range v {
		n := 2 + r.IntN(8)
		b := make([]byte, n)
		for j := range b {
			b[j] = byte('a' + r.IntN(26))
		}
		v[i] = string(b)
	}
	return v
}()

// text is about n bytes of words.
func text(r *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(vocab[r.IntN(len(vocab))])
	}
	return b.String()
}

// zipf draws user indices 0..n-1 with P(k) ∝ 1/(k+1+q)^s (Zipf for q = 0,
// Zipf–Mandelbrot with a flatter head for q > 0).
type zipf struct{ cdf []float64 }

func newZipf(n int, s, q float64) *zipf {
	z := &zipf{cdf: make([]float64, n)}
	sum := 0.0
	for k := range n {
		sum += 1 / math.Pow(float64(k)+1+q, s)
		z.cdf[k] = sum
	}
	for k := range z.cdf {
		z.cdf[k] /= sum
	}
	return z
}

func (z *zipf) draw(r *rand.Rand) int {
	return min(sort.SearchFloat64s(z.cdf, r.Float64()), len(z.cdf)-1)
}

func (z *zipf) top() float64 { return z.cdf[0] }

// answerTokens is an answer's length: 8 to 40 tokens.
func answerTokens(r *rand.Rand) int { return 8 + r.IntN(33) }

// w1: unique first messages. Each user has its own first message (~2 KB),
// no system prompt; its first request is that message alone, answered with
// firstTokens tokens; each later request is that message, that answer and
// a new question (~150-300 B): the user's document and the questions on it.
// Requests are independent (no ordering): a user may have several in flight.
func w1(seed uint64, users, n int, s float64) *workload {
	r := rand.New(rand.NewPCG(seed, 1))
	z := newZipf(users, s, 0)
	const firstTokens = 24
	first := make([]string, users)
	seen := make([]bool, users)
	w := &workload{name: "W1", users: users,
		title: fmt.Sprintf("unique first messages: %d users (Zipf s=%.1f, top user %.0f%% of requests), a ~2 KB first message each, no system prompt", users, s, 100*z.top())}
	for u := range first {
		first[u] = fmt.Sprintf("user %d's document: %s", u, text(r, 2048))
	}
	a := answerText(firstTokens)
	for range n {
		u := z.draw(r)
		var msgs []message
		tokens := answerTokens(r)
		if !seen[u] {
			seen[u] = true
			msgs = []message{{"user", first[u]}}
			tokens = firstTokens
			w.prefixBlks += blocksOf(msgs, a)
		} else {
			msgs = []message{{"user", first[u]}, {"assistant", a}, {"user", text(r, 150+r.IntN(150))}}
		}
		w.reqs = append(w.reqs, request{user: u, body: marshal(msgs, tokens), tokens: tokens, answer: answerText(tokens), after: -1})
	}
	return w
}

// w2: a shared system prompt (~4 KB) for every user and multi-turn
// conversations: each turn resends the conversation so far (the previous
// answers as the fake gave them) and a new user message (~150-400 B); after
// 2-6 turns the user starts a new conversation. Users are drawn Zipf–
// Mandelbrot (a flatter head: a user's turns are sent one after another,
// so a user with a large share of the traffic would serialise the run).
func w2(seed uint64, users, n int, s, q float64) *workload {
	r := rand.New(rand.NewPCG(seed, 2))
	z := newZipf(users, s, q)
	system := message{"system", "You are the assistant of an example app. " + text(r, 4096)}
	type conv struct {
		msgs      []message
		turnsLeft int
		last      int // index of its last request
	}
	convs := make([]*conv, users)
	longest := make(map[int][]int) // user -> blocks of each finished conversation (past the system prompt)
	sysBlks := canonLen([]message{system}) / blockBytes
	w := &workload{name: "W2", users: users,
		title: fmt.Sprintf("shared system prompt, multi-turn: %d users (Zipf–Mandelbrot s=%.1f q=%.0f, top user %.1f%%), ~4 KB system prompt, 2-6 turns a conversation", users, s, q, 100*z.top())}
	lastBlks := make([]int, users)
	for range n {
		u := z.draw(r)
		c := convs[u]
		after := -1
		if c == nil || c.turnsLeft == 0 {
			if c != nil {
				longest[u] = append(longest[u], lastBlks[u]-sysBlks)
				after = c.last
			}
			c = &conv{msgs: []message{system}, turnsLeft: 2 + r.IntN(5), last: -1}
			convs[u] = c
		} else {
			after = c.last
		}
		c.msgs = append(c.msgs, message{"user", fmt.Sprintf("(user %d) %s", u, text(r, 150+r.IntN(250)))})
		tokens := answerTokens(r)
		ans := answerText(tokens)
		msgs := append([]message(nil), c.msgs...)
		c.msgs = append(c.msgs, message{"assistant", ans})
		c.turnsLeft--
		c.last = len(w.reqs)
		lastBlks[u] = blocksOf(msgs, ans)
		w.reqs = append(w.reqs, request{user: u, body: marshal(msgs, tokens), tokens: tokens, answer: ans, after: after})
	}
	w.prefixBlks = sysBlks
	w.sharedTok = sysBlks * 16
	for u, c := range convs {
		if c == nil {
			continue
		}
		all := append(longest[u], lastBlks[u]-sysBlks)
		sum := 0
		for _, b := range all {
			sum += b
		}
		w.prefixBlks += sum / len(all)
	}
	return w
}

// w3: RAG. A few long shared documents (8-30 KB each, drawn by a Zipf
// popularity) sent by many users, each request a document as the system
// message then the user's own question (~100-300 B), so every
// conversation has a key of its own while most of its bytes are a
// document other users send too. A user's next request continues its
// conversation (the answer and a follow-up question) with probability
// 0.4, up to 3 turns, else starts a new one on a document drawn afresh.
// Users are drawn Zipf–Mandelbrot as in W2 (a user's turns are serial).
func w3(seed uint64, users, n, docs int, s, q float64) *workload {
	r := rand.New(rand.NewPCG(seed, 3))
	z := newZipf(users, s, q)
	dz := newZipf(docs, 1, 0)
	type conv struct {
		msgs  []message
		turns int
		last  int
	}
	doc := make([]message, docs)
	docBlks := make([]int, docs)
	for d := range doc {
		size := 8<<10 + r.IntN(22<<10)
		doc[d] = message{"system", fmt.Sprintf("Answer from this document (%d). ", d) + text(r, size)}
		docBlks[d] = canonLen([]message{doc[d]}) / blockBytes
	}
	w := &workload{name: "W3", users: users,
		title: fmt.Sprintf("RAG: %d users (Zipf–Mandelbrot s=%.1f q=%.0f) over %d shared documents of 8-30 KB (Zipf popularity, top %.0f%%), each request a document then the user's own question; 40%% continue their conversation (up to 3 turns)", users, s, q, docs, 100*dz.top())}
	convs := make([]*conv, users)
	tails := 0 // blocks past the document of every conversation, at its end
	convN := 0
	convDoc := make([]int, users)
	lastBlks := make([]int, users)
	for range n {
		u := z.draw(r)
		c := convs[u]
		after := -1
		if c != nil {
			after = c.last
		}
		if c == nil || c.turns == 3 || r.Float64() >= 0.4 {
			if c != nil {
				tails += lastBlks[u] - docBlks[convDoc[u]]
			}
			d := dz.draw(r)
			convDoc[u] = d
			c = &conv{msgs: []message{doc[d]}}
			convs[u] = c
			convN++
		}
		c.msgs = append(c.msgs, message{"user", fmt.Sprintf("(user %d) %s?", u, text(r, 100+r.IntN(200)))})
		tokens := answerTokens(r)
		ans := answerText(tokens)
		msgs := append([]message(nil), c.msgs...)
		c.msgs = append(c.msgs, message{"assistant", ans})
		c.turns++
		c.last = len(w.reqs)
		lastBlks[u] = blocksOf(msgs, ans)
		w.reqs = append(w.reqs, request{user: u, body: marshal(msgs, tokens), tokens: tokens, answer: ans, after: after})
	}
	for u, c := range convs {
		if c != nil {
			tails += lastBlks[u] - docBlks[convDoc[u]]
		}
	}
	// Reusable prefix blocks: the documents, and each conversation's own
	// tail (reused only by its later turns) over an average conversation.
	for _, b := range docBlks {
		w.prefixBlks += b
	}
	w.prefixBlks += tails / max(convN, 1) * min(users, convN)
	return w
}

// w4: chat. A few shared system prompts (~3 KB each, drawn by a Zipf
// popularity) and conversations that grow: each turn resends the
// conversation so far (the previous answers as the fake gave them) and a
// new user message (~150-400 B). active conversations are open at once,
// interleaved: each request is the next turn of one drawn uniformly among
// them, and a conversation that has had its turns (6-24 by default) is replaced by a
// new one on a system prompt drawn afresh. A conversation is its own
// "user" (request.user): hash places conversations, sluice-user sends the
// conversation's id as "user".
func w4(seed uint64, active, n, systems, minTurns, maxTurns int) *workload {
	r := rand.New(rand.NewPCG(seed, 4))
	sz := newZipf(systems, 1, 0)
	sys := make([]message, systems)
	sysBlks := make([]int, systems)
	w := &workload{name: "W4", shared: map[string]int{}}
	for i := range sys {
		sys[i] = message{"system", fmt.Sprintf("You are the assistant of app %d. ", i) + text(r, 2048+r.IntN(2048))}
		sysBlks[i] = canonLen([]message{sys[i]}) / blockBytes
		w.prefixBlks += sysBlks[i]
		w.shared[sharedKey(sys[i].Content)] = sysBlks[i] * 16
	}
	type conv struct {
		id, sys   int
		msgs      []message
		turnsLeft int
		last      int
	}
	convs := make([]*conv, active)
	ids := 0
	// A conversation opens once the one it replaces has had its last
	// answer (after: its last request), so that no more than active are
	// ever open, whatever the concurrency.
	newConv := func(after int) *conv {
		s := sz.draw(r)
		c := &conv{id: ids, sys: s, msgs: []message{sys[s]}, turnsLeft: minTurns + r.IntN(maxTurns-minTurns+1), last: after}
		ids++
		return c
	}
	for i := range convs {
		convs[i] = newConv(-1)
	}
	// The working set: what the open conversations hold at once (each
	// one's blocks past its system prompt, as of its last answer), at its
	// most over the sequence.
	held := make([]int, active)
	peak, inUse := 0, 0
	for range n {
		k := r.IntN(active)
		c := convs[k]
		c.msgs = append(c.msgs, message{"user", fmt.Sprintf("(conversation %d) %s", c.id, text(r, 150+r.IntN(250)))})
		tokens := answerTokens(r)
		ans := answerText(tokens)
		msgs := append([]message(nil), c.msgs...)
		c.msgs = append(c.msgs, message{"assistant", ans})
		w.reqs = append(w.reqs, request{user: c.id, body: marshal(msgs, tokens), tokens: tokens, answer: ans, after: c.last})
		c.last = len(w.reqs) - 1
		c.turnsLeft--
		w.reqs[len(w.reqs)-1].last = c.turnsLeft == 0
		w.reqs[len(w.reqs)-1].sys = c.sys
		b := blocksOf(msgs, ans) - sysBlks[c.sys]
		inUse += b - held[k]
		held[k] = b
		peak = max(peak, inUse)
		if c.turnsLeft == 0 {
			inUse -= held[k]
			held[k] = 0
			convs[k] = newConv(c.last)
		}
	}
	w.users = ids
	// Reusable prefix blocks: the system prompts, and the open
	// conversations' working set at its peak (a perfect partition never
	// evicts a block an open conversation will ask for again).
	w.prefixBlks += peak
	w.title = fmt.Sprintf("chat: %d shared system prompts of 2-4 KB (Zipf popularity, top %.0f%%), %d conversations open at once and interleaved (%d in all), %d-%d turns each, the conversation resent and grown by a ~150-400 B user turn each request; hash places conversations", systems, 100*sz.top(), active, ids, minTurns, maxTurns)
	return w
}

// sharedKey identifies a shared system prompt by what the fake records of
// a request (Received.FirstContent: the first message's first 64 bytes).
func sharedKey(content string) string { return content[:min(64, len(content))] }
