package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/supervisor"
)

// signalWait bounds how long `sluice reload` and `sluice upgrade` wait for
// the supervisor to report the outcome.
const signalWait = 90 * time.Second

// signalSupervisor is `sluice reload` and `sluice upgrade`: it validates
// FILE, sends SIGHUP (reload) or SIGUSR2 (upgrade) to the supervisor named
// by FILE's pid_file, and waits for the supervisor's admin /status to
// report the outcome: exit 0 when done, 1 with the reason when not (the
// running gateway then keeps serving as it was).
func signalSupervisor(what string, args []string, stdout, stderr io.Writer) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "sluice "+what+": "+format+"\n", a...)
		return 1
	}
	path, err := configFlag(what, args)
	if err != nil {
		fmt.Fprintln(stderr, "sluice "+what+":", err)
		return 2
	}
	cfg, err := config.Load(path)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return fail("nothing done: the running gateway keeps its configuration")
	}
	if cfg.PidFile == "" {
		fmt.Fprintf(stderr, "sluice %s: %s sets no pid_file, so the running supervisor cannot be found; "+
			"set pid_file, or signal the supervisor yourself\n", what, path)
		return 2
	}
	raw, err := os.ReadFile(cfg.PidFile)
	if err != nil {
		return fail("is sluice running? %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil || pid < 1 {
		return fail("%s does not hold a pid", cfg.PidFile)
	}
	client, scheme, err := adminClient(cfg, what)
	if err != nil {
		return fail("%v", err)
	}
	statusURL := scheme + "://" + cfg.Admin + "/status"
	getStatus := func(url string) (supervisor.Status, error) { return readStatus(client, url, cfg.AdminToken()) }
	before, err := getStatus(statusURL)
	if err != nil {
		return fail("cannot read the supervisor's status at %s: %v", statusURL, err)
	}
	if before.PID != pid {
		return fail("%s says pid %d but the admin listener at %s belongs to pid %d", cfg.PidFile, pid, cfg.Admin, before.PID)
	}
	sig := syscall.SIGHUP
	if what == "upgrade" {
		sig = syscall.SIGUSR2
	}
	if err := syscall.Kill(pid, sig); err != nil {
		return fail("signal pid %d: %v", pid, err)
	}
	for end := time.Now().Add(signalWait); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		st, err := getStatus(statusURL)
		if err != nil {
			continue
		}
		switch {
		case what == "reload" && st.Reloads > before.Reloads && st.LastReloadError != "":
			fmt.Fprintln(stderr, st.LastReloadError)
			return fail("not reloaded: the running gateway keeps its configuration")
		case what == "reload" && st.Reloads > before.Reloads:
			fmt.Fprintf(stdout, "%s: reloaded (generation %d)\n", path, st.Generation)
			return 0
		case what == "reload" && st.PID != pid:
			fmt.Fprintf(stdout, "%s: reloaded by new workers under a new supervisor: pid %d handed over to pid %d (generation %d)\n",
				path, pid, st.PID, st.Generation)
			return 0
		case what == "upgrade" && st.PID != pid:
			fmt.Fprintf(stdout, "%s: upgraded: pid %d handed over to pid %d (generation %d); pid %d drains and exits\n",
				path, pid, st.PID, st.Generation, pid)
			return 0
		case what == "upgrade" && st.Upgrades > before.Upgrades && st.LastUpgradeError != "":
			fmt.Fprintln(stderr, st.LastUpgradeError)
			return fail("not upgraded: pid %d keeps serving", pid)
		}
	}
	return fail("no answer from pid %d within %v", pid, signalWait)
}

// adminClient is how sluice reload and upgrade reach the admin listener:
// plain HTTP, or with admin_tls HTTPS that trusts the certificates of
// admin_tls's files, the CAs of their chains and the system's (a renewed
// certificate from the same CA verifies; the name is not checked: the
// address is the configuration's own).
func adminClient(cfg *config.Config, what string) (*http.Client, string, error) {
	c := &http.Client{Timeout: 5 * time.Second}
	t := cfg.AdminTLS
	if t == nil {
		return c, "http", nil
	}
	if t.ClientCA != "" {
		return nil, "", fmt.Errorf("admin_tls.client_ca: the admin listener requires a client certificate, which sluice %s has none of; "+
			"signal the supervisor yourself (SIGHUP reloads, SIGUSR2 upgrades)", what)
	}
	roots, err := x509.SystemCertPool()
	if err != nil {
		roots = x509.NewCertPool()
	}
	pinned := map[string]bool{}
	for _, cert := range t.Certificates {
		pair, err := cfg.Files.Pair(cert)
		if err != nil {
			return nil, "", fmt.Errorf("admin_tls: %w", err)
		}
		pinned[string(pair.Certificate[0])] = true
		for _, der := range pair.Certificate {
			if x, err := x509.ParseCertificate(der); err == nil {
				roots.AddCert(x)
			}
		}
	}
	c.Transport = &http.Transport{TLSClientConfig: &tls.Config{
		InsecureSkipVerify: true, // VerifyConnection verifies, without the name
		VerifyConnection: func(cs tls.ConnectionState) error {
			leaf := cs.PeerCertificates[0]
			if pinned[string(leaf.Raw)] {
				return nil
			}
			inter := x509.NewCertPool()
			for _, c := range cs.PeerCertificates[1:] {
				inter.AddCert(c)
			}
			if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter}); err != nil {
				return fmt.Errorf("the admin listener's certificate is neither admin_tls's nor signed by their chains' CAs or the system's: %w", err)
			}
			return nil
		},
	}}
	return c, "https", nil
}

// readStatus reads the supervisor's /status, with the admin token when
// the configuration names one (admin_token_env).
func readStatus(c *http.Client, url, token string) (supervisor.Status, error) {
	var st supervisor.Status
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return st, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := c.Do(req)
	if err != nil {
		return st, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return st, fmt.Errorf("%s", res.Status)
	}
	return st, json.NewDecoder(res.Body).Decode(&st)
}
