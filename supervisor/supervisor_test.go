package supervisor

import (
	"net"
	"os/exec"
	"strings"
	"testing"
)

func TestExitReason(t *testing.T) {
	for cmdline, want := range map[string]string{
		"exit 0":        "exit code 0",
		"exit 3":        "exit code 3",
		"kill -9 $$":    "killed by signal killed",
		"kill -TERM $$": "killed by signal terminated",
	} {
		err := exec.Command("sh", "-c", cmdline).Run()
		if got := exitReason(err); got != want {
			t.Errorf("%q: exitReason = %q, want %q", cmdline, got, want)
		}
	}
}

func TestAllowedCPUs(t *testing.T) {
	cpus := allowedCPUs()
	if len(cpus) == 0 {
		t.Fatal("no allowed CPUs")
	}
	for i := 1; i < len(cpus); i++ {
		if cpus[i] <= cpus[i-1] {
			t.Fatalf("CPUs not ascending: %v", cpus)
		}
	}
}

// Every slot socket listens on the same port; each accepts on its own.
func TestSlotSocketsShareAPort(t *testing.T) {
	files, addr, err := openSlotSockets("127.0.0.1:0", 3)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll(files)
	if len(files) != 3 || strings.HasSuffix(addr, ":0") {
		t.Fatalf("%d sockets on %s", len(files), addr)
	}
	for _, f := range files {
		ln, err := net.FileListener(f)
		if err != nil {
			t.Fatal(err)
		}
		if ln.Addr().String() != addr {
			t.Errorf("socket on %s, want %s", ln.Addr(), addr)
		}
		ln.Close()
	}
}
