package config

import (
	"encoding/hex"
	"strings"
	"testing"
)

// listen takes one address or a list; a list's problems are reported at
// their line, each with its field path.
func TestListenForms(t *testing.T) {
	rest := validYAML[strings.Index(validYAML, "\n")+1:]
	c, err := Parse("one.yaml", []byte("listen: 127.0.0.1:8081\n"+rest))
	if err != nil || len(c.Listen) != 1 || c.Listen[0].Address != "127.0.0.1:8081" || c.Listen[0].TLS != nil {
		t.Fatalf("short form: %+v %v", c.Listen, err)
	}
	c, err = Parse("list.yaml", []byte("listen:\n  - address: 127.0.0.1:8081\n  - address: 127.0.0.1:0\n  - address: 127.0.0.1:0\n"+rest))
	if err != nil || len(c.Listen) != 3 || c.Listen.Primary() != "127.0.0.1:8081" || c.Listen.String() != "127.0.0.1:8081, 127.0.0.1:0, 127.0.0.1:0" {
		t.Fatalf("list form: %+v %v", c.Listen, err)
	}
	if c, err := Parse("none.yaml", []byte(rest)); err != nil || c.Listen.Primary() != DefaultListen {
		t.Fatalf("default: %+v %v", c, err)
	}
	if _, err := Parse("bad.yaml", []byte("listen: nope\n"+rest)); err == nil || !strings.Contains(err.Error(), "bad.yaml:1:9: listen[0].address: \"nope\" is not host:port") {
		t.Errorf("short form, bad address: %v", err)
	}
	for _, tc := range []struct{ listen, want string }{
		{"listen: {address: x}\n", "bad.yaml:1:9: listen must be host:port or a list"},
		{"listen:\n  - address: nope\n", "bad.yaml:2:14: listen[0].address: \"nope\" is not host:port"},
		{"listen:\n  - address: 127.0.0.1:1\n  - address: 127.0.0.1:1\n", "bad.yaml:3:14: listen[1].address: 127.0.0.1:1 is listed twice"},
		{"listen:\n  - address: 127.0.0.1:1\n    tls: {}\n", "listen[0].tls.certificates: a TLS listener needs at least one certificate"},
		{"listen:\n  - address: 127.0.0.1:1\n    tls:\n      certificates: [{cert: a.pem}]\n", "listen[0].tls.certificates[0]: cert and key are both required"},
		{"listen:\n  - address: 127.0.0.1:1\n    tls:\n      certificates: [{cert: /nonexistent.pem, key: /nonexistent.key}]\n", "listen[0].tls.certificates[0]: open /nonexistent.pem"},
		{"listen:\n  - address: 127.0.0.1:1\n    tls:\n      certificates: [{cert: a, key: b}]\n      min_version: \"1.1\"\n", "bad.yaml:5:20: listen[0].tls.min_version: must be \"1.2\" or \"1.3\""},
		{"listen:\n  - address: 127.0.0.1:1\n    tls:\n      certificates: [{cert: a, key: b}]\n      client_ca: /nonexistent-ca.pem\n", "listen[0].tls.client_ca: open /nonexistent-ca.pem"},
		{"listen:\n  - address: 127.0.0.1:1\n    tls:\n      certificate: x\n", "bad.yaml:4:"},
	} {
		_, err := Parse("bad.yaml", []byte(tc.listen+rest))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.listen, err, tc.want)
		}
	}
}

