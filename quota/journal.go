package quota

// The spend journal: what a checkpoint has not caught yet. Each worker
// appends, after every settle, the settled cell's state as it is now (an
// Entry: its total, each period's id and base) to its own file in
// state_dir, with one write(2): the kernel holds the line from then on,
// so a kill -9 of every process loses none of it (a power cut loses what
// the kernel had not written out, at most what the last checkpoint, every
// second and synced, does not hold). At start, a fresh region takes each
// cell's state as the latest of the checkpoint's and the journals'
// (Merge): a total only grows, so the largest is the latest, and no mark
// of which lines a checkpoint holds is needed — a line the checkpoint
// holds too merges to the same state.
//
// A worker starts a new file every JournalRotateBytes or JournalRotateAge
// and never writes the old one again; the supervisor removes a file once
// a checkpoint taken after its last write holds everything it says
// (PruneJournals).

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sluice-gw/sluice/shm"
)

// Journal files: JournalPrefix, the writer's pid, a dot, its file's
// number, JournalSuffix.
const (
	JournalPrefix = "spend."
	JournalSuffix = ".journal"
)

// A worker's journal file is replaced by a new one at this size or age,
// so that what start-up reads, and what the supervisor keeps, is bounded.
const (
	JournalRotateBytes = 1 << 20
	JournalRotateAge   = time.Minute
)

// pruneSlack is how long before a checkpoint's snapshot a file's last
// write must be for the checkpoint to be taken to hold it: far more than
// a settle's snapshot and its write apart, and than the clocks of mtime
// and time.Now apart.
const pruneSlack = 10 * time.Second

// Journaled is a cell the journal writes, with its name encoded once.
type Journaled struct {
	Cell   *shm.Cell
	quoted []byte // the name as a JSON string
}

// NewJournaled is cell c of name name (its full name, never the region's
// display name) for the journal.
func NewJournaled(name string, c *shm.Cell) Journaled {
	q, _ := json.Marshal(name) // a string always encodes
	return Journaled{Cell: c, quoted: q}
}

// Journal is one worker's spend journal (nil: off; every method is then
// a no-op).
type Journal struct {
	dir string
	pid int
	log func(err error) // a failed write, reported once until a write succeeds

	mu      sync.Mutex
	f       *os.File
	n       int // the file's number
	size    int64
	opened  time.Time
	failing bool
	line    []byte
}

// OpenJournal is a journal in dir (state_dir) for this process; files
// are made as lines come. report hears of failed writes (the spend stays
// in the region, and the next checkpoint holds it).
func OpenJournal(dir string, report func(err error)) *Journal {
	if dir == "" {
		return nil
	}
	return &Journal{dir: dir, pid: os.Getpid(), log: report}
}

// Record appends each cell's state now, after a settle on it: one line
// per cell, one write for all.
func (j *Journal) Record(cells ...Journaled) {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.line = j.line[:0]
	for _, jc := range cells {
		if jc.Cell != nil {
			j.line = appendLine(j.line, jc.quoted, Snapshot("", jc.Cell))
		}
	}
	if len(j.line) == 0 {
		return
	}
	err := j.rotate()
	if err == nil {
		var n int
		n, err = j.f.Write(j.line)
		j.size += int64(n)
	}
	if err != nil && !j.failing && j.log != nil {
		j.log(err)
	}
	j.failing = err != nil
}

// rotate opens the journal's next file when there is none, or the one
// there is has grown past its size or age; the old one is closed, never
// written again.
func (j *Journal) rotate() error {
	if j.f != nil && j.size < JournalRotateBytes && time.Since(j.opened) < JournalRotateAge {
		return nil
	}
	for {
		j.n++
		name := filepath.Join(j.dir, fmt.Sprintf("%s%d.%d%s", JournalPrefix, j.pid, j.n, JournalSuffix))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
		if os.IsExist(err) {
			continue // an earlier process of this pid's: its lines are its own
		}
		if err != nil {
			return err
		}
		if j.f != nil {
			j.f.Close()
		}
		j.f, j.size, j.opened = f, 0, time.Now()
		return nil
	}
}

// Close closes the journal's file.
func (j *Journal) Close() {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f != nil {
		j.f.Close()
		j.f = nil
	}
}

