package tests

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// tlsGateway starts a gateway with a plain listener and a TLS one serving
// cert and key (more is added to the TLS block, workers and extra to the
// configuration), with the usage log in a file; it returns the gateway
// (its URL the plain listener's), the TLS listener's address and the
// configuration it started with.
func tlsGateway(t *testing.T, be *fakevllm.Server, cert, key, more, extra string, workers int) (*gateway, string, string) {
	t.Helper()
	usage := filepath.Join(t.TempDir(), "usage.log")
	cfg := tlsConfig(be, usage, cert, key, more, extra, workers)
	g := startGateway(t, cfg)
	g.UsageLog = usage
	return g, strings.Split(g.awaitLog("sluice starting")["listeners"].(string), ",")[1], cfg
}

// tlsConfig is tlsGateway's configuration.
func tlsConfig(be *fakevllm.Server, usage, cert, key, more, extra string, workers int) string {
	cfg := strings.Replace(baseConfig(be.URL(), usage, extra), "listen: 127.0.0.1:0\n", tlsListen(cert, key)+more, 1)
	return strings.Replace(cfg, "workers: 2", fmt.Sprintf("workers: %d", workers), 1)
}

// httpsClient trusts pool; each request on a new connection when fresh.
func httpsClient(pool *x509.CertPool, fresh bool, cache tls.ClientSessionCache, maxVersion uint16) *http.Client {
	return &http.Client{Timeout: deadline, Transport: &http.Transport{DisableKeepAlives: fresh,
		TLSClientConfig: &tls.Config{RootCAs: pool, ClientSessionCache: cache, MaxVersion: maxVersion}}}
}

// servedBy dials addr over TLS and returns the common name of the
// certificate the gateway presented.
func servedBy(t *testing.T, addr string, pool *x509.CertPool) string {
	t.Helper()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: deadline}, "tcp", addr, &tls.Config{RootCAs: pool, ServerName: "localhost"})
	if err != nil {
		t.Fatalf("TLS dial: %v", err)
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].Subject.CommonName
}

// 20 reloads that swap the listener's certificate while 100 TLS streams
// are open: every stream completes, each new handshake after a reload gets
// the new certificate, and a reload with a key that is not its
// certificate's is refused at its line while the old certificate serves on.
func TestTLSCertificateReloadUnderStreams(t *testing.T) {
	pki := newTestPKI(t)
	now := time.Now()
	certA, keyA := pki.issue(t, "cert-a", now.Add(-time.Hour), now.Add(12*time.Hour))
	certB, keyB := pki.issue(t, "cert-b", now.Add(-time.Hour), now.Add(12*time.Hour))
	be := startBackend(t, fakevllm.Options{Tokens: 4})
	g, addr, cfgA := tlsGateway(t, be, certA, keyA, "", "", 2)
	cfgA = strings.ReplaceAll(cfgA, "slots: 64", "slots: 200")
	g.reloadWith(cfgA) // the slots for 100 streams
	cfgB := strings.ReplaceAll(strings.ReplaceAll(cfgA, certA, certB), keyA, keyB)
	if got := servedBy(t, addr, pki.pool); got != "cert-a" {
		t.Fatalf("served %q before any swap", got)
	}

	// 100 streams over TLS, each on its own connection, held by the backend.
	var streams []*http.Response
	var mu sync.Mutex
	var wg sync.WaitGroup
	client := httpsClient(pki.pool, true, nil, 0)
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, "https://"+addr+"/v1/chat/completions",
				bytes.NewReader(chatBody("m", true, fmt.Sprintf("stream %d", i))))
			req.Header.Set("Authorization", "Bearer "+keyAll)
			req.Header.Set("X-Fake-Hold", "tls-reload")
			res, err := client.Do(req)
			if err != nil {
				t.Errorf("stream %d: %v", i, err)
				return
			}
			t.Cleanup(func() { res.Body.Close() })
			if _, err := nextEvent(bufio.NewReader(res.Body)); res.StatusCode != 200 || err != nil {
				t.Errorf("stream %d: %s, first event: %v", i, res.Status, err)
			}
			mu.Lock()
			streams = append(streams, res)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	for i := range 20 {
		cfg, want := cfgB, "cert-b"
		if i%2 == 1 {
			cfg, want = cfgA, "cert-a"
		}
		g.reloadWith(cfg)
		// Every worker has applied it once the supervisor says so (the
		// generation moves before it tells the workers).
		await(t, "the reload applied by every worker", func() bool { return g.findLog("configuration reloaded", i+1) != nil })
		for range 4 { // both workers, most likely
			if got := servedBy(t, addr, pki.pool); got != want {
				t.Fatalf("reload %d: a new handshake got %q, want %q", i+1, got, want)
			}
		}
	}

	// A key that is not the certificate's: refused, the line named, the
	// old certificate still served.
	bad := strings.ReplaceAll(cfgA, keyA, keyB)
	before := g.generation()
	if err := os.WriteFile(g.Config, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	g.cmd.Process.Signal(syscall.SIGHUP)
	var reason string
	await(t, "the bad reload refused", func() bool {
		reason = g.lastReloadError()
		return reason != ""
	})
	if !strings.Contains(reason, "sluice.yaml:6:") || !strings.Contains(reason, "private key does not match") {
		t.Errorf("the refusal says %q", reason)
	}
	if g.generation() != before {
		t.Errorf("generation moved on a refused reload")
	}
	if got := servedBy(t, addr, pki.pool); got != "cert-a" {
		t.Errorf("after the refused reload a handshake got %q", got)
	}

	be.Release("tls-reload")
	awaitStreamsDone(t, streams)
}

