package hotreload

import (
	"bufio"
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/cells"
	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/shm"
)

func TestFrameRoundTrip(t *testing.T) {
	var b bytes.Buffer
	data := []byte("listen: x\nkeys: []\n")
	WriteConfig(&b, Frame{Name: "/etc/sluice/s.yaml", Data: data, Gen: 7, Discovered: []byte(`{"m":[]}`)})
	WriteConfig(&b, Frame{Name: "n", Gen: 8})
	r := bufio.NewReader(&b)
	f, err := ReadConfig(r)
	if err != nil || f.Name != "/etc/sluice/s.yaml" || string(f.Data) != string(data) || f.Gen != 7 || string(f.Discovered) != `{"m":[]}` {
		t.Fatalf("frame 1: %+v %v", f, err)
	}
	if f, err = ReadConfig(r); err != nil || f.Name != "n" || len(f.Data) != 0 || f.Gen != 8 || len(f.Discovered) != 0 {
		t.Fatalf("frame 2: %+v %v", f, err)
	}
}

func TestFrameRefusals(t *testing.T) {
	for _, in := range []string{"hello\n", "reload 1 -1 3 0\nabc", "reload 1 1 99999999999 0\n", "reload 1 4 4 0\nshort", "reload 1 1 1\nab"} {
		if _, err := ReadConfig(bufio.NewReader(strings.NewReader(in))); err == nil {
			t.Errorf("ReadConfig(%q) accepted", in)
		}
	}
}

func TestReplies(t *testing.T) {
	var b bytes.Buffer
	WriteReply(&b, 3, nil)
	WriteReply(&b, 4, errors.New("line one\nline two"))
	WriteReply(&b, 4, nil)
	r := bufio.NewReader(&b)
	if err := ReadReply(r, 3); err != nil {
		t.Fatal(err)
	}
	if err := ReadReply(r, 4); err == nil || err.Error() != "line one; line two" {
		t.Fatalf("error reply: %v", err)
	}
	if err := ReadReply(r, 5); err == nil {
		t.Fatal("an answer for another generation was taken")
	}
}

// A removed name's cell is freed only once every worker has moved past the
// generations that had it and nothing is held in it; a name that comes
// back is not freed.
func TestRetiredSweep(t *testing.T) {
	region, _ := shm.Create(16, 2)
	defer region.Close()
	gens, _ := region.Alloc(shm.GenerationCell)
	for _, n := range []string{"key/a", "key/b", "key/c"} {
		region.Alloc(n)
	}
	r := NewRetired()
	r.Replace([]string{"key/a", "key/b", "key/c"}, []string{"key/a"}, 2) // b and c removed at generation 2
	gens.SetMark(0, 2)
	gens.SetMark(1, 1) // worker 1 still runs a request of generation 1
	if n := r.Sweep(region); n != 0 {
		t.Fatalf("freed %d cells while generation 1 ran", n)
	}
	gens.SetMark(1, 2)
	region.Lookup("key/b").Add(0, 1) // something still held in b
	if n := r.Sweep(region); n != 1 || region.Lookup("key/c") != nil || region.Lookup("key/b") == nil {
		t.Fatalf("sweep freed %d; want only c", n)
	}
	r.Replace([]string{"key/a"}, []string{"key/a", "key/b"}, 3) // b is back
	region.Lookup("key/b").Add(0, -1)
	if n := r.Sweep(region); n != 0 || r.Len() != 0 || region.Lookup("key/b") == nil {
		t.Fatalf("a name that came back was freed (%d)", n)
	}
}

// A binary upgrade retires the names of the region it takes over that the
// new configuration lacks (supervisor's openRegion): a removed key's cell,
// never the stats cells every configuration has. Freeing those once freed
// them under the new workers.
func TestUpgradeRetiresOnlyRemovedNames(t *testing.T) {
	oldCfg := &config.Config{Keys: []config.Key{{Name: "a"}, {Name: "b"}},
		Models: []config.Model{{Name: "m", Backends: []config.Backend{{URL: "http://127.0.0.1:1"}}}}}
	newCfg := &config.Config{Keys: []config.Key{{Name: "b"}}, Models: oldCfg.Models}
	region, err := shm.Create(32, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer region.Close()
	if err := cells.Alloc(region, oldCfg); err != nil {
		t.Fatal(err)
	}
	// The new supervisor: every name in the region, against its own.
	var all []string
	region.Cells(func(name string, _ *shm.Cell) { all = append(all, name) })
	if err := cells.Alloc(region, newCfg); err != nil {
		t.Fatal(err)
	}
	r := NewRetired()
	r.Replace(all, cells.Names(newCfg), 2)
	gens := region.Lookup(shm.GenerationCell)
	gens.SetMark(0, 2) // the old workers are gone; the new ones run generation 2
	gens.SetMark(1, 2)
	if n := r.Sweep(region); n != 1 || region.Lookup(shm.KeyCell("a")) != nil {
		t.Fatalf("sweep freed %d cells; want key a's alone", n)
	}
	for _, name := range cells.Names(newCfg) {
		if region.Lookup(name) == nil {
			t.Errorf("%s was freed", name)
		}
	}
}
