package worker

import (
	"sync"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/worker/affinity"
	"github.com/sluice-gw/sluice/worker/reqscan"
)

// The prefix index (shm NotePrefix, PrefixMatch; README "Placement"): a
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
	if m.prefixMax == 0 {
		return nil
	}
	head := r.Instructions
	if head.Len() == 0 {
		head = r.System
	}
	if head.Len()+r.Prompt.Len() < m.prefixBlock {
		return nil
	}
	buf := blockBufs.Get().(*[]uint64)
	*buf = affinity.AppendBlocks((*buf)[:0], m.prefixSeed^group, body[head.Start:head.End], body[r.Prompt.Start:r.Prompt.End], m.prefixBlock, m.prefixMax)
	if len(*buf) == 0 {
		blockBufs.Put(buf)
		return nil
	}
	return buf
}

// notePrefix records in the index that b is sent x's blocks.
func (g *gateway) notePrefix(x *exchange, b *backendRoute) {
	if x.blocks != nil {
		g.region.NotePrefix(b.urlHash, *x.blocks)
	}
}

// releaseBlocks gives x's block buffer back: no attempt will follow.
func (x *exchange) releaseBlocks() {
	if x.blocks != nil {
		blockBufs.Put(x.blocks)
		x.blocks = nil
	}
}
