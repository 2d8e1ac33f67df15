package fakevllm

import (
	"encoding/json"
	"strings"
	"testing"
)

// contentJSON builds the same JSON string as marshalling the whole text.
func TestContentJSONMatches(t *testing.T) {
	for _, words := range [][]string{{"tok"}, {"a", "<b>", "c\"d"}, {"x", "y"}} {
		s := &Server{opts: Options{Words: words}}
		for n := 0; n < 20; n++ {
			var text strings.Builder
			for i := 0; i < n; i++ {
				text.WriteString(s.word(i))
			}
			want, _ := json.Marshal(text.String())
			if got := s.contentJSON(n); string(got) != string(want) {
				t.Fatalf("%v %d: %s want %s", words, n, got, want)
			}
		}
	}
}
