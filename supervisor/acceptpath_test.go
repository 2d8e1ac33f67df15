package supervisor

import (
	"io"
	"os"
	"testing"
)

// TestAcceptPathReadyz is bench/accept-path.sh's "readyz" mode, not a test:
// it serves the admin listener as the supervisor does (startAdmin, one
// slot, its worker ready), writes its address to the file
// SLUICE_ACCEPTPATH_ADDR_FILE names and serves until stdin ends, while the
// script's acceptpath client, a process of its own, sends GET /readyz.
func TestAcceptPathReadyz(t *testing.T) {
	addrFile := os.Getenv("SLUICE_ACCEPTPATH_ADDR_FILE")
	if addrFile == "" {
		t.Skip("bench/accept-path.sh's readyz mode; SLUICE_ACCEPTPATH_ADDR_FILE unset")
	}
	s := &supervisor{slots: []*slot{{}}}
	s.slots[0].ready.Store(true)
	srv, addr, err := s.startAdmin("127.0.0.1:0", "")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if err := os.WriteFile(addrFile+".tmp", []byte(addr+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(addrFile+".tmp", addrFile); err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, os.Stdin); err != nil {
		t.Fatal(err)
	}
}
