package config

import (
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"hash/fnv"
	"io"
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

// ServerConfig is t's crypto/tls server configuration, its files from
// files at now: certificates (by SNI, the first the default), client_ca
// required and verified, the oldest version, http/1.1 alone by ALPN (no
// h2: clients that try it fall back), tickets on or off. caPEM is the
// client_ca file's bytes (nil without one). The one place a TLS block
// becomes a tls.Config: the workers' listeners and the admin listener.
func (t *TLS) ServerConfig(files Files, now time.Time) (cfg *tls.Config, caPEM []byte, err error) {
	cfg = &tls.Config{MinVersion: t.MinTLSVersion(), NextProtos: []string{"http/1.1"}, SessionTicketsDisabled: !t.Tickets()}
	for _, c := range t.Certificates {
		pair, err := files.Certificate(c, now)
		if err != nil {
			return nil, nil, err
		}
		cfg.Certificates = append(cfg.Certificates, pair)
	}
	if t.ClientCA != "" {
		pool, pem, err := files.ClientCAs(t.ClientCA)
		if err != nil {
			return nil, nil, err
		}
		cfg.ClientCAs, cfg.ClientAuth, caPEM = pool, tls.RequireAndVerifyClientCert, pem
	}
	return cfg, caPEM, nil
}

// MinTLSVersion is the crypto/tls version of t.MinVersion.
func (t *TLS) MinTLSVersion() uint16 {
	if t.MinVersion == "1.3" {
		return tls.VersionTLS13
	}
	return tls.VersionTLS12
}

// Files are the bytes of the files a configuration names (TLS
// certificates, keys and CAs), each read once, by the validation of the
// configuration, and kept with it: the workers get these bytes in the
// reload frame, so they serve exactly what was validated, however the
// files change meanwhile (a renewal writing the certificate before its
// key). A lookup of a path it lacks (a Config made in code) reads the
// file without keeping it.
type Files map[string][]byte

// MaxTLSFile bounds a certificate, key or CA file; MaxTLSFiles all of
// the listeners' together (they travel in every reload frame, whose bound
// is 64 MiB).
const (
	MaxTLSFile  = 1 << 20
	MaxTLSFiles = 16 << 20
)

// keep reads path into f (validation only: f is read-only after it).
func (f Files) keep(path string) ([]byte, error) {
	if b, ok := f[path]; ok {
		return b, nil
	}
	b, err := readBounded(path)
	if err == nil {
		f[path] = b
	}
	return b, err
}

// bytes is path's content: as kept, or else read now.
func (f Files) bytes(path string) ([]byte, error) {
	if b, ok := f[path]; ok {
		return b, nil
	}
	return readBounded(path)
}

// readBounded reads a file of at most MaxTLSFile bytes.
func readBounded(path string) ([]byte, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	b, err := io.ReadAll(io.LimitReader(file, MaxTLSFile+1))
	if err == nil && len(b) > MaxTLSFile {
		return nil, fmt.Errorf("%s is larger than %d bytes: not a certificate, key or CA file", path, MaxTLSFile)
	}
	return b, err
}

// Certificate is c's certificate chain and key from f, checked to match
// and to be valid at now, with its leaf parsed.
func (f Files) Certificate(c Certificate, now time.Time) (tls.Certificate, error) {
	pair, err := f.Pair(c)
	if err != nil {
		return tls.Certificate{}, err
	}
	switch leaf := pair.Leaf; {
	case now.After(leaf.NotAfter):
		return tls.Certificate{}, fmt.Errorf("certificate %s expired on %s", c.Cert, leaf.NotAfter.UTC().Format(time.RFC3339))
	case now.Before(leaf.NotBefore):
		return tls.Certificate{}, fmt.Errorf("certificate %s is not valid before %s", c.Cert, leaf.NotBefore.UTC().Format(time.RFC3339))
	}
	return pair, nil
}

// Pair is c's certificate chain and key from f, checked to match, with
// its leaf parsed; valid or not at any time.
func (f Files) Pair(c Certificate) (tls.Certificate, error) {
	certPEM, err := f.bytes(c.Cert)
	if err != nil {
		return tls.Certificate{}, err
	}
	keyPEM, err := f.bytes(c.Key)
	if err != nil {
		return tls.Certificate{}, err
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("%s, %s: %w", c.Cert, c.Key, err)
	}
	if pair.Leaf == nil {
		if pair.Leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return tls.Certificate{}, err
		}
	}
	return pair, nil
}

// ClientCAs is the CA pool of the PEM file at path, from f, and the
// file's bytes.
func (f Files) ClientCAs(path string) (*x509.CertPool, []byte, error) {
	data, err := f.bytes(path)
	if err != nil {
		return nil, nil, err
	}
	pool, err := ParseClientCAs(path, data)
	return pool, data, err
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
			l.TLS.validate(p+".tls", c.Files, add)
		}
	}
	total := 0
	for _, b := range c.Files {
		total += len(b)
	}
	if total > MaxTLSFiles {
		add("listen", "the TLS listeners' certificate, key and CA files come to %d bytes, over the %d every reload hands each worker", total, MaxTLSFiles)
	}
}

// validate checks a TLS block at path, keeping its files' bytes in files.
func (t *TLS) validate(path string, files Files, add func(path, format string, args ...any)) {
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
		_, errC := files.keep(cert.Cert)
		_, errK := files.keep(cert.Key)
		if err := cmp.Or(errC, errK); err != nil {
			add(cp, "%v", err)
		} else if _, err := files.Certificate(cert, now); err != nil {
			add(cp, "%v", err)
		}
	}
	if t.ClientCA != "" {
		if _, err := files.keep(t.ClientCA); err != nil {
			add(path+".client_ca", "%v", err)
		} else if _, _, err := files.ClientCAs(t.ClientCA); err != nil {
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

// TLSBlock is a TLS block and the listener it is of: a listen address,
// or the admin address for admin_tls.
type TLSBlock struct {
	Listener string
	TLS      *TLS
}

// TLSBlocks lists every TLS block: the listeners', then admin_tls.
func (c *Config) TLSBlocks() []TLSBlock {
	var out []TLSBlock
	for _, l := range c.Listen {
		if l.TLS != nil {
			out = append(out, TLSBlock{l.Address, l.TLS})
		}
	}
	if c.AdminTLS != nil {
		out = append(out, TLSBlock{c.Admin, c.AdminTLS})
	}
	return out
}

// CertificateWarnings lists the certificates of every TLS listener (the
// admin one too) that expire within CertificateExpiryWarning of now, for
// sluice check.
func (c *Config) CertificateWarnings(now time.Time) []string {
	var out []string
	for _, b := range c.TLSBlocks() {
		for _, cert := range b.TLS.Certificates {
			pair, err := c.Files.Certificate(cert, now)
			if err != nil {
				continue // a problem validate reports
			}
			if left := pair.Leaf.NotAfter.Sub(now); left < CertificateExpiryWarning {
				out = append(out, fmt.Sprintf("warning: certificate %s of listener %s expires in %s (%s)",
					cert.Cert, b.Listener, left.Round(time.Hour), pair.Leaf.NotAfter.UTC().Format(time.RFC3339)))
			}
		}
	}
	return out
}