// appendLine appends e, of a name already encoded, as a line of the state
// file's format (Write's, which Read reads): written by hand, as this is
// every settle's, where encoding/json's reflection would cost more than
// the write.
func appendLine(dst, quoted []byte, e Entry) []byte {
	start := len(dst)
	dst = append(dst, "00000000 "...)
	body := len(dst)
	dst = append(dst, `{"cell":`...)
	dst = append(dst, quoted...)
	dst = append(dst, `,"total":`...)
	dst = strconv.AppendInt(dst, e.Total, 10)
	dst = append(dst, `,"periods":[`...)
	for p := Day; p < NumPeriods; p++ {
		if p > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '[')
		dst = strconv.AppendInt(dst, e.Periods[p][0], 10)
		dst = append(dst, ',')
		dst = strconv.AppendInt(dst, e.Periods[p][1], 10)
		dst = append(dst, ']')
	}
	dst = append(dst, "]}"...)
	const hexdigits = "0123456789abcdef"
	sum := crc32.ChecksumIEEE(dst[body:])
	for i := 7; i >= 0; i-- {
		dst[start+i] = hexdigits[sum&0xf]
		sum >>= 4
	}
	return append(dst, '\n')
}

// Merge is the later of two states of one cell: the larger total (a
// total only grows), and each period as the one of them that has the
// later period says (its base), or a's when both have the same. A period
// being rolled over (a negative id) says nothing.
func Merge(a, b Entry) Entry {
	out := a
	out.Total = max(a.Total, b.Total)
	for p := Day; p < NumPeriods; p++ {
		if b.Periods[p][0] > a.Periods[p][0] && b.Periods[p][0] > 0 || a.Periods[p][0] < 0 {
			out.Periods[p] = b.Periods[p]
		}
	}
	return out
}

// JournalFiles are the journal files in dir.
func JournalFiles(dir string) []string {
	names, _ := filepath.Glob(filepath.Join(dir, JournalPrefix+"*"+JournalSuffix))
	return names
}

// journalName reads a journal file's pid and number from its path.
func journalName(path string) (pid, n int, ok bool) {
	base := filepath.Base(path)
	if !strings.HasPrefix(base, JournalPrefix) || !strings.HasSuffix(base, JournalSuffix) {
		return 0, 0, false
	}
	p, num, found := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(base, JournalPrefix), JournalSuffix), ".")
	pid, err1 := strconv.Atoi(p)
	n, err2 := strconv.Atoi(num)
	return pid, n, found && err1 == nil && err2 == nil
}

// ReadJournals reads every journal file in dir: the latest state of each
// cell they name (Merge), and how many lines did not read (torn by a
// power cut, corrupt).
func ReadJournals(dir string) (latest map[string]Entry, bad int, err error) {
	latest = map[string]Entry{}
	for _, name := range JournalFiles(dir) {
		f, oerr := os.Open(name)
		if oerr != nil {
			if !os.IsNotExist(oerr) {
				err = oerr
			}
			continue
		}
		entries, b, rerr := Read(f)
		f.Close()
		if rerr != nil {
			err = rerr
		}
		bad += b
		for _, e := range entries {
			if old, ok := latest[e.Cell]; ok {
				e = Merge(old, e)
			}
			latest[e.Cell] = e
		}
	}
	return latest, bad, err
}

// PruneJournals removes the journal files in dir that a checkpoint whose
// snapshot was taken at snap holds: last written pruneSlack before it,
// and never to be written again — a later file of the same writer is
// there, or the writer is gone. It returns how many it removed.
func PruneJournals(dir string, snap time.Time) (removed int) {
	type file struct {
		path string
		pid  int
		n    int
		mod  time.Time
	}
	var files []file
	newest := map[int]int{}
	for _, path := range JournalFiles(dir) {
		pid, n, ok := journalName(path)
		if !ok {
			continue
		}
		st, err := os.Stat(path)
		if err != nil {
			continue
		}
		files = append(files, file{path, pid, n, st.ModTime()})
		newest[pid] = max(newest[pid], n)
	}
	for _, f := range files {
		if !f.mod.Before(snap.Add(-pruneSlack)) {
			continue
		}
		if f.n < newest[f.pid] || !alive(f.pid) {
			if err := os.Remove(f.path); err == nil || errors.Is(err, fs.ErrNotExist) {
				removed++
			}
		}
	}
	return removed
}

// alive reports whether process pid is there (a worker that may still
// write its newest file).
func alive(pid int) bool {
	return syscall.Kill(pid, 0) != syscall.ESRCH
}