// A session ticket one worker issued resumes on the other (TLS 1.3 and
// 1.2), and after every worker was killed and restarted: the keys are in
// the shared region, not in a worker. The usage line says tls_version and
// tls_resumed.
func TestTLSSessionResumesAcrossWorkers(t *testing.T) {
	pki := newTestPKI(t)
	cert, key := pki.issue(t, "server", time.Now().Add(-time.Hour), time.Now().Add(12*time.Hour))
	be := startBackend(t, fakevllm.Options{Tokens: 1})
	g, addr, _ := tlsGateway(t, be, cert, key, "", "", 2)

	for _, v := range []struct {
		name string
		max  uint16
	}{{"1.3", tls.VersionTLS13}, {"1.2", tls.VersionTLS12}} {
		cache := tls.NewLRUClientSessionCache(8)
		client := httpsClient(pki.pool, true, cache, v.max)
		// Each connection resumes with the ticket of the one before
		// (the cache keeps the newest): look for one served by the other
		// worker than the connection that issued its ticket.
		var ids []string
		across := false
		for i := 0; i < 60 && !across; i++ {
			ids = append(ids, tlsChat(t, client, addr))
			if i == 0 {
				continue
			}
			prev, cur := g.usageLineFor(t, ids[i-1]), g.usageLineFor(t, ids[i])
			if cur["tls_version"] != v.name || prev["tls_version"] != v.name {
				t.Fatalf("TLS %s: usage lines say tls_version %v, %v", v.name, prev["tls_version"], cur["tls_version"])
			}
			if cur["tls_resumed"] != true {
				t.Fatalf("TLS %s: connection %d was not resumed: %v", v.name, i, cur)
			}
			across = cur["worker"] != prev["worker"]
		}
		if !across {
			t.Fatalf("TLS %s: 60 connections, none resumed on the other worker than its ticket's", v.name)
		}
		if first := g.usageLineFor(t, ids[0]); first["tls_resumed"] != false {
			t.Errorf("TLS %s: the first connection says resumed", v.name)
		}
	}

	// Every worker killed: the ticket of the last connection resumes on the
	// workers that replace them.
	cache := tls.NewLRUClientSessionCache(8)
	client := httpsClient(pki.pool, true, cache, 0)
	tlsChat(t, client, addr)
	old := g.workerPIDs()
	for _, pid := range old {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	await(t, "new workers", func() bool {
		pids := g.workerPIDs()
		return len(pids) == 2 && pids[0] != old[0] && pids[0] != old[1] && pids[1] != old[0] && pids[1] != old[1]
	})
	g.awaitReady()
	id := tlsChat(t, client, addr)
	if line := g.usageLineFor(t, id); line["tls_resumed"] != true {
		t.Errorf("after the workers restarted, a ticket did not resume: %v", line)
	}
	if v, _ := g.metric("sluice_tls_handshakes_total", map[string]string{"version": "1.3", "resumed": "true"}); v < 2 {
		t.Errorf("sluice_tls_handshakes_total{version=1.3,resumed=true} = %v", v)
	}

	// The plain listener's lines say no TLS.
	res, body := post(t, http.DefaultClient, g.URL+"/v1/chat/completions", keyAll, chatBody("m", false, "plain"), nil)
	if res.StatusCode != 200 {
		t.Fatalf("plain: %d %s", res.StatusCode, body)
	}
	if line := g.usageLineFor(t, res.Header.Get("X-Request-Id")); line["tls_version"] != nil || line["tls_resumed"] != false {
		t.Errorf("a plain request's line: tls_version %v tls_resumed %v", line["tls_version"], line["tls_resumed"])
	}
}

// tlsChat sends one chat completion over client to addr and returns its
// request id.
func tlsChat(t *testing.T, client *http.Client, addr string) string {
	t.Helper()
	res, body := post(t, client, "https://"+addr+"/v1/chat/completions", keyAll, chatBody("m", false, "hi"), nil)
	if res.StatusCode != 200 {
		t.Fatalf("over TLS: %d %s", res.StatusCode, body)
	}
	return res.Header.Get("X-Request-Id")
}

// Hostile clients on the TLS port: plain HTTP gets a 400 in clear text
// (nginx's answer, in OpenAI's error shape); garbage, a ClientHello that
// never completes and a connection that sends nothing are closed within
// client_header_timeout; TLS connections count in worker_connections; each
// failure is counted by reason, and the workers' descriptors and
// goroutines come back to where they were.
func TestTLSHostileClients(t *testing.T) {
	pki := newTestPKI(t)
	cert, key := pki.issue(t, "server", time.Now().Add(-time.Hour), time.Now().Add(12*time.Hour))
	be := startBackend(t, fakevllm.Options{Tokens: 1})
	// No health checks: their goroutines and connections come and go,
	// and would blur the baseline.
	cfg := tlsConfig(be, "off", cert, key, "", "client_header_timeout: 1s\nworker_connections: 6", 1)
	g := startGateway(t, strings.ReplaceAll(cfg, "    backends:\n", "    health: {interval: 1h}\n    backends:\n"))
	addr := strings.Split(g.awaitLog("sluice starting")["listeners"].(string), ",")[1]
	client := httpsClient(pki.pool, false, nil, 0)
	// worker_connections: 6 open TLS connections, each with a stream the
	// backend holds (busy: client_header_timeout does not close them),
	// then the seventh is closed at once.
	var held []*tls.Conn
	for i := range 6 {
		tc, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pki.pool, ServerName: "localhost"})
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		t.Cleanup(func() { tc.Close() })
		body := chatBody("m", true, "held")
		fmt.Fprintf(tc, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nX-Fake-Hold: cap\r\n"+
			"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", keyAll, len(body), body)
		res, err := http.ReadResponse(bufio.NewReader(tc), nil)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("held stream %d: %v %v", i, res, err)
		}
		held = append(held, tc)
	}
	if v, _ := g.metric("sluice_client_connections", nil); v != 6 {
		t.Errorf("sluice_client_connections = %v with six TLS streams open", v)
	}
	if _, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pki.pool, ServerName: "localhost"}); err == nil {
		t.Error("a seventh TLS connection past worker_connections: 6 was served a handshake")
	}
	if v, _ := g.metric("sluice_client_connections_refused_total", nil); v != 1 {
		t.Errorf("sluice_client_connections_refused_total = %v, want 1", v)
	}
	be.Release("cap")
	for _, tc := range held {
		tc.Close()
	}

	await(t, "the held connections closed", func() bool {
		v, _ := g.metric("sluice_client_connections", nil)
		return v == 0
	})
	tlsChat(t, client, addr) // the baseline has served
	client.CloseIdleConnections()
	await(t, "every connection closed", func() bool {
		v, _ := g.metric("sluice_client_connections", nil)
		return v == 0
	})
	// One round of each hostile client, then the baseline (the runtime
	// keeps a few goroutines of its own once such work was done), then
	// five rounds more: a leak of even one goroutine or descriptor per
	// connection would show 20 over it.
	round := func() {
		dial := func() net.Conn {
			c, err := net.DialTimeout("tcp", addr, deadline)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			return c
		}
		// Plain HTTP.
		c := dial()
		fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Length: 2\r\n\r\n{}", keyAll)
		got := readUntilClosed(t, c)
		res, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(got)), nil)
		if err != nil {
			t.Fatalf("plain HTTP to the TLS port got %q: %v", clipBytes(got), err)
		}
		var e struct {
			Error struct{ Code, Message string }
		}
		if body, _ := io.ReadAll(res.Body); res.StatusCode != 400 || json.Unmarshal(body, &e) != nil || e.Error.Code != "http_to_https" {
			t.Errorf("plain HTTP to the TLS port: %d %s", res.StatusCode, body)
		}
		// Garbage.
		c = dial()
		c.Write(bytes.Repeat([]byte{0xff, 0x00, 0x13}, 100))
		if got := readUntilClosed(t, c); len(got) > 16 { // at most an alert
			t.Errorf("garbage got %q", clipBytes(got))
		}
		// Half a ClientHello, then nothing; and a connection that sends
		// nothing at all: both closed by client_header_timeout.
		half := dial()
		half.Write([]byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03})
		silent := dial()
		for _, c := range []net.Conn{half, silent} {
			if got := readUntilClosed(t, c); len(got) > 16 {
				t.Errorf("a stalled handshake got %q", clipBytes(got))
			}
		}
		await(t, "every connection closed", func() bool {
			v, _ := g.metric("sluice_client_connections", nil)
			return v == 0
		})
	}
	round()
	base := g.counts()
	for range 5 {
		round()
	}
	for reason, want := range map[string]float64{"plain_http": 6, "not_tls": 6, "timeout": 12} {
		if v, _ := g.metric("sluice_tls_handshake_failures_total", map[string]string{"reason": reason}); v != want {
			t.Errorf("sluice_tls_handshake_failures_total{reason=%q} = %v, want %v", reason, v, want)
		}
	}
	g.awaitSettled(base, "after the hostile TLS clients")
}

