package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/config"
)

// testCert is a certificate and its key; signer signs others.
type testCert struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// issue makes a certificate for names (IPs or DNS names), signed by
// parent (nil: self-signed); ca makes it a CA.
func issue(t *testing.T, cn string, parent *testCert, ca bool, names ...string) *testCert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	if ca {
		tmpl.IsCA, tmpl.BasicConstraintsValid, tmpl.KeyUsage = true, true, x509.KeyUsageCertSign
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	signer, signerKey := tmpl, key
	if parent != nil {
		signer, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCert{cert, key}
}

func pemOf(t *testing.T, certs ...*testCert) []byte {
	var b []byte
	for _, c := range certs {
		b = append(b, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.cert.Raw})...)
	}
	return b
}

// sluice reload sends the admin token only to a listener whose certificate
// is admin_tls's, or a renewal for its names that the roots sign: not to
// another certificate of the same CA or intermediate for another name,
// nor to a self-signed one for the right name.
func TestAdminTLSTrust(t *testing.T) {
	ca := issue(t, "root", nil, true)
	inter := issue(t, "intermediate", ca, true)
	own := issue(t, "admin", inter, false, "127.0.0.1", "admin.internal")
	kder, err := x509.MarshalECPrivateKey(own.key)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{Admin: "127.0.0.1:9090",
		AdminTLS: &config.TLS{Certificates: []config.Certificate{{Cert: "admin.pem", Key: "admin.key"}}},
		Files: config.Files{"admin.pem": pemOf(t, own, inter),
			"admin.key": pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})}}
	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)
	tc, err := adminTLSConfig(cfg, roots)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		chain []*testCert
		ok    bool
	}{
		{"admin_tls's own certificate", []*testCert{own}, true},
		{"a renewal for its IP", []*testCert{issue(t, "renewed", inter, false, "127.0.0.1")}, true},
		{"a renewal for its DNS name, the intermediate sent", []*testCert{issue(t, "renewed", inter, false, "admin.internal"), inter}, true},
		{"the same intermediate, another name", []*testCert{issue(t, "evil", inter, false, "evil.example")}, false},
		{"the root itself, another name", []*testCert{issue(t, "evil", ca, false, "evil.example")}, false},
		{"self-signed, the right name", []*testCert{issue(t, "self", nil, false, "127.0.0.1")}, false},
	} {
		var peers []*x509.Certificate
		for _, x := range c.chain {
			peers = append(peers, x.cert)
		}
		err := tc.VerifyConnection(tls.ConnectionState{PeerCertificates: peers})
		if (err == nil) != c.ok {
			t.Errorf("%s: %v, want ok=%v", c.name, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "is not admin_tls's") {
			t.Errorf("%s: message %v", c.name, err)
		}
	}
	// The files' intermediate is no root: without the root in the pool, a
	// renewal does not pass.
	tc, _ = adminTLSConfig(cfg, x509.NewCertPool())
	if err := tc.VerifyConnection(tls.ConnectionState{PeerCertificates: []*x509.Certificate{issue(t, "renewed", inter, false, "127.0.0.1").cert}}); err == nil {
		t.Error("the files' intermediate vouched for a renewal as a root")
	}
}
