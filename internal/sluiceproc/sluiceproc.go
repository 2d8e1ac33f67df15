// Package sluiceproc is what the programs that run the real sluice binary
// share — the bench programs and the integration tests: building it as the
// rig does, starting it in its own process group, and finding its workers.
package sluiceproc

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Build compiles sluice as bench/rig does (static, without cgo, the
// stdjson,gjson tags) into bench/.bin and returns its path. Run from the
// repository root.
func Build() string {
	dir := filepath.Join("bench", ".bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		log.Fatal(err)
	}
	path, _ := filepath.Abs(filepath.Join(dir, "sluice"))
	cmd := exec.Command("go", "build", "-tags", "stdjson,gjson", "-o", path, "./cmd/sluice")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		log.Fatalf("building sluice (run from the repository root): %v", err)
	}
	return path
}

// Start runs `bin serve -c config` in a process group of its own (so the
// caller can signal it with its workers), its output to logPath.
func Start(bin, config, logPath string) *exec.Cmd {
	cmd := exec.Command(bin, "serve", "-c", config)
	logf, err := os.Create(logPath)
	if err != nil {
		log.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	return cmd
}

// Children returns the pids of the live (not zombie) child processes of
// parent: a supervisor's workers.
func Children(parent int) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// Fields after the parenthesised command name (which may hold
		// spaces): state, ppid, ...
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(parent) && f[0] != "Z" {
			pids = append(pids, pid)
		}
	}
	return pids
}
