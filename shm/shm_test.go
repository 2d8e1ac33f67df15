package shm

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
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
	case "gcra": // admit 1 per try, all at one instant, from a limiter that never fills
		c := r.Lookup("key/burst")
		now, _ := strconv.ParseInt(os.Getenv("SHM_TEST_NOW"), 10, 64)
		o := startTogether(r, col)
		if o == nil {
			return 1
		}
		admitted := 0
		for more := true; more; {
			t0 := o.others()
			if ok, _ := c.GCRA(RequestTAT, now, 1, 1<<62); ok {
				admitted++
			}
			more = o.next(t0)
		}
		fmt.Println(admitted, o.seen)
	case "acquire": // take and give back places; count the times more were in
		c, probe := r.Lookup("backend/slots"), r.Lookup("probe/inside")
		limit, _ := strconv.ParseInt(os.Getenv("SHM_TEST_LIMIT"), 10, 64)
		o := startTogether(r, col)
		if o == nil {
			return 1
		}
		over := 0
		for more := true; more; {
			t0 := o.others()
			if c.Acquire(col, limit) {
				probe.Add(col, 1)
				if probe.Total() > limit {
					over++
				}
				probe.Add(col, -1)
				c.Release(col)
			}
			more = o.next(t0)
		}
		fmt.Println(over, o.seen)
	case "recall": // remember and recall over a small table (recall_test.go)
		return recallChild(r, col)
	case "remember-forever": // remember until killed (recall_test.go)
		return rememberForever(r)
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

// Overlap between the children of a race test. Starting a child takes far
// longer (~10 ms) than a few thousand tries of a cell, so children that
// simply ran a fixed number of tries would run one after another and never
// race. Instead they start together (a barrier) and go on until one of
// them has made overlapWanted tries while another child made progress (a
// race that could happen); a child stops after overlapMax tries whatever
// it saw. On a loaded machine this takes longer, not fewer races (short
// of that cap: ~1.6M tries a child under -race on two busy cores).
const (
	overlapWanted = 50000
	overlapMax    = 5_000_000
)

// overlap is a child's view of the others' progress: every child counts
// its tries in its column of the "progress" cell, whose first scalar is
// the stop flag.
type overlap struct {
	progress    *Cell
	col         int
	tries, seen int64
}

// startTogether counts the child in and waits, yielding its CPU, until
// every child (SHM_TEST_CHILDREN) has: nil after a minute without them (a
// child failed to start).
func startTogether(r *Region, col int) *overlap {
	n, _ := strconv.ParseInt(os.Getenv("SHM_TEST_CHILDREN"), 10, 64)
	b := r.Lookup("barrier")
	b.Add(col, 1)
	deadline := time.Now().Add(time.Minute)
	for b.Total() < n {
		if time.Now().After(deadline) {
			fmt.Println("barrier: the other children never came")
			return nil
		}
		unix.Syscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
	}
	return &overlap{progress: r.Lookup("progress"), col: col}
}

// others is the other children's tries so far.
func (o *overlap) others() int64 { return o.progress.Total() - o.tries }

// next counts a try that began when the others had made t0 tries and
// reports whether to go on.
func (o *overlap) next(t0 int64) bool {
	if o.others() != t0 {
		o.seen++
	}
	o.tries++
	o.progress.Add(o.col, 1)
	stop := o.progress.Scalar(0)
	if o.seen >= overlapWanted {
		atomic.StoreInt64(stop, 1)
	}
	return atomic.LoadInt64(stop) == 0 && o.tries < overlapMax
}

