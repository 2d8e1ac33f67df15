package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
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
		if other := otherScheme(scheme); speaks(other, cfg.Admin) {
			return fail("the admin listener at %s speaks %s, and this file says %s: admin_tls was added or removed, "+
				"which a reload cannot apply; restart sluice to apply it", cfg.Admin, other, scheme)
		}
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
// plain HTTP, or with admin_tls HTTPS (adminTLSConfig, the system's roots).
func adminClient(cfg *config.Config, what string) (*http.Client, string, error) {
	c := &http.Client{Timeout: 5 * time.Second}
	if cfg.AdminTLS == nil {
		return c, "http", nil
	}
	if cfg.AdminTLS.ClientCA != "" {
		return nil, "", fmt.Errorf("admin_tls.client_ca: the admin listener requires a client certificate, which sluice %s has none of; "+
			"signal the supervisor yourself (SIGHUP reloads, SIGUSR2 upgrades)", what)
	}
	roots, err := x509.SystemCertPool() // SSL_CERT_FILE and SSL_CERT_DIR name others
	if err != nil {
		roots = x509.NewCertPool()
	}
	tc, err := adminTLSConfig(cfg, roots)
	if err != nil {
		return nil, "", err
	}
	c.Transport = &http.Transport{TLSClientConfig: tc}
	return c, "https", nil
}

// adminTLSConfig trusts, on the admin listener, what admin_tls names: one
// of its own certificates exactly, or a certificate for one of their names
// (or the admin address's host) that roots sign, through the
// intermediates the files or the server give — a renewal from the same CA.
// The token is sent only to a listener that passes. The files'
// intermediates are never roots: a public intermediate would then vouch
// for any name it signs.
func adminTLSConfig(cfg *config.Config, roots *x509.CertPool) (*tls.Config, error) {
	pinned := map[string]bool{}
	var names []string
	if host, _, err := net.SplitHostPort(cfg.Admin); err == nil {
		if ip := net.ParseIP(host); ip == nil || !ip.IsUnspecified() {
			names = append(names, host)
		}
	}
	inter := x509.NewCertPool()
	for _, cert := range cfg.AdminTLS.Certificates {
		pair, err := cfg.Files.Pair(cert)
		if err != nil {
			return nil, fmt.Errorf("admin_tls: %w", err)
		}
		pinned[string(pair.Leaf.Raw)] = true
		names = append(names, pair.Leaf.DNSNames...)
		for _, ip := range pair.Leaf.IPAddresses {
			names = append(names, ip.String())
		}
		for _, der := range pair.Certificate[1:] {
			if x, err := x509.ParseCertificate(der); err == nil {
				inter.AddCert(x)
			}
		}
	}
	return &tls.Config{
		InsecureSkipVerify: true, // VerifyConnection decides, by admin_tls's names
		VerifyConnection: func(cs tls.ConnectionState) error {
			leaf := cs.PeerCertificates[0]
			if pinned[string(leaf.Raw)] {
				return nil
			}
			chain := inter.Clone()
			for _, c := range cs.PeerCertificates[1:] {
				chain.AddCert(c)
			}
			var last error
			for _, name := range names {
				_, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: chain, DNSName: name})
				if err == nil {
					return nil
				}
				last = err
			}
			return fmt.Errorf("the admin listener's certificate is not admin_tls's, nor one for its names (%s) that the system's roots "+
				"(or SSL_CERT_FILE's) sign: %v", strings.Join(names, ", "), last)
		},
	}, nil
}

// otherScheme is http for https, and https for http.
func otherScheme(scheme string) string {
	if scheme == "https" {
		return "http"
	}
	return "https"
}

// speaks reports whether the admin listener at addr answers /healthz in
// scheme: whether admin_tls was added or removed since it started. No
// token is sent, and nothing is trusted but the answer's arrival.
func speaks(scheme, addr string) bool {
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // only to see that TLS answers
	res, err := c.Get(scheme + "://" + addr + "/healthz")
	if err != nil {
		return false
	}
	res.Body.Close()
	return res.StatusCode == http.StatusOK
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