// A worker serves the certificate the supervisor validated, not what the
// file holds by the time the worker reads it: the reload frame carries
// the files' bytes. Overwritten with garbage (a renewal half-written)
// and a worker killed before any reload, the restarted worker comes up
// with the validated certificate and serves; the reload that follows is
// refused at its line, and serving goes on.
func TestTLSRestartedWorkerServesValidatedFiles(t *testing.T) {
	pki := newTestPKI(t)
	cert, key := pki.issue(t, "validated", time.Now().Add(-time.Hour), time.Now().Add(12*time.Hour))
	be := startBackend(t, fakevllm.Options{Tokens: 2})
	g, addr, _ := tlsGateway(t, be, cert, key, "", "", 1)
	if cn := servedBy(t, addr, pki.pool); cn != "validated" {
		t.Fatalf("served %q", cn)
	}
	if err := os.WriteFile(cert, []byte("-----BEGIN CERTIFICATE-----\nhalf a renewal\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := g.workerPIDs()
	syscall.Kill(old[0], syscall.SIGKILL)
	await(t, "a new worker", func() bool {
		pids := g.workerPIDs()
		return len(pids) == 1 && pids[0] != old[0]
	})
	g.awaitReady()
	if cn := servedBy(t, addr, pki.pool); cn != "validated" {
		t.Fatalf("the restarted worker served %q", cn)
	}
	g.cmd.Process.Signal(syscall.SIGHUP)
	await(t, "the reload's refusal", func() bool { return strings.Contains(g.lastReloadError(), "sluice.yaml:6:") })
	if cn := servedBy(t, addr, pki.pool); cn != "validated" {
		t.Fatalf("after the refused reload: %q", cn)
	}
}
