package config

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"hash/fnv"
	"net"
	"os"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

// Listeners is `listen`: one address ("host:port", a plain HTTP
// listener), or a list of listeners, each plain or TLS.
type Listeners []Listener

// Listener is one client-facing listener.
type Listener struct {
	// Address is host:port.
	Address string `yaml:"address"`
	// TLS, when set, makes it an HTTPS listener.
	TLS *TLS `yaml:"tls"`
}

// TLS is a listener's (or the admin listener's) TLS settings.
type TLS struct {
	// Certificates are PEM certificate chains and their keys, chosen by
	// the client's SNI; the first is the default (no SNI, or none
	// matches).
	Certificates []Certificate `yaml:"certificates"`
	// ClientCA, when set, is a PEM file of the CAs client certificates
	// must chain to: a client certificate is then required.
	ClientCA string `yaml:"client_ca"`
	// MinVersion is the oldest TLS version accepted: "1.2" (default) or
	// "1.3".
	MinVersion string `yaml:"min_version"`
	// SessionTickets, false, turns session tickets (resumption) off;
	// default on, with keys every worker shares.
	SessionTickets *bool `yaml:"session_tickets"`
	// TicketRotation is how often a new session ticket key is made (the
	// previous two still resume); default DefaultTicketRotation.
	TicketRotation Duration `yaml:"ticket_rotation"`
}

// Tickets reports whether session tickets are on.
func (t *TLS) Tickets() bool { return t.SessionTickets == nil || *t.SessionTickets }

// Certificate is one certificate chain and its private key, PEM files.
type Certificate struct {
	Cert string `yaml:"cert"`
	Key  string `yaml:"key"`
}

// Defaults of a TLS block.
const (
	DefaultTLSMinVersion     = "1.2"
	CertificateExpiryWarning = 14 * 24 * time.Hour // sluice check warns of a certificate that expires sooner
	DefaultTicketRotation    = time.Hour
	MinTicketRotation        = time.Minute
	// MaxTLSListeners bounds the TLS listeners: each has its own session
	// ticket keys in the shared region, which has room for this many.
	MaxTLSListeners = 16
)

// UnmarshalYAML accepts "host:port" or a list of listeners.
func (l *Listeners) UnmarshalYAML(node ast.Node) error {
	if seq, ok := node.(*ast.SequenceNode); ok {
		var list []Listener
		if err := yaml.NodeToValue(seq, &list, yaml.Strict()); err != nil {
			return err
		}
		*l = list
		return nil
	}
	if _, ok := node.(*ast.StringNode); !ok {
		return nodeErrorf(node, "listen must be host:port or a list of listeners ({address, tls})")
	}
	*l = Listeners{{Address: scalar(node)}}
	return nil
}

// String is the listeners as a reload's message names them.
func (l Listeners) String() string {
	parts := make([]string, len(l))
	for i, x := range l {
		parts[i] = x.Address
		if x.TLS != nil {
			parts[i] += " (tls)"
		}
	}
	return strings.Join(parts, ", ")
}

// TicketSet is the place of listener k's session ticket keys in the
// shared region: its rank among the TLS listeners (-1: not one).
func (l Listeners) TicketSet(k int) int {
	if l[k].TLS == nil {
		return -1
	}
	n := 0
	for _, x := range l[:k] {
		if x.TLS != nil {
			n++
		}
	}
	return n
}

// TicketID names a listener's session ticket keys: a listener put in
// another's place by a reload starts with keys of its own.
func (l Listener) TicketID() uint64 {
	h := fnv.New64a()
	h.Write([]byte(l.Address))
	return h.Sum64() | 1 // never 0, an unused set
}

// Primary is the first listener's address.
func (l Listeners) Primary() string {
	if len(l) == 0 {
		return ""
	}
	return l[0].Address
}

// MinTLSVersion is the crypto/tls version of t.MinVersion.
func (t *TLS) MinTLSVersion() uint16 {
	if t.MinVersion == "1.3" {
		return tls.VersionTLS13
	}
	return tls.VersionTLS12
}

