package proxy

import "testing"

func TestBodyClasses(t *testing.T) {
	for _, tc := range []struct{ n, class, size int }{
		{1, 0, 16 << 10}, {16 << 10, 0, 16 << 10},
		{16<<10 + 1, 1, 20 << 10}, {20 << 10, 1, 20 << 10}, {20<<10 + 1, 2, 24 << 10}, {32 << 10, 4, 32 << 10},
		{32<<10 + 1, 5, 40 << 10}, {100_000, 11, 112 << 10}, {1 << 20, 24, 1 << 20},
		{16 << 20, 40, 16 << 20}, {16<<20 + 1, -1, 0}, {0, -1, 0},
	} {
		if c, size := bodyClass(tc.n); c != tc.class || size != tc.size {
			t.Errorf("bodyClass(%d) = %d, %d; want %d, %d", tc.n, c, size, tc.class, tc.size)
		}
	}
	// Every size fits its class, wastes at most a quarter, and a class's size
	// maps back to the class (putBody relies on it).
	for n := 1; n <= 16<<20; n += 997 {
		c, size := bodyClass(n)
		if size < n || (n > 16<<10 && size-n > n/4) {
			t.Fatalf("bodyClass(%d): size %d", n, size)
		}
		if c2, s2 := bodyClass(size); c2 != c || s2 != size {
			t.Fatalf("class %d size %d maps back to %d, %d", c, size, c2, s2)
		}
	}
	b, p := getBody(100_000)
	if len(b) != 100_000 || p == nil || cap(*p) != 112<<10 {
		t.Fatalf("getBody(100000): len %d, pooled %v", len(b), p != nil)
	}
	putBody(p)
	if b, p := getBody(20 << 20); len(b) != 20<<20 || p != nil {
		t.Errorf("a 20 MiB body should not be pooled")
	}
}
