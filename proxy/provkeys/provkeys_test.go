package provkeys

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/shm"
)

var names = []string{"KEY_A", "KEY_B", "KEY_C"}

// twoWorkers is a region at generation 1 with the cells of three keys, and
// a Set on them for each of two workers.
func twoWorkers(t *testing.T) (*shm.Region, *Set, *Set, *bytes.Buffer) {
	t.Helper()
	r, err := shm.Create(8, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	r.SetGeneration(1)
	var cells []*shm.Cell
	for _, n := range names {
		c, err := r.Alloc(shm.BackendKeyCell("m", "https://api.example:443", n))
		if err != nil {
			t.Fatal(err)
		}
		cells = append(cells, c)
	}
	var logs bytes.Buffer
	values := []string{"sk-a", "sk-b", "sk-c"}
	log := slog.New(slog.NewTextHandler(&logs, nil))
	return r, New(r, names, values, cells, log), New(r, names, values, cells, log), &logs
}

// picks is the names of the next n keys s picks at now ("-" for none).
func picks(s *Set, now int64, n int) string {
	var out []string
	for range n {
		if k, ok := s.Pick(now); ok {
			out = append(out, strings.TrimPrefix(k.Name(), "KEY_"))
		} else {
			out = append(out, "-")
		}
	}
	return strings.Join(out, " ")
}

func key(s *Set, name string) *Key {
	for i := range s.keys {
		if s.keys[i].name == name {
			return &s.keys[i]
		}
	}
	panic(name)
}

func scalar(k *Key, i int) int64 { return *k.cell.Scalar(i) }

func TestRoundRobinAcrossWorkers(t *testing.T) {
	_, w1, w2, _ := twoWorkers(t)
	var got []string
	for i := range 6 {
		w := w1
		if i%2 == 1 {
			w = w2
		}
		got = append(got, picks(w, 0, 1))
	}
	if s := strings.Join(got, " "); s != "A B C A B C" {
		t.Fatalf("two workers picked %s, want A B C A B C (one rotation, shared)", s)
	}
	if k, _ := w1.Pick(0); k.Header() != "Bearer sk-a" || k.Name() != "KEY_A" {
		t.Fatalf("key %s sends %q", k.Name(), k.Header())
	}
	for _, n := range names {
		if got := scalar(key(w1, n), shm.BackendKeyRequestsScalar); got != 2+boolInt(n == "KEY_A") {
			t.Errorf("%s counted %d requests", n, got)
		}
	}
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// 401 and 403 take a key out for every worker, and the others share its
// turns evenly; the next generation (a reload) brings it back.
func TestRejectedOutUntilReload(t *testing.T) {
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			r, w1, w2, logs := twoWorkers(t)
			if !w1.Report(key(w1, "KEY_B"), status, "", 0) {
				t.Fatal("Report says not to retry with two keys left")
			}
			if got := picks(w2, 0, 4); got != "A C A C" {
				t.Fatalf("with B rejected the other worker picked %s, want A C A C", got)
			}
			w2.Report(key(w2, "KEY_B"), status, "", 0) // a request in flight before: one log line all the same
			if n := strings.Count(logs.String(), "out of rotation"); n != 1 || !strings.Contains(logs.String(), "key=KEY_B") {
				t.Fatalf("logged %d times:\n%s", n, logs)
			}
			if strings.Contains(logs.String(), "sk-b") {
				t.Fatalf("the log shows the key's value:\n%s", logs)
			}
			if got := scalar(key(w1, "KEY_B"), shm.BackendKeyRejectedScalar); got != 2 {
				t.Fatalf("rejected counter %d, want 2", got)
			}
			r.SetGeneration(2)
			if got := picks(w1, 0, 3); got != "A B C" {
				t.Fatalf("after a reload picked %s, want A B C", got)
			}
			// Rejected again under generation 2: out until generation 3.
			w1.Report(key(w1, "KEY_B"), status, "", 0)
			if got := picks(w1, 0, 2); got != "A C" {
				t.Fatalf("picked %s", got)
			}
		})
	}
}

