package affinity

import "github.com/zeebo/xxh3"

// Prefix blocks. A prompt is cut into fixed-size blocks hashed chained, so
// that block i's hash stands for every byte of the prompt up to the end of
// block i: two prompts share their first n hashes exactly when they share
// their first n blocks' bytes. The prefix index (shm NotePrefix,
// PrefixMatch) keeps these hashes per backend, the way vLLM keys its
// prefix cache by chained hashes of token blocks (and llm-d's approximate
// prefix scorer by chained hashes of character blocks).
//
// Blocks are of bytes of the request body as sent (JSON escapes and all),
// not tokens: the gateway never tokenises, and the same prompt bytes are
// the same tokens. 256 bytes is about 64 tokens of English.

// PrefixSeed is the first link of a model's chains: the model's name as
// the backend sees it, so one prompt sent to two models of one server is
// two different prefixes (their KV caches are not shared).
func PrefixSeed(model string) uint64 { return xxh3.HashString(model) | 1 }

// link chains a block's hash onto the hash of everything before it
// (score's finalizer over both: a bijection of prev for a given block, so
// distinct histories stay distinct). Hashing the block unseeded and
// linking after costs less than xxh3's seeded hash, which derives a
// secret per call for inputs over 240 bytes.
func link(prev, block uint64) uint64 { return score(prev*0x9e3779b97f4a7c15, block) }

// AppendBlocks appends to dst the chained hashes of the blocks of head followed
// by prompt, at most max of them, and returns dst. head (a request's
// instructions or system, whole) is cut into blocks of size bytes, its last
// partial block included (it is a whole value: the same head gives the
// same blocks); prompt (the messages or prompt value) then starts a new
// block, and only its full blocks count — its tail changes as a
// conversation grows, so a partial block there would never match again.
// Where head ends is not hashed apart: bodies whose blocks hold the same
// bytes hash alike, as the backend, which renders head and prompt one
// after the other, caches them alike.
// The work is bounded by max × size bytes, whatever the body's size; with
// dst's capacity at least max, Append allocates nothing.
func AppendBlocks(dst []uint64, seed uint64, head, prompt []byte, size, max int) []uint64 {
	if size < 1 {
		return dst
	}
	h, n := seed, 0
	for len(head) > 0 && n < max {
		b := head[:min(size, len(head))]
		head = head[len(b):]
		h = link(h, xxh3.Hash(b))
		dst = append(dst, h)
		n++
	}
	for len(prompt) >= size && n < max {
		h = link(h, xxh3.Hash(prompt[:size]))
		prompt = prompt[size:]
		dst = append(dst, h)
		n++
	}
	return dst
}

// ConversationEntry is the key under which the gateway remembers a
// conversation's backend (the region's recall table, beside stored
// responses' holders): its affinity key — the conversation key, already
// seeded with its cache group's salt, so two groups never share one —
// mixed apart from the table's other keys (response ids' hashes). Each
// turn of a conversation has the same, whatever it adds.
func ConversationEntry(key uint64) uint64 { return link(key^0x636f6e7665727361, 0x7475726e73) | 1 }