// runChildren runs n children doing work, column i each, and returns
// their trimmed outputs.
func runChildren(t *testing.T, r *Region, n int, work string, env ...string) []string {
	t.Helper()
	for _, name := range []string{"barrier", "progress"} {
		if _, err := r.Alloc(name); err != nil {
			t.Fatal(err)
		}
	}
	outs := make([]string, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "SHM_TEST_CHILD="+work, "SHM_TEST_COL="+strconv.Itoa(i),
				"SHM_TEST_CHILDREN="+strconv.Itoa(n))
			cmd.Env = append(cmd.Env, env...)
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

// Four processes are admitted by one limiter, at one instant, each
// admission moving its time on by 1 ns; started together, they race until
// one has made 50,000 tries while another made progress. The limiter's
// time then accounts for every admission, to the nanosecond: none was
// lost, so a burst against a limit of N admits N (TestGCRAExactBurst)
// however many processes share it. A plain store where the
// compare-and-swap is loses admissions.
func TestGCRAExactAcrossProcesses(t *testing.T) {
	r, _ := Create(16, 4)
	defer r.Close()
	c, _ := r.Alloc("key/burst")
	now := r.Now()
	total := int64(0)
	var seen []int64
	for _, out := range runChildren(t, r, 4, "gcra", "SHM_TEST_NOW="+strconv.FormatInt(now, 10)) {
		var n, s int64
		if _, err := fmt.Sscan(out, &n, &s); err != nil {
			t.Fatalf("child said %q", out)
		}
		total += n
		seen = append(seen, s)
	}
	t.Logf("admitted %d; tries each process made while another made progress: %v", total, seen)
	if tat := atomic.LoadInt64(c.Scalar(RequestTAT)); tat != now+total {
		t.Fatalf("4 processes were admitted %d times, but the limiter's time counts %d", total, tat-now)
	}
}

// Four processes take and give back the one place of a cell, started
// together and racing until one has made 50,000 tries while another made
// progress: none ever sees another inside with it. Checking the sum before
// counting the place (check-then-add) lets two in.
func TestAcquireNeverOvershootsAcrossProcesses(t *testing.T) {
	r, _ := Create(16, 4)
	defer r.Close()
	c, _ := r.Alloc("backend/slots")
	r.Alloc("probe/inside")
	var seen []int64
	for i, out := range runChildren(t, r, 4, "acquire", "SHM_TEST_LIMIT=1") {
		var over, s int64
		if _, err := fmt.Sscan(out, &over, &s); err != nil {
			t.Fatalf("child %d said %q", i, out)
		}
		if over != 0 {
			t.Errorf("child %d was in with another %d times", i, over)
		}
		seen = append(seen, s)
	}
	t.Logf("tries each process made while another made progress: %v", seen)
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

// A dead worker's held body bytes and quota reservations are cleared with
// its places, but only the places are counted as given back (bytes,
// tokens and pico-USD are not places).
func TestReleaseColumnCountsPlacesNotStats(t *testing.T) {
	r, _ := Create(16, 2)
	defer r.Close()
	slots, _ := r.Alloc("backend/m/http://b")
	body, _ := r.Alloc(BodyBytesCell)
	tokens, _ := r.Alloc(QuotaCell("k"))
	pico, _ := r.Alloc(BudgetCell("k"))
	slots.Add(1, 2)
	body.Add(1, 100_000)
	tokens.Add(1, 4096)
	pico.Add(1, 7_000_000)
	if got := r.ReleaseColumn(1); got != 2 {
		t.Fatalf("released %d, want the 2 places", got)
	}
	if slots.Held(1) != 0 || body.Held(1) != 0 || tokens.Held(1) != 0 || pico.Held(1) != 0 {
		t.Fatalf("after release: slots %d, body bytes %d, tokens %d, pico-USD %d held",
			slots.Held(1), body.Held(1), tokens.Held(1), pico.Held(1))
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

// A cell's marks kept as counts (a key's waiting requests per worker): 0
// is stored as NoMark, so the cell reads idle, and a dead worker's count
// goes with its column.
func TestMarkCounts(t *testing.T) {
	r, err := Create(4, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c, _ := r.Alloc("key/k")
	c.AddMarkCount(0, 2)
	c.AddMarkCount(2, 1)
	if n := c.MarkCount(); n != 3 {
		t.Fatalf("count %d, want 3", n)
	}
	if c.Idle() {
		t.Fatal("a cell with waiting counts reads idle")
	}
	c.AddMarkCount(0, -2)
	if c.Mark(0) != NoMark {
		t.Fatalf("a count back at 0 is stored as %d, not NoMark", c.Mark(0))
	}
	r.ReleaseColumn(2)
	if n := c.MarkCount(); n != 0 || !c.Idle() {
		t.Fatalf("after the dead worker's column went: count %d, idle %v", n, c.Idle())
	}
}