// keys[].client_cert_sha256: a fingerprint in openssl's form or bare hex,
// in place of sha256 or beside it; refused at its line when malformed,
// pinned twice, or with no listener that asks clients for a certificate.
func TestClientCertKeys(t *testing.T) {
	const fp = "AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89"
	bare := strings.ToLower(strings.ReplaceAll(fp, ":", ""))
	a, ok := CertFingerprint(fp)
	b, ok2 := CertFingerprint(bare)
	o, ok3 := CertFingerprint("sha256 Fingerprint=" + fp) // openssl 3's line, whole
	if !ok || !ok2 || !ok3 || a != b || a != o || a[0] != 0xab || a[31] != 0x89 {
		t.Fatalf("CertFingerprint: %x %v, %x %v, %x %v", a, ok, b, ok2, o, ok3)
	}
	for _, bad := range []string{"", bare[:62], bare + "00", strings.Replace(fp, ":", "-", 1), "zz" + bare[2:], ":" + fp[1:]} {
		if _, ok := CertFingerprint(bad); ok {
			t.Errorf("CertFingerprint(%q) accepted", bad)
		}
	}
	models := "models:\n  - name: m\n    backends:\n      - url: http://127.0.0.1:8000\n        slots: 1\n"
	mtls := "listen:\n  - address: 127.0.0.1:1\n    tls:\n      certificates: [{cert: a, key: b}]\n      client_ca: /nonexistent-ca.pem\n"
	for _, tc := range []struct{ listen, keys, want string }{
		{"listen: 127.0.0.1:1\n", "keys:\n  - name: s\n    client_cert_sha256: " + bare + "\n    models: [\"*\"]\n",
			"bad.yaml:4:25: keys[0].client_cert_sha256: no TLS listener has a client_ca"},
		{mtls, "keys:\n  - name: s\n    client_cert_sha256: nope\n    models: [\"*\"]\n",
			"bad.yaml:8:25: keys[0].client_cert_sha256: must be the SHA-256 fingerprint of a client certificate"},
		{mtls, "keys:\n  - name: s\n    client_cert_sha256: " + bare + "\n    models: [\"*\"]\n  - name: t\n    client_cert_sha256: \"" + fp + "\"\n    models: [\"*\"]\n",
			"bad.yaml:11:25: keys[1].client_cert_sha256: the same client certificate appears twice"},
		{mtls, "keys:\n  - name: s\n    models: [\"*\"]\n", "keys[0].sha256: must be 64 hex characters"},
	} {
		_, err := Parse("bad.yaml", []byte(tc.listen+tc.keys+models))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.keys, err, tc.want)
		}
	}
	// A key of a certificate alone, and one with both: no complaint of
	// theirs (the client_ca file's own is the only error).
	keys := "keys:\n  - name: s\n    client_cert_sha256: \"" + fp + "\"\n    models: [\"*\"]\n  - name: t\n    sha256: " + strings.Repeat("1", 64) +
		"\n    client_cert_sha256: " + strings.Repeat("2", 64) + "\n    models: [\"*\"]\n"
	_, err := Parse("ok.yaml", []byte(mtls+keys+models))
	if err == nil || strings.Contains(err.Error(), "keys[") || !strings.Contains(err.Error(), "client_ca") {
		t.Errorf("valid certificate keys: %v", err)
	}
}

// FuzzCertFingerprint: what CertFingerprint accepts is exactly 32 bytes
// written as 64 hex digits, bare or with a colon between each two; both
// forms of what it returns parse back to it.
func FuzzCertFingerprint(f *testing.F) {
	f.Add("ab:cd")
	f.Add(strings.Repeat("0f", 32))
	f.Add(strings.TrimSuffix(strings.Repeat("A0:", 32), ":"))
	f.Add("SHA256 Fingerprint=" + strings.Repeat("0f", 32))
	f.Fuzz(func(t *testing.T, s string) {
		sum, ok := CertFingerprint(s)
		if p := "sha256 fingerprint="; len(s) > len(p) && strings.EqualFold(s[:len(p)], p) {
			s = s[len(p):] // openssl's prefix, pasted whole
		}
		bare := strings.ReplaceAll(s, ":", "")
		decoded, err := hex.DecodeString(bare)
		want := err == nil && len(decoded) == 32 && (len(s) == 64 || len(s) == 95 && strings.Count(s, ":") == 31)
		if len(s) == 95 {
			for i := 2; i < len(s); i += 3 {
				want = want && s[i] == ':'
			}
		}
		if ok != want {
			t.Fatalf("CertFingerprint(%q) = %v, want %v", s, ok, want)
		}
		if !ok {
			return
		}
		h := hex.EncodeToString(sum[:])
		var pairs []string
		for i := 0; i < len(h); i += 2 {
			pairs = append(pairs, strings.ToUpper(h[i:i+2]))
		}
		for _, form := range []string{h, strings.Join(pairs, ":")} {
			if back, ok := CertFingerprint(form); !ok || back != sum {
				t.Fatalf("%q does not parse back to %x", form, sum)
			}
		}
	})
}
