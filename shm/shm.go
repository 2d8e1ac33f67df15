// Package shm is the state sluice's worker processes share: one memory
// region, created by the supervisor and mapped by every worker, holding a
// fixed-capacity table of named cells — a key's limiter state, a backend's
// in-flight count, a model's queue. A cell is found by a stable hash of a
// stable name ("key/team-a", "backend/llama/http://10.0.0.5:8000"), so the
// same name lands on the same cell across worker restarts and reloads, and
// counters carry on untouched while the routes around them are replaced.
//
// Every shared field is an 8-byte aligned int64 changed only with
// sync/atomic, as nginx's workers share their zones. Whatever a request
// holds (a backend slot, a concurrency place, a queue place) is counted in
// its worker's own column of the cell, so the gauge is the sum of the
// columns and the supervisor gives back exactly what a dead worker held by
// zeroing that worker's column: a gauge cannot stay up with nothing running.
//
// After the cells comes the recall table (recall.go): a bounded map of
// 64-bit keys to 64-bit values that every worker writes and reads, for
// state that belongs to no configuration (which backend holds a stored
// response). After it, the prefix index (prefix.go), a second table of the
// same kind: which backends were recently sent which prompt blocks. Then
// comes the meter (meter.go): the counters and histograms of /metrics, a
// column of rows per worker, never cleared. Last, the TLS session ticket
// keys of each TLS listener (tickets.go).
package shm

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/edsrzf/mmap-go"
	"github.com/zeebo/xxh3"
	"golang.org/x/sys/unix"
)

// Magic marks a sluice region; LayoutVersion changes with any change of the
// layout below, and a region of another version is refused — except the
// versions before it, which are this layout with parts left out (their
// header words 0, nothing in their place): version 5 has no extension
// header and no end-user table (endusers.go), version 4 no ticket key
// sets (hTickets, tickets.go), version 3 no prefix index either
// (hPrefix), version 2 no meter either (hMeterSeries, hMeterRows), version
// 1 no recall table either (hRecall). A binary upgrade from an older sluice
// then keeps running on the old region, the missing parts reporting misses
// (and the counters of /metrics staying empty) until a restart makes a new
// one. (An older binary refuses a newer region: downgrading takes a
// restart.)
const (
	Magic         = 0x31454349554c53 // "SLUICE1" little-endian
	LayoutVersion = 6
	// layoutNoEndUsers is the version before the extension header and the
	// end-user table (endusers.go).
	layoutNoEndUsers = 5
	// layoutNoTickets is the version before the ticket key sets (tickets.go).
	layoutNoTickets = 4
	// layoutNoPrefix is the version before the prefix index (prefix.go).
	layoutNoPrefix = 3
	// layoutNoMeter is the version before the meter (meter.go).
	layoutNoMeter = 2
	// layoutNoRecall is the version before the recall table.
	layoutNoRecall = 1
)

// Header words, in int64 units from the start of the region.
const (
	hMagic = iota
	hVersion
	hSize
	hCells
	hColumns
	hCellWords
	hGeneration
	hEpoch      // unix ns at creation: limiter times are kept relative to it
	hUsed       // cells allocated
	hColumnBase // first worker column of the supervisor that runs now
	hRecall     // entries of the recall table after the cells; 0: none
	hPrefix     // entries of the prefix index after the recall table; 0: none
	headerWords = 16
	hTickets    = 15 // ticket key sets at the end of the region (tickets.go); 0: none
)

// Header words of the meter (meter.go), at the end of the header: 0 in a
// region made before the meter.
const (
	hMeterSeries = 12 // entries of the meter's series index; 0: no meter
	hMeterRows   = 13 // rows of each worker column
	hMeterNext   = 14 // the next row to claim
)

// Cell words, in int64 units from the start of a cell.
const (
	cHashLo   = 0 // 0: never used; tombstone: freed; else the name's hash (odd), published last
	cHashHi   = 1
	cNameLen  = 2
	cName     = 3 // nameWords words of the name, for display
	nameWords = 12
	cScalars  = cName + nameWords // NumScalars scalar fields
	cColumns  = cScalars + NumScalars
	// NameDisplayMax is how much of a cell's name is kept for display;
	// identity is the 128-bit hash of the whole name.
	NameDisplayMax = nameWords * 8
)

