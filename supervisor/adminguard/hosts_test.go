package adminguard

import (
	"net"
	"testing"
)

func TestHosts(t *testing.T) {
	tcp := func(s string) net.Addr { a, _ := net.ResolveTCPAddr("tcp", s); return a }
	cases := []struct {
		name             string
		configured       string
		bound            net.Addr
		allow            []Pattern
		allowed, refused []string
	}{
		{"loopback", "127.0.0.1:9090", tcp("127.0.0.1:9090"), nil,
			[]string{"127.0.0.1:9090", "localhost:9090", "LOCALHOST:9090", "localhost.:9090", ""},
			[]string{"evil.example:9090", "evil.example", "127.0.0.1:9091", "127.0.0.1", "10.0.0.1:9090", "[::1]:9090", "localhost"}},
		{"a port the kernel chose", "127.0.0.1:0", tcp("127.0.0.1:41234"), nil,
			[]string{"127.0.0.1:41234"}, []string{"127.0.0.1:0", "evil.example:41234"}},
		{"a name", "admin.internal:9090", tcp("10.1.2.3:9090"), nil,
			[]string{"admin.internal:9090", "10.1.2.3:9090", "Admin.Internal:9090"},
			[]string{"localhost:9090", "10.1.2.4:9090", "admin.internal:80", "evil.example:9090"}},
		{"wildcard IPv4", "0.0.0.0:9090", tcp("0.0.0.0:9090"), nil,
			[]string{"10.0.0.7:9090", "192.168.1.1:9090", "[2001:db8::1]:9090", "localhost:9090", "0.0.0.0:9090"},
			[]string{"evil.example:9090", "10.0.0.7:9091", "10.0.0.7", "1.2.3.4.nip.io:9090"}},
		{"wildcard IPv6", "[::]:9090", tcp("[::]:9090"), nil,
			[]string{"[::1]:9090", "[fe80::1]:9090", "127.0.0.1:9090"}, []string{"evil.example:9090"}},
		{"IPv6 loopback", "[::1]:9090", tcp("[::1]:9090"), nil,
			[]string{"[::1]:9090", "[0:0::1]:9090", "localhost:9090"}, []string{"127.0.0.1:9090", "[::2]:9090"}},
		{"admin_hosts", "127.0.0.1:9090", tcp("127.0.0.1:9090"),
			[]Pattern{{Host: "gw.example"}, {Host: "proxy.example", Port: "8443"}, {Host: "2001:DB8::1"}, {Host: "default.example", Port: "80"}},
			[]string{"gw.example", "gw.example:1234", "GW.example:9090", "proxy.example:8443", "[2001:db8::1]:7", "default.example", "127.0.0.1:9090"},
			[]string{"proxy.example", "proxy.example:9090", "sub.gw.example", "gw.example.evil", "default.example:81"}},
	}
	for _, c := range cases {
		h := NewHosts(c.configured, c.bound, c.allow)
		for _, host := range c.allowed {
			if !h.Allowed(host) {
				t.Errorf("%s: Host %q refused", c.name, host)
			}
		}
		for _, host := range c.refused {
			if h.Allowed(host) {
				t.Errorf("%s: Host %q allowed", c.name, host)
			}
		}
	}
}
