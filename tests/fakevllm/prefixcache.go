package fakevllm

// A simulation of vLLM's automatic prefix caching (APC), at block
// granularity, opt-in with Options.PrefixCache. It follows vLLM's v1 KV
// cache manager (github.com/vllm-project/vllm, main of spring 2026):
//
//   - vllm/v1/core/kv_cache_utils.py (hash_block_tokens,
//     hash_request_tokens): only full blocks are hashed; block i's hash
//     covers block i-1's hash and block i's tokens (plus extra keys: a LoRA
//     name, here the request's model; and the request's cache_salt, which
//     vLLM mixes into the first block's extra keys, so that no block of one
//     salt matches another's), so equal hashes mean equal prefixes.
//     The last, partial block is never cached.
//   - vllm/v1/core/kv_cache_manager.py (get_computed_blocks): the hit is
//     the longest run of leading blocks found in the cache, capped at
//     num_tokens-1 (the last token is always computed, to get logits), so a
//     prompt whose every block is cached still misses its last block;
//     record_prefix_cache_stats counts the request's num_tokens as queries
//     and the hit tokens (hit blocks × block size) as hits.
//   - vllm/v1/metrics/stats.py (PrefixCacheStats, queries and hits in
//     tokens) and vllm/v1/metrics/loggers.py: vllm:prefix_cache_queries
//     and vllm:prefix_cache_hits, the counters /metrics reports.
//   - vllm/v1/core/block_pool.py and kv_cache_utils.py
//     (FreeKVCacheBlockQueue): a finished request's blocks go to the free
//     queue's tail in reverse order (its last block is evicted first), a
//     cached block that is hit again leaves the queue, and a new block takes
//     the queue's head, evicting the cached block there. The fake has no
//     running requests holding blocks: its cache is one LRU of Blocks
//     blocks, each request's blocks touched last to first (block 0 the most
//     recent), the least recent evicted when a new block needs room.
//
// Tokens are the fake's approximation: BytesPerToken bytes of the prompt's
// canonical text (what a chat template would render; see canonicalPrompt).
// Blocks filled by the answer are cached too (vLLM caches the blocks decode
// fills), so a conversation's next turn, which carries the answer as its
// assistant message, hits through it.

import (
	"net/http"
	"sync"

	"github.com/tidwall/gjson"
	"github.com/zeebo/xxh3"
)

// PrefixCacheOptions turn on the prefix-cache simulation (Options.PrefixCache).
type PrefixCacheOptions struct {
	BlockTokens   int // tokens per block (default 16, vLLM's default block_size)
	Blocks        int // the cache's capacity in blocks (default 4096)
	BytesPerToken int // bytes of the prompt's canonical text per token (default 4)
}

// maxAnswerWords bounds the answer text the simulation caches (the answer's
// blocks); a longer answer's tail is not cached.
const maxAnswerWords = 1 << 16

// prefixCache is the simulated KV cache: an LRU of block hashes, nodes in
// a slice (no allocation once full) linked most recent first.
type prefixCache struct {
	blockTokens, bytesPerToken, capacity int
	mu                                   sync.Mutex
	index                                map[uint64]int32
	nodes                                []apcNode
	head, tail                           int32 // -1 when empty
}

type apcNode struct {
	hash       uint64
	prev, next int32
}

func newPrefixCache(o PrefixCacheOptions) *prefixCache {
	if o.BlockTokens <= 0 {
		o.BlockTokens = 16
	}
	if o.Blocks <= 0 {
		o.Blocks = 4096
	}
	if o.BytesPerToken <= 0 {
		o.BytesPerToken = 4
	}
	return &prefixCache{blockTokens: o.BlockTokens, bytesPerToken: o.BytesPerToken, capacity: o.Blocks,
		index: make(map[uint64]int32, min(o.Blocks, 1<<16)), nodes: make([]apcNode, 0, min(o.Blocks, 1<<16)),
		head: -1, tail: -1}
}

// apcSeed is the parent hash of a prompt's first block (vLLM's NONE_HASH),
// distinct per model: one fake serving several model names keeps them apart
// as vLLM keeps LoRA adapters apart (an extra key of every block).
func apcSeed(model, salt string) uint64 {
	return xxh3.HashStringSeed(model+"\x00"+salt, 0x5eed_a9c0_0b1c_4a5e)
}

