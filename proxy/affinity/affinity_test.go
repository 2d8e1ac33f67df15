package affinity

import (
	"fmt"
	"testing"
)

func seeds(n int) []uint64 {
	s := make([]uint64, n)
	for i := range s {
		s[i] = Seed(fmt.Sprintf("http://10.0.0.%d:8000", i+1))
	}
	return s
}

func TestRankIsAPermutationAndStable(t *testing.T) {
	s := seeds(5)
	var o1, o2 [8]int
	for k := uint64(0); k < 1000; k++ {
		a, b := Rank(k, s, o1[:]), Rank(k, s, o2[:])
		seen := map[int]bool{}
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("key %d ranked differently twice: %v %v", k, a, b)
			}
			seen[a[i]] = true
		}
		if len(seen) != 5 {
			t.Fatalf("not a permutation: %v", a)
		}
	}
}

// Keys spread evenly, and removing a backend moves only the keys it had.
func TestSpreadAndMinimalMovement(t *testing.T) {
	all := seeds(4)
	var o [8]int
	const keys = 40000
	count := make([]int, 4)
	first := make([]int, keys)
	for k := 0; k < keys; k++ {
		first[k] = Rank(Key([]byte(fmt.Sprint("user-", k))), all, o[:])[0]
		count[first[k]]++
	}
	for i, c := range count {
		if c < keys/4*9/10 || c > keys/4*11/10 {
			t.Errorf("backend %d got %d of %d keys", i, c, keys)
		}
	}
	without2 := []uint64{all[0], all[1], all[3]}
	index := []int{0, 1, 3}
	for k := 0; k < keys; k++ {
		now := index[Rank(Key([]byte(fmt.Sprint("user-", k))), without2, o[:])[0]]
		if first[k] != 2 && now != first[k] {
			t.Fatalf("key %d moved from %d to %d though its backend stayed", k, first[k], now)
		}
		if first[k] == 2 {
			// Its new home is its second choice before.
			if want := Rank(Key([]byte(fmt.Sprint("user-", k))), all, o[:])[1]; now != want {
				t.Fatalf("key %d went to %d, its second choice was %d", k, now, want)
			}
		}
	}
}

func TestLoadCap(t *testing.T) {
	for _, tc := range []struct {
		cap      float64
		total, n int
		want     int
	}{{1.25, 0, 4, 1}, {1.25, 7, 4, 3}, {1.25, 15, 4, 5}, {1, 3, 4, 1}, {2, 9, 2, 10}} {
		if got := LoadCap(tc.cap, tc.total, tc.n); got != tc.want {
			t.Errorf("LoadCap(%v, %d, %d) = %d, want %d", tc.cap, tc.total, tc.n, got, tc.want)
		}
	}
}

func BenchmarkPick16(b *testing.B) {
	s := seeds(16)
	key := Key([]byte("a first message of some length, as an affinity key"))
	var o [16]int
	b.ReportAllocs()
	for b.Loop() {
		Rank(key, s, o[:])
	}
}

// KeyOf is the XXH3 of its two pieces joined, at every length (XXH3's
// short, medium and streamed-block paths), without allocating.
func TestKeyOf(t *testing.T) {
	buf := make([]byte, 5000)
	for i := range buf {
		buf[i] = byte(i*7 + i>>8)
	}
	for _, n := range []int{0, 1, 3, 16, 17, 128, 129, 240, 241, 1024, 1100, 4096, 5000} {
		for _, cut := range []int{0, 1, n / 2, n} {
			if cut > n {
				continue
			}
			if got, want := KeyOf(buf[:cut], buf[cut:n]), Key(buf[:n]); got != want {
				t.Fatalf("KeyOf(%d+%d bytes) = %x, Key = %x", cut, n-cut, got, want)
			}
		}
	}
	if a := testing.AllocsPerRun(100, func() { KeyOf(buf[:100], buf[100:3000]) }); a != 0 {
		t.Fatalf("KeyOf allocates %v times", a)
	}
}
