package tests

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
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