// Scalar fields of a cell, shared by all workers.
const (
	// RequestTAT is the request limiter's theoretical arrival time (GCRA).
	RequestTAT = iota
	// TokenTAT is the token limiter's theoretical arrival time (GCRA).
	TokenTAT
	// Ticket is a queue's next ticket number.
	Ticket
	// LastRelease is when a slot was last freed, ns since the epoch, for
	// measuring the queue's hand-off.
	LastRelease
	// BackendLoad is a backend's own count of requests running and
	// waiting, read from its /metrics (vLLM), for the whole fleet.
	BackendLoad
	// BackendKV is its KV-cache usage, in millionths.
	BackendKV
	// BackendLoadAt is when BackendLoad and BackendKV were read (region
	// clock); 0: never.
	BackendLoadAt
	// BackendOthers is the part of BackendLoad that was not this gateway's
	// own requests when it was read (other gateways, clients that go
	// straight to the backend): BackendLoad less the gateway's requests in
	// flight to the server then, at least 0. A backend's load is the
	// gateway's count now plus this figure: the figure read also counts the
	// gateway's own requests of that moment, which may have ended since,
	// and taken whole it held requests in the queue behind free slots until
	// the next read.
	BackendOthers
	// NumScalars is the number of scalar fields (all are in use: another
	// changes the layout, see LayoutVersion).
	NumScalars = 8
)

// NoMark is the value of an unset mark (see Cell.SetMark).
const NoMark = math.MaxInt64

// tombstone marks a freed cell: lookups probe past it, Alloc reuses it.
// Name hashes are odd, so it never collides with one.
const tombstone = 2

// Region is one mapping of the shared region.
type Region struct {
	file  *os.File
	mem   mmap.MMap
	words []int64 // the region as int64 words
	cells int
	cols  int
	cw    int // words per cell

	recall table // which backend holds a stored response (recall.go)
	prefix table // which backends were sent which prompt blocks (prefix.go)

	meterBase, meterRowBase int // first words of the meter's index and rows
	meterSeries, meterRows  int // 0: the region has no meter

	ticketBase, ticketSets int // first word and number of the ticket key sets (0: none)

	ext      int          // first word of the extension header; -1: none (a version-5 region)
	endUsers endUserTable // the end-user table (endusers.go)
}

// Tables are the capacities, in entries, of a region's bounded tables,
// each rounded up to a whole number of buckets (RecallBucket entries); 0
// makes a region without that table, where it always misses.
type Tables struct {
	Recall   int // the recall table (default DefaultRecallEntries)
	Prefix   int // the prefix index (default DefaultPrefixEntries)
	EndUsers int // the end-user table (endusers.go; none by default)
}

// defaultTables are the tables of a region made by Create.
var defaultTables = Tables{Recall: DefaultRecallEntries, Prefix: DefaultPrefixEntries}

// Size returns the bytes a region of the given capacity takes: header,
// cells, its tables (each rounded up to whole buckets, see CreateWith) and
// a meter of DefaultMeterSeries series and DefaultMeterRows rows, and
// TicketSets ticket key sets.
func Size(cells, columns int, t Tables) int {
	return baseSize(cells, columns, t) + (extWords+endUserWords(t.EndUsers)+meterWords(DefaultMeterSeries, DefaultMeterRows, columns)+ticketWords(TicketSets))*8
}

// baseSize is Size without the meter: a region as a sluice before the
// meter made it.
func baseSize(cells, columns int, t Tables) int {
	return (headerWords + cells*cellWords(columns) + tableWords(t.Recall) + tableWords(t.Prefix)) * 8
}

// cellWords is a cell's size in words, rounded up to a 64-byte line.
func cellWords(columns int) int {
	return (cColumns + 2*columns + 7) &^ 7
}

// Create makes a new region in an anonymous memory file (memfd: nothing is
// left behind in /dev/shm when sluice dies) with room for cells named cells
// and columns worker columns, tables of the default sizes
// (DefaultRecallEntries, DefaultPrefixEntries) and the default meter, and
// maps it.
func Create(cells, columns int) (*Region, error) {
	return CreateWith(cells, columns, defaultTables)
}