// 429 rests a key for every worker until its Retry-After has passed.
func TestRateLimitedRests(t *testing.T) {
	_, w1, w2, _ := twoWorkers(t)
	sec := int64(time.Second)
	if !w1.Report(key(w1, "KEY_A"), http.StatusTooManyRequests, "10", 5*sec) {
		t.Fatal("Report says not to retry with two keys left")
	}
	if got := picks(w2, 5*sec, 4); got != "B C B C" {
		t.Fatalf("while A rests picked %s", got)
	}
	if got := picks(w2, 15*sec-1, 2); got != "B C" {
		t.Fatalf("a nanosecond before the rest ends picked %s", got)
	}
	if got := picks(w2, 15*sec, 3); got != "A B C" {
		t.Fatalf("once the rest ended picked %s", got)
	}
	// A shorter Retry-After does not cut a longer rest short.
	w1.Report(key(w1, "KEY_A"), http.StatusTooManyRequests, "100", 20*sec)
	w2.Report(key(w2, "KEY_A"), http.StatusTooManyRequests, "1", 20*sec)
	if got := scalar(key(w1, "KEY_A"), shm.BackendKeyRestScalar); got != 120*sec {
		t.Fatalf("rest until %v, want 120s", time.Duration(got))
	}
	if got := scalar(key(w1, "KEY_A"), shm.BackendKeyRateLimitedScalar); got != 3 {
		t.Fatalf("rate-limited counter %d, want 3", got)
	}
}

func TestRetryAfter(t *testing.T) {
	wall := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		h    string
		want time.Duration
	}{
		{"", DefaultRest},
		{"30", 30 * time.Second},
		{" 7 ", 7 * time.Second},
		{"0", MinRest},
		{"-5", DefaultRest},
		{"1.5", DefaultRest},
		{"soon", DefaultRest},
		{"86400", MaxRest},
		{"99999999999999999999", DefaultRest}, // does not parse as int64: not a number sluice can use
		{"9223372036854775807", MaxRest},
		{wall.Add(2 * time.Minute).Format(http.TimeFormat), 2 * time.Minute},
		{wall.Add(-time.Minute).Format(http.TimeFormat), MinRest},
		{wall.Add(48 * time.Hour).Format(http.TimeFormat), MaxRest},
		{"Sun, 01 Mar 2026 12:01:30 GMT", 90 * time.Second},
	} {
		if got := restFor(tc.h, wall); got != tc.want {
			t.Errorf("Retry-After %q rests %v, want %v", tc.h, got, tc.want)
		}
	}
	// Through Report, with an HTTP-date read against the wall clock.
	_, w, _, _ := twoWorkers(t)
	w.wall = func() time.Time { return wall }
	w.Report(key(w, "KEY_C"), http.StatusTooManyRequests, wall.Add(time.Minute).Format(http.TimeFormat), 1000)
	if got := scalar(key(w, "KEY_C"), shm.BackendKeyRestScalar); got != 1000+int64(time.Minute) {
		t.Fatalf("rest until %d", got)
	}
}

