// Package fleetspend makes a gateway's replicas agree on what each key
// spent of its quotas and budget, through a store operators already run:
// Nomad Variables, with check-and-set. Each key has one variable; each
// replica owns one item of it, its own figures — for the key's tokens and
// pico-USD, each period's id and what the replica used in it. Every few
// seconds a replica reads the variable, puts its item in, and writes it
// back only if nobody wrote in between (CAS on the variable's modify
// index; on a conflict it merges into what the conflict returned and
// tries again). What the other items say for the periods running now is
// the rest of the fleet's spend, which the replica's workers add to their
// own when they admit a request.
//
// An item is absolute (what the replica used, not what it added), so a
// write repeated after a lost answer counts once, and a replica that
// restarts with nothing finds its own figures in its item again. Items of
// replicas gone stay until every period they counted has ended: their
// spend is spent.
//
// An item also says what the replica's requests in flight had reserved
// when it was written, and until when that holds: the others count it as
// used, so that a burst of long requests at one replica is seen by the
// rest at their next exchange, not only once the requests settle minutes
// later. A replica that dies leaves its reservation behind; it stops
// counting when its hold ends (three of the writer's exchange periods).
// The figure rides as a third element of the item's JSON array, which a
// replica of an earlier version reads past (Go's decoding of a fixed-size
// array drops extra elements), so versions mix during a rolling upgrade.
//
// The bound: a replica sees the others' spend and reservations as of its
// last exchange, and they see its as of theirs, so the fleet as a whole
// may pass a limit by at most what it reserves in one exchange period
// plus a store round trip — spend_exchange × the fleet's rate.
// TestOvershootBound holds a simulation to it.
package fleetspend

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/quota"
)

// Kinds of a key's figures: its tokens quota cell, its budget cell.
const (
	Tokens = iota
	Pico
	NumKinds
)

// Figures are one replica's use of one key: for each kind and period, the
// period's id and what was used in it.
type Figures [NumKinds][quota.NumPeriods][2]int64

// Used is what f says was used in kind's period p of id id (0 when f's
// period is another).
func (f *Figures) Used(kind int, p quota.Period, id int64) int64 {
	if f[kind][p][0] == id {
		return f[kind][p][1]
	}
	return 0
}

// current reports whether any of f's periods is one of ids or later: its
// spend still counts somewhere.
func (f *Figures) current(ids [quota.NumPeriods]int64) bool {
	for k := range NumKinds {
		for p := quota.Day; p < quota.NumPeriods; p++ {
			if f[k][p][0] >= ids[p] && f[k][p][1] > 0 {
				return true
			}
		}
	}
	return false
}

// MaxItems bounds the items of a variable that are read (replicas that
// spent within the periods running now); items past it are kept as they
// are but not counted, so that a variable grown by a bug cannot make a
// replica spend unbounded time.
const MaxItems = 4096

// MaxItemBytes bounds an item's value: what Encode writes is far shorter.
const MaxItemBytes = 1024

// Item is one replica's item: its figures, and what its requests in
// flight reserved of each kind at At (unix seconds, the writer's clock),
// to be counted until At+Hold (seconds).
type Item struct {
	Figures  Figures
	Reserved [NumKinds]int64
	At, Hold int64
}

// Encode is the value of an item of figures alone (nothing reserved), as
// replicas before reservations wrote it.
func Encode(f Figures) string {
	b, _ := json.Marshal(f) // arrays of integers always encode
	return string(b)
}

// EncodeItem is it's value: the figures' two kinds, then its reservation
// as [tokens, pico, at, hold].
func EncodeItem(it Item) string {
	b, _ := json.Marshal([]any{it.Figures[Tokens], it.Figures[Pico], [4]int64{it.Reserved[Tokens], it.Reserved[Pico], it.At, it.Hold}})
	return string(b)
}

// Decode reads an item's figures, or says why it is not one.
func Decode(s string) (Figures, error) {
	it, err := DecodeItem(s)
	return it.Figures, err
}