// lookup runs one request through the cache: text is its canonical
// prompt, answer what decoding appends. It returns the request's queried
// tokens (its prompt's) and hit tokens, and caches all full blocks of
// prompt and answer.
func (c *prefixCache) lookup(model, salt string, text, answer []byte) (queries, hits int) {
	queries = (len(text) + c.bytesPerToken - 1) / c.bytesPerToken
	if queries == 0 {
		return 0, 0
	}
	blockBytes := c.blockTokens * c.bytesPerToken
	full := len(text) / blockBytes
	maxHit := min(full, (queries-1)/c.blockTokens)
	all := (len(text) + len(answer)) / blockBytes
	hashes := make([]uint64, all)
	h := apcSeed(model, salt)
	var buf []byte
	for i := range all {
		lo, hi := i*blockBytes, (i+1)*blockBytes
		var b []byte
		switch {
		case hi <= len(text):
			b = text[lo:hi]
		case lo >= len(text):
			b = answer[lo-len(text) : hi-len(text)]
		default: // the block where the prompt ends and the answer begins
			buf = append(append(buf[:0], text[lo:]...), answer[:hi-len(text)]...)
			b = buf
		}
		h = xxh3.HashSeed(b, h)
		hashes[i] = h
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	hit := 0
	for hit < maxHit {
		if _, ok := c.index[hashes[hit]]; !ok {
			break
		}
		hit++
	}
	for i := all - 1; i >= 0; i-- { // the first block ends the most recent
		c.touch(hashes[i])
	}
	return queries, hit * c.blockTokens
}

// touch makes h the most recent block, adding it (and evicting the least
// recent block when full) if it is not cached.
func (c *prefixCache) touch(h uint64) {
	if i, ok := c.index[h]; ok {
		if i != c.head {
			c.unlink(i)
			c.pushFront(i)
		}
		return
	}
	var i int32
	if len(c.nodes) < c.capacity {
		c.nodes = append(c.nodes, apcNode{})
		i = int32(len(c.nodes) - 1)
	} else {
		i = c.tail
		c.unlink(i)
		delete(c.index, c.nodes[i].hash)
	}
	c.nodes[i].hash = h
	c.index[h] = i
	c.pushFront(i)
}

func (c *prefixCache) unlink(i int32) {
	n := &c.nodes[i]
	if n.prev >= 0 {
		c.nodes[n.prev].next = n.next
	} else {
		c.head = n.next
	}
	if n.next >= 0 {
		c.nodes[n.next].prev = n.prev
	} else {
		c.tail = n.prev
	}
}

func (c *prefixCache) pushFront(i int32) {
	c.nodes[i].prev, c.nodes[i].next = -1, c.head
	if c.head >= 0 {
		c.nodes[c.head].prev = i
	}
	c.head = i
	if c.tail < 0 {
		c.tail = i
	}
}

// len is the number of cached blocks.
func (c *prefixCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.index)
}

// PrefixCacheStats is the prefix-cache counters /metrics reports, in
// tokens: hits of queries (the simulation's sums with Options.PrefixCache,
// added to what SetPrefixCache set).
func (s *Server) PrefixCacheStats() (hits, queries int64) {
	return s.apcHits.Load(), s.apcQuery.Load()
}

// The canonical prompt: the text a chat template would render, each
// message as "<|role|>\n" content "<|end|>\n", in order, then the
// generation prompt "<|assistant|>\n"; the answer follows as content
// "<|end|>\n", so the next turn, which carries the answer as an assistant
// message, extends this one's prompt and answer. A shared system prompt is
// a shared prefix. Content given as parts is their texts (other parts as
// their JSON); tools come first, as their JSON.
const (
	apcGenPrompt = "<|assistant|>\n"
	apcEnd       = "<|end|>\n"
)

func appendMessage(b []byte, role string, content gjson.Result) []byte {
	b = append(append(append(b, "<|"...), role...), "|>\n"...)
	return append(appendContent(b, content), apcEnd...)
}

func appendContent(b []byte, content gjson.Result) []byte {
	switch {
	case content.Type == gjson.String:
		return append(b, content.String()...)
	case content.IsArray():
		content.ForEach(func(_, part gjson.Result) bool {
			if t := part.Get("text"); t.Type == gjson.String {
				b = append(b, t.String()...)
			} else {
				b = append(b, part.Raw...)
			}
			return true
		})
		return b
	case content.Exists() && content.Type != gjson.Null:
		return append(b, content.Raw...)
	}
	return b
}