// With every key out or resting the backend is unusable: Pick says so and
// Report says not to retry; a key back from its rest makes it usable again.
func TestAllOutOrResting(t *testing.T) {
	r, w1, w2, _ := twoWorkers(t)
	now := int64(time.Hour)
	w1.Report(key(w1, "KEY_A"), http.StatusUnauthorized, "", now)
	w2.Report(key(w2, "KEY_B"), http.StatusForbidden, "", now)
	if retry := w1.Report(key(w1, "KEY_C"), http.StatusTooManyRequests, "", now); retry {
		t.Fatal("Report says to retry with every key out or resting")
	}
	if k, ok := w2.Pick(now); ok || w2.Usable(now) {
		t.Fatalf("picked %v (usable %v) with every key out or resting", k, w2.Usable(now))
	}
	if !w2.Usable(now + int64(DefaultRest)) {
		t.Fatal("not usable once C's rest is over")
	}
	if got := picks(w2, now+int64(DefaultRest), 2); got != "C C" {
		t.Fatalf("after C's rest picked %s", got)
	}
	r.SetGeneration(2)
	if got := picks(w1, now+int64(DefaultRest), 3); got != "A B C" {
		t.Fatalf("after a reload picked %s", got)
	}
	if w1.Report(key(w1, "KEY_A"), http.StatusOK, "", now) || w1.Report(key(w1, "KEY_A"), http.StatusInternalServerError, "", now) {
		t.Fatal("Report says to retry with another key after a 200 or a 500")
	}
	if _, ok := New(r, nil, nil, nil, nil).Pick(now); ok {
		t.Fatal("a Set without keys picked one")
	}
}

// Workers picking at once each get a key, and the shared cursor spreads
// them evenly.
func TestConcurrentPicksEven(t *testing.T) {
	_, w1, w2, _ := twoWorkers(t)
	var wg sync.WaitGroup
	for _, w := range []*Set{w1, w2, w1, w2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 300 {
				if _, ok := w.Pick(0); !ok {
					t.Error("no key")
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, n := range names {
		if got := scalar(key(w1, n), shm.BackendKeyRequestsScalar); got != 400 {
			t.Errorf("%s got %d of 1200 picks, want 400", n, got)
		}
	}
}

// A health check sends a usable key, counted for none; with every key
// out, still the first (the probe must reach an authenticated path).
func TestProbeHeader(t *testing.T) {
	r, w1, _, _ := twoWorkers(t)
	now := r.Now()
	if got := w1.ProbeHeader(); got != "Bearer sk-a" {
		t.Fatalf("probe header %q, want A's", got)
	}
	w1.Report(key(w1, "KEY_A"), http.StatusUnauthorized, "", now)
	if got := w1.ProbeHeader(); got != "Bearer sk-b" {
		t.Fatalf("probe header %q with A out, want B's", got)
	}
	w1.Report(key(w1, "KEY_B"), http.StatusUnauthorized, "", now)
	w1.Report(key(w1, "KEY_C"), http.StatusForbidden, "", now)
	if got := w1.ProbeHeader(); got != "Bearer sk-a" {
		t.Fatalf("probe header %q with every key out, want the first", got)
	}
	for _, n := range names {
		if c := scalar(key(w1, n), shm.BackendKeyRequestsScalar); c != 0 {
			t.Errorf("%s counted %d requests for probes", n, c)
		}
	}
	if New(r, nil, nil, nil, nil).ProbeHeader() != "" {
		t.Error("a Set without keys gave a probe header")
	}
}

// RestLeft says when the first resting key in rotation may be used again;
// keys out until a reload do not count.
func TestRestLeft(t *testing.T) {
	_, w1, _, _ := twoWorkers(t)
	now := int64(time.Hour)
	if d, ok := w1.RestLeft(now); !ok || d != 0 {
		t.Fatalf("no key resting: RestLeft %v, %v; want 0, true", d, ok)
	}
	w1.Report(key(w1, "KEY_A"), http.StatusUnauthorized, "", now)
	w1.Report(key(w1, "KEY_B"), http.StatusTooManyRequests, "30", now)
	w1.Report(key(w1, "KEY_C"), http.StatusTooManyRequests, "10", now)
	if d, ok := w1.RestLeft(now + int64(4*time.Second)); !ok || d != 6*time.Second {
		t.Fatalf("B and C resting: RestLeft %v, %v; want 6s", d, ok)
	}
	w1.Report(key(w1, "KEY_B"), http.StatusForbidden, "", now)
	w1.Report(key(w1, "KEY_C"), http.StatusUnauthorized, "", now)
	if d, ok := w1.RestLeft(now); ok {
		t.Fatalf("every key out until a reload: RestLeft %v, true", d)
	}
}
