package shm

import (
	"sync/atomic"
	"unsafe"

	"github.com/zeebo/xxh3"
)

// The meter: the counters and histograms of /metrics, which every worker
// adds to and the supervisor sums at scrape time. It lies at the end of
// the region, after the cells and the recall table, in two parts:
//
//   - the series index: MeterSeries entries of MeterEntryWords words, one
//     per series (a metric and its label values, named by a descriptor
//     string), found by the descriptor's hash with linear probing;
//   - the rows: for each worker column, MeterRows int64 words. A series
//     has one row (a counter) or several (a histogram's buckets and sum),
//     the same rows in every column; a worker adds only to its own
//     column's, so workers never write the same cache line, and a series'
//     value is the sum over the columns.
//
// Nothing here is ever cleared: a worker that dies leaves its column's
// counts as they are (ReleaseColumn does not touch the meter), and the
// worker that takes the column next adds to them, so a count is neither
// lost nor counted twice across worker restarts, reloads and binary
// upgrades (the new supervisor's workers use the other half of the
// columns and the old half keeps its counts).
//
// Entries are claimed without a lock: a worker claims an empty entry by a
// compare-and-swap of its hash word from 0, then gives it rows by a
// compare-and-swap of its row word from 0 — any worker that finds the hash
// but no rows yet does the same, so a worker killed between the two steps
// leaves no entry unusable — and writes the descriptor (every writer
// writes the same bytes). The supervisor shows an entry only once its
// descriptor hashes to the entry's hash. Two descriptors with the same
// 64-bit hash would share a series (once in 2^64 per pair).
//
// Entry words:
//
//	0     hash of the descriptor (odd: 0 is an empty entry)
//	1     first row + 1 (0: no rows yet)
//	2     rows
//	3     descriptor length
//	4-31  the descriptor's bytes (MeterDescMax)
const (
	// MeterEntryWords is the words of a series' index entry.
	MeterEntryWords = 32
	mHash           = 0
	mRow            = 1
	mRows           = 2
	mDescLen        = 3
	mDesc           = 4
	// MeterDescMax is the longest descriptor a series may have.
	MeterDescMax = (MeterEntryWords - mDesc) * 8
	// DefaultMeterSeries and DefaultMeterRows size the meter of a region
	// made by Create: 16,384 series (2 MiB of index) and 131,072 rows per
	// worker column (1 MiB each). Pages are touched only as they are
	// written: a gateway with a few hundred series uses a few hundred KiB.
	DefaultMeterSeries = 1 << 14
	DefaultMeterRows   = 1 << 17
	// meterProbes bounds a lookup's linear probing: a full neighbourhood
	// is a full index, as far as recording is concerned.
	meterProbes = 64
)

// meterWords is the words a meter of the given capacity takes.
func meterWords(series, rows, columns int) int { return series*MeterEntryWords + rows*columns }

func (r *Region) setMeter(series, rows int) {
	r.meterSeries, r.meterRows = series, rows
	r.meterBase = len(r.words) - ticketWords(r.ticketSets) - meterWords(series, rows, r.cols)
	r.meterRowBase = r.meterBase + series*MeterEntryWords
}

// MeterCapacity is the meter's series and rows per column; 0, 0 in a
// region made by a sluice without one (inherited in a binary upgrade),
// where MeterSeries always fails.
func (r *Region) MeterCapacity() (series, rows int) { return r.meterSeries, r.meterRows }

// MeterHash is the hash of a series' descriptor, as the index keeps it.
func MeterHash(desc string) int64 { return int64(xxh3.HashString(desc) | 1) }

func (r *Region) meterEntry(i int) []int64 {
	b := r.meterBase + i*MeterEntryWords
	return r.words[b : b+MeterEntryWords : b+MeterEntryWords]
}

