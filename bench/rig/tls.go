package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// proxyTLSAddrs: each proxy's https listener, beside its plain one (the
// same process serves both, so that the TLS scenarios and scenario c
// compare one build on one core).
var proxyTLSAddrs = map[string]string{
	"sluice":      "127.0.0.1:28180",
	"nginx":       "127.0.0.1:28181",
	"nginx-lua":   "127.0.0.1:28182",
	"sluice-base": "127.0.0.1:28183",
	"sluice-gov":  "127.0.0.1:28184",
}

// rigCerts is the certificate every proxy serves over https: an ECDSA
// P-256 leaf for 127.0.0.1 signed by a CA made for this run (the driver
// trusts the CA alone). Made once, in a directory removed at exit.
var rigCerts struct {
	once          sync.Once
	dir           string
	ca, cert, key string
}

// makeCerts writes the run's CA and the proxies' certificate and key.
func makeCerts() {
	rigCerts.once.Do(func() {
		dir := mustTemp("tls")
		rigCerts.dir = dir
		caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		must(err)
		now := time.Now()
		caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sluice rig CA"},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(30 * 24 * time.Hour),
			IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
		caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
		must(err)
		caCert, err := x509.ParseCertificate(caDER)
		must(err)
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		must(err)
		leafTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(30 * 24 * time.Hour),
			IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
		leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, caCert, &key.PublicKey, caKey)
		must(err)
		keyDER, err := x509.MarshalECPrivateKey(key)
		must(err)
		rigCerts.ca, rigCerts.cert, rigCerts.key = filepath.Join(dir, "ca.pem"), filepath.Join(dir, "gw.pem"), filepath.Join(dir, "gw.key")
		must(os.WriteFile(rigCerts.ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o644))
		must(os.WriteFile(rigCerts.cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}), 0o644))
		must(os.WriteFile(rigCerts.key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600))
	})
}

// sluiceListen is sluice's listen block: the plain listener, and the
// https one when tls (same certificate as the nginx peers; tickets on,
// the defaults: TLS 1.2 and 1.3, Go's cipher suites).
func sluiceListen(name string, tls bool) string {
	if !tls {
		return "listen: " + proxyAddr(name) + "\n"
	}
	return fmt.Sprintf("listen:\n  - address: %s\n  - address: %s\n    tls:\n      certificates:\n        - cert: %s\n          key: %s\n",
		proxyAddr(name), proxyTLSAddrs[name], rigCerts.cert, rigCerts.key)
}

// nginxTLS is the nginx peers' https server: the same certificate, TLS
// 1.2 and 1.3, tickets on (nginx's default, keys made at start: one
// worker, so every ticket resumes), and for TLS 1.2 the cipher suites Go
// offers by default, in Go's order. TLS 1.3's suites are both sides'
// defaults; the client's preference picks (nginx: ssl_prefer_server_ciphers
// off), and the driver reports what was negotiated.
func nginxTLS(name string) string {
	return strings.Join([]string{
		"listen " + proxyTLSAddrs[name] + " ssl backlog=4096;",
		"        ssl_certificate " + rigCerts.cert + ";",
		"        ssl_certificate_key " + rigCerts.key + ";",
		"        ssl_protocols TLSv1.2 TLSv1.3;",
		"        ssl_ciphers ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-CHACHA20-POLY1305;",
		"        ssl_session_tickets on;",
	}, "\n")
}

// tlsArgs are the driver's arguments for an https run.
func tlsArgs() []string { return []string{"-cacert", rigCerts.ca} }

// servesTLS says whether r is measured in the TLS scenarios: every
// proxy with an https listener (not "direct": the fake backend has none;
// not a -baseline older than sluice's TLS, which started plain).
func servesTLS(r *running, _ string) bool { return r.tlsURL != "" }
