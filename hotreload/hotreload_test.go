package hotreload

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/cells"
	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/shm"
)

func TestFrameRoundTrip(t *testing.T) {
	var b bytes.Buffer
	data := []byte("listen: x\nkeys: []\n")
	WriteConfig(&b, Frame{Name: "/etc/sluice/s.yaml", Data: data, Gen: 7, Discovered: []byte(`{"m":[]}`), Files: []byte(`[{"Path":"YS5wZW0=","Data":"eA=="}]`)})
	WriteConfig(&b, Frame{Name: "n", Gen: 8})
	r := bufio.NewReader(&b)
	f, err := ReadConfig(r)
	if err != nil || f.Name != "/etc/sluice/s.yaml" || string(f.Data) != string(data) || f.Gen != 7 || string(f.Discovered) != `{"m":[]}` ||
		string(f.Files) != `[{"Path":"YS5wZW0=","Data":"eA=="}]` {
		t.Fatalf("frame 1: %+v %v", f, err)
	}
	if f, err = ReadConfig(r); err != nil || f.Name != "n" || len(f.Data) != 0 || f.Gen != 8 || len(f.Discovered) != 0 || len(f.Files) != 0 {
		t.Fatalf("frame 2: %+v %v", f, err)
	}
}

func TestFrameRefusals(t *testing.T) {
	for _, in := range []string{"hello\n", "reload 1 -1 3 0 0\nabc", "reload 1 1 99999999999 0 0\n", "reload 1 4 4 0 0\nshort",
		"reload 1 1 1 0\nab", "reload 1 1 1 0 -5\nab", "reload 1 1 1 0 9223372036854775807\nab", "reload 1 1 1 9223372036854775807 9223372036854775807\nab"} {
		if _, err := ReadConfig(bufio.NewReader(strings.NewReader(in))); err == nil {
			t.Errorf("ReadConfig(%q) accepted", in)
		}
	}
}

// A frame's TLS files are the configuration's as the supervisor's
// validation read them: the worker's decoding validates with those bytes
// and reads no file (the paths here do not exist).
func TestFrameCarriesTLSFiles(t *testing.T) {
	dir := t.TempDir()
	yaml := fmt.Sprintf("listen:\n  - address: 127.0.0.1:0\n    tls:\n      certificates: [{cert: %s/gw.pem, key: %s/gw.key}]\n"+
		"keys:\n  - name: k\n    sha256: %s\n    models: [\"*\"]\nmodels:\n  - name: m\n    backends:\n      - url: http://127.0.0.1:1\n        slots: 1\n",
		dir, dir, strings.Repeat("a", 64))
	writeTestCertificate(t, dir+"/gw.pem", dir+"/gw.key")
	cfg, err := config.Parse("s.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Files) != 2 {
		t.Fatalf("files kept: %d", len(cfg.Files))
	}
	os.RemoveAll(dir)
	var b bytes.Buffer
	WriteConfig(&b, Frame{Name: "s.yaml", Data: []byte(yaml), Gen: 2, Files: FilesOf(cfg)})
	f, err := ReadConfig(bufio.NewReader(&b))
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.Config()
	if err != nil {
		t.Fatalf("the worker's decoding: %v", err)
	}
	if _, err := got.Files.Certificate(got.Listen[0].TLS.Certificates[0], time.Now()); err != nil {
		t.Fatalf("the certificate from the frame: %v", err)
	}
	if _, err := config.Parse("s.yaml", []byte(yaml)); err == nil {
		t.Fatal("the files are gone: a fresh parse must fail")
	}
}

// writeTestCertificate writes a self-signed ECDSA certificate valid for
// a day and its key.
func writeTestCertificate(t *testing.T, certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	if os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600) != nil ||
		os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600) != nil {
		t.Fatal("write the certificate")
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
	if n := r.Sweep(region, nil); n != 0 {
		t.Fatalf("freed %d cells while generation 1 ran", n)
	}
	gens.SetMark(1, 2)
	region.Lookup("key/b").Add(0, 1) // something still held in b
	var seen []string
	if n := r.Sweep(region, func(name string, c *shm.Cell) {
		if region.Lookup(name) == nil || !c.Same(region.Lookup(name)) {
			t.Errorf("%s seen after its cell was freed", name)
		}
		seen = append(seen, name)
	}); n != 1 || region.Lookup("key/c") != nil || region.Lookup("key/b") == nil {
		t.Fatalf("sweep freed %d; want only c", n)
	}
	if len(seen) != 1 || seen[0] != "key/c" {
		t.Fatalf("freeing saw %v, want [key/c]", seen)
	}
	r.Replace([]string{"key/a"}, []string{"key/a", "key/b"}, 3) // b is back
	region.Lookup("key/b").Add(0, -1)
	if n := r.Sweep(region, nil); n != 0 || r.Len() != 0 || region.Lookup("key/b") == nil {
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
	if n := r.Sweep(region, nil); n != 1 || region.Lookup(shm.KeyCell("a")) != nil {
		t.Fatalf("sweep freed %d cells; want key a's alone", n)
	}
	for _, name := range cells.Names(newCfg) {
		if region.Lookup(name) == nil {
			t.Errorf("%s was freed", name)
		}
	}
}
