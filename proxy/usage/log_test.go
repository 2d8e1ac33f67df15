package usage

import (
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// A reload that turns the usage log off while lines are being written
// must not crash the worker: write checked the writer before taking the
// lock, and a nil writer panicked in emit.
func TestUsageLogTurnedOffWhileWriting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "u.log")
	u, err := Open(path, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := &Record{Start: time.Now(), RequestID: "x"}
			for {
				select {
				case <-stop:
					return
				default:
				}
				u.Write(rec, time.Now())
			}
		}()
	}
	for i := 0; i < 50000; i++ {
		u.Retarget("off", 0)
		u.Retarget(path, 0)
	}
	close(stop)
	wg.Wait()
}