// DecodeItem reads an item's value (with or without a reservation), or
// says why it is not one.
func DecodeItem(s string) (Item, error) {
	var it Item
	if len(s) > MaxItemBytes {
		return it, fmt.Errorf("item of %d bytes", len(s))
	}
	var parts []json.RawMessage
	if err := json.Unmarshal([]byte(s), &parts); err != nil {
		return it, err
	}
	if len(parts) < NumKinds {
		return it, fmt.Errorf("item of %d kinds, not %d", len(parts), NumKinds)
	}
	for k := range NumKinds {
		if err := json.Unmarshal(parts[k], &it.Figures[k]); err != nil {
			return it, err
		}
	}
	if len(parts) > NumKinds {
		var r [4]int64
		if err := json.Unmarshal(parts[NumKinds], &r); err != nil {
			return it, err
		}
		it.Reserved, it.At, it.Hold = [NumKinds]int64{r[0], r[1]}, r[2], r[3]
	}
	for k := range NumKinds {
		if it.Reserved[k] < 0 {
			return it, errors.New("negative reservation")
		}
		for p := quota.Day; p < quota.NumPeriods; p++ {
			if it.Figures[k][p][1] < 0 {
				return it, errors.New("negative use")
			}
		}
	}
	return it, nil
}

// reserved is what it reserved of kind, if its hold lasts at now (unix
// seconds); 0 past it.
func (it *Item) reserved(kind int, now int64) int64 {
	if now < it.At-it.Hold || now >= it.At+it.Hold {
		return 0 // a writer's clock ahead of ours by up to a hold is skew; more is not trusted
	}
	return it.Reserved[kind]
}

// holds reports whether it holds a reservation at now.
func (it *Item) holds(now int64) bool {
	for k := range NumKinds {
		if it.reserved(k, now) > 0 {
			return true
		}
	}
	return false
}

// Store is where the variables are: Nomad's (NomadStore), or a test's.
type Store interface {
	// Read is the variable at path: its items and modify index (0, and
	// no items, when there is none).
	Read(path string) (items map[string]string, index uint64, err error)
	// Write replaces the variable's items if its modify index is still
	// cas (0: if there is none). On a conflict ok is false, and items and
	// index are what the store holds now.
	Write(path string, items map[string]string, cas uint64) (ok bool, now map[string]string, index uint64, err error)
}

// Result is what one exchange of one key learned.
type Result struct {
	Others Figures // the other replicas' figures for the periods now, summed
	// Reserved is what the other replicas' requests in flight reserved
	// of each kind, summed over the items whose hold lasts.
	Reserved  [NumKinds]int64
	Conflicts int // CAS conflicts met (each merged and retried)
	Ignored   int // items not counted: unreadable, or past MaxItems
}

// maxAttempts bounds the CAS retries of one exchange: each conflict is
// another replica's write that landed, so the fleet progresses; this one
// tries again at its next exchange.
const maxAttempts = 8

// Exchange publishes replica's figures as its item of the variable at
// path, for the periods ids (each period's id now), and returns what the
// other items say for them. own makes the figures from the replica's
// item as the store has it (nil: none), read before anything is written:
// a replica that restarted with nothing takes its figures back there,
// and never overwrites them with less.
//
// The others' reservations count while their holds last at at.
func Exchange(st Store, path, replica string, own func(prev *Figures) Item, ids [quota.NumPeriods]int64, at time.Time) (Result, error) {
	var res Result
	items, index, err := st.Read(path)
	if err != nil {
		return res, err
	}
	var prev *Figures
	if v, ok := items[replica]; ok {
		if f, err := Decode(v); err == nil {
			prev = &f
		}
	}
	mine := own(prev)
	for attempt := 0; ; attempt++ {
		next := make(map[string]string, len(items)+1)
		for name, v := range items {
			if name == replica {
				continue
			}
			if it, err := DecodeItem(v); err == nil && !it.Figures.current(ids) && !it.holds(at.Unix()) {
				continue // every period it counted has ended, and it holds no reservation
			}
			next[name] = v // unreadable ones are someone's: kept, not counted
		}
		next[replica] = EncodeItem(mine)
		ok, now, nowIndex, err := st.Write(path, next, index)
		if err != nil {
			return res, err
		}
		if ok {
			res.Others, res.Reserved, res.Ignored = sum(next, replica, ids, at.Unix())
			return res, nil
		}
		res.Conflicts++
		if attempt+1 >= maxAttempts {
			return res, fmt.Errorf("%d CAS conflicts in a row on %s", res.Conflicts, path)
		}
		items, index = now, nowIndex
	}
}

