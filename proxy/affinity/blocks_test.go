package affinity

import (
	"bytes"
	"strings"
	"testing"
)

func TestBlocksChained(t *testing.T) {
	seed := PrefixSeed("m")
	doc := []byte(strings.Repeat("abcdefgh", 64)) // 512 bytes: 8 blocks of 64
	a := AppendBlocks(nil, seed, nil, doc, 64, 100)
	if len(a) != 8 {
		t.Fatalf("%d blocks, want 8", len(a))
	}
	// Equal bytes in equal blocks hash differently by position: the chain.
	seen := map[uint64]bool{}
	for _, h := range a {
		if seen[h] {
			t.Fatal("two blocks of one prompt share a hash")
		}
		seen[h] = true
	}
	// A longer prompt with the same start shares the start's hashes; a
	// change in block 2 changes every hash from block 2 on.
	longer := AppendBlocks(nil, seed, nil, append(append([]byte{}, doc...), bytes.Repeat([]byte("z"), 130)...), 64, 100)
	if len(longer) != 10 || !equal(longer[:8], a) {
		t.Fatalf("a longer prompt: %d blocks, shares %v", len(longer), equal(longer[:8], a))
	}
	changed := append([]byte{}, doc...)
	changed[150] = 'X'
	c := AppendBlocks(nil, seed, nil, changed, 64, 100)
	if !equal(c[:2], a[:2]) {
		t.Fatal("blocks before the change differ")
	}
	for i := 2; i < 8; i++ {
		if c[i] == a[i] {
			t.Fatalf("block %d the same after a change in block 2", i)
		}
	}
	// Another model, another chain.
	if o := AppendBlocks(nil, PrefixSeed("n"), nil, doc, 64, 100); o[0] == a[0] {
		t.Fatal("two models share a chain")
	}
}

// The head's last partial block counts (it is a whole value), the prompt's
// does not (it changes as the conversation grows); a head moves every
// prompt block's hash.
func TestBlocksHeadAndTail(t *testing.T) {
	seed := PrefixSeed("m")
	head := []byte(strings.Repeat("h", 100)) // 2 blocks: 64 + 36
	prompt := []byte(strings.Repeat("p", 200))
	got := AppendBlocks(nil, seed, head, prompt, 64, 100)
	if len(got) != 2+3 {
		t.Fatalf("%d blocks, want 2 of head and 3 full of prompt", len(got))
	}
	if bare := AppendBlocks(nil, seed, nil, prompt, 64, 100); bare[0] == got[2] {
		t.Fatal("the prompt's blocks hash the same with and without a head")
	}
	if n := len(AppendBlocks(nil, seed, nil, prompt[:63], 64, 100)); n != 0 {
		t.Fatalf("a prompt shorter than a block gave %d blocks", n)
	}
	if n := len(AppendBlocks(nil, seed, head, nil, 0, 100)); n != 0 {
		t.Fatalf("size 0 gave %d blocks", n)
	}
}

// A hostile body costs at most max blocks; with room in dst nothing is
// allocated.
func TestBlocksCap(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 10<<20)
	dst := make([]uint64, 0, 512)
	got := AppendBlocks(dst, 1, big[:1000], big, 256, 512)
	if len(got) != 512 || &got[0] != &dst[:1][0] {
		t.Fatalf("%d blocks; reused dst: %v", len(got), &got[0] == &dst[:1][0])
	}
	if n := len(AppendBlocks(nil, 1, big, nil, 256, 512)); n != 512 {
		t.Fatalf("a 10 MB head gave %d blocks", n)
	}
	if a := testing.AllocsPerRun(10, func() { AppendBlocks(dst[:0], 1, big[:1000], big, 256, 512) }); a != 0 {
		t.Fatalf("%v allocations", a)
	}
}

func equal(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func BenchmarkAppendBlocks100KB(b *testing.B) {
	body := bytes.Repeat([]byte("lorem ipsum "), 100<<10/12)
	dst := make([]uint64, 0, 512)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		AppendBlocks(dst[:0], 1, nil, body, 256, 512)
	}
}

// Whatever the bytes: at most max blocks; a prompt cut short shares its
// full blocks' hashes with the whole (the prefix the index matches on);
// a change in the head's first byte changes every hash.
func FuzzAppendBlocks(f *testing.F) {
	f.Add([]byte("system"), []byte(strings.Repeat("p", 300)), uint8(16), uint8(8), uint16(50))
	f.Add([]byte{}, []byte("x"), uint8(1), uint8(1), uint16(0))
	f.Fuzz(func(t *testing.T, head, prompt []byte, size, max uint8, cut uint16) {
		s, m := int(size)+1, int(max)
		all := AppendBlocks(nil, 7, head, prompt, s, m)
		if len(all) > m {
			t.Fatalf("%d blocks past the cap %d", len(all), m)
		}
		want := (len(head)+s-1)/s + len(prompt)/s
		if len(all) != min(want, m) {
			t.Fatalf("%d blocks of head %d and prompt %d at %d, want %d", len(all), len(head), len(prompt), s, min(want, m))
		}
		short := AppendBlocks(nil, 7, head, prompt[:min(int(cut), len(prompt))], s, m)
		if len(short) > len(all) || !equal(short, all[:len(short)]) {
			t.Fatalf("a prompt cut at %d is not a prefix of the whole: %d of %d", cut, len(short), len(all))
		}
		if len(head) > 0 {
			other := append([]byte{}, head...)
			other[0] ^= 1
			for i, h := range AppendBlocks(nil, 7, other, prompt, s, m) {
				if h == all[i] {
					t.Fatalf("block %d the same after the head's first byte changed", i)
				}
			}
		}
	})
}

// A conversation's entry is its key's: the same for every turn (the key is),
// another for another key — two cache groups' seeds make two keys of one
// conversation — and none of the chained block hashes.
func TestConversationEntry(t *testing.T) {
	key := KeyOf(nil, []byte(`{"role":"system","content":"S"},{"role":"user","content":"U"}`))
	groupA, groupB := uint64(0x1234), uint64(0x5678)
	if ConversationEntry(key^groupA) != ConversationEntry(key^groupA) {
		t.Fatal("not a function of the key")
	}
	if ConversationEntry(key^groupA) == ConversationEntry(key^groupB) {
		t.Fatal("two cache groups share a conversation's entry")
	}
	seen := map[uint64]bool{}
	for i := uint64(0); i < 10000; i++ {
		seen[ConversationEntry(i)] = true
	}
	if len(seen) != 10000 {
		t.Fatalf("%d entries for 10000 keys", len(seen))
	}
	blocks := AppendBlocks(nil, key^groupA, nil, []byte(strings.Repeat("x", 4096)), 256, 16)
	for _, b := range blocks {
		if b == ConversationEntry(key^groupA) {
			t.Fatal("an entry equal to a block's hash")
		}
	}
}