// MeterSeries returns the first of the rows rows of the series named desc,
// claiming an entry and rows for it if it has none yet. ok is false when
// the series cannot be kept: the descriptor is longer than MeterDescMax,
// the index or the rows are full, or the region has no meter. A series'
// rows are the same for every process; callers keep the answer (a lookup
// hashes the descriptor and probes the index).
func (r *Region) MeterSeries(desc string, rows int) (row int, ok bool) {
	if r.meterSeries == 0 || len(desc) > MeterDescMax || rows < 1 {
		return 0, false
	}
	h := MeterHash(desc)
	for probe, i := 0, int(uint64(h)%uint64(r.meterSeries)); probe < min(meterProbes, r.meterSeries); probe, i = probe+1, (i+1)%r.meterSeries {
		e := r.meterEntry(i)
		cur := atomic.LoadInt64(&e[mHash])
		if cur == 0 && atomic.CompareAndSwapInt64(&e[mHash], 0, h) {
			cur = h
		} else if cur == 0 {
			cur = atomic.LoadInt64(&e[mHash])
		}
		if cur != h {
			continue
		}
		first := atomic.LoadInt64(&e[mRow])
		if first == 0 {
			got, ok := r.meterClaimRows(rows)
			if !ok {
				return 0, false
			}
			atomic.StoreInt64(&e[mRows], int64(rows)) // before the row word: a reader that sees rows sees their number
			atomic.CompareAndSwapInt64(&e[mRow], 0, int64(got)+1)
			first = atomic.LoadInt64(&e[mRow])
		}
		if int(atomic.LoadInt64(&e[mRows])) != rows {
			return 0, false // the same descriptor asked with another shape: a bug, counted nowhere
		}
		if int(atomic.LoadInt64(&e[mDescLen])) != len(desc) || r.meterDesc(e) != desc {
			copy(unsafe.Slice((*byte)(unsafe.Pointer(&e[mDesc])), MeterDescMax), desc)
			atomic.StoreInt64(&e[mDescLen], int64(len(desc)))
		}
		return int(first - 1), true
	}
	return 0, false
}

// meterClaimRows takes n rows from the shared allocation cursor.
func (r *Region) meterClaimRows(n int) (int, bool) {
	p := &r.words[hMeterNext]
	for {
		next := atomic.LoadInt64(p)
		if int(next)+n > r.meterRows {
			return 0, false
		}
		if atomic.CompareAndSwapInt64(p, next, next+int64(n)) {
			return int(next), true
		}
	}
}

func (r *Region) meterDesc(e []int64) string {
	n := min(max(int(atomic.LoadInt64(&e[mDescLen])), 0), MeterDescMax)
	return string(unsafe.Slice((*byte)(unsafe.Pointer(&e[mDesc])), MeterDescMax)[:n])
}

// MeterWords returns worker column col's words of n rows from row: a
// series' words for that worker to add to with sync/atomic.
func (r *Region) MeterWords(col, row, n int) []int64 {
	b := r.meterRowBase + col*r.meterRows + row
	return r.words[b : b+n : b+n]
}

// MeterSum is the sum over every worker column of row.
func (r *Region) MeterSum(row int) int64 {
	var t int64
	for col := 0; col < r.cols; col++ {
		t += atomic.LoadInt64(&r.words[r.meterRowBase+col*r.meterRows+row])
	}
	return t
}

// MeterEach calls fn with every series whose descriptor is written whole:
// its descriptor, first row and number of rows.
func (r *Region) MeterEach(fn func(desc string, row, rows int)) {
	for i := 0; i < r.meterSeries; i++ {
		e := r.meterEntry(i)
		h := atomic.LoadInt64(&e[mHash])
		if h == 0 {
			continue
		}
		first, rows := atomic.LoadInt64(&e[mRow]), atomic.LoadInt64(&e[mRows])
		if first == 0 || rows < 1 || int(first-1)+int(rows) > r.meterRows {
			continue
		}
		if desc := r.meterDesc(e); MeterHash(desc) == h {
			fn(desc, int(first-1), int(rows))
		}
	}
}
