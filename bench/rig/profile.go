package main

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// captureProfiles fetches, from sluice's worker, a CPU profile over the
// middle of a run and a heap profile in its middle (under load: for
// scenario c, with every stream open), into -profile as
// SCENARIO[-VARIANT]-{cpu,heap}.pprof. Each run overwrites the last.
func captureProfiles() {
	name := current.scenario
	if current.variant != "" {
		name += "-" + current.variant
	}
	secs := int(dur.Seconds()) - 2
	if secs < 1 {
		secs = 1
	}
	time.Sleep(time.Second) // past the ramp-up
	heapDone := make(chan struct{})
	go func() {
		defer close(heapDone)
		time.Sleep(time.Duration(secs) * time.Second / 2)
		fetchProfile("/debug/pprof/heap?gc=1", filepath.Join(*profileDir, name+"-heap.pprof"))
		// The text form ends with runtime.MemStats: stacks, heap in use,
		// idle and released — what RSS is made of beyond live objects.
		fetchProfile("/debug/pprof/heap?debug=1", filepath.Join(*profileDir, name+"-memstats.txt"))
		fetchProfile("/debug/pprof/goroutine?debug=1", filepath.Join(*profileDir, name+"-goroutines.txt"))
	}()
	fetchProfile(fmt.Sprintf("/debug/pprof/profile?seconds=%d", secs), filepath.Join(*profileDir, name+"-cpu.pprof"))
	<-heapDone
}

func fetchProfile(path, file string) {
	res, err := http.Get("http://" + pprofAddr + path)
	if err != nil {
		log.Printf("  profile %s: %v", path, err)
		return
	}
	defer res.Body.Close()
	must(os.MkdirAll(filepath.Dir(file), 0o755))
	f, err := os.Create(file)
	must(err)
	defer f.Close()
	if _, err := io.Copy(f, res.Body); err != nil || res.StatusCode != 200 {
		log.Printf("  profile %s: status %d %v", path, res.StatusCode, err)
	}
}
