package tests

import (
	"os/exec"
	"strings"
	"testing"
)

// The dependency direction the design keeps: config and shm import nothing
// of sluice's (the region knows names and offsets only; package cells
// joins the two); the worker never imports the supervisor (a worker owns
// nothing that must outlive it); the supervisor never imports the worker.
func TestDependencyDirection(t *testing.T) {
	const mod = "github.com/sluice-gw/sluice/"
	forbidden := map[string][]string{
		"config":     {mod},
		"shm":        {mod},
		"worker":     {mod + "supervisor"},
		"supervisor": {mod + "worker"},
	}
	for pkg, bad := range forbidden {
		out, err := exec.Command("go", "list", "-deps", "../"+pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if dep == mod+pkg {
				continue
			}
			for _, b := range bad {
				if strings.HasPrefix(dep, b) {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}
