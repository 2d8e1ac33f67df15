package tests

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// testPKI is a CA made in the test and certificates it signed, as PEM files.
type testPKI struct {
	dir    string
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	CAFile string
	pool   *x509.CertPool
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sluice test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(der)
	p := &testPKI{dir: t.TempDir(), ca: ca, caKey: key, pool: x509.NewCertPool()}
	p.pool.AddCert(ca)
	p.CAFile = p.write(t, "ca.pem", "CERTIFICATE", der)
	return p
}

func (p *testPKI) write(t *testing.T, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// issue signs a certificate for 127.0.0.1 and localhost, valid from
// notBefore to notAfter, and returns its cert and key files.
func (p *testPKI) issue(t *testing.T, name string, notBefore, notAfter time.Time) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: name},
		NotBefore: notBefore, NotAfter: notAfter, DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &k.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return p.write(t, name+".pem", "CERTIFICATE", der), p.write(t, name+".key", "EC PRIVATE KEY", kder)
}

// tlsListen is a listen block of a plain listener and a TLS one with cert
// and key, both on ports the kernel chooses.
func tlsListen(cert, key string) string {
	return fmt.Sprintf(`listen:
  - address: 127.0.0.1:0
  - address: 127.0.0.1:0
    tls:
      certificates:
        - {cert: %s, key: %s}
`, cert, key)
}

// The official OpenAI client speaks to sluice over https:// with the test
// CA, streamed and not, while the plain listener beside it serves on.
func TestTLSListenerServesOpenAIClient(t *testing.T) {
	pki := newTestPKI(t)
	cert, key := pki.issue(t, "server", time.Now().Add(-time.Hour), time.Now().Add(12*time.Hour))
	be := startBackend(t, fakevllm.Options{Tokens: 3, Words: []string{"one", "two", "three"}})
	cfg := strings.Replace(baseConfig(be.URL(), "off", ""), "listen: 127.0.0.1:0\n", tlsListen(cert, key), 1)
	g := startGateway(t, cfg)
	start := g.awaitLog("sluice starting")
	addrs := strings.Split(start["listeners"].(string), ",")
	if len(addrs) != 2 {
		t.Fatalf("listeners logged: %v", start["listeners"])
	}
	httpsURL := "https://" + addrs[1]

	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pki.pool}, ForceAttemptHTTP2: true}}
	defer hc.CloseIdleConnections()
	client := openai.NewClient(option.WithBaseURL(httpsURL+"/v1/"), option.WithAPIKey(keyAll), option.WithMaxRetries(0), option.WithHTTPClient(hc))
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Count.")}}
	res, err := client.Chat.Completions.New(ctx, params)
	if err != nil || len(res.Choices) != 1 || res.Choices[0].Message.Content != "one two three" {
		t.Fatalf("over TLS: %+v %v", res, err)
	}
	stream := client.Chat.Completions.NewStreaming(ctx, params)
	chunks := 0
	for stream.Next() {
		chunks++
	}
	if err := stream.Err(); err != nil || chunks < 3 {
		t.Fatalf("streamed over TLS: %d chunks, %v", chunks, err)
	}

	// The client offered h2 (ForceAttemptHTTP2): sluice chose http/1.1.
	resp, err := hc.Get(httpsURL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Proto != "HTTP/1.1" || resp.TLS == nil || resp.TLS.NegotiatedProtocol != "http/1.1" {
		t.Errorf("protocol %s, ALPN %q", resp.Proto, resp.TLS.NegotiatedProtocol)
	}

	// The plain listener beside it.
	plain := openai.NewClient(option.WithBaseURL("http://"+addrs[0]+"/v1/"), option.WithAPIKey(keyAll), option.WithMaxRetries(0))
	if res, err := plain.Chat.Completions.New(ctx, params); err != nil || len(res.Choices) != 1 {
		t.Fatalf("plain listener: %+v %v", res, err)
	}

	// The certificate's time left: in /metrics and on the status page.
	if v, ok := g.metric("sluice_tls_certificate_expiry_seconds", map[string]string{"cert": cert}); !ok || v < 11*3600 || v > 12*3600 {
		t.Errorf("sluice_tls_certificate_expiry_seconds = %v (%v), want about 12 h", v, ok)
	}
	res2, err := http.Get(g.AdminURL + "/status/live")
	if err != nil {
		t.Fatal(err)
	}
	var live struct {
		Certificates []struct {
			Cert, Subject string
			ExpiresIn     float64 `json:"expires_in_s"`
		}
	}
	json.NewDecoder(res2.Body).Decode(&live)
	res2.Body.Close()
	if len(live.Certificates) != 1 || live.Certificates[0].Cert != cert || live.Certificates[0].Subject != "server" {
		t.Errorf("/status/live certificates: %+v", live.Certificates)
	}

	// A client that does not trust the CA is refused by its own TLS stack.
	untrusting := &http.Client{Transport: &http.Transport{}}
	if _, err := untrusting.Get(httpsURL + "/v1/models"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("a client without the CA: %v", err)
	}
}

