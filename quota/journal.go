package quota

// The spend journal: what a checkpoint has not caught yet. Each worker
// keeps, in its own file in state_dir mapped into its memory (MAP_SHARED),
// the latest state of every quota and budget cell it settled — an Entry:
// the cell's total and each period's id and base — written after each
// settle by plain stores, no system call: the mapped pages are the
// kernel's page cache, so a kill -9 of every process loses none of it (a
// power cut loses what the kernel had not written out, at most what the
// last checkpoint, every second and synced, does not hold). A write(2) per
// settle, the first cut, cost 2.4 µs a request (BenchmarkJournalRecord);
// the mapped slots cost 120 ns, about 1,300 instructions (callgrind).
//
// Each cell has two slots, written in turn, each with its own checksum: a kill
// in the middle of a write leaves the other, one settle older. At start,
// a fresh region takes each cell's state as the latest of the
// checkpoint's and the journals' (Merge): a total only grows, so the
// largest is the latest, and no mark of which records a checkpoint holds
// is needed — a record the checkpoint holds too merges to the same state.
//
// A worker's records are in the region's cells before they are in its
// journal (the settle comes first), so once a worker is gone, the next
// checkpoint holds everything its journal says: the supervisor then
// removes the file (PruneJournals).

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/zeebo/xxh3"

	"github.com/sluice-gw/sluice/shm"
)

// Journal files: JournalPrefix, the writer's pid, JournalSuffix.
const (
	JournalPrefix = "spend."
	JournalSuffix = ".journal"
)

// Journal record layout: slotBytes each, two per cell.
const (
	slotBytes    = 256
	slotHead     = 8 // the checksum of the rest (slotSum), the name's length, padding
	slotFixed    = slotHead + 8*(1+2*int(NumPeriods))
	maxSlotName  = slotBytes - slotFixed
	JournalCells = 1 << 14 // cells one worker's journal holds (a sparse file of 8 MiB)
)

// Journaled is a cell the journal writes, by its full name (never the
// region's display name).
type Journaled struct {
	Cell *shm.Cell
	name string
}

// NewJournaled is cell c of name name for the journal.
func NewJournaled(name string, c *shm.Cell) Journaled { return Journaled{Cell: c, name: name} }

// Journal is one worker's spend journal (nil: off; every method is then
// a no-op).
type Journal struct {
	log func(err error) // a cell that has no room, reported once

	mu    sync.Mutex
	mem   []byte // the mapped file
	slots map[string]int
	next  []bool // by cell slot: which of its two slots is written next
	full  bool
}

// OpenJournal makes this process's journal in dir (state_dir), or says
// why it cannot (the caller goes on without: the checkpoint alone).
// report hears of cells the journal has no room for.
func OpenJournal(dir string, report func(err error)) (*Journal, error) {
	if dir == "" {
		return nil, nil
	}
	name := filepath.Join(dir, JournalPrefix+strconv.Itoa(os.Getpid())+JournalSuffix)
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600) // a same-pid file is a dead process's: the region holds it
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := JournalCells * 2 * slotBytes
	if err := f.Truncate(int64(size)); err != nil {
		return nil, err
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	return &Journal{log: report, mem: mem, slots: map[string]int{}}, nil
}

// Record writes each cell's state now, after a settle on it.
func (j *Journal) Record(cells ...Journaled) {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.mem == nil {
		return // closed
	}
	for _, jc := range cells {
		if jc.Cell == nil {
			continue
		}
		i, ok := j.slots[jc.name]
		if !ok {
			if len(j.slots) >= JournalCells || len(jc.name) > maxSlotName {
				if !j.full && j.log != nil {
					j.log(fmt.Errorf("no room for cell %q (%d cells, names to %d bytes): its settles since the last checkpoint would be lost to a kill -9", jc.name, JournalCells, maxSlotName))
				}
				j.full = true
				continue
			}
			i = len(j.slots)
			j.slots[jc.name] = i
			j.next = append(j.next, false)
		}
		half := 0
		if j.next[i] {
			half = 1
		}
		j.next[i] = !j.next[i]
		putSlot(j.mem[(2*i+half)*slotBytes:][:slotBytes], jc.name, Snapshot("", jc.Cell))
	}
}

