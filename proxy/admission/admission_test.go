package admission

import (
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/shm"
)

// clock is a Clock the test moves by hand.
type clock struct{ now int64 }

func (c *clock) Now() int64 { return c.now }

// headers records the headers Admit and ReserveTokens set.
type headers map[string]string

func (h headers) SetCanonical(k, v []byte) { h[string(k)] = string(v) }

// keyCell is a key's cell in a private region of cols workers' columns.
func keyCell(t *testing.T, cols int) *shm.Cell {
	t.Helper()
	r, err := shm.Create(8, cols)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	c, err := r.Alloc("key:k")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestShare(t *testing.T) {
	l := Limits{RequestsPerMinute: 10, TokensPerMinute: 0, MaxConcurrent: 3}
	for n, want := range map[int64]Limits{
		0: l, 1: l, 4: {2, 0, 1}, 100: {1, 0, 1}, // never below 1, never a limit where none was
	} {
		if got := l.Share(n); got != want {
			t.Errorf("Share(%d) = %+v, want %+v", n, got, want)
		}
	}
	if !(Limits{}).None() || l.None() {
		t.Error("None")
	}
}

// max_concurrent is exact across workers: a place taken in one column
// is missing in every other, and Release gives it back once.
func TestConcurrencyAcrossWorkers(t *testing.T) {
	cell := keyCell(t, 2)
	k := Key{Name: "k", Cell: cell, Limits: Limits{MaxConcurrent: 1}}
	c := &clock{}
	a, no := Admit(headers{}, k, 0, c)
	if no != nil {
		t.Fatal(no.Message())
	}
	if _, no := Admit(headers{}, k, 1, c); no == nil || no.Kind != "concurrency" || no.RetryAfter() != "1" {
		t.Fatalf("second place in another worker: %+v", no)
	}
	a.Release(0, false)
	a.Release(0, false) // once only
	if cell.Total() != 0 {
		t.Fatalf("places held after release: %d", cell.Total())
	}
	if _, no := Admit(headers{}, k, 1, c); no != nil {
		t.Fatalf("after release: %s", no.Message())
	}
}

// Requests per minute: the burst fits, the next waits for its share of
// the minute, and the headers count down and say when it resets.
func TestRequestsPerMinute(t *testing.T) {
	cell := keyCell(t, 1)
	k := Key{Name: "k", Cell: cell, Limits: Limits{RequestsPerMinute: 2}}
	c := &clock{now: int64(time.Hour)}
	var remaining []string
	for range 2 {
		h := headers{}
		if _, no := Admit(h, k, 0, c); no != nil {
			t.Fatal(no.Message())
		}
		remaining = append(remaining, h["X-Ratelimit-Remaining-Requests"])
	}
	if remaining[0] != "1" || remaining[1] != "0" {
		t.Errorf("remaining: %v", remaining)
	}
	h := headers{}
	_, no := Admit(h, k, 0, c)
	if no == nil || no.Kind != "requests" || no.Wait != int64(30*time.Second) || no.RetryAfter() != "30" {
		t.Fatalf("third in the minute: %+v", no)
	}
	if h["X-Ratelimit-Limit-Requests"] != "2" || h["X-Ratelimit-Reset-Requests"] != "1m0s" {
		t.Errorf("headers of the refusal: %v", h)
	}
	c.now += int64(30 * time.Second)
	if _, no := Admit(headers{}, k, 0, c); no != nil {
		t.Fatalf("after 30 s: %s", no.Message())
	}
}

// A refusal by the token limit gives back the request's share of the
// requests limit and its place: it counts against neither.
func TestTokenRefusalGivesBack(t *testing.T) {
	cell := keyCell(t, 1)
	k := Key{Name: "k", Cell: cell, Limits: Limits{RequestsPerMinute: 1, TokensPerMinute: 100, MaxConcurrent: 5}}
	c := &clock{now: int64(time.Hour)}
	a, no := Admit(headers{}, k, 0, c)
	if no != nil {
		t.Fatal(no.Message())
	}
	no = a.ReserveTokens(headers{}, 101, c)
	if no == nil || !no.TooLarge || no.RetryAfter() != "" || no.Want != 101 || no.Limit != 100 {
		t.Fatalf("101 tokens against 100: %+v", no)
	}
	a.Release(0, false)
	if cell.Total() != 0 {
		t.Fatalf("places: %d", cell.Total())
	}
	// The one request of the minute is still there to take.
	a, no = Admit(headers{}, k, 0, c)
	if no != nil {
		t.Fatalf("the refused request kept its requests share: %s", no.Message())
	}
	if no := a.ReserveTokens(headers{}, 100, c); no != nil {
		t.Fatal(no.Message())
	}
}

// Tokens are reserved until the answer reports what was used; settling
// refunds the rest, and the limit refuses with the wait until it fits.
func TestTokensReserveAndSettle(t *testing.T) {
	cell := keyCell(t, 1)
	k := Key{Name: "k", Cell: cell, Limits: Limits{TokensPerMinute: 100}}
	c := &clock{now: int64(time.Hour)}
	a, _ := Admit(headers{}, k, 0, c)
	h := headers{}
	if no := a.ReserveTokens(h, 60, c); no != nil {
		t.Fatal(no.Message())
	}
	if h["X-Ratelimit-Remaining-Tokens"] != "40" {
		t.Errorf("remaining tokens: %v", h)
	}
	b, _ := Admit(headers{}, k, 0, c)
	no := b.ReserveTokens(headers{}, 60, c)
	if no == nil || no.TooLarge || no.Wait != int64(12*time.Second) {
		t.Fatalf("60 more against 40 left: %+v", no)
	}
	a.Release(10, true) // 50 of the 60 come back
	if no := b.ReserveTokens(headers{}, 60, c); no != nil {
		t.Fatalf("after settling 60 to 10: %s", no.Message())
	}
	// Not reported: the reservation stands.
	b.Release(0, false)
	d, _ := Admit(headers{}, k, 0, c)
	if no := d.ReserveTokens(headers{}, 40, c); no == nil {
		t.Fatal("an unreported reservation was refunded")
	}
}

// A backend's usage figures settle within bounds: an absurd count pushes
// the limiter at most a day ahead, a negative one refunds at most the
// reservation; neither wraps the limiter's time.
func TestSettleBounded(t *testing.T) {
	cell := keyCell(t, 1)
	k := Key{Name: "k", Cell: cell, Limits: Limits{TokensPerMinute: 1000}}
	c := &clock{now: int64(time.Hour)}
	for _, used := range []int64{-math.MaxInt64, math.MinInt64, math.MaxInt64} {
		a, _ := Admit(headers{}, k, 0, c)
		if no := a.ReserveTokens(headers{}, 10, c); no != nil {
			c.now += MaxDebt + Minute
			if no = a.ReserveTokens(headers{}, 10, c); no != nil {
				t.Fatal(no.Message())
			}
		}
		before := atomic.LoadInt64(cell.Scalar(shm.TokenTAT))
		a.Release(used, true)
		if d := atomic.LoadInt64(cell.Scalar(shm.TokenTAT)) - before; d > MaxDebt || d < -10*(Minute/1000) {
			t.Errorf("usage %d moved the limiter by %v", used, time.Duration(d))
		}
	}
}

func TestRetryAfterSecs(t *testing.T) {
	if RetryAfterSecs(1) != "1" || RetryAfterSecs(int64(1500*time.Millisecond)) != "2" || RetryAfterSecs(-5) != "1" {
		t.Error("RetryAfterSecs")
	}
}

func TestWaitText(t *testing.T) {
	for ns, want := range map[int64]string{
		-5: "0s", 0: "0s", int64(20 * time.Millisecond): "20ms", int64(1500 * time.Millisecond): "1.5s",
		int64(6 * time.Minute): "6m0s", int64(999_600 * time.Microsecond): "1s",
	} {
		if got := WaitText(ns); got != want {
			t.Errorf("WaitText(%v) = %q, want %q", time.Duration(ns), got, want)
		}
	}
}

// FuzzAppendWait: appendWait writes what time.Duration.String writes of
// the rounded wait, for any wait, after any prefix.
func FuzzAppendWait(f *testing.F) {
	for _, ns := range []int64{-1, 0, 1, 499_999, 500_000, 20e6, 999_499_999, 999_500_000, 1e9, 1_005e6, 1_234_567_891,
		int64(time.Minute), int64(time.Hour) + 10e6, math.MaxInt64, math.MaxInt64 - 4e6} {
		f.Add(ns)
	}
	f.Fuzz(func(t *testing.T, ns int64) {
		want := "0s"
		if d := time.Duration(ns); d > 0 && d < time.Second {
			want = d.Round(time.Millisecond).String()
		} else if d >= time.Second {
			want = d.Round(10 * time.Millisecond).String()
		}
		if got := string(appendWait([]byte("x"), ns)); got != "x"+want {
			t.Fatalf("appendWait(%d) = %q, want %q", ns, got[1:], want)
		}
	})
}
