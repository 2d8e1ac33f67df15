package supervisor

// The keys' quotas and budgets outlive the service (state_dir, package
// quota's state file): the supervisor reads the file into a fresh region
// before its first worker starts, writes it every second and once more
// when it stops, and keeps the entries of keys a reload removed, so that
// a key added back within the period finds what it spent. An upgrade's
// new supervisor inherits the region itself and writes the same file.

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/quota"
	"github.com/sluice-gw/sluice/shm"
)

// QuotaStateFile is the state file's name in state_dir.
const QuotaStateFile = "quota.state"

// quotaCheckpoint is how often the state is written: what a kill -9 of
// every process can lose is what was settled since.
const quotaCheckpoint = time.Second

// quotaState is the supervisor's side of the durable quotas.
type quotaState struct {
	dir string // state_dir; "" off
	log *slog.Logger

	mu   sync.Mutex
	kept map[string]quota.Entry // entries of cells not in the region now (a removed key's)
	last map[string]quota.Entry // the cells the last checkpoint wrote, as it wrote them
}

func newQuotaState(dir string, log *slog.Logger) *quotaState {
	return &quotaState{dir: dir, log: log, kept: map[string]quota.Entry{}, last: map[string]quota.Entry{}}
}

// isQuotaCell reports whether a cell name is a quota's or a budget's.
func isQuotaCell(name string) bool {
	return strings.HasPrefix(name, "quota/") || strings.HasPrefix(name, "budget/")
}

// load reads the state file into the region's quota and budget cells (a
// fresh region), keeping the entries of cells it has not. A missing file
// is a first start; unreadable lines are reported, what they held lost.
func (q *quotaState) load(r *shm.Region) error {
	if q == nil || q.dir == "" {
		return nil
	}
	if err := os.MkdirAll(q.dir, 0o700); err != nil {
		return fmt.Errorf("state_dir: %w", err)
	}
	f, err := os.Open(filepath.Join(q.dir, QuotaStateFile))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("state_dir: %w", err)
	}
	defer f.Close()
	entries, bad, err := quota.Read(f)
	if err != nil {
		q.log.Error("quota state: reading stopped early; what the rest held is lost", "file", f.Name(), "err", err)
	}
	if bad > 0 {
		q.log.Error("quota state: unreadable lines skipped; the spend they held is lost", "file", f.Name(), "lines", bad, "read", len(entries))
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, e := range entries {
		if !isQuotaCell(e.Cell) {
			continue
		}
		if c := r.Lookup(e.Cell); c != nil {
			quota.Restore(c, e)
		} else {
			q.kept[e.Cell] = e
		}
	}
	q.log.Info("quota state restored", "file", f.Name(), "cells", len(entries))
	return nil
}

// restoreNew gives the cells a reload just allocated (names) the entries
// kept for them: a key removed and added back.
func (q *quotaState) restoreNew(r *shm.Region, names []string) {
	if q == nil {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, name := range names {
		if e, ok := q.kept[name]; ok {
			if c := r.Lookup(name); c != nil {
				quota.Restore(c, e)
				delete(q.kept, name)
			}
		}
	}
}

// checkpoint writes the region's quota and budget cells and the kept
// entries still of a period running now (in cal) to the state file:
// written whole to a temporary file, synced, renamed over the old one.
func (q *quotaState) checkpoint(r *shm.Region, cal quota.Calendar) error {
	if q == nil || q.dir == "" {
		return nil
	}
	var entries []quota.Entry
	live := map[string]bool{}
	r.Cells(func(name string, c *shm.Cell) {
		if isQuotaCell(name) {
			entries = append(entries, quota.Snapshot(name, c))
			live[name] = true
		}
	})
	now := cal.Now()
	q.mu.Lock()
	for name, e := range q.last {
		if !live[name] {
			q.kept[name] = e // its key was removed and its cell freed since: kept for its return
		}
	}
	q.last = make(map[string]quota.Entry, len(entries))
	for _, e := range entries {
		q.last[e.Cell] = e
	}
	for name, e := range q.kept {
		current := false
		for p := quota.Day; p < quota.NumPeriods; p++ {
			current = current || e.Periods[p][0] == cal.ID(p, now)
		}
		switch {
		case live[name]:
			delete(q.kept, name) // its cell is back (restoreNew took it, or it was never freed)
		case current:
			entries = append(entries, e)
		default:
			delete(q.kept, name) // every period it counted has ended
		}
	}
	q.mu.Unlock()
	tmp, err := os.CreateTemp(q.dir, QuotaStateFile+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing
	if err := quota.Write(tmp, entries); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), filepath.Join(q.dir, QuotaStateFile)); err != nil {
		return err
	}
	if d, err := os.Open(q.dir); err == nil { // the rename itself, through a power cut
		d.Sync() //nolint:errcheck // best effort: the file's own data is synced
		d.Close()
	}
	return nil
}

// keepCheckpointing writes the state every quotaCheckpoint until stop.
func (s *supervisor) keepCheckpointing(stop <-chan struct{}) {
	if s.quota == nil || s.quota.dir == "" {
		return
	}
	t := time.NewTicker(quotaCheckpoint)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		cfg, _, _ := s.current()
		err := s.quota.checkpoint(s.region, quota.NewCalendar(cfg.QuotaLocation()))
		switch {
		case err != nil && !failing:
			s.log.Error("quota state: cannot write the checkpoint; spend since the last one would be lost to a crash", "dir", s.quota.dir, "err", err)
		case err == nil && failing:
			s.log.Info("quota state: checkpoints written again", "dir", s.quota.dir)
		}
		failing = err != nil
	}
}

// quotaCells are the quota and budget cells cfg names that r lacks.
func quotaCells(r *shm.Region, cfg *config.Config) []string {
	var out []string
	for _, k := range cfg.Keys {
		for _, name := range []string{shm.QuotaCell(k.Name), shm.BudgetCell(k.Name)} {
			if r.Lookup(name) == nil {
				out = append(out, name)
			}
		}
	}
	return out
}