// sluice check refuses a listener whose certificate has expired, or whose
// key is not the certificate's, at the line of the certificate, and warns
// of one that expires within 14 days.
func TestCheckTLSCertificates(t *testing.T) {
	pki := newTestPKI(t)
	now := time.Now()
	good, goodKey := pki.issue(t, "good", now.Add(-time.Hour), now.Add(60*24*time.Hour))
	soon, soonKey := pki.issue(t, "soon", now.Add(-time.Hour), now.Add(7*24*time.Hour))
	old, oldKey := pki.issue(t, "old", now.Add(-48*time.Hour), now.Add(-24*time.Hour))
	run := func(cert, key string) (string, error) {
		path := filepath.Join(t.TempDir(), "sluice.yaml")
		cfg := strings.Replace(baseConfig("http://127.0.0.1:9", "off", ""), "listen: 127.0.0.1:0\n", tlsListen(cert, key), 1)
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(sluiceBin, "check", "-c", path)
		cmd.Env = append(os.Environ(), "SLUICE_TEST_BACKEND_KEY="+backendKey)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run(good, goodKey); err != nil || strings.Contains(out, "warning") {
		t.Errorf("a good certificate: %v\n%s", err, out)
	}
	// The chain and its key in one file, as the Nomad job renders them.
	both := filepath.Join(pki.dir, "both.pem")
	certPEM, _ := os.ReadFile(good)
	keyPEM, _ := os.ReadFile(goodKey)
	if err := os.WriteFile(both, append(certPEM, keyPEM...), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := run(both, both); err != nil || strings.Contains(out, "warning") {
		t.Errorf("a certificate and its key in one file: %v\n%s", err, out)
	}
	if out, err := run(soon, soonKey); err != nil || !strings.Contains(out, "warning: certificate "+soon) || !strings.Contains(out, "expires in") {
		t.Errorf("a certificate that expires in 7 days: %v\n%s", err, out)
	}
	if out, err := run(old, oldKey); err == nil || !strings.Contains(out, "sluice.yaml:6:") || !strings.Contains(out, "expired") {
		t.Errorf("an expired certificate: %v\n%s", err, out)
	}
	if out, err := run(good, soonKey); err == nil || !strings.Contains(out, "sluice.yaml:6:") || !strings.Contains(out, "private key does not match") {
		t.Errorf("a key that is not the certificate's: %v\n%s", err, out)
	}
}

// With client_ca, a client certificate chaining to it is required: a
// client without one fails its handshake, one with one is served.
func TestTLSClientCertificateRequired(t *testing.T) {
	pki := newTestPKI(t)
	cert, key := pki.issue(t, "server", time.Now().Add(-time.Hour), time.Now().Add(12*time.Hour))
	ccert, ckey := pki.issue(t, "client", time.Now().Add(-time.Hour), time.Now().Add(12*time.Hour))
	be := startBackend(t, fakevllm.Options{Tokens: 2})
	listen := tlsListen(cert, key) + "      client_ca: " + pki.CAFile + "\n"
	g := startGateway(t, strings.Replace(baseConfig(be.URL(), "off", ""), "listen: 127.0.0.1:0\n", listen, 1))
	httpsURL := "https://" + strings.Split(g.awaitLog("sluice starting")["listeners"].(string), ",")[1]
	get := func(certs []tls.Certificate) (*http.Response, error) {
		hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pki.pool, Certificates: certs}}}
		defer hc.CloseIdleConnections()
		req, _ := http.NewRequest(http.MethodGet, httpsURL+"/v1/models", nil)
		req.Header.Set("Authorization", "Bearer "+keyAll)
		return hc.Do(req)
	}
	if res, err := get(nil); err == nil {
		res.Body.Close()
		t.Fatalf("served without a client certificate: %d", res.StatusCode)
	}
	pair, err := tls.LoadX509KeyPair(ccert, ckey)
	if err != nil {
		t.Fatal(err)
	}
	res, err := get([]tls.Certificate{pair})
	if err != nil {
		t.Fatalf("with a client certificate: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("with a client certificate: %d", res.StatusCode)
	}
}

