package shm

// The prefix index: which backends were recently sent which blocks of a
// prompt, for placing a request where its longest prefix is cached (the
// way llm-d's approximate prefix scorer keeps a per-server LRU of block
// hashes, here in the region so that every worker reads and writes one
// index). The caller cuts a prompt into blocks and hashes them chained
// (a block's hash covers every byte before it: proxy/affinity AppendBlocks), and
// after sending a request records its blocks for the backend that got it;
// a backend's match is then how many leading blocks of the next request
// the index holds for it.
//
// It is a table of the recall table's kind (recall.go: the same buckets,
// per-bucket LRU, check words, and code): the key is a mix of the block's
// hash and the backend's, the value the block's hash, so a hit needs the
// key, its check word and the value to agree with what is asked — a torn
// or raced entry reads as a miss, never as a block the backend was not
// sent. It keeps about the last PrefixCapacity (block, backend) pairs
// recorded, over all backends together: a backend that takes more
// requests holds more of the index, as it would of the entries of one
// global LRU. A bound per backend would take a partition of the table per
// backend, which the region cannot size (backends come and go with
// reloads and discovery); the global bound errs the safe way — a
// backend's share of the index forgets before its cache does when the
// index is smaller than the caches together, and a forgotten block is a
// request placed by rendezvous hashing, as without the index.

// DefaultPrefixEntries is the prefix index's capacity in regions made by
// Create: 65,536 (block, backend) pairs, 2 MiB (2,097,152 bytes), whose
// pages are touched only as they are written. At 256-byte blocks (about
// 64 tokens) that is 16 MiB of prompt text, 4.2 M tokens over all
// backends: the KV caches of about 8 backends of 500 K tokens. The index
// is best about as large as the caches together — larger, it remembers
// blocks they evicted (and places requests by them); smaller, it forgets
// blocks they hold (and those requests go by rendezvous hashing alone).
const DefaultPrefixEntries = 1 << 16

// PrefixCapacity is the number of entries of the prefix index; 0 when the
// region has none (made by a version-1 or -2 sluice, inherited in a binary
// upgrade, or with no index configured).
func (r *Region) PrefixCapacity() int { return int(r.prefix.buckets) * RecallBucket }

// prefixKey is the index's key of block for a backend whose backendMix
// is m: nonzero (0 marks an empty entry), and different for each backend,
// so one block's entries spread over as many buckets as backends were
// sent it.
func prefixKey(block, m uint64) uint64 { return fmix64(block^m) | 1 }

// backendMix is the part of prefixKey that depends on the backend alone,
// computed once for all of a request's blocks.
func backendMix(backend uint64) uint64 { return fmix64(backend ^ 0x9e3779b97f4a7c15) }

// prefixVal is the value stored for block: the block itself, made nonzero.
func prefixVal(block uint64) uint64 { return block | 1<<63 }

// NotePrefix records that backend (a nonzero hash naming it) was sent the
// blocks (their chained hashes). Like Remember it never waits; a write that
// loses a race with another is a miss later.
func (r *Region) NotePrefix(backend uint64, blocks []uint64) {
	if backend == 0 || r.prefix.buckets == 0 {
		return
	}
	m := backendMix(backend)
	for _, b := range blocks {
		r.prefix.put(r.words, prefixKey(b, m), prefixVal(b))
	}
}

// PrefixMatch is how many of blocks, from the first on, the index holds
// for backend: it stops at the first block missing (blocks past it cannot
// be in the backend's cache as a prefix of this prompt).
func (r *Region) PrefixMatch(backend uint64, blocks []uint64) int {
	if backend == 0 || r.prefix.buckets == 0 {
		return 0
	}
	m := backendMix(backend)
	for i, b := range blocks {
		if v, ok := r.prefix.get(r.words, prefixKey(b, m)); !ok || v != prefixVal(b) {
			return i
		}
	}
	return len(blocks)
}
