package shm

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

// A child process of the multi-process tests: it maps the region inherited
// on fd 3 and runs the work named in SHM_TEST_CHILD.
func TestMain(m *testing.M) {
	if work := os.Getenv("SHM_TEST_CHILD"); work != "" {
		os.Exit(child(work))
	}
	os.Exit(m.Run())
}

func child(work string) int {
	r, err := Open(os.NewFile(3, "region"))
	if err != nil {
		fmt.Println("open:", err)
		return 1
	}
	col, _ := strconv.Atoi(os.Getenv("SHM_TEST_COL"))
	switch work {
	case "gcra": // try 1000 times to spend 1 of a burst of 100
		c := r.Lookup("key/burst")
		admitted := 0
		for i := 0; i < 1000; i++ {
			if ok, _ := c.GCRA(RequestTAT, r.Now(), 60e9/100, 60e9); ok {
				admitted++
			}
		}
		fmt.Println(admitted)
	case "acquire": // take and give back places; record any overshoot seen
		c, probe := r.Lookup("backend/slots"), r.Lookup("probe/inside")
		over := 0
		for i := 0; i < 20000; i++ {
			if c.Acquire(col, 3) {
				probe.Add(col, 1)
				if probe.Total() > 3 {
					over++
				}
				probe.Add(col, -1)
				c.Release(col)
			}
		}
		fmt.Println(over)
	case "hold": // take 5 places and wait to be killed
		c := r.Lookup("backend/slots")
		for i := 0; i < 5; i++ {
			c.Acquire(col, 1000)
		}
		fmt.Println("held")
		select {}
	}
	return 0
}

// runChildren runs n children doing work, column i each, and returns
// their trimmed outputs.
func runChildren(t *testing.T, r *Region, n int, work string) []string {
	t.Helper()
	outs := make([]string, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "SHM_TEST_CHILD="+work, "SHM_TEST_COL="+strconv.Itoa(i))
			cmd.ExtraFiles = []*os.File{r.File()}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("child %d: %v: %s", i, err, out)
			}
			outs[i] = strings.TrimSpace(string(out))
		}()
	}
	wg.Wait()
	return outs
}

