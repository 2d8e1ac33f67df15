package sse

import (
	"bytes"
	"testing"
)

// FuzzLastIndexUsage: lastIndexUsage is bytes.LastIndex for "usage".
func FuzzLastIndexUsage(f *testing.F) {
	for _, s := range []string{`"usage"`, `x"usage":{}`, `"usage""usage"`, `usage"`, `"usag`, `e`, ``, `"usage"e`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := lastIndexUsage(b), bytes.LastIndex(b, []byte(`"usage"`)); got != want {
			t.Fatalf("%q: %d, want %d", b, got, want)
		}
	})
}
