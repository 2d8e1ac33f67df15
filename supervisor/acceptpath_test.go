package supervisor

import (
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/sluice-gw/sluice/config"
)

// adminTestConfig is the admin fields of a configuration as Parse fills
// them, on a loopback port of the kernel's choice.
func adminTestConfig() *config.Config {
	return &config.Config{Admin: "127.0.0.1:0", AdminMaxConns: config.DefaultAdminMaxConns,
		AdminTimeouts: config.AdminTimeouts{
			ReadHeader: config.Duration(config.DefaultAdminReadHeaderTimeout),
			Read:       config.Duration(config.DefaultAdminReadTimeout),
			Write:      config.Duration(config.DefaultAdminWriteTimeout),
			Idle:       config.Duration(config.DefaultAdminIdleTimeout),
		}}
}

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
	s := &supervisor{slots: []*slot{{}}, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	s.slots[0].ready.Store(true)
	srv, addr, err := s.startAdmin(adminTestConfig())
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
