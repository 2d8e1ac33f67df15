package proxy

// Placement: which backends a request is offered, in order — rendezvous
// hashing on its affinity key, the prefix index for a prompt it has seen,
// both bounded by load (docs/internals.md, "Placement").

import (
	"time"

	"github.com/sluice-gw/sluice/proxy/affinity"
	"github.com/sluice-gw/sluice/proxy/reqscan"
)

// sentWindow is about how many requests modelRoute.sent remembers. The
// in-flight count of a moment says little of what a backend carries while
// few requests overlap (at 8 in flight over 3 backends it is 0-5, whichever
// conversations happen to be mid-turn); ~1,000 requests say it to a few
// percent.
const sentWindow = 1024

// busyAt is the load from which a backend's keys are bounded by the even
// share (affinity_load_cap): half its slots.
func busyAt(slots int64) int64 { return (slots + 1) / 2 }

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
//
// Long (about 90 lines): the two rules above, and the bounds that both
// share, read best in one place; its arrays stay on the stack.
func (m *modelRoute) placeByIndex(q *prefixQuery, order []int, load []int64, full []bool, limit int64, keeps func(int) bool, home int, now time.Time) int {
	region := m.region
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
	// ranking, and of those the one that carries least (m.place.sent).
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
	m.place.sentMu.Lock()
	if len(m.place.sent) == len(order) {
		copy(sent, m.place.sent)
	} else {
		clear(sent)
	}
	m.place.sentMu.Unlock()
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

// noteSent counts blocks prompt blocks sent to backend b in m.place.sent.
func (m *modelRoute) noteSent(b *backendRoute, blocks int) {
	m.place.sentMu.Lock()
	if len(m.place.sent) != len(m.backends) {
		m.place.sent = make([]float64, len(m.backends))
	}
	for i, o := range m.backends {
		m.place.sent[i] -= m.place.sent[i] / sentWindow
		if o == b {
			m.place.sent[i] += float64(blocks)
		}
	}
	m.place.sentMu.Unlock()
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
	case m.place.affinity == "none":
		return 0, false
	case r.User.Len() > 0:
		return affinity.Key(body[r.User.Start:r.User.End]), true
	case m.place.affinity != "prefix":
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
//
// Long (about 85 lines): the ranking, the load bounds and the move to
// the front share their arrays on the stack (no allocation per request).
func (m *modelRoute) candidates(key uint64, hasKey bool, q *prefixQuery, dst []*backendRoute) []*backendRoute {
	now := time.Now()
	n := len(m.backends)
	if n == 0 { // discovery found no instance (yet)
		return dst
	}
	if !hasKey {
		start := int(m.place.next.Add(1)-1) % n
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
	order = affinity.Rank(key, m.place.seeds, order)
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
	regionNow := m.region.Now()
	for i, b := range m.backends {
		load[i], full[i] = b.load(regionNow)
		total += load[i]
	}
	limit := int64(affinity.LoadCap(m.place.loadCap, int(total), max(healthy, 1)))
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
