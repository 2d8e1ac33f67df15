package proxy

import (
	"crypto/sha256"
	"encoding/base64"

	"github.com/zeebo/xxh3"
)

// Cache groups (keys[].cache_group; docs/internals.md, "Tenants and the prefix
// cache"): a backend's prefix cache answers faster, and reports
// cached_tokens, for a prompt it has seen — from any client. Without a
// salt, a tenant that guesses another's system prompt learns it is right
// from the cache hit, and the gateway's prefix index, which sends the
// guess to the backend that holds the prompt, makes that certain (issue
// 30, item 7). So each request goes to vLLM with its key's group's
// cache_salt (vLLM hashes it into the first block, so no block of one
// group matches another's), and the index's block hashes and the affinity
// key are seeded with the same salt: prompts are only ever matched within
// a group.

// groupSalt is the cache_salt of a cache group: the base64url of
// SHA-256("sluice cache group" NUL group), 43 characters — the 256 bits
// vLLM advises. It is the same on every replica and across restarts (a
// group's cache outlives the gateway's process), and needs no secret: a
// client never chooses the salt that goes upstream (see requestSalt).
func groupSalt(group string) string {
	sum := sha256.Sum256([]byte("sluice cache group\x00" + group))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// requestSalt is the cache_salt a request is sent: its group's, or, when
// the client sent one of its own (to split its group's cache further, e.g.
// per end user), the two mixed — a client can narrow its sharing, never
// reach another group's.
func requestSalt(group, client string) string {
	if client == "" {
		return group
	}
	sum := sha256.Sum256([]byte(group + "\x00" + client))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// saltSeed is what a salt mixes into the prefix index's block hashes and
// the affinity key.
func saltSeed(salt string) uint64 { return xxh3.HashString(salt) }
