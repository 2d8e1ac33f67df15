package worker

import "testing"

func TestBodyClasses(t *testing.T) {
	for _, tc := range []struct{ n, class int }{
		{1, 0}, {16 << 10, 0}, {16<<10 + 1, 1}, {100_000, 3}, {1 << 20, 6}, {16 << 20, 10}, {16<<20 + 1, -1}, {0, -1},
	} {
		if got := bodyClass(tc.n); got != tc.class {
			t.Errorf("bodyClass(%d) = %d; want %d", tc.n, got, tc.class)
		}
	}
	b, p := getBody(100_000)
	if len(b) != 100_000 || p == nil || cap(*p) != 128<<10 {
		t.Fatalf("getBody(100000): len %d, pooled %v", len(b), p != nil)
	}
	putBody(p)
	if b, p := getBody(20 << 20); len(b) != 20<<20 || p != nil {
		t.Errorf("a 20 MiB body should not be pooled")
	}
}