// sum adds up the items other than replica's for the periods ids, and
// their reservations that hold at now (unix seconds).
func sum(items map[string]string, replica string, ids [quota.NumPeriods]int64, now int64) (out Figures, reserved [NumKinds]int64, ignored int) {
	counted := 0
	for name, v := range items {
		if name == replica {
			continue
		}
		it, err := DecodeItem(v)
		if err != nil || counted >= MaxItems {
			ignored++
			continue
		}
		counted++
		for k := range NumKinds {
			for p := quota.Day; p < quota.NumPeriods; p++ {
				out[k][p][1] = sat(out[k][p][1], it.Figures.Used(k, p, ids[p]))
			}
			reserved[k] = sat(reserved[k], it.reserved(k, now))
		}
	}
	for k := range NumKinds {
		for p := quota.Day; p < quota.NumPeriods; p++ {
			out[k][p][0] = ids[p]
		}
	}
	return out, reserved, ignored
}

// sat is a+b for a, b ≥ 0, held at the largest int64: a replica's
// nonsense cannot wrap the fleet's spend to a negative.
func sat(a, b int64) int64 {
	if s := a + b; s >= a {
		return s
	}
	return 1<<63 - 1
}

// Path is the variable of key under prefix (fleet.spend_path): the key's
// name where Nomad's paths allow it, else a hash of it.
func Path(prefix, key string) string {
	if p := prefix + "/" + key; len(p) <= maxPath && config.NomadVariableSegment(key) {
		return p
	}
	sum := sha256.Sum256([]byte(key))
	return prefix + "/sha256-" + hex.EncodeToString(sum[:12])
}

// maxPath is Nomad's longest variable path.
const maxPath = 128

// NomadStore is a Store over Nomad's Variables API, in namespace ("":
// the client's). Each call ends with ctx, or after CallTimeout.
func NomadStore(ctx context.Context, client *api.Client, namespace string) Store {
	return nomadStore{ctx, client.Variables(), namespace}
}

// CallTimeout bounds one call to Nomad: a store that hangs holds one
// key's exchange that long, never the others' for good.
const CallTimeout = 10 * time.Second

type nomadStore struct {
	ctx  context.Context
	vars *api.Variables
	ns   string
}

func (s nomadStore) Read(path string) (map[string]string, uint64, error) {
	ctx, cancel := context.WithTimeout(s.ctx, CallTimeout)
	defer cancel()
	v, _, err := s.vars.Peek(path, (&api.QueryOptions{Namespace: s.ns}).WithContext(ctx))
	if err != nil || v == nil {
		return nil, 0, err
	}
	return v.Items, v.ModifyIndex, nil
}

func (s nomadStore) Write(path string, items map[string]string, cas uint64) (bool, map[string]string, uint64, error) {
	ctx, cancel := context.WithTimeout(s.ctx, CallTimeout)
	defer cancel()
	v := &api.Variable{Namespace: s.ns, Path: path, Items: items, ModifyIndex: cas}
	_, _, err := s.vars.CheckedUpdate(v, (&api.WriteOptions{Namespace: s.ns}).WithContext(ctx))
	var conflict api.ErrCASConflict
	if errors.As(err, &conflict) {
		if conflict.Conflict == nil {
			return false, nil, 0, nil
		}
		return false, conflict.Conflict.Items, conflict.Conflict.ModifyIndex, nil
	}
	return err == nil, nil, 0, err
}
