package supervisor

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// With every descriptor taken, a start fails with EMFILE; run releases
// the reserve, the start succeeds, and the reserve is refilled once the
// start's descriptors are closed. The test runs itself under a limit of
// 64 descriptors (ulimit in a shell, both soft and hard, so the Go
// runtime cannot raise it), not to lower this process's own.
func TestFDReserveStartsWhenOutOfFDs(t *testing.T) {
	if os.Getenv("SLUICE_FDRESERVE_CHILD") == "1" {
		fdReserveChild(t)
		return
	}
	cmd := exec.Command("sh", "-c", `ulimit -n 64 && exec "$0" -test.run='^TestFDReserveStartsWhenOutOfFDs$' -test.v`, os.Args[0])
	cmd.Env = append(os.Environ(), "SLUICE_FDRESERVE_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "started with the reserve") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func fdReserveChild(t *testing.T) {
	r := newFDReserve(fdReserveSize)
	if r.held() != fdReserveSize {
		t.Fatalf("reserve holds %d", r.held())
	}
	start := func() error { return exec.Command("/bin/true").Run() } // pipes, /dev/null, exec's own pipe
	if released, err := r.run(start); err != nil || released {
		t.Fatalf("with descriptors to spare: released %v, %v", released, err)
	}
	var hog []*os.File
	defer func() { closeAll(hog) }()
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			if !outOfFDs(err) {
				t.Fatal(err)
			}
			break
		}
		hog = append(hog, f)
	}
	if err := start(); !outOfFDs(err) {
		t.Fatalf("a start with no descriptor left: %v, want EMFILE", err)
	}
	released, err := r.run(start)
	if err != nil || !released {
		t.Fatalf("out of descriptors: released %v, %v", released, err)
	}
	if r.held() != fdReserveSize {
		t.Fatalf("reserve refilled to %d, want %d", r.held(), fdReserveSize)
	}
	t.Log("started with the reserve")
}

func TestAdminConnsCap(t *testing.T) {
	for _, c := range []struct {
		max     int
		limit   uint64
		open    int
		want    int
		lowered bool
	}{
		{64, 1 << 20, 40, 64, false},
		{64, 256, 40, 64, false},
		{1000, 256, 40, 108, true},
		{64, 100, 40, 30, true},
		{64, 64, 70, 1, true},
		{64, 1 << 63, 40, 64, false},
	} {
		got, lowered := adminConnsCap(c.max, c.limit, c.open)
		if got != c.want || lowered != c.lowered {
			t.Errorf("adminConnsCap(%d, %d, %d) = %d, %v; want %d, %v", c.max, c.limit, c.open, got, lowered, c.want, c.lowered)
		}
	}
}
