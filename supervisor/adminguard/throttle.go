package adminguard

import (
	"container/list"
	"net/netip"
	"sync"
	"time"
)

// Throttle limits failed logins per remote address: limit failures per
// window, as GCRA (one time per address: the theoretical arrival time of
// its next failure), so an address over its share may try again one
// failure's share (window/limit) later, and at limit per window for good.
// IPv6 addresses are grouped by /64, the block one host usually holds.
// At most max addresses are tracked; a new one evicts the one that failed
// least recently.
type Throttle struct {
	interval  time.Duration // window/limit: what one failure costs
	tolerance time.Duration // window - interval: the burst
	max       int
	now       func() time.Time

	mu     sync.Mutex
	byAddr map[netip.Addr]*list.Element // of *failures
	order  list.List                    // least recently failed first
}

type failures struct {
	key netip.Addr
	tat time.Time // when the address is back to no failure
}

// NewThrottle returns a Throttle of limit failures per window for each of
// at most max addresses.
func NewThrottle(limit int, window time.Duration, max int) *Throttle {
	interval := window / time.Duration(max1(limit))
	return &Throttle{interval: interval, tolerance: window - interval, max: max1(max), now: time.Now,
		byAddr: map[netip.Addr]*list.Element{}}
}

func max1(n int) int { return max(n, 1) }

// Blocked reports whether remote (host:port, as http.Request.RemoteAddr,
// or an address) has failed more than its share, and how long it must
// wait before its next try.
func (t *Throttle) Blocked(remote string) (retryAfter time.Duration, blocked bool) {
	key := Key(remote)
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	el := t.byAddr[key]
	if el == nil {
		return 0, false
	}
	wait := el.Value.(*failures).tat.Sub(now) - t.tolerance
	return wait, wait > 0
}

// Fail records a failed login from remote.
func (t *Throttle) Fail(remote string) {
	key := Key(remote)
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if el := t.byAddr[key]; el != nil {
		f := el.Value.(*failures)
		f.tat = later(now, f.tat).Add(t.interval)
		t.order.MoveToBack(el)
		return
	}
	if len(t.byAddr) >= t.max {
		oldest := t.order.Front()
		delete(t.byAddr, oldest.Value.(*failures).key)
		t.order.Remove(oldest)
	}
	t.byAddr[key] = t.order.PushBack(&failures{key: key, tat: now.Add(t.interval)})
}

// Tracked is how many addresses have failures on record.
func (t *Throttle) Tracked() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.byAddr)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Key is what failures of remote are counted under: its address (an
// IPv4-mapped IPv6 address as IPv4, no zone), an IPv6 address's /64, and
// the zero Addr for anything that is not an address.
func Key(remote string) netip.Addr {
	var a netip.Addr
	if ap, err := netip.ParseAddrPort(remote); err == nil {
		a = ap.Addr()
	} else if a, err = netip.ParseAddr(remote); err != nil {
		return netip.Addr{}
	}
	a = a.Unmap().WithZone("")
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.Addr()
	}
	return a
}
