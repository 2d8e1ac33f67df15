package tests

import (
	"os/exec"
	"strings"
	"testing"
)

// The dependency direction the design keeps: config and shm import nothing
// of sluice's (the region knows names and offsets only; package cells
// joins the two); the worker never imports the supervisor (a worker owns
// nothing that must outlive it); the supervisor never imports the worker;
// the pipeline (proxy) imports neither the process around it (worker) nor
// the supervisor; the pipeline's leaf packages import nothing of sluice's
// above them (no proxy, worker or supervisor); supervisor/adminguard
// imports nothing of sluice's.
func TestDependencyDirection(t *testing.T) {
	const mod = "github.com/sluice-gw/sluice/"
	forbidden := map[string][]string{
		"config":     {mod},
		"shm":        {mod},
		"worker":     {mod + "supervisor"},
		"supervisor": {mod + "worker", mod + "proxy"},
		"proxy":      {mod + "worker", mod + "supervisor"},
		// The pipeline's leaves ("$": that package alone, not the ones
		// under it, their siblings).
		"proxy/admission":   {mod + "proxy$", mod + "worker", mod + "supervisor"},
		"proxy/usage":       {mod + "proxy$", mod + "worker", mod + "supervisor"},
		"proxy/affinity":    {mod + "proxy$", mod + "worker", mod + "supervisor"},
		"proxy/directwrite": {mod + "proxy$", mod + "worker", mod + "supervisor"},
		"proxy/provkeys":    {mod + "proxy$", mod + "worker", mod + "supervisor"},
		"proxy/queue":       {mod + "proxy$", mod + "worker", mod + "supervisor"},
		"proxy/reqscan":     {mod + "proxy$", mod + "worker", mod + "supervisor"},
		"proxy/sat":         {mod},
		"proxy/sse":         {mod + "proxy$", mod + "worker", mod + "supervisor"},
		"proxy/tracing":     {mod + "proxy$", mod + "worker", mod + "supervisor"},
		"proxy/upstream":    {mod + "proxy$", mod + "worker", mod + "supervisor"},
		// The quotas' accounting knows the region's cells, not who uses it.
		"quota": {mod + "proxy", mod + "worker", mod + "supervisor", mod + "config"},
		// The end users' table knows the region and the quotas' calendar,
		// not requests, HTTP or the configuration.
		"enduser": {mod + "proxy", mod + "worker", mod + "supervisor", mod + "config"},
		// The admin listener's guards know the standard library only.
		"supervisor/adminguard": {mod},
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
				if exact, ok := strings.CutSuffix(b, "$"); ok && dep == exact || !ok && strings.HasPrefix(dep, b) {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}

// The SDKs the integration tests drive the gateway with are test clients:
// the shipped binary never links them.
func TestBinaryLinksNoTestClient(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../cmd/sluice").Output()
	if err != nil {
		t.Fatalf("go list cmd/sluice: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, sdk := range []string{"github.com/anthropics/anthropic-sdk-go", "github.com/openai/openai-go"} {
			if strings.HasPrefix(dep, sdk) {
				t.Errorf("the binary depends on %s", dep)
			}
		}
	}
}
