// Package provkeys picks which of a backend's provider keys (api_keys_env)
// a request is sent with, and records what an answer means for that key:
// 401 or 403 takes it out of rotation until the next reload, 429 rests it
// for its Retry-After. The state of every key is in a shared cell (see
// shm.BackendKeyCell), so what one worker learns holds for all of them.
//
// A key is named by its environment variable in logs and metrics; its
// value appears only in Header.
package provkeys

import (
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sluice-gw/sluice/shm"
)

// How long a key answered 429 rests: its Retry-After within [MinRest,
// MaxRest], DefaultRest without one (or one that is neither seconds nor an
// HTTP-date).
const (
	DefaultRest = 60 * time.Second
	MinRest     = time.Second // "Retry-After: 0" must not make a loop of 429s
	MaxRest     = time.Hour
)

// Set is one backend's provider keys. It is immutable; its state is in the
// keys' cells, which outlive it (a reload compiles a new Set on the same
// cells: rests carry over, rejections end with the generation).
type Set struct {
	region Region
	keys   []Key
	cursor *int64 // round robin, shared by all workers: the first key's cell
	log    *slog.Logger
	wall   func() time.Time // HTTP-date Retry-After is wall-clock time
}

// Key is one provider key of a Set.
type Key struct {
	name   string // its environment variable
	header string // "Bearer <value>"
	cell   *shm.Cell
}

// Region is what a Set reads of the shared region: its clock, and the
// configuration generation (a key's rest is counted in generations too).
type Region interface {
	Now() int64
	Generation() int64
}

// New returns the Set of the keys whose environment variables are names,
// with their values and their cells (shm.BackendKeyCell of each name), all
// in the same order. region gives the running configuration generation; log
// (nil: none) says when a key goes out of rotation or starts to rest —
// give it the model and backend with slog's With.
func New(region Region, names, values []string, cells []*shm.Cell, log *slog.Logger) *Set {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Set{region: region, keys: make([]Key, len(names)), log: log, wall: time.Now}
	for i := range names {
		s.keys[i] = Key{name: names[i], header: "Bearer " + values[i], cell: cells[i]}
	}
	if len(cells) > 0 {
		s.cursor = cells[0].Scalar(shm.BackendKeyCursorScalar)
	}
	return s
}

// Len is the number of keys.
func (s *Set) Len() int { return len(s.keys) }

// Name is the key's environment variable, for logs and metrics.
func (k *Key) Name() string { return k.name }

// Header is the value of the Authorization header that sends the key.
func (k *Key) Header() string { return k.header }

// usable reports whether the key is in rotation under generation gen and
// not resting at now (region clock).
func (k *Key) usable(now, gen int64) bool {
	return gen >= atomic.LoadInt64(k.cell.Scalar(shm.BackendKeyOutScalar)) &&
		now >= atomic.LoadInt64(k.cell.Scalar(shm.BackendKeyRestScalar))
}

// ProbeHeader is the Authorization value a health check sends: the first
// key usable now, else the first key (a health check must reach a hosted
// API's authenticated path, such as /v1/models, and counts for no key).
func (s *Set) ProbeHeader() string {
	if len(s.keys) == 0 {
		return ""
	}
	now, gen := s.region.Now(), s.region.Generation()
	for i := range s.keys {
		if s.keys[i].usable(now, gen) {
			return s.keys[i].header
		}
	}
	return s.keys[0].header
}

// Pick returns the key to send the next request with, now being the region
// clock (shm.Region.Now): the next usable key round robin, over the
// requests of all workers. A key out of rotation or resting is skipped, and
// the turn passes to the one after the key picked, so the others share its
// load evenly. ok is false when every key is out or resting: the backend
// cannot be used now.
func (s *Set) Pick(now int64) (k *Key, ok bool) {
	n := uint64(len(s.keys))
	if n == 0 {
		return nil, false
	}
	gen := s.region.Generation()
	for {
		c := atomic.LoadInt64(s.cursor)
		found := -1
		for i := uint64(0); i < n; i++ {
			if s.keys[(uint64(c)+i)%n].usable(now, gen) {
				found = int(i)
				break
			}
		}
		if found < 0 {
			return nil, false
		}
		if atomic.CompareAndSwapInt64(s.cursor, c, c+int64(found)+1) {
			k = &s.keys[(uint64(c)+uint64(found))%n]
			atomic.AddInt64(k.cell.Scalar(shm.BackendKeyRequestsScalar), 1)
			return k, true
		}
	}
}

