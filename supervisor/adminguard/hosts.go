package adminguard

import (
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// Hosts decides which Host header values the admin listener answers: its
// own address, and the patterns of admin_hosts.
//
// Why: a browser page on evil.example whose DNS name is rebound to the
// admin address (DNS rebinding) reaches the listener as same-origin, and
// without a token could read /metrics and /status; its requests still
// carry "Host: evil.example", which no client of the listener sends.
type Hosts struct {
	port  string          // the listener's port
	own   map[string]bool // names and addresses that are the listener's, with its port
	anyIP bool            // it listens on a wildcard address: any IP literal with its port
	allow []Pattern
}

// Pattern is one admin_hosts entry: a host (lower case, IPv6 without
// brackets) and a port, "" for any.
type Pattern struct{ Host, Port string }

// NewHosts returns the Hosts of a listener configured at configured
// (host:port as written) and bound at bound, with the extra patterns
// allow. Its own are the configured host and the bound address; on a
// loopback or wildcard address also "localhost"; on a wildcard address
// (0.0.0.0, [::]) every IP literal, since any of the machine's may reach
// it and an IP literal cannot be rebound.
func NewHosts(configured string, bound net.Addr, allow []Pattern) *Hosts {
	h := &Hosts{own: map[string]bool{}}
	for _, p := range allow {
		h.allow = append(h.allow, Pattern{Host: normalHost(p.Host), Port: p.Port})
	}
	if host, _, err := net.SplitHostPort(configured); err == nil && host != "" {
		h.own[normalHost(host)] = true
	}
	ap, err := netip.ParseAddrPort(bound.String())
	if err != nil {
		if _, port, err := net.SplitHostPort(bound.String()); err == nil {
			h.port = port
		}
		return h
	}
	h.port = strconv.Itoa(int(ap.Port()))
	ip := ap.Addr().Unmap().WithZone("")
	h.own[ip.String()] = true
	if ip.IsLoopback() || ip.IsUnspecified() {
		h.own["localhost"] = true
	}
	h.anyIP = ip.IsUnspecified()
	return h
}

// Allowed reports whether a request with Host header host is for this
// listener. A request without one (HTTP/1.0) is: browsers always send it.
func (h *Hosts) Allowed(host string) bool {
	if host == "" {
		return true
	}
	name, port := host, "80" // a browser leaves out the default port
	if n, p, err := net.SplitHostPort(host); err == nil {
		name, port = n, p
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		name = host[1 : len(host)-1]
	}
	name = normalHost(name)
	if port == h.port {
		if h.own[name] {
			return true
		}
		if h.anyIP {
			if _, err := netip.ParseAddr(name); err == nil {
				return true
			}
		}
	}
	for _, p := range h.allow {
		if p.Host == name && (p.Port == "" || p.Port == port) {
			return true
		}
	}
	return false
}

// normalHost is a host name in lower case without the final dot of a
// fully qualified name ("localhost." is localhost), an IP address in its
// canonical form.
func normalHost(s string) string {
	s = strings.ToLower(strings.TrimSuffix(s, "."))
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap().WithZone("").String()
	}
	return s
}
