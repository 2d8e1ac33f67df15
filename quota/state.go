package quota

// The quotas' and budgets' durable state: what each cell settled (its
// total, and each period's id and base), written to a file now and then
// and read back into a fresh region, so that a restart of the service does
// not hand every key a new month. One line per cell, each with its own
// checksum: a torn or corrupt line is reported and skipped, never fatal,
// and the lines around it are read.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
	"sync/atomic"

	"github.com/sluice-gw/sluice/shm"
)

// Entry is one cell's settled state.
type Entry struct {
	Cell    string               `json:"cell"`
	Total   int64                `json:"total"`
	Periods [NumPeriods][2]int64 `json:"periods"` // each period's id and base
}

// Snapshot reads c's settled state.
func Snapshot(name string, c *shm.Cell) Entry {
	e := Entry{Cell: name, Total: atomic.LoadInt64(c.Scalar(sTotal))}
	for p := Day; p < NumPeriods; p++ {
		e.Periods[p] = [2]int64{atomic.LoadInt64(c.Scalar(idScalar(p))), atomic.LoadInt64(c.Scalar(baseScalar(p)))}
	}
	return e
}

// Restore writes e into c, a fresh cell (before any worker uses it). A
// period id being rolled (negative) is kept as the id it was rolling to,
// its base as it was: the next use rolls it over again.
func Restore(c *shm.Cell, e Entry) {
	atomic.StoreInt64(c.Scalar(sTotal), e.Total)
	for p := Day; p < NumPeriods; p++ {
		id, base := e.Periods[p][0], e.Periods[p][1]
		if id < 0 {
			id, base = 0, 0 // rolled over at next use: this period starts empty
		}
		atomic.StoreInt64(c.Scalar(baseScalar(p)), base)
		atomic.StoreInt64(c.Scalar(idScalar(p)), id)
	}
}

// Write writes entries, a line each: the line's CRC-32 (IEEE) in hex, a
// space, its JSON.
func Write(w io.Writer, entries []Entry) error {
	bw := bufio.NewWriter(w)
	for _, e := range entries {
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		fmt.Fprintf(bw, "%08x %s\n", crc32.ChecksumIEEE(b), b)
	}
	return bw.Flush()
}

// MaxStateLine bounds a line of the state file (a cell's name is at most
// a key's name and a prefix).
const MaxStateLine = 64 << 10

// Read reads what Write wrote. Lines that do not read — torn by a crash,
// corrupt, too long — are counted in bad and skipped, and the lines after
// them read; err is only the reader's own failure.
func Read(r io.Reader) (entries []Entry, bad int, err error) {
	br := bufio.NewReaderSize(r, 4096)
	var line []byte
	for {
		chunk, isPrefix, rerr := br.ReadLine()
		if rerr == io.EOF {
			return entries, bad, nil
		}
		if rerr != nil {
			return entries, bad, rerr
		}
		if len(line)+len(chunk) <= MaxStateLine {
			line = append(line, chunk...)
		} else {
			line = line[:0:0] // too long to be ours: skipped to its end, counted
			for isPrefix && rerr == nil {
				_, isPrefix, rerr = br.ReadLine()
			}
			bad++
			continue
		}
		if isPrefix {
			continue
		}
		if e, ok := parseLine(string(line)); ok {
			entries = append(entries, e)
		} else {
			bad++
		}
		line = line[:0]
	}
}

// parseLine reads one line of the state file: its checksum, then its JSON.
func parseLine(line string) (Entry, bool) {
	var e Entry
	sum, body, ok := strings.Cut(line, " ")
	var want uint32
	if _, err := fmt.Sscanf(sum, "%08x", &want); !ok || err != nil || len(sum) != 8 || crc32.ChecksumIEEE([]byte(body)) != want {
		return e, false
	}
	if json.Unmarshal([]byte(body), &e) != nil || e.Cell == "" {
		return e, false
	}
	return e, true
}