func TestAllocLookupStable(t *testing.T) {
	r, err := Create(64, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	a, err := r.Alloc("key/team-a")
	if err != nil {
		t.Fatal(err)
	}
	a.Add(2, 7)
	again, _ := r.Alloc("key/team-a")
	if again.Total() != 7 || r.Used() != 1 {
		t.Fatalf("Alloc of an existing name gave a different cell: total %d, used %d", again.Total(), r.Used())
	}
	if r.Lookup("key/team-b") != nil {
		t.Fatal("Lookup found a name never allocated")
	}
	if got := r.Lookup("key/team-a"); got == nil || got.Held(2) != 7 || got.Name() != "key/team-a" {
		t.Fatalf("Lookup: %+v", got)
	}
	long := "backend/" + strings.Repeat("m", 200)
	c, _ := r.Alloc(long)
	if c.Name() != long[:NameDisplayMax] {
		t.Fatalf("long name kept as %q", c.Name())
	}
	// The same name through another mapping of the same file.
	r2, err := Open(r.File())
	if err != nil {
		t.Fatal(err)
	}
	if got := r2.Lookup("key/team-a"); got == nil || got.Total() != 7 {
		t.Fatal("a second mapping does not see the cell")
	}
}

func TestFullRegion(t *testing.T) {
	r, _ := Create(4, 1)
	defer r.Close()
	for i := 0; i < 4; i++ {
		if _, err := r.Alloc(fmt.Sprintf("n%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.Alloc("one-more"); err != ErrFull {
		t.Fatalf("Alloc on a full region: %v", err)
	}
	if r.Lookup("missing") != nil {
		t.Fatal("Lookup on a full region found a missing name")
	}
}

// A freed cell is gone for Lookup, names probing past it are still found,
// and its slot is reused.
func TestFreeAndReuse(t *testing.T) {
	r, _ := Create(4, 1)
	defer r.Close()
	names := []string{"a", "b", "c", "d"}
	for _, n := range names {
		c, _ := r.Alloc(n)
		c.Add(0, 1)
	}
	if !r.Free("b") || r.Free("b") || r.Lookup("b") != nil || r.Used() != 3 {
		t.Fatal("Free did not free exactly once")
	}
	for _, n := range []string{"a", "c", "d"} {
		if c := r.Lookup(n); c == nil || c.Total() != 1 {
			t.Fatalf("%s lost after freeing b", n)
		}
	}
	e, err := r.Alloc("e")
	if err != nil || e.Total() != 0 || !e.Idle() {
		t.Fatalf("reuse of the freed cell: %v, total %d", err, e.Total())
	}
	if again, _ := r.Alloc("a"); again.Total() != 1 || r.Used() != 4 {
		t.Fatal("Alloc of an existing name after a reuse did not find it")
	}
}

func TestOpenRefusesOtherLayout(t *testing.T) {
	r, _ := Create(8, 2)
	defer r.Close()
	r.words[hVersion] = LayoutVersion + 1
	_, err := Open(r.File())
	if err == nil || !strings.Contains(err.Error(), "layout version") {
		t.Fatalf("Open of another layout version: %v", err)
	}
	r.words[hVersion] = LayoutVersion
	r.words[hMagic] = 12345
	if _, err := Open(r.File()); err == nil || !strings.Contains(err.Error(), "bad magic") {
		t.Fatalf("Open of a foreign region: %v", err)
	}
}

func TestGCRAExactBurst(t *testing.T) {
	r, _ := Create(8, 1)
	defer r.Close()
	c, _ := r.Alloc("key/k")
	const n = 7
	cost := int64(60e9) / n
	window := cost * n
	now := r.Now()
	admitted := 0
	for i := 0; i < 20; i++ {
		if ok, _ := c.GCRA(RequestTAT, now, cost, window); ok {
			admitted++
		}
	}
	if admitted != n {
		t.Fatalf("burst admitted %d, want %d", admitted, n)
	}
	// One emission interval later, exactly one more.
	if ok, _ := c.GCRA(RequestTAT, now+cost, cost, window); !ok {
		t.Fatal("not admitted after one interval")
	}
	if ok, _ := c.GCRA(RequestTAT, now+cost, cost, window); ok {
		t.Fatal("admitted twice after one interval")
	}
	// A refund makes room again.
	c.Settle(RequestTAT, -cost)
	if ok, _ := c.GCRA(RequestTAT, now+cost, cost, window); !ok {
		t.Fatal("not admitted after a refund")
	}
}

func TestGCRAExactAcrossProcesses(t *testing.T) {
	r, _ := Create(16, 4)
	defer r.Close()
	r.Alloc("key/burst")
	total := 0
	for _, out := range runChildren(t, r, 4, "gcra") {
		n, err := strconv.Atoi(out)
		if err != nil {
			t.Fatalf("child said %q", out)
		}
		total += n
	}
	if total != 100 {
		t.Fatalf("4 processes admitted %d of a burst of 100", total)
	}
}

func TestAcquireNeverOvershootsAcrossProcesses(t *testing.T) {
	r, _ := Create(16, 4)
	defer r.Close()
	c, _ := r.Alloc("backend/slots")
	r.Alloc("probe/inside")
	for i, out := range runChildren(t, r, 4, "acquire") {
		if out != "0" {
			t.Errorf("child %d saw the limit exceeded %s times", i, out)
		}
	}
	if c.Total() != 0 {
		t.Fatalf("places left held: %d", c.Total())
	}
}

func TestReleaseColumnOfKilledProcess(t *testing.T) {
	r, _ := Create(16, 2)
	defer r.Close()
	c, _ := r.Alloc("backend/slots")
	q, _ := r.Alloc("queue/m")
	c.Add(0, 3) // column 0 is another, live worker
	q.SetMark(1, 42)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SHM_TEST_CHILD=hold", "SHM_TEST_COL=1")
	cmd.ExtraFiles = []*os.File{r.File()}
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := out.Read(buf); err != nil || string(buf) != "held\n" {
		t.Fatalf("child: %q %v", buf, err)
	}
	if c.Total() != 8 {
		t.Fatalf("total %d with the child holding 5", c.Total())
	}
	cmd.Process.Kill()
	cmd.Wait()
	if got := r.ReleaseColumn(1); got != 5 {
		t.Fatalf("released %d, want 5", got)
	}
	if c.Total() != 3 || c.Held(0) != 3 {
		t.Fatalf("after release: total %d, column 0 %d", c.Total(), c.Held(0))
	}
	if m, at := q.MinMark(); m != NoMark || at != -1 {
		t.Fatalf("mark left after release: %d at %d", m, at)
	}
}

func TestCellAlignment(t *testing.T) {
	r, _ := Create(3, 3)
	defer r.Close()
	c, _ := r.Alloc("x")
	if uintptr(unsafe.Pointer(c.Scalar(0)))%8 != 0 || uintptr(unsafe.Pointer(&c.w[0]))%64 != 0 {
		t.Fatal("cell fields are not aligned")
	}
}

func BenchmarkAcquireRelease(b *testing.B) {
	r, _ := Create(16, 8)
	defer r.Close()
	c, _ := r.Alloc("backend/x")
	for b.Loop() {
		c.Acquire(1, 100)
		c.Release(1)
	}
}

func BenchmarkGCRA(b *testing.B) {
	r, _ := Create(16, 8)
	defer r.Close()
	c, _ := r.Alloc("key/x")
	for b.Loop() {
		c.GCRA(RequestTAT, r.Now(), 1, 1<<62)
	}
}

// A dead worker's held body bytes are cleared with its places, but only
// the places are counted as given back (bytes are not places).
func TestReleaseColumnCountsPlacesNotStats(t *testing.T) {
	r, _ := Create(16, 2)
	defer r.Close()
	slots, _ := r.Alloc("backend/m/http://b")
	body, _ := r.Alloc(BodyBytesCell)
	slots.Add(1, 2)
	body.Add(1, 100_000)
	if got := r.ReleaseColumn(1); got != 2 {
		t.Fatalf("released %d, want the 2 places", got)
	}
	if slots.Held(1) != 0 || body.Held(1) != 0 {
		t.Fatalf("after release: slots %d, body bytes %d held", slots.Held(1), body.Held(1))
	}
}

// A backend's reported load less the gateway's own requests when it was
// read is the others' load: it is what stays counted once the gateway's own
// requests end, and it never goes below 0 (the backend may not yet count a
// request the gateway has just sent).
func TestOthersLoad(t *testing.T) {
	r, _ := Create(16, 2)
	defer r.Close()
	c, _ := r.Alloc("backend/m/http://b")
	if _, _, fresh := c.OthersLoad(r.Now()); fresh {
		t.Fatal("a load never read is fresh")
	}
	now := r.Now()
	c.SetReportedLoad(5, 3, 0.25, now)
	if load, kv, _ := c.ReportedLoad(now); load != 5 || kv != 250_000 {
		t.Fatalf("reported %d, kv %d: the backend's own figures are kept as read", load, kv)
	}
	if others, kv, fresh := c.OthersLoad(now); !fresh || others != 2 || kv != 250_000 {
		t.Fatalf("others %d kv %d fresh %v, want 2 of the 5 (3 were the gateway's)", others, kv, fresh)
	}
	c.SetReportedLoad(2, 3, 0, now)
	if others, _, _ := c.OthersLoad(now); others != 0 {
		t.Fatalf("others %d when the backend counts fewer than the gateway sent", others)
	}
	if _, _, fresh := c.OthersLoad(now + int64(StaleLoad)); fresh {
		t.Fatal("a read StaleLoad old is still fresh")
	}
}