// CreateWith is Create with tables of the given capacities, each rounded up
// to a whole number of buckets (RecallBucket entries); 0 makes a region
// without that table, where it always misses. A table takes
// RecallEntryBytes an entry; its pages are touched only as entries are
// written (an empty table is all zeros, which the memfd already is).
func CreateWith(cells, columns int, t Tables) (*Region, error) {
	return create(cells, columns, t, DefaultMeterSeries, DefaultMeterRows, TicketSets)
}

// create makes a region with the given capacities (meterSeries 0: without
// a meter, as a version-2 sluice made them; ticketSets 0: without ticket
// key sets, as a version-4 one did).
func create(cells, columns int, t Tables, meterSeries, meterRows, ticketSets int) (*Region, error) {
	return createLayout(cells, columns, t, meterSeries, meterRows, ticketSets, true)
}

// createLayout is create, with ext false for a region without the
// extension header and end-user table (a version-5 sluice's).
func createLayout(cells, columns int, t Tables, meterSeries, meterRows, ticketSets int, ext bool) (*Region, error) {
	if cells < 1 || columns < 1 || !tableSize(t.Recall) || !tableSize(t.Prefix) || !tableSize(t.EndUsers) || meterSeries < 0 || meterRows < 0 ||
		ticketSets < 0 || ticketSets > TicketSets || (!ext && t.EndUsers > 0) {
		return nil, fmt.Errorf("shm: %d cells × %d columns, %d recall and %d prefix entries, a meter of %d series × %d rows is not a region",
			cells, columns, t.Recall, t.Prefix, meterSeries, meterRows)
	}
	t.Recall, t.Prefix, t.EndUsers = roundEntries(t.Recall), roundEntries(t.Prefix), roundEntries(t.EndUsers)
	fd, err := unix.MemfdCreate("sluice-shm", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("shm: memfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), "sluice-shm")
	size := baseSize(cells, columns, t) + (meterWords(meterSeries, meterRows, columns)+ticketWords(ticketSets))*8
	if ext {
		size += (extWords + endUserWords(t.EndUsers)) * 8
	}
	if err := f.Truncate(int64(size)); err != nil {
		f.Close()
		return nil, fmt.Errorf("shm: size the region: %w", err)
	}
	r, err := mapFile(f, size)
	if err != nil {
		f.Close()
		return nil, err
	}
	w := r.words
	w[hVersion], w[hSize], w[hCells], w[hColumns], w[hCellWords] = LayoutVersion, int64(size), int64(cells), int64(columns), int64(cellWords(columns))
	w[hEpoch] = time.Now().UnixNano()
	w[hRecall], w[hPrefix] = int64(t.Recall), int64(t.Prefix)
	w[hMeterSeries], w[hMeterRows] = int64(meterSeries), int64(meterRows)
	w[hTickets] = int64(ticketSets)
	r.cells, r.cols, r.cw = cells, columns, cellWords(columns)
	r.setTables(t.Recall, t.Prefix)
	if ext {
		w[r.extBase()+xEndUsers] = int64(t.EndUsers)
		var seed [16]byte
		if _, err := rand.Read(seed[:]); err != nil {
			r.Close()
			return nil, fmt.Errorf("shm: the end-user table's seed: %w", err)
		}
		w[r.extBase()+xSeed] = int64(binary.LittleEndian.Uint64(seed[:]))
		w[r.extBase()+xSeed+1] = int64(binary.LittleEndian.Uint64(seed[8:]))
		r.setEndUsers(true, t.EndUsers)
	} else {
		w[hVersion] = layoutNoEndUsers
		r.setEndUsers(false, 0)
	}
	r.setTickets(ticketSets)
	r.setMeter(meterSeries, meterRows)
	for i := 0; i < cells; i++ {
		for col := 0; col < columns; col++ {
			w[r.cellBase(i)+cColumns+columns+col] = NoMark
		}
	}
	atomic.StoreInt64(&w[hMagic], Magic) // last: a reader never sees half a header
	return r, nil
}

// Open maps a region handed over as an open file (a worker's inherited fd)
// and checks that it is one this binary understands.
func Open(f *os.File) (*Region, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("shm: %w", err)
	}
	if st.Size() < headerWords*8 {
		return nil, fmt.Errorf("shm: the region is %d bytes, too small to be a sluice region", st.Size())
	}
	r, err := mapFile(f, int(st.Size()))
	if err != nil {
		return nil, err
	}
	w := r.words
	// On a refusal only the mapping goes: the file is the caller's.
	switch {
	case atomic.LoadInt64(&w[hMagic]) != Magic:
		r.mem.Unmap() //nolint:errcheck
		return nil, errors.New("shm: the region is not a sluice region (bad magic)")
	case !knownVersion(w):
		v := w[hVersion]
		r.mem.Unmap() //nolint:errcheck
		return nil, fmt.Errorf("shm: the region has layout version %d and this binary knows version %d; "+
			"stop the running sluice (or restart instead of upgrading) to start on a fresh region", v, LayoutVersion)
	case w[hSize] != st.Size() || w[hCells] < 1 || w[hCells] > math.MaxInt32 || w[hColumns] < 1 || w[hColumns] > math.MaxInt32 ||
		int(w[hCellWords]) != cellWords(int(w[hColumns])) ||
		!tableWord(w[hRecall]) || !tableWord(w[hPrefix]) ||
		w[hMeterSeries] < 0 || w[hMeterSeries] > math.MaxInt32 || w[hMeterRows] < 0 || w[hMeterRows] > math.MaxInt32 ||
		w[hTickets] < 0 || w[hTickets] > TicketSets || !extFits(w) ||
		baseSize(int(w[hCells]), int(w[hColumns]), Tables{Recall: int(w[hRecall]), Prefix: int(w[hPrefix])})+extSize(w)+
			(meterWords(int(w[hMeterSeries]), int(w[hMeterRows]), int(w[hColumns]))+ticketWords(int(w[hTickets])))*8 != int(w[hSize]):
		r.mem.Unmap() //nolint:errcheck
		return nil, errors.New("shm: the region's header does not match its size")
	}
	r.cells, r.cols, r.cw = int(w[hCells]), int(w[hColumns]), int(w[hCellWords])
	r.setTables(int(w[hRecall]), int(w[hPrefix]))
	if w[hVersion] >= LayoutVersion {
		r.setEndUsers(true, int(w[r.extBase()+xEndUsers]))
	} else {
		r.setEndUsers(false, 0)
	}
	r.setTickets(int(w[hTickets]))
	r.setMeter(int(w[hMeterSeries]), int(w[hMeterRows]))
	return r, nil
}

// knownVersion reports whether header w is of a layout this binary reads:
// this one, or an older one whose missing parts' words are 0 (header words
// unused then were written as 0).
func knownVersion(w []int64) bool {
	noTickets := w[hTickets] == 0
	noPrefix := noTickets && w[hPrefix] == 0
	noMeter := noPrefix && w[hMeterSeries] == 0 && w[hMeterRows] == 0
	switch w[hVersion] {
	case LayoutVersion, layoutNoEndUsers:
		return true
	case layoutNoTickets:
		return noTickets
	case layoutNoPrefix:
		return noPrefix
	case layoutNoMeter:
		return noMeter
	case layoutNoRecall:
		return noMeter && w[hRecall] == 0
	}
	return false
}

// tableSize reports whether n entries is a table size this layout holds.
func tableSize(n int) bool { return n >= 0 && n <= math.MaxInt32 }

// tableWord reports whether v is a table's size as Create writes it.
func tableWord(v int64) bool {
	return v >= 0 && v <= math.MaxInt32 && int(v) == roundEntries(int(v))
}

func mapFile(f *os.File, size int) (*Region, error) {
	mem, err := mmap.Map(f, mmap.RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("shm: mmap: %w", err)
	}
	if len(mem) < size {
		mem.Unmap() //nolint:errcheck
		return nil, errors.New("shm: mapping shorter than the region")
	}
	// mmap returns page-aligned memory, so every word is 8-byte aligned.
	words := unsafe.Slice((*int64)(unsafe.Pointer(&mem[0])), size/8)
	return &Region{file: f, mem: mem, words: words}, nil
}

// File is the region's memory file, to hand to worker processes.
func (r *Region) File() *os.File { return r.file }

// Close unmaps the region and closes its file. Cells must not be used after.
func (r *Region) Close() error {
	err := r.mem.Unmap()
	if r.file != nil {
		r.file.Close()
	}
	return err
}

// Capacity is the number of cells the region holds.
func (r *Region) Capacity() int { return r.cells }

// Columns is the number of worker columns of every cell.
func (r *Region) Columns() int { return r.cols }

// Used is the number of cells allocated.
func (r *Region) Used() int { return int(atomic.LoadInt64(&r.words[hUsed])) }

// Generation is the generation of the configuration running now (see
// SetGeneration).
func (r *Region) Generation() int64 { return atomic.LoadInt64(&r.words[hGeneration]) }

// SetGeneration records the generation of the configuration running now,
// so a supervisor that inherits the region (binary upgrade) carries on
// counting after it.
func (r *Region) SetGeneration(gen int64) { atomic.StoreInt64(&r.words[hGeneration], gen) }

// ColumnBase is the first worker column of the supervisor running now.
// Supervisors that hand over to each other (binary upgrade) alternate
// between the two halves of the columns, so the old workers, draining, and
// the new ones never share a column.
func (r *Region) ColumnBase() int { return int(atomic.LoadInt64(&r.words[hColumnBase])) }

// SetColumnBase records the first worker column of the supervisor running now.
func (r *Region) SetColumnBase(base int) { atomic.StoreInt64(&r.words[hColumnBase], int64(base)) }

// Now is the current time in the region's clock: nanoseconds since the
// region was created, the same in every process that maps it.
func (r *Region) Now() int64 { return time.Now().UnixNano() - r.words[hEpoch] }

func (r *Region) cellBase(i int) int { return headerWords + i*r.cw }

func nameHash(name string) (lo, hi int64) {
	h := xxh3.HashString128(name)
	return int64(h.Lo | 1), int64(h.Hi) // lo is never 0: 0 marks a free cell
}

// ErrFull is Alloc's error when every cell is taken.
var ErrFull = errors.New("shm: every cell of the region is taken")

// Alloc returns the cell of name, allocating it when it does not exist yet.
// Only one process may allocate and free (the supervisor); workers use
// Lookup.
func (r *Region) Alloc(name string) (*Cell, error) {
	if c := r.Lookup(name); c != nil {
		return c, nil
	}
	lo, hi := nameHash(name)
	for probe, i := 0, r.home(lo); probe < r.cells; probe, i = probe+1, (i+1)%r.cells {
		base := r.cellBase(i)
		if cur := atomic.LoadInt64(&r.words[base+cHashLo]); cur != 0 && cur != tombstone {
			continue
		}
		w := r.words[base : base+r.cw]
		for k := range w {
			w[k] = 0
		}
		for col := 0; col < r.cols; col++ {
			w[cColumns+r.cols+col] = NoMark
		}
		w[cHashHi], w[cNameLen] = hi, int64(len(name))
		nb := unsafe.Slice((*byte)(unsafe.Pointer(&w[cName])), NameDisplayMax)
		copy(nb, name)
		atomic.StoreInt64(&w[cHashLo], lo) // publish last
		atomic.AddInt64(&r.words[hUsed], 1)
		return r.cell(i), nil
	}
	return nil, ErrFull
}

// Free releases the cell of name for reuse by another name. The caller
// (the supervisor) makes sure nothing holds it or can still reach it.
func (r *Region) Free(name string) bool {
	c := r.Lookup(name)
	if c == nil {
		return false
	}
	atomic.StoreInt64(&c.w[cHashLo], tombstone)
	atomic.AddInt64(&r.words[hUsed], -1)
	return true
}

// Lookup returns the cell of name, or nil when it has not been allocated.
func (r *Region) Lookup(name string) *Cell {
	lo, hi := nameHash(name)
	for probe, i := 0, r.home(lo); probe < r.cells; probe, i = probe+1, (i+1)%r.cells {
		base := r.cellBase(i)
		cur := atomic.LoadInt64(&r.words[base+cHashLo])
		if cur == 0 {
			return nil
		}
		if cur == lo && r.words[base+cHashHi] == hi {
			return r.cell(i)
		}
	}
	return nil
}

func (r *Region) home(lo int64) int { return int(uint64(lo) % uint64(r.cells)) }

func (r *Region) cell(i int) *Cell {
	base := r.cellBase(i)
	return &Cell{w: r.words[base : base+r.cw], cols: r.cols}
}

// Cells calls fn with every allocated cell and its (display) name.
func (r *Region) Cells(fn func(name string, c *Cell)) {
	for i := 0; i < r.cells; i++ {
		c := r.cell(i)
		if h := atomic.LoadInt64(&c.w[cHashLo]); h != 0 && h != tombstone {
			fn(c.Name(), c)
		}
	}
}

// ReleaseColumn gives back everything worker column col holds in every
// cell: its held counts go to zero and its marks are cleared. The
// supervisor calls it when a worker has died, before a new worker takes
// the column. released sums the places (slots, queue and concurrency
// places) it held; the stats cells' bytes and the quota and budget
// cells' reserved tokens and pico-USD are cleared, not counted.
func (r *Region) ReleaseColumn(col int) (released int64) {
	r.Cells(func(name string, c *Cell) {
		held := atomic.SwapInt64(&c.w[cColumns+col], 0)
		if countsPlaces(name) {
			released += held
		}
		atomic.StoreInt64(&c.w[cColumns+c.cols+col], NoMark)
	})
	return released
}

// Cell is one named cell: scalar fields shared by all workers, and per
// worker a held count and a mark.
type Cell struct {
	w    []int64
	cols int
}

// Same reports whether c and o are the same cell of the region (Lookup
// returns a new *Cell each time, so pointers do not say).
func (c *Cell) Same(o *Cell) bool { return o != nil && &c.w[0] == &o.w[0] }

// Name is the cell's name (its first NameDisplayMax bytes).
func (c *Cell) Name() string {
	n := min(int(c.w[cNameLen]), NameDisplayMax)
	return string(unsafe.Slice((*byte)(unsafe.Pointer(&c.w[cName])), NameDisplayMax)[:n])
}

// Scalar returns a pointer to scalar field i, for sync/atomic.
func (c *Cell) Scalar(i int) *int64 { return &c.w[cScalars+i] }

// Held is what worker column col holds.
func (c *Cell) Held(col int) int64 { return atomic.LoadInt64(&c.w[cColumns+col]) }

// Total is the sum over all worker columns: the cell's gauge.
func (c *Cell) Total() int64 {
	var t int64
	col := c.w[cColumns : cColumns+c.cols]
	for i := range col {
		t += atomic.LoadInt64(&col[i])
	}
	return t
}

// Add changes worker column col's held count by d.
func (c *Cell) Add(col int, d int64) { atomic.AddInt64(&c.w[cColumns+col], d) }

// Acquire takes one place for worker column col if the total stays within
// limit, and reports whether it did. It counts the place in the worker's
// own column first and checks the sum after: whoever sees a sum over the
// limit gives its place back, so the limit is never exceeded across
// workers. Two workers racing for the last place may both give it back;
// Acquire then tries again while a place is free (a few times: a
// transient refusal under a race is possible, an overshoot is not).
func (c *Cell) Acquire(col int, limit int64) bool {
	p := &c.w[cColumns+col]
	for try := 0; try < 4; try++ {
		atomic.AddInt64(p, 1)
		if c.Total() <= limit {
			return true
		}
		atomic.AddInt64(p, -1)
		if c.Total() >= limit {
			return false
		}
	}
	return false
}

// Idle reports whether no column holds anything and no mark is set.
func (c *Cell) Idle() bool {
	m, _ := c.MinMark()
	return c.Total() == 0 && m == NoMark
}

// Release gives back one place of worker column col.
func (c *Cell) Release(col int) { atomic.AddInt64(&c.w[cColumns+col], -1) }

// SetMark sets worker column col's mark (a queue's oldest local ticket).
func (c *Cell) SetMark(col int, v int64) { atomic.StoreInt64(&c.w[cColumns+c.cols+col], v) }

// Mark returns worker column col's mark (NoMark when unset).
func (c *Cell) Mark(col int) int64 { return atomic.LoadInt64(&c.w[cColumns+c.cols+col]) }

// AddMarkCount changes by d the count worker column col keeps in its mark
// (a cell whose marks are counts rather than queue marks: NoMark reads as
// 0, and 0 is stored as NoMark so that the cell reads as idle). Only the
// worker of the column writes it; a dead worker's count is cleared with
// its column.
func (c *Cell) AddMarkCount(col int, d int64) {
	p := &c.w[cColumns+c.cols+col]
	for {
		old := atomic.LoadInt64(p)
		n := d
		if old != NoMark {
			n += old
		}
		if n <= 0 {
			n = NoMark
		}
		if atomic.CompareAndSwapInt64(p, old, n) {
			return
		}
	}
}

// MarkCount is the sum over all columns of the counts AddMarkCount keeps.
func (c *Cell) MarkCount() int64 {
	var t int64
	for col := 0; col < c.cols; col++ {
		if v := atomic.LoadInt64(&c.w[cColumns+c.cols+col]); v != NoMark {
			t += v
		}
	}
	return t
}

// MinMark returns the smallest mark over all columns and its column;
// NoMark and -1 when none is set.
func (c *Cell) MinMark() (int64, int) {
	best, at := int64(NoMark), -1
	for col := 0; col < c.cols; col++ {
		if v := atomic.LoadInt64(&c.w[cColumns+c.cols+col]); v < best {
			best, at = v, col
		}
	}
	return best, at
}

// GCRA spends cost from the rate limiter in scalar field i (the generic
// cell rate algorithm: one compare-and-swap on a theoretical arrival time,
// so the limit is exact however requests spread over workers). A limiter
// admits while its TAT stays within window of now; cost and window are in
// nanoseconds of the region clock. It returns whether it admitted and the
// TAT after (admitted) or as found (refused).
func (c *Cell) GCRA(i int, now, cost, window int64) (bool, int64) {
	return GCRA(&c.w[cScalars+i], now, cost, window)
}

// StaleLoad is how old a backend's reported load may be and still count.
const StaleLoad = 2 * time.Second

// SetReportedLoad records a backend's own view of its load, read at now
// (region clock): requests running plus waiting, and KV-cache usage (0–1).
// own is this gateway's requests in flight to the server when the figure
// was read: the rest is other users' load (see BackendOthers).
func (c *Cell) SetReportedLoad(load, own int64, kv float64, now int64) {
	atomic.StoreInt64(&c.w[cScalars+BackendLoad], load)
	atomic.StoreInt64(&c.w[cScalars+BackendOthers], max(load-own, 0))
	atomic.StoreInt64(&c.w[cScalars+BackendKV], int64(kv*1e6))
	atomic.StoreInt64(&c.w[cScalars+BackendLoadAt], now)
}

// ReportedLoad is the backend's own view of its load as SetReportedLoad
// recorded it, KV-cache usage in millionths; fresh is false when none was
// recorded in the last StaleLoad.
func (c *Cell) ReportedLoad(now int64) (load, kvMillionths int64, fresh bool) {
	at := atomic.LoadInt64(&c.w[cScalars+BackendLoadAt])
	if at == 0 || now-at >= int64(StaleLoad) {
		return 0, 0, false
	}
	return atomic.LoadInt64(&c.w[cScalars+BackendLoad]), atomic.LoadInt64(&c.w[cScalars+BackendKV]), true
}

// OthersLoad is the part of the backend's reported load that was not this
// gateway's own when it was read (see BackendOthers), and its KV-cache
// usage in millionths; fresh is false when none was recorded in the last
// StaleLoad.
func (c *Cell) OthersLoad(now int64) (others, kvMillionths int64, fresh bool) {
	at := atomic.LoadInt64(&c.w[cScalars+BackendLoadAt])
	if at == 0 || now-at >= int64(StaleLoad) {
		return 0, 0, false
	}
	return atomic.LoadInt64(&c.w[cScalars+BackendOthers]), atomic.LoadInt64(&c.w[cScalars+BackendKV]), true
}

// Settle corrects a limiter after the fact by delta nanoseconds (negative:
// a refund of a reservation larger than what was used). A TAT that falls
// behind now is harmless: GCRA reads it as max(TAT, now).
func (c *Cell) Settle(i int, delta int64) { atomic.AddInt64(&c.w[cScalars+i], delta) }
