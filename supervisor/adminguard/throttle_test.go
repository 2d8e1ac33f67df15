package adminguard

import (
	"fmt"
	"net/netip"
	"testing"
	"time"
)

// A fake clock for a Throttle.
func fakeClock(t *Throttle) *time.Time {
	now := time.Unix(1_000_000, 0)
	t.now = func() time.Time { return now }
	return &now
}

// Ten failures a minute: the eleventh try is refused for one failure's
// share (6 s), then one more failure is allowed, and so on; another
// address is not affected.
func TestThrottleTenPerMinute(t *testing.T) {
	th := NewThrottle(10, time.Minute, 1024)
	now := fakeClock(th)
	const a, b = "192.0.2.1:4000", "192.0.2.2:4000"
	for i := 0; i < 10; i++ {
		if wait, blocked := th.Blocked(a); blocked {
			t.Fatalf("blocked after %d failures (wait %v)", i, wait)
		}
		th.Fail(a)
	}
	wait, blocked := th.Blocked("192.0.2.1:5000") // another port: the same address
	if !blocked || wait != 6*time.Second {
		t.Fatalf("after 10 failures: blocked %v, wait %v; want blocked for 6s", blocked, wait)
	}
	if _, blocked := th.Blocked(b); blocked {
		t.Fatal("another address is blocked")
	}
	*now = now.Add(5 * time.Second)
	if wait, blocked := th.Blocked(a); !blocked || wait != time.Second {
		t.Fatalf("5s later: blocked %v, wait %v; want 1s more", blocked, wait)
	}
	*now = now.Add(time.Second)
	if _, blocked := th.Blocked(a); blocked {
		t.Fatal("still blocked after one failure's share")
	}
	th.Fail(a)
	if wait, blocked := th.Blocked(a); !blocked || wait != 6*time.Second {
		t.Fatalf("one more failure: blocked %v, wait %v", blocked, wait)
	}
	*now = now.Add(time.Minute + 6*time.Second)
	for i := 0; i < 10; i++ {
		if _, blocked := th.Blocked(a); blocked {
			t.Fatalf("a minute later, blocked after %d failures", i)
		}
		th.Fail(a)
	}
}

// IPv6 addresses count per /64; IPv4-mapped ones as IPv4; zones aside.
func TestThrottleKey(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.1:80":                  "192.0.2.1",
		"192.0.2.1":                     "192.0.2.1",
		"[::ffff:192.0.2.1]:80":         "192.0.2.1",
		"[2001:db8:1:2:aaaa::1]:443":    "2001:db8:1:2::",
		"[2001:db8:1:2:ffff:ffff::9]:1": "2001:db8:1:2::",
		"[fe80::1%eth0]:9090":           "fe80::",
		"2001:db8:1:3::1":               "2001:db8:1:3::",
		"@":                             "invalid IP",
		"":                              "invalid IP",
	} {
		if got := Key(in).String(); got != want {
			t.Errorf("Key(%q) = %s, want %s", in, got, want)
		}
	}
	th := NewThrottle(10, time.Minute, 1024)
	fakeClock(th)
	for i := 0; i < 10; i++ {
		th.Fail(fmt.Sprintf("[2001:db8:0:7::%x]:1234", i+1)) // ten hosts of one /64
	}
	if _, blocked := th.Blocked("[2001:db8:0:7:ffff::1]:1"); !blocked {
		t.Error("a /64 that failed ten times is not blocked")
	}
	if _, blocked := th.Blocked("[2001:db8:0:8::1]:1"); blocked {
		t.Error("the next /64 is blocked")
	}
}

// At most max addresses are tracked; a new one evicts the one that failed
// least recently, not one that failed since.
func TestThrottleBounded(t *testing.T) {
	th := NewThrottle(2, time.Minute, 3)
	fakeClock(th)
	addr := func(i int) string { return netip.AddrFrom4([4]byte{198, 51, 100, byte(i)}).String() }
	for i := 1; i <= 3; i++ {
		th.Fail(addr(i))
		th.Fail(addr(i))
	}
	th.Fail(addr(1)) // 1 failed last: 2 is now the least recent
	th.Fail(addr(4))
	if n := th.Tracked(); n != 3 {
		t.Fatalf("tracked %d, want 3", n)
	}
	for i, want := range map[int]bool{1: true, 2: false, 3: true} {
		if _, blocked := th.Blocked(addr(i)); blocked != want {
			t.Errorf("%s blocked %v, want %v", addr(i), blocked, want)
		}
	}
}
