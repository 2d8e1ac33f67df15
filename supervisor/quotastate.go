package supervisor

// The keys' quotas and budgets outlive the service (state_dir, package
// quota's state file): the supervisor reads the file into a fresh region
// before its first worker starts, writes it every second and once more
// when it stops, and keeps the entries of keys a reload removed (from the
// moment their cells are freed), so that a key added back within the
// period finds what it spent. An upgrade's new supervisor inherits the
// region itself, reads the file's entries for cells the region lacks, and
// writes the same file from then on: the old one stops writing.

import (
	"fmt"
	"io"
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

// quotaCheckpoint is how often the state is written: what a power cut
// can lose is what was settled since (a kill -9 of every process loses
// nothing: the workers' spend journals hold it). SLUICE_TEST_QUOTA_CHECKPOINT,
// a duration, replaces it (tests of the journal alone).
var quotaCheckpoint = func() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("SLUICE_TEST_QUOTA_CHECKPOINT")); err == nil && d > 0 {
		return d
	}
	return time.Second
}()

// quotaState is the supervisor's side of the durable quotas.
type quotaState struct {
	dir string // state_dir; "" off
	log *slog.Logger

	writeMu sync.Mutex // one checkpoint at a time: a later snapshot is never overwritten by an earlier one

	mu   sync.Mutex
	kept map[string]quota.Entry // entries of cells not in the region now (a removed key's)

	// endUsersWritten is the checksum of the end-user state file last
	// written (endusers.go): an unchanged table is not written again.
	endUsersWritten uint32
	endUsersOnce    bool
}

func newQuotaState(dir string, log *slog.Logger) *quotaState {
	return &quotaState{dir: dir, log: log, kept: map[string]quota.Entry{}}
}

// isQuotaCell reports whether a cell name is a quota's or a budget's.
func isQuotaCell(name string) bool {
	return strings.HasPrefix(name, "quota/") || strings.HasPrefix(name, "budget/")
}

// load reads the state file: into the region's quota and budget cells
// when the region is fresh, and, fresh or inherited (an upgrade's, whose
// cells hold their own state), as kept entries for the cells the region
// lacks — a key removed before the restart, which may come back. A
// missing file is a first start; unreadable lines are reported, what they
// held lost. Temporary files a crash left mid-checkpoint are removed.
func (q *quotaState) load(r *shm.Region, inherited bool) error {
	if q == nil || q.dir == "" {
		return nil
	}
	if err := os.MkdirAll(q.dir, 0o700); err != nil {
		return fmt.Errorf("state_dir: %w", err)
	}
	for _, file := range []string{QuotaStateFile, EndUserStateFile} {
		left, _ := filepath.Glob(filepath.Join(q.dir, file+".tmp*"))
		for _, name := range left {
			os.Remove(name) //nolint:errcheck // a leftover; the next checkpoint makes its own
		}
	}
	file := filepath.Join(q.dir, QuotaStateFile)
	f, err := os.Open(file)
	var entries []quota.Entry
	switch {
	case os.IsNotExist(err): // a first start, or only journals
	case err != nil:
		return fmt.Errorf("state_dir: %w", err)
	default:
		var bad int
		entries, bad, err = quota.Read(f)
		f.Close()
		if err != nil {
			q.log.Error("quota state: reading stopped early; what the rest held is lost", "file", file, "err", err)
		}
		if bad > 0 {
			q.log.Error("quota state: unreadable lines skipped; the spend they held is lost", "file", file, "lines", bad, "read", len(entries))
		}
	}
	entries, journaled := q.replay(entries)
	q.mu.Lock()
	defer q.mu.Unlock()
	restored := 0
	for _, e := range entries {
		if !isQuotaCell(e.Cell) {
			continue
		}
		switch c := r.Lookup(e.Cell); {
		case c == nil:
			q.kept[e.Cell] = e
		case !inherited:
			quota.Restore(c, e)
			restored++
		}
	}
	q.log.Info("quota state read", "file", file, "restored", restored, "kept", len(q.kept), "from_journal", journaled, "inherited_region", inherited)
	return nil
}

