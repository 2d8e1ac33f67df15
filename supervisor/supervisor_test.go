package supervisor

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
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

// Failed logins: ten wrong tokens from one address are answered 401; then
// every guarded request from it is 429 with Retry-After, the right token
// too, while another address is served. A request without credentials
// guesses nothing and is not counted.
func TestAdminAuthThrottle(t *testing.T) {
	a := newAdminAuth("tok", nil)
	h := a.require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	do := func(remote, auth string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		r.RemoteAddr = remote
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	for i := 0; i < 20; i++ {
		if w := do("192.0.2.1:1000", ""); w.Code != http.StatusUnauthorized {
			t.Fatalf("no credentials: %d", w.Code)
		}
	}
	for i := 0; i < loginFailures; i++ {
		if w := do("192.0.2.1:1000", "Bearer wrong"); w.Code != http.StatusUnauthorized {
			t.Fatalf("failure %d: %d", i+1, w.Code)
		}
	}
	w := do("192.0.2.1:2000", "Bearer tok")
	if secs, _ := strconv.Atoi(w.Header().Get("Retry-After")); w.Code != http.StatusTooManyRequests || secs < 1 || secs > 60 {
		t.Fatalf("over the failures, with the token: %d Retry-After %q", w.Code, w.Header().Get("Retry-After"))
	}
	if w := do("192.0.2.2:1000", "Bearer tok"); w.Code != http.StatusOK {
		t.Fatalf("another address: %d", w.Code)
	}
}