// LoadCertificate reads c's certificate chain and key, checks that they
// match and that the certificate is valid at now, and returns it with
// its leaf parsed.
func LoadCertificate(c Certificate, now time.Time) (tls.Certificate, error) {
	pair, err := tls.LoadX509KeyPair(c.Cert, c.Key)
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf := pair.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return tls.Certificate{}, err
		}
		pair.Leaf = leaf
	}
	switch {
	case now.After(leaf.NotAfter):
		return tls.Certificate{}, fmt.Errorf("certificate %s expired on %s", c.Cert, leaf.NotAfter.UTC().Format(time.RFC3339))
	case now.Before(leaf.NotBefore):
		return tls.Certificate{}, fmt.Errorf("certificate %s is not valid before %s", c.Cert, leaf.NotBefore.UTC().Format(time.RFC3339))
	}
	return pair, nil
}

// LoadClientCAs reads a PEM file of CA certificates.
func LoadClientCAs(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseClientCAs(path, data)
}

// ParseClientCAs parses data, the PEM file at path, as CA certificates.
func ParseClientCAs(path string, data []byte) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	n := 0
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		pool.AddCert(cert)
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("%s holds no PEM certificate", path)
	}
	return pool, nil
}

// validateListeners checks every listener: its address, and for a TLS
// one that its files load, match and are valid now.
func (c *Config) validateListeners(add func(path, format string, args ...any)) {
	if len(c.Listen) == 0 {
		add("listen", "at least one listener is needed")
	}
	seen := map[string]bool{}
	tlsListeners := 0
	for i, l := range c.Listen {
		p := fmt.Sprintf("listen[%d]", i) // of the short form, located at listen itself
		if _, _, err := net.SplitHostPort(l.Address); err != nil {
			add(p+".address", "%q is not host:port", l.Address)
		}
		if _, port, _ := net.SplitHostPort(l.Address); seen[l.Address] && port != "0" { // port 0: each its own
			add(p+".address", "%s is listed twice", l.Address)
		}
		seen[l.Address] = true
		if l.TLS != nil {
			if tlsListeners++; tlsListeners == MaxTLSListeners+1 {
				add(p+".tls", "at most %d TLS listeners", MaxTLSListeners)
			}
			l.TLS.validate(p+".tls", add)
		}
	}
}

// validate checks a TLS block at path.
func (t *TLS) validate(path string, add func(path, format string, args ...any)) {
	if len(t.Certificates) == 0 {
		add(path+".certificates", "a TLS listener needs at least one certificate")
	}
	now := time.Now()
	for i, cert := range t.Certificates {
		cp := fmt.Sprintf("%s.certificates[%d]", path, i)
		if cert.Cert == "" || cert.Key == "" {
			add(cp, "cert and key are both required")
			continue
		}
		if _, err := LoadCertificate(cert, now); err != nil {
			add(cp, "%v", err)
		}
	}
	if t.ClientCA != "" {
		if _, err := LoadClientCAs(t.ClientCA); err != nil {
			add(path+".client_ca", "%v", err)
		}
	}
	switch t.MinVersion {
	case "", "1.2", "1.3":
	default:
		add(path+".min_version", "must be \"1.2\" or \"1.3\", got %q", t.MinVersion)
	}
	if time.Duration(t.TicketRotation) < MinTicketRotation {
		add(path+".ticket_rotation", "must be at least %s, got %s", MinTicketRotation, time.Duration(t.TicketRotation))
	}
}

// setDefaults fills what a TLS block left out.
func (t *TLS) setDefaults() {
	if t.TicketRotation == 0 {
		t.TicketRotation = Duration(DefaultTicketRotation)
	}
}

// CertificateWarnings lists the certificates of every TLS listener that
// expire within CertificateExpiryWarning of now, for sluice check.
func (c *Config) CertificateWarnings(now time.Time) []string {
	var out []string
	for _, l := range c.Listen {
		if l.TLS == nil {
			continue
		}
		for _, cert := range l.TLS.Certificates {
			pair, err := LoadCertificate(cert, now)
			if err != nil {
				continue // a problem validate reports
			}
			if left := pair.Leaf.NotAfter.Sub(now); left < CertificateExpiryWarning {
				out = append(out, fmt.Sprintf("warning: certificate %s of listener %s expires in %s (%s)",
					cert.Cert, l.Address, left.Round(time.Hour), pair.Leaf.NotAfter.UTC().Format(time.RFC3339)))
			}
		}
	}
	return out
}
