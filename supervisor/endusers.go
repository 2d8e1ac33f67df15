package supervisor

// End users' quotas outlive the service too (package enduser's state.go):
// each checkpoint of the keys' quotas also writes the end-user table's
// seed and the quota state of its end users who used some of a period
// running now, to EndUserStateFile, when it changed; a fresh region takes
// the seed and the entries back before its first worker starts. An
// inherited region (a binary upgrade) keeps its own table and seed: the
// file is not read, and the new supervisor writes it from then on.

import (
	"bytes"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/enduser"
	"github.com/sluice-gw/sluice/quota"
	"github.com/sluice-gw/sluice/shm"
)

// EndUserStateFile is the end users' state file's name in state_dir.
const EndUserStateFile = "endusers.state"

// loadEndUsers reads the end users' state file into r, a fresh region
// (cfg's cells allocated, no worker started), and counts each key's
// restored entries against its max_tracked. A missing file is a first
// start; unreadable lines are reported, what they held lost.
func (q *quotaState) loadEndUsers(r *shm.Region, cfg *config.Config) {
	if q == nil || q.dir == "" || r.EndUserCapacity() == 0 {
		return
	}
	file := filepath.Join(q.dir, EndUserStateFile)
	f, err := os.Open(file)
	if os.IsNotExist(err) {
		return
	}
	if err != nil {
		q.log.Error("end-user state: cannot read; end users' quotas start afresh", "file", file, "err", err)
		return
	}
	seed, hasSeed, saved, bad, err := enduser.ReadState(f)
	f.Close()
	if err != nil {
		q.log.Error("end-user state: reading stopped early; what the rest held is lost", "file", file, "err", err)
	}
	if bad > 0 {
		q.log.Error("end-user state: unreadable lines skipped; the quota use they held is lost", "file", file, "lines", bad, "read", len(saved))
	}
	if !hasSeed {
		if len(saved) > 0 {
			q.log.Error("end-user state: the table's seed is unreadable; end users' quotas start afresh", "file", file, "entries", len(saved))
		}
		return
	}
	r.SetEndUserSeed(seed)
	restored, lost := enduser.Restore(r, saved, r.Now())
	if lost > 0 {
		q.log.Error("end-user state: entries found no room in the table (end_user_table smaller than when they were saved); their quota use is lost",
			"file", file, "lost", lost)
	}
	cal := quota.NewCalendar(cfg.QuotaLocation())
	enduser.Sweep(r, endUserKeys(r, cfg), r.Now(), &enduser.Clock{Cal: cal, Now: cal.Now()})
	q.log.Info("end-user state read", "file", file, "restored", restored)
}

// checkpointEndUsers writes the end users' state file if what it would
// hold changed since the last write (a table of a million idle end users
// is not written every second).
func (q *quotaState) checkpointEndUsers(r *shm.Region, cal quota.Calendar) error {
	if r.EndUserCapacity() == 0 {
		return nil
	}
	saved := enduser.Save(r, &enduser.Clock{Cal: cal, Now: cal.Now()})
	var buf bytes.Buffer
	if err := enduser.WriteState(&buf, r.EndUserSeed(), saved); err != nil {
		return err
	}
	sum := crc32.ChecksumIEEE(buf.Bytes())
	if q.endUsersOnce && sum == q.endUsersWritten {
		return nil
	}
	if err := q.replaceFile(EndUserStateFile, func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err }); err != nil {
		return err
	}
	q.endUsersWritten, q.endUsersOnce = sum, true
	return nil
}

// endUserKeys are the keys of cfg with end_user, by enduser.KeyHash: each
// one's count of tracked entries (its cell's shm.KeyEndUsersScalar).
func endUserKeys(r *shm.Region, cfg *config.Config) map[uint32]*int64 {
	keys := map[uint32]*int64{}
	for _, k := range cfg.Keys {
		if c := r.Lookup(shm.KeyCell(k.Name)); k.EndUser != nil && c != nil {
			keys[enduser.KeyHash(k.Name)] = c.Scalar(shm.KeyEndUsersScalar)
		}
	}
	return keys
}
