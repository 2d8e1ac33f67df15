package main

import (
	"os"
	"testing"
)

// The rig's own process reads as a live tree with CPU time and memory.
func TestProcReadings(t *testing.T) {
	pid := os.Getpid()
	x := 0
	for i := 0; i < 50_000_000; i++ {
		x += i
	}
	_ = x
	if len(tree(pid)) < 1 || cpuSeconds(pid) <= 0 || rssKiB(pid) <= 0 {
		t.Fatalf("tree %v cpu %v rss %v", tree(pid), cpuSeconds(pid), rssKiB(pid))
	}
	// PSS counts shared pages in part: never more than RSS, never nothing.
	if pss, rss := pssKiB(pid), rssKiB(pid); pss <= 0 || pss > rss {
		t.Fatalf("pss %d KiB, rss %d KiB", pss, rss)
	}
}