// Report records the backend's answer status to a request sent with k, at
// now (region clock); retryAfter is the answer's Retry-After header ("" when
// absent). 401 and 403 take k out of rotation until the next reload, in
// every worker; 429 rests it for retryAfter (see DefaultRest, MinRest,
// MaxRest). Other statuses change nothing. retry is true when the answer
// was one of those three and another key is usable now: send the request
// again, with the key Pick gives, before anything reaches the client.
func (s *Set) Report(k *Key, status int, retryAfter string, now int64) (retry bool) {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		atomic.AddInt64(k.cell.Scalar(shm.BackendKeyRejectedScalar), 1)
		back := s.region.Generation() + 1
		p := k.cell.Scalar(shm.BackendKeyOutScalar)
		for {
			old := atomic.LoadInt64(p)
			if old >= back {
				break // another request (another worker) took it out first
			}
			if atomic.CompareAndSwapInt64(p, old, back) {
				s.log.Warn("provider key rejected: out of rotation until the next reload", "key", k.name, "status", status)
				break
			}
		}
	case http.StatusTooManyRequests:
		atomic.AddInt64(k.cell.Scalar(shm.BackendKeyRateLimitedScalar), 1)
		rest := restFor(retryAfter, s.wall())
		until := now + int64(rest)
		p := k.cell.Scalar(shm.BackendKeyRestScalar)
		for {
			old := atomic.LoadInt64(p)
			if old >= until {
				break // resting as long already
			}
			if atomic.CompareAndSwapInt64(p, old, until) {
				if old <= now {
					s.log.Info("provider key rate limited: resting", "key", k.name, "for", rest)
				}
				break
			}
		}
	default:
		return false
	}
	return s.Usable(now)
}

// Usable reports whether some key is in rotation and not resting at now
// (region clock): whether Pick would give one. It counts nothing, so a
// backend's candidacy can be checked before its slot is taken.
func (s *Set) Usable(now int64) bool {
	gen := s.region.Generation()
	for i := range s.keys {
		if s.keys[i].usable(now, gen) {
			return true
		}
	}
	return false
}

// RestLeft is how long, from now (region clock), until the first of the
// keys that are in rotation but resting (after a 429) may be used again;
// ok is false when no key in rotation rests (none, or every one is out
// until a reload): then no wait would help.
func (s *Set) RestLeft(now int64) (left time.Duration, ok bool) {
	gen := s.region.Generation()
	for i := range s.keys {
		k := &s.keys[i]
		if gen < atomic.LoadInt64(k.cell.Scalar(shm.BackendKeyOutScalar)) {
			continue // out until a reload
		}
		d := time.Duration(atomic.LoadInt64(k.cell.Scalar(shm.BackendKeyRestScalar)) - now)
		if !ok || d < left {
			left, ok = max(d, 0), true
		}
	}
	return left, ok
}

// UsableNow is Usable at the region's clock now.
func (s *Set) UsableNow() bool { return s.Usable(s.region.Now()) }

// restFor is how long a 429 answer with Retry-After h rests its key: h in
// seconds or as an HTTP-date (relative to wall), within [MinRest, MaxRest];
// DefaultRest when h is absent or neither.
func restFor(h string, wall time.Time) time.Duration {
	h = strings.TrimSpace(h)
	d := DefaultRest
	if n, err := strconv.ParseInt(h, 10, 64); err == nil && n >= 0 {
		d = MaxRest
		if n < int64(MaxRest/time.Second) {
			d = time.Duration(n) * time.Second
		}
	} else if t, err := http.ParseTime(h); err == nil {
		d = t.Sub(wall)
	}
	return min(max(d, MinRest), MaxRest)
}