// putSlot writes e of name into slot b: the body, then its checksum.
func putSlot(b []byte, name string, e Entry) {
	binary.LittleEndian.PutUint16(b[4:], uint16(len(name)))
	off := slotHead
	binary.LittleEndian.PutUint64(b[off:], uint64(e.Total))
	for p := Day; p < NumPeriods; p++ {
		binary.LittleEndian.PutUint64(b[off+8+16*int(p):], uint64(e.Periods[p][0]))
		binary.LittleEndian.PutUint64(b[off+16+16*int(p):], uint64(e.Periods[p][1]))
	}
	copy(b[slotFixed:], name)
	binary.LittleEndian.PutUint32(b, slotSum(b[4:slotFixed+len(name)])) // last: a torn body fails it
}

// slotSum is a slot's checksum: XXH3's low 32 bits, not CRC-32 — on the
// accept path's callgrind count, crc32.ChecksumIEEE of a slot cost some
// 4,000 instructions a call (no PCLMULQDQ path under valgrind, and table
// lookups per byte), XXH3 a small fraction of it.
func slotSum(b []byte) uint32 { return uint32(xxh3.Hash(b)) }

// getSlot reads slot b: its entry, or false (never written, torn).
func getSlot(b []byte) (Entry, bool) {
	n := int(binary.LittleEndian.Uint16(b[4:]))
	if n == 0 || n > maxSlotName || slotSum(b[4:slotFixed+n]) != binary.LittleEndian.Uint32(b) {
		return Entry{}, false
	}
	e := Entry{Cell: string(b[slotFixed : slotFixed+n]), Total: int64(binary.LittleEndian.Uint64(b[slotHead:]))}
	for p := Day; p < NumPeriods; p++ {
		e.Periods[p] = [2]int64{int64(binary.LittleEndian.Uint64(b[slotHead+8+16*int(p):])), int64(binary.LittleEndian.Uint64(b[slotHead+16+16*int(p):]))}
	}
	return e, true
}

// Close unmaps the journal (its records stay in the file).
func (j *Journal) Close() {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.mem != nil {
		syscall.Munmap(j.mem) //nolint:errcheck // the pages are the file's either way
		j.mem = nil
	}
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

// journalPID reads a journal file's writer from its path.
func journalPID(path string) (int, bool) {
	base := filepath.Base(path)
	pid, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(base, JournalPrefix), JournalSuffix))
	return pid, err == nil && pid > 0
}

// ReadJournals reads every journal file in dir: the latest state of each
// cell they name (Merge). A record that was being written when its
// writer was killed fails its checksum and is passed over: the cell's other
// slot holds its state one settle before.
func ReadJournals(dir string) (latest map[string]Entry, err error) {
	latest = map[string]Entry{}
	for _, name := range JournalFiles(dir) {
		b, rerr := os.ReadFile(name)
		if rerr != nil {
			if !os.IsNotExist(rerr) {
				err = rerr
			}
			continue
		}
		for off := 0; off+slotBytes <= len(b); off += slotBytes {
			e, ok := getSlot(b[off : off+slotBytes])
			if !ok {
				continue
			}
			if old, seen := latest[e.Cell]; seen {
				e = Merge(old, e)
			}
			latest[e.Cell] = e
		}
	}
	return latest, err
}

// Gone lists the journal files in dir whose writers are gone: a checkpoint
// taken after this holds everything they say (their settles are in the
// region's cells, or were merged into them at start), and PruneJournals
// may then remove them.
func Gone(dir string) []string {
	var out []string
	for _, path := range JournalFiles(dir) {
		if pid, ok := journalPID(path); ok && !alive(pid) {
			out = append(out, path)
		}
	}
	return out
}

// PruneJournals removes files (Gone's, before a checkpoint that was then
// written), and returns how many it removed.
func PruneJournals(files []string) (removed int) {
	for _, path := range files {
		if err := os.Remove(path); err == nil || errors.Is(err, fs.ErrNotExist) {
			removed++
		}
	}
	return removed
}

// alive reports whether process pid is there (a worker that may still
// write its journal).
func alive(pid int) bool {
	return syscall.Kill(pid, 0) != syscall.ESRCH
}
