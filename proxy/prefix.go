package proxy

import (
	"bytes"
	"sync"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/proxy/affinity"
	"github.com/sluice-gw/sluice/proxy/reqscan"
)

// The prefix index (shm NotePrefix, PrefixMatch; docs/internals.md, "Placement"): a
// request of an affinity: prefix model is cut into blocks
// (affinity.AppendBlocks) when its backends are picked; without "user",
// the backend that was sent the longest run of its leading blocks goes
// first (candidates); each attempt records the blocks for the backend it
// sends them to, the first and any retry's, so the index says where each
// prompt went.

// blockBufs holds the block hash buffers of requests in flight: one per
// request from pickBackends until its answer starts (or it ends), so the
// hot path does not allocate them. A request's blocks live that long
// because each attempt, retries included, records them.
var blockBufs = sync.Pool{New: func() any {
	b := make([]uint64, 0, config.DefaultPrefixMaxBlocks)
	return &b
}}

// prefixBlocks cuts the prompt of the request into m's blocks — its head
// (instructions or system, as affinityKey reads it) then its prompt value
// (reqscan.Request.Prompt) — into a pooled buffer; nil when m does not use
// the index or the prompt fills no block. The chain starts from m's seed
// mixed with group (its cache group's saltSeed; 0: none), so equal prompts
// of two groups share no block.
func (m *modelRoute) prefixBlocks(body []byte, r *reqscan.Request, group uint64) *[]uint64 {
	if m.place.prefixMax == 0 {
		return nil
	}
	head := r.Instructions
	if head.Len() == 0 {
		head = r.System
	}
	if head.Len()+r.Prompt.Len() < m.place.prefixBlock {
		return nil
	}
	buf := blockBufs.Get().(*[]uint64)
	*buf = affinity.AppendBlocks((*buf)[:0], m.place.prefixSeed^group, body[head.Start:head.End], body[r.Prompt.Start:r.Prompt.End], m.place.prefixBlock, m.place.prefixMax)
	if len(*buf) == 0 {
		blockBufs.Put(buf)
		return nil
	}
	return buf
}

// conversationShape is what placement reads of r's prompt beside its
// blocks (of n, as prefixBlocks cut them): shared, how many leading blocks
// lie wholly before the first user turn (the head, and the system and
// developer messages: what an app's conversations have in common); and
// history, whether the prompt goes on past the conversation key's span
// (reqscan.Request.Conversation: up to the first user turn) — a
// conversation's later turn, not its first.
func (m *modelRoute) conversationShape(body []byte, r *reqscan.Request, n int) (shared int, history bool) {
	head := r.Instructions
	if head.Len() == 0 {
		head = r.System
	}
	shared = (head.Len() + m.place.prefixBlock - 1) / m.place.prefixBlock
	p, u := r.Prompt, r.FirstUser
	if u.Len() > 0 && u.Start >= p.Start && u.Start <= p.End {
		shared += (u.Start - p.Start) / m.place.prefixBlock
	}
	if c := r.Conversation; c.Len() > 0 && c.Start >= p.Start && c.End <= p.End {
		rest := bytes.TrimLeft(body[c.End:p.End], " \t\r\n")
		history = len(rest) > 0 && !(len(rest) == 1 && rest[0] == ']')
	}
	return min(shared, n), history
}

// notePrefix records in the index that b is sent x's blocks, and in the
// recall table that b is where x's conversation is now (a move writes
// over its old backend: the next turn follows it).
func (g *Gateway) notePrefix(x *exchange, b *backendRoute) {
	if x.place.conv != 0 {
		g.region.Remember(x.place.conv, storedValue(b.urlHash, 0))
	}
	if x.place.blocks != nil {
		g.region.NotePrefix(b.urlHash, *x.place.blocks)
		x.req.model.noteSent(b, len(*x.place.blocks))
	}
}

// releaseBlocks gives x's block buffer back: no attempt will follow.
func (x *exchange) releaseBlocks() {
	if x.place.blocks != nil {
		blockBufs.Put(x.place.blocks)
		x.place.blocks = nil
	}
}
