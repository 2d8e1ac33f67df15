package supervisor

import (
	"math"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-gw/sluice/config"
)

// CertificateStatus is one certificate of a TLS listener, for the status
// page and sluice_tls_certificate_expiry_seconds.
type CertificateStatus struct {
	Listener string `json:"listener"`
	Cert     string `json:"cert"`    // its file
	Subject  string `json:"subject"` // the leaf's common name, or its first DNS name
	NotAfter string `json:"not_after"`
	// ExpiresIn is the seconds until NotAfter (negative once past).
	ExpiresIn float64 `json:"expires_in_s"`
	notAfter  time.Time
}

// certificates keeps the certificates of the running configuration's TLS
// listeners, read once per configuration (a reload re-reads them): a
// scrape or a poll of the status page reads no file.
type certificates struct {
	mu    sync.Mutex
	cfg   *config.Config
	certs []CertificateStatus
}

// of returns cfg's certificates with their time left at now, from the
// bytes its validation read (what the workers serve).
func (c *certificates) of(cfg *config.Config, now time.Time) []CertificateStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cfg != cfg {
		c.cfg, c.certs = cfg, nil
		for _, l := range cfg.TLSBlocks() {
			for _, cert := range l.TLS.Certificates {
				pair, err := cfg.Files.Pair(cert) // as validated; once expired, shown so
				if err != nil {
					continue
				}
				subject := pair.Leaf.Subject.CommonName
				if subject == "" && len(pair.Leaf.DNSNames) > 0 {
					subject = pair.Leaf.DNSNames[0]
				}
				c.certs = append(c.certs, CertificateStatus{Listener: l.Listener, Cert: cert.Cert, Subject: subject,
					NotAfter: pair.Leaf.NotAfter.UTC().Format(time.RFC3339), notAfter: pair.Leaf.NotAfter})
			}
		}
	}
	out := make([]CertificateStatus, len(c.certs))
	for i, cs := range c.certs {
		cs.ExpiresIn = math.Round(cs.notAfter.Sub(now).Seconds())
		out[i] = cs
	}
	return out
}

var descCertExpiry = prometheus.NewDesc("sluice_tls_certificate_expiry_seconds",
	"Seconds until a TLS listener's certificate expires (negative once it has), by listener and certificate file.",
	[]string{"listener", "cert"}, nil)

// collectCertificates adds sluice_tls_certificate_expiry_seconds.
func (s *supervisor) collectCertificates(ch chan<- prometheus.Metric, cfg *config.Config) {
	for _, c := range s.certs.of(cfg, time.Now()) {
		ch <- prometheus.MustNewConstMetric(descCertExpiry, prometheus.GaugeValue, c.ExpiresIn, c.Listener, c.Cert)
	}
}
