package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// clkTck is USER_HZ, the unit of utime and stime in /proc/PID/stat.
const clkTck = 100

// tree returns pid and all its descendants.
func tree(root int) []int {
	parents := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := statFields(pid); len(f) > 2 {
			ppid, _ := strconv.Atoi(f[1])
			parents[ppid] = append(parents[ppid], pid)
		}
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		out = append(out, parents[out[i]]...)
	}
	return out
}

// statFields returns the fields of /proc/PID/stat after the command name:
// [0] state, [1] ppid, …, [11] utime, [12] stime.
func statFields(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 > len(b) {
		return nil
	}
	return strings.Fields(string(b[i+2:]))
}

// cpuSeconds is user+sys CPU time of a process tree, in seconds.
func cpuSeconds(root int) float64 {
	var ticks int64
	for _, pid := range tree(root) {
		f := statFields(pid)
		if len(f) > 12 {
			u, _ := strconv.ParseInt(f[11], 10, 64)
			s, _ := strconv.ParseInt(f[12], 10, 64)
			ticks += u + s
		}
	}
	return float64(ticks) / clkTck
}

// rssKiB is the summed VmRSS of a process tree, in KiB.
func rssKiB(root int) int64 { return sumKiB(root, "status", "VmRSS:") }

// pssKiB is the summed PSS of a process tree, in KiB: each shared page
// counted once across the processes that map it.
func pssKiB(root int) int64 { return sumKiB(root, "smaps_rollup", "Pss:") }

// sumKiB adds up one "Field:   N kB" line of /proc/PID/file over a tree.
func sumKiB(root int, file, field string) int64 {
	var total int64
	for _, pid := range tree(root) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, file))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, field); ok {
				n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				total += n
				break
			}
		}
	}
	return total
}