// A client certificate stands in for an API key (keys[].client_cert_sha256):
// the pinned certificate's requests are its key's, whether they send no
// key, a placeholder (the official client needs one), or resume their
// session; a valid key sent names its own key instead; a certificate the
// CA signed but no key pins is refused as having no key; the key's models
// hold as for a bearer key.
func TestTLSClientCertificateIsKey(t *testing.T) {
	pki := newTestPKI(t)
	cert, key := pki.issue(t, "server", time.Now().Add(-time.Hour), time.Now().Add(12*time.Hour))
	pinnedCert, pinnedKey := pki.issue(t, "svc", time.Now().Add(-time.Hour), time.Now().Add(12*time.Hour))
	otherCert, otherKey := pki.issue(t, "other", time.Now().Add(-time.Hour), time.Now().Add(12*time.Hour))
	pinned, err := tls.LoadX509KeyPair(pinnedCert, pinnedKey)
	if err != nil {
		t.Fatal(err)
	}
	other, err := tls.LoadX509KeyPair(otherCert, otherKey)
	if err != nil {
		t.Fatal(err)
	}
	// As openssl prints it: upper case, colons between pairs.
	sum := sha256.Sum256(pinned.Certificate[0])
	var pairs []string
	for _, b := range sum {
		pairs = append(pairs, fmt.Sprintf("%02X", b))
	}
	be := startBackend(t, fakevllm.Options{Tokens: 2})
	svc := "keys:\n  - name: svc\n    client_cert_sha256: \"" + strings.Join(pairs, ":") + "\"\n    models: [\"m\"]\n"
	// Added by a reload: the certificate keys are the route table's, as
	// bearer keys are.
	g, addr, cfg := tlsGateway(t, be, cert, key, "      client_ca: "+pki.CAFile+"\n", "", 2)
	g.reloadWith(strings.Replace(cfg, "keys:\n", svc, 1))
	// Every worker has it once the supervisor says so (the generation
	// moves before it tells the workers).
	await(t, "the reload applied by every worker", func() bool { return g.findLog("configuration reloaded", 0) != nil })

	// A session cache of each certificate's: a resumed session is the
	// client its full handshake verified, whatever it presents after.
	caches := map[*tls.Certificate]tls.ClientSessionCache{&pinned: tls.NewLRUClientSessionCache(8), &other: tls.NewLRUClientSessionCache(8)}
	post := func(cert *tls.Certificate, auth, model string, fresh bool) (*http.Response, map[string]any) {
		t.Helper()
		hc := &http.Client{Timeout: deadline, Transport: &http.Transport{DisableKeepAlives: fresh,
			TLSClientConfig: &tls.Config{RootCAs: pki.pool, Certificates: []tls.Certificate{*cert}, ClientSessionCache: caches[cert]}}}
		defer hc.CloseIdleConnections()
		req, _ := http.NewRequest(http.MethodPost, "https://"+addr+"/v1/chat/completions", bytes.NewReader(chatBody(model, false, "hi")))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		res, err := hc.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", auth, err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return res, nil
		}
		return res, g.usageLineFor(t, res.Header.Get("X-Request-Id"))
	}
	for _, c := range []struct {
		name          string
		cert          *tls.Certificate
		auth, model   string
		status        int
		code, keyName string
	}{
		{"pinned certificate, no key", &pinned, "", "m", 200, "", "svc"},
		{"pinned certificate, a placeholder key", &pinned, "Bearer unused", "m", 200, "", "svc"},
		{"pinned certificate, another valid key", &pinned, "Bearer " + keyAll, "m-alias", 200, "", "all"},
		{"pinned certificate, a model its key may not use", &pinned, "", "m-alias", 403, "", ""},
		{"unpinned certificate, no key", &other, "", "m", 401, "missing_api_key", ""},
		{"unpinned certificate, a wrong key", &other, "Bearer unused", "m", 401, "invalid_api_key", ""},
		{"unpinned certificate, a valid key", &other, "Bearer " + keyAll, "m", 200, "", "all"},
	} {
		res, line := post(c.cert, c.auth, c.model, false)
		if res.StatusCode != c.status {
			t.Fatalf("%s: status %d, want %d", c.name, res.StatusCode, c.status)
		}
		if line != nil && line["key"] != c.keyName {
			t.Fatalf("%s: served as key %v, want %s", c.name, line["key"], c.keyName)
		}
	}
	// A resumed session keeps its verified certificate, and its key.
	resumed := false
	for i := 0; i < 10 && !resumed; i++ {
		_, line := post(&pinned, "", "m", true)
		if line == nil || line["key"] != "svc" {
			t.Fatalf("new connection %d: usage line %v", i, line)
		}
		resumed = line["tls_resumed"] == true
	}
	if !resumed {
		t.Fatal("no connection of 10 resumed its session")
	}

	// Anthropic's Messages API: its placeholder comes as x-api-key.
	mc := &http.Client{Timeout: deadline, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pki.pool, Certificates: []tls.Certificate{pinned}, ClientSessionCache: caches[&pinned]}}}
	defer mc.CloseIdleConnections()
	mreq, _ := http.NewRequest(http.MethodPost, "https://"+addr+"/v1/messages",
		strings.NewReader(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`))
	mreq.Header.Set("X-Api-Key", "unused")
	mreq.Header.Set("Anthropic-Version", "2023-06-01")
	mres, err := mc.Do(mreq)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, mres.Body)
	mres.Body.Close()
	if mres.StatusCode != 200 || g.usageLineFor(t, mres.Header.Get("X-Request-Id"))["key"] != "svc" {
		t.Fatalf("Messages with a placeholder x-api-key and the pinned certificate: %d", mres.StatusCode)
	}

	// Expect: 100-continue. On the TLS listener, where every client's
	// certificate was verified, a request with no key is invited (its
	// certificate is looked up after); on the plain listener, where no
	// certificate can stand for a key, it is refused from its head.
	expect := func(hc *http.Client, url string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", bytes.NewReader(chatBody("m", false, "expecting")))
		req.Header.Set("Expect", "100-continue")
		res, err := hc.Do(req)
		if err != nil {
			t.Fatalf("Expect to %s: %v", url, err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode
	}
	ec := &http.Client{Timeout: deadline, Transport: &http.Transport{ExpectContinueTimeout: deadline,
		TLSClientConfig: &tls.Config{RootCAs: pki.pool, Certificates: []tls.Certificate{pinned}, ClientSessionCache: caches[&pinned]}}}
	defer ec.CloseIdleConnections()
	if code := expect(ec, "https://"+addr); code != 200 {
		t.Errorf("Expect on the TLS listener with the pinned certificate: %d", code)
	}
	// Raw, to see which comes first: an invitation or the refusal.
	raw, err := net.DialTimeout("tcp", strings.TrimPrefix(g.URL, "http://"), deadline)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetDeadline(time.Now().Add(deadline))
	fmt.Fprintf(raw, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 10\r\n\r\n")
	first, _ := bufio.NewReader(raw).ReadString('\n')
	if !strings.HasPrefix(first, "HTTP/1.1 401") {
		t.Errorf("Expect on the plain listener with no key: %q, want a 401 before any body", first)
	}

	// The official client, which needs a key: a placeholder, and the
	// certificate says whose requests they are.
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pki.pool, Certificates: []tls.Certificate{pinned}}}}
	defer hc.CloseIdleConnections()
	client := openai.NewClient(option.WithBaseURL("https://"+addr+"/v1"), option.WithAPIKey("unused"), option.WithHTTPClient(hc), option.WithMaxRetries(0))
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	models, err := client.Models.List(ctx)
	if err != nil {
		t.Fatalf("models: %v", err)
	}
	if len(models.Data) != 1 || models.Data[0].ID != "m" {
		t.Fatalf("models of the certificate's key: %+v", models.Data)
	}

	// A reload that replaces the client CAs ends the identity of the
	// connections they verified: on the same keep-alive connection, the
	// next request without a key has none.
	kc := &http.Client{Timeout: deadline, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pki.pool, Certificates: []tls.Certificate{pinned}}}}
	defer kc.CloseIdleConnections()
	keepAlive := func() (int, bool) {
		t.Helper()
		reused := false
		trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodPost,
			"https://"+addr+"/v1/chat/completions", bytes.NewReader(chatBody("m", false, "kept")))
		res, err := kc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode, reused
	}
	if code, _ := keepAlive(); code != 200 {
		t.Fatalf("before the CA change: %d", code)
	}
	other2 := newTestPKI(t)
	g.reloadWith(strings.Replace(strings.Replace(cfg, "keys:\n", svc, 1), pki.CAFile, other2.CAFile, 1))
	await(t, "the CA change applied by every worker", func() bool { return g.findLog("configuration reloaded", 1) != nil })
	if code, reused := keepAlive(); code != 401 || !reused {
		t.Errorf("after the CA change, on the connection it verified: %d (reused %v), want 401", code, reused)
	}
}

// The official OpenAI Node client over https://, trusting the test CA by
// NODE_EXTRA_CA_CERTS: a whole answer, a stream, and a wrong key's 401
// as an APIError. Needs node and `npm ci` in tests/node (CI does both and
// sets SLUICE_TEST_REQUIRE_NODE=1; elsewhere the test skips without them).
func TestTLSNodeOpenAIClient(t *testing.T) {
	node, err := exec.LookPath("node")
	if err == nil {
		if _, serr := os.Stat(filepath.Join("node", "node_modules", "openai")); serr != nil {
			err = fmt.Errorf("tests/node/node_modules/openai is missing: run npm ci in tests/node")
		}
	}
	if err != nil {
		if os.Getenv("SLUICE_TEST_REQUIRE_NODE") == "1" {
			t.Fatalf("the Node client cannot run (%v); SLUICE_TEST_REQUIRE_NODE=1 requires it", err)
		}
		t.Skipf("the Node client cannot run: %v", err)
	}
	pki := newTestPKI(t)
	cert, key := pki.issue(t, "server", time.Now().Add(-time.Hour), time.Now().Add(12*time.Hour))
	be := startBackend(t, fakevllm.Options{Tokens: 3})
	g, addr, _ := tlsGateway(t, be, cert, key, "", "", 2)

	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "https-client.mjs")
	cmd.Dir = "node"
	cmd.Env = append(os.Environ(), "SLUICE_URL=https://"+addr+"/v1", "SLUICE_KEY="+keyAll, "NODE_EXTRA_CA_CERTS="+pki.CAFile)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("node: %v\n%s\n%s", err, out, stderr)
	}
	var got struct {
		Whole, Streamed string
		Chunks          int
		Refused         *struct {
			Status int
			Code   string
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node printed %q: %v", out, err)
	}
	if got.Whole == "" || !strings.Contains(got.Streamed, "tok") || got.Chunks < 3 {
		t.Errorf("answers over https: %+v", got)
	}
	if got.Refused == nil || got.Refused.Status != http.StatusUnauthorized || got.Refused.Code != "invalid_api_key" {
		t.Errorf("a wrong key: %+v", got.Refused)
	}
	// Every request went over TLS: the usage lines say so.
	await(t, "the Node client's usage lines", func() bool {
		n := 0
		for _, l := range g.usageLines() {
			if l["tls_version"] != nil {
				n++
			}
		}
		return n >= 3
	})
}

// admin_tls makes the admin listener HTTPS: the probes, /status and
// /metrics are served over it and plain HTTP is not; `sluice reload`
// reaches it over https, refusing (before any signal) a listener whose
// certificate it cannot verify, and a renewal in place is re-read by the
// reload it sends.
func TestTLSAdminListener(t *testing.T) {
	pki := newTestPKI(t)
	cert, key := pki.issue(t, "admin-1", time.Now().Add(-time.Hour), time.Now().Add(12*time.Hour))
	be := startBackend(t, fakevllm.Options{Tokens: 1})
	pidFile := filepath.Join(t.TempDir(), "sluice.pid")
	extra := fmt.Sprintf("pid_file: %s\nadmin_tls:\n  certificates:\n    - {cert: %s, key: %s}\n", pidFile, cert, key)
	admin := httpsClient(pki.pool, true, nil, 0)
	// A fixed admin address: sluice reload reads it from the file.
	cfg := strings.Replace(baseConfig(be.URL(), "off", extra), "admin: 127.0.0.1:0", "admin: "+freeAddr(t), 1)
	g := launchGateway(t, cfg, 0, admin)

	adminCN := func() string {
		t.Helper()
		res, err := admin.Get(g.AdminURL + "/healthz")
		if err != nil {
			t.Fatalf("GET /healthz over https: %v", err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET /healthz over https: %d", res.StatusCode)
		}
		return res.TLS.PeerCertificates[0].Subject.CommonName
	}
	if cn := adminCN(); cn != "admin-1" {
		t.Fatalf("admin certificate %q", cn)
	}
	if len(g.metricFamilies()) == 0 {
		t.Fatal("no metrics over https")
	}
	plain := "http://" + strings.TrimPrefix(g.AdminURL, "https://")
	res, err := http.Get(plain + "/healthz")
	if err != nil {
		t.Fatalf("plain HTTP to the admin listener: %v (want net/http's 400)", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusBadRequest {
		t.Fatalf("plain HTTP to the admin listener: %d, want 400", res.StatusCode)
	}

	// Renewed in place, by another certificate of the CA. sluice reload
	// reads the new file and finds the old certificate served: not its
	// own, and the CA is not the system's, so it refuses to send anything.
	cert2, key2 := pki.issue(t, "admin-2", time.Now().Add(-time.Hour), time.Now().Add(12*time.Hour))
	for _, f := range [][2]string{{cert2, cert}, {key2, key}} {
		b, err := os.ReadFile(f[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f[1], b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	before := g.generation()
	out, err := sluiceReload(g)
	if exitCode(err) != 1 || !strings.Contains(string(out), "is not admin_tls's") {
		t.Fatalf("sluice reload against an unverifiable admin certificate: %v %s", err, out)
	}
	if g.generation() != before {
		t.Fatal("the supervisor was signalled all the same")
	}
	// With the private CA given as Go's system roots are: reloaded, and
	// new admin handshakes get the renewed certificate.
	cmd := exec.Command(sluiceBin, "reload", "-c", g.Config)
	cmd.Env = append(os.Environ(), "SLUICE_TEST_BACKEND_KEY="+backendKey, "SSL_CERT_FILE="+pki.CAFile)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sluice reload with the CA: %v %s", err, out)
	}
	if cn := adminCN(); cn != "admin-2" {
		t.Fatalf("after the reload the admin listener serves %q", cn)
	}
	// Its expiry is a metric, under the admin address.
	if v, ok := g.metric("sluice_tls_certificate_expiry_seconds", map[string]string{"cert": cert}); !ok || v < 3600 {
		t.Errorf("sluice_tls_certificate_expiry_seconds of the admin certificate: %v %v", v, ok)
	}

	// admin_tls removed: a reload cannot apply it, and sluice reload says
	// so rather than failing on the scheme.
	plainCfg := strings.Replace(cfg, fmt.Sprintf("admin_tls:\n  certificates:\n    - {cert: %s, key: %s}\n", cert, key), "", 1)
	if err := os.WriteFile(g.Config, []byte(plainCfg), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = sluiceReload(g)
	if exitCode(err) != 1 || !strings.Contains(string(out), "admin_tls was added or removed") {
		t.Fatalf("sluice reload with admin_tls removed: %v %s", err, out)
	}
}
