// Package affinity ranks a model's backends for a request by rendezvous
// (highest-random-weight) hashing, so the same affinity key — a user, or
// the head of a conversation — lands on the same backend from
// every worker and every gateway replica, keeping vLLM's prefix cache warm,
// and a backend joining or leaving moves only its own share of keys. It
// also cuts a prompt into chained block hashes for the prefix index
// (blocks.go), which places a request where its longest prefix was sent.
//
// Hand-written (~40 lines) rather than a library: the known Go HRW/maglev
// packages allocate per request or misbehave with dead backends (see
// docs), and this needs no state beyond a seed per backend.
package affinity

import "github.com/zeebo/xxh3"

// Seed is a backend's fixed hash, computed once when routes are compiled,
// from something stable across processes and restarts: its URL.
func Seed(backendURL string) uint64 { return xxh3.HashString(backendURL) }

// Key hashes an affinity key's bytes (XXH3: this is not a security use,
// and SHA-256 here was most of the CPU of a 100 KB request elsewhere).
func Key(b []byte) uint64 { return xxh3.Hash(b) }

// KeyOf hashes an affinity key held in two pieces of the body (a prompt's
// head — instructions, system — and its conversation) as one: the XXH3 of
// head followed by rest, streamed, so KeyOf(nil, b) == Key(b) and every
// replica computes the same key.
func KeyOf(head, rest []byte) uint64 {
	if len(head) == 0 {
		return xxh3.Hash(rest)
	}
	var h xxh3.Hasher
	h.Reset()
	h.Write(head)
	h.Write(rest)
	return h.Sum64()
}

// score mixes a key with a backend seed (the splitmix64 finalizer): a
// uniform, independent weight per (key, backend) pair.
func score(key, seed uint64) uint64 {
	x := key ^ seed
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Rank writes the indexes of seeds into order, best first for key, and
// returns order[:len(seeds)]. order must have room for len(seeds); pass a
// stack array to keep the pick allocation-free.
func Rank(key uint64, seeds []uint64, order []int) []int {
	order = order[:len(seeds)]
	var scores [64]uint64
	sc := scores[:0]
	if len(seeds) > len(scores) {
		sc = make([]uint64, 0, len(seeds))
	}
	for i, s := range seeds {
		sc = append(sc, score(key, s))
		order[i] = i
	}
	// Insertion sort: models have a handful of backends, rarely more than 16.
	for i := 1; i < len(order); i++ {
		for j := i; j > 0 && sc[order[j]] > sc[order[j-1]]; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	return order
}

// LoadCap is the bound of consistent hashing with bounded loads: a backend
// may take a request only while its in-flight count stays within
// ⌈capFactor × (total in flight + 1) / backends⌉, so a hot key spills to
// the next backend in its ranking instead of piling onto one replica.
func LoadCap(capFactor float64, totalInflight, backends int) int {
	if backends < 1 {
		return 0
	}
	limit := capFactor * float64(totalInflight+1) / float64(backends)
	c := int(limit)
	if float64(c) < limit {
		c++
	}
	return c
}