// replay merges into the checkpoint's entries what the spend journals
// (package quota's journal.go) say each cell settled since: the latest
// state of each. journaled counts the cells the journals moved on.
func (q *quotaState) replay(entries []quota.Entry) (out []quota.Entry, journaled int) {
	latest, err := quota.ReadJournals(q.dir)
	if err != nil {
		q.log.Error("spend journal: a journal could not be read; what it held is lost", "dir", q.dir, "err", err)
	}
	for i, e := range entries {
		if j, ok := latest[e.Cell]; ok {
			if m := quota.Merge(e, j); m != e {
				entries[i] = m
				journaled++
			}
			delete(latest, e.Cell)
		}
	}
	for _, j := range latest { // cells no checkpoint held yet
		entries = append(entries, j)
		journaled++
	}
	return entries, journaled
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

// freeing keeps what a quota or budget cell holds as it is freed (its key
// removed a while ago, nothing in flight on it), so that the key added
// back finds it, and every checkpoint until then writes it.
func (q *quotaState) freeing(name string, c *shm.Cell) {
	if q == nil || q.dir == "" || !isQuotaCell(name) {
		return // without state_dir nothing prunes kept entries: none are kept
	}
	q.mu.Lock()
	q.kept[name] = quota.Snapshot(name, c)
	q.mu.Unlock()
}

// snapshot is what a checkpoint writes: the cells of names (full names,
// never the region's display names, which a long key's name outgrows),
// and the kept entries still of a period running now (in cal).
func (q *quotaState) snapshot(r *shm.Region, names []string, cal quota.Calendar) []quota.Entry {
	entries := make([]quota.Entry, 0, len(names))
	live := make(map[string]bool, len(names))
	for _, name := range names {
		if c := r.Lookup(name); c != nil && !live[name] {
			entries = append(entries, quota.Snapshot(name, c))
			live[name] = true
		}
	}
	now := cal.Now()
	q.mu.Lock()
	defer q.mu.Unlock()
	for name, e := range q.kept {
		current := false
		for p := quota.Day; p < quota.NumPeriods; p++ {
			current = current || e.Periods[p][0] == cal.ID(p, now)
		}
		switch {
		case live[name]:
			delete(q.kept, name) // its cell is back
		case current:
			entries = append(entries, e)
		default:
			delete(q.kept, name) // every period it counted has ended
		}
	}
	return entries
}

// write writes entries to the state file.
func (q *quotaState) write(entries []quota.Entry) error {
	return q.replaceFile(QuotaStateFile, func(w io.Writer) error { return quota.Write(w, entries) })
}

// replaceFile writes file name of state_dir with fill: whole to a
// temporary file, synced, renamed over the old one, the directory synced.
func (q *quotaState) replaceFile(name string, fill func(io.Writer) error) error {
	tmp, err := os.CreateTemp(q.dir, name+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing
	if err := fill(tmp); err != nil {
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
	if err := os.Rename(tmp.Name(), filepath.Join(q.dir, name)); err != nil {
		return err
	}
	if d, err := os.Open(q.dir); err == nil { // the rename itself, through a power cut
		d.Sync() //nolint:errcheck // best effort: the file's own data is synced
		d.Close()
	}
	return nil
}

// checkpointQuotas writes the quota state: the cells of the running
// configuration's keys and of keys a reload removed whose cells are not
// freed yet, taken under cfgMu (where sweep frees cells, so that none is
// neither in the region nor kept), written outside it.
func (s *supervisor) checkpointQuotas() error {
	q := s.quota
	if q == nil || q.dir == "" {
		return nil
	}
	q.writeMu.Lock()
	defer q.writeMu.Unlock()
	gone := quota.Gone(q.dir) // before the snapshot: their writers' settles are in the cells it reads
	s.cfgMu.Lock()
	var names []string
	for _, k := range s.cfg.Keys {
		names = append(names, shm.QuotaCell(k.Name), shm.BudgetCell(k.Name))
	}
	for _, name := range s.retired.Names() {
		if isQuotaCell(name) {
			names = append(names, name)
		}
	}
	cal := quota.NewCalendar(s.cfg.QuotaLocation())
	entries := q.snapshot(s.region, names, cal)
	s.cfgMu.Unlock()
	if err := q.write(entries); err != nil {
		return err
	}
	quota.PruneJournals(gone) // what the checkpoint holds
	return q.checkpointEndUsers(s.region, cal)
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
		if s.upgraded.Load() {
			return // the successor writes the file now
		}
		err := s.checkpointQuotas()
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