func appendMessages(b []byte, messages gjson.Result) []byte {
	messages.ForEach(func(_, m gjson.Result) bool {
		var role, content, toolCalls, typ gjson.Result
		m.ForEach(func(k, v gjson.Result) bool { // one pass over the message
			switch k.Str {
			case "role":
				role = v
			case "content":
				content = v
			case "tool_calls":
				toolCalls = v
			case "type":
				typ = v
			}
			return true
		})
		if role.Exists() {
			b = appendMessage(b, role.String(), content)
			if toolCalls.IsArray() && toolCalls.Raw != "[]" {
				b = append(append(b, toolCalls.Raw...), apcEnd...)
			}
		} else { // a Responses item that is not a message (function_call, …)
			b = appendMessage(b, typ.String(), gjson.Result{Type: gjson.JSON, Raw: m.Raw})
		}
		return true
	})
	return b
}

// canonicalPrompts is the canonical prompts of a request on path (more
// than one for a completions request with a list of prompts) and whether
// the answer is a chat turn (closed by apcEnd); prev is the conversation a
// Responses request continues (previous_response_id).
func canonicalPrompts(path string, body []byte, prev string) (prompts [][]byte, chat bool) {
	top := map[string]gjson.Result{}
	gjson.ParseBytes(body).ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "messages", "tools", "system", "prompt", "input", "instructions":
			if _, seen := top[k.Str]; !seen {
				top[k.Str] = v
			}
		}
		return true
	})
	b := make([]byte, 0, len(body)+len(prev)+64)
	if t := top["tools"]; t.IsArray() {
		b = append(append(append(b, "<|tools|>\n"...), t.Raw...), apcEnd...)
	}
	switch path {
	case "/v1/completions":
		p := top["prompt"]
		if p.IsArray() && p.Get("0").Type == gjson.String {
			for _, one := range p.Array() {
				prompts = append(prompts, []byte(one.String()))
			}
			return prompts, false
		}
		return [][]byte{appendContent(b, p)}, false
	case "/v1/messages":
		if sys := top["system"]; sys.Exists() && sys.Type != gjson.Null {
			b = appendMessage(b, "system", sys)
		}
		b = appendMessages(b, top["messages"])
	case "/v1/responses":
		if ins := top["instructions"]; ins.Type == gjson.String {
			b = appendMessage(b, "system", ins)
		}
		b = append(b, prev...)
		if in := top["input"]; in.IsArray() {
			b = appendMessages(b, in)
		} else {
			b = appendMessage(b, "user", in)
		}
	default: // chat
		b = appendMessages(b, top["messages"])
	}
	return [][]byte{append(b, apcGenPrompt...)}, true
}

// answerText is the text of an answer of tokens tokens (at most
// maxAnswerWords), closed by apcEnd for a chat turn.
func (s *Server) answerText(tokens int, chat bool) []byte {
	var b []byte
	for i := range min(tokens, maxAnswerWords) {
		b = append(b, s.word(i)...)
	}
	if chat {
		b = append(b, apcEnd...)
	}
	return b
}

// simulatePrefixCache runs a served request through the prefix cache,
// when Options.PrefixCache is set: it counts the queried and hit tokens
// into the /metrics counters and the request's record, and returns the
// hit tokens (0 when off). For /v1/responses, prev is the continued
// conversation; conv is the conversation after this turn (for the next).
func (s *Server) simulatePrefixCache(r *http.Request, req request, body []byte, tokens int, prev string) (cached int, conv string) {
	if s.apc == nil {
		return 0, ""
	}
	prompts, chat := canonicalPrompts(r.URL.Path, body, prev)
	answer := s.answerText(tokens, chat)
	var queries int
	salt := gjson.GetBytes(body, "cache_salt").String()
	for _, p := range prompts {
		q, h := s.apc.lookup(req.Model, salt, p, answer)
		queries += q
		cached += h
	}
	s.apcQuery.Add(int64(queries))
	s.apcHits.Add(int64(cached))
	if req.rec >= 0 {
		s.mu.Lock()
		if req.rec < len(s.received) {
			s.received[req.rec].CachedTokens = cached
			s.received[req.rec].QueriedTokens = queries
		}
		s.mu.Unlock()
	}
	if r.URL.Path == "/v1/responses" {
		conv = responsesConversation(body, prev, answer)
	}
	return cached, conv
}

// responsesConversation is the conversation a stored response continues
// into (without the instructions, which each request gives anew, as vLLM's
// construct_input_messages rebuilds them): prev, this input, the answer.
func responsesConversation(body []byte, prev string, answer []byte) string {
	b := append([]byte(prev), nil...)
	in := gjson.GetBytes(body, "input")
	if in.IsArray() {
		b = appendMessages(b, in)
	} else {
		b = appendMessage(b, "user", in)
	}
	b = append(append(b, apcGenPrompt...), answer...)
	return string(b)
}
