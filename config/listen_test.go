package config

import (
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
