package worker

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	errs "github.com/cloudwego/hertz/pkg/common/errors"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/meter"
	"github.com/sluice-gw/sluice/shm"
)

// TLS at the edge. netpoll has no TLS, so a TLS listener is served by
// hertz's standard transport, and sluice does the TLS itself between the
// socket and hertz (tlsListener, tlsConn): hertz sees plain connections.
// Doing it here, not through hertz's WithTLS, is what lets the worker
//   - count the connections in worker_connections and drain them as it
//     drains plain ones (connTracker),
//   - bound the handshake by client_header_timeout and each write by
//     send_timeout,
//   - answer plain HTTP sent to the TLS port with a 400 in clear text, as
//     nginx does, and count failed handshakes by reason, without a log
//     line per hostile client,
//   - swap certificates on a reload (tlsEdge.settings, applyTLS) and take
//     the session ticket keys every worker shares from the shared region.

// tlsEdge is a TLS listener's live settings: those of the running
// configuration (swapped whole by a reload; a handshake takes the ones of
// its moment) and the session ticket keys.
type tlsEdge struct {
	region *shm.Region
	set    int // the listener's ticket key set in the region; -1: the region has none
	cur    atomic.Pointer[tlsSettings]
	outer  *tls.Config // what every handshake starts from: it asks forClient
	meter  handshakeMeter
	bounds *connBounds
}

// tlsSettings is one configuration's TLS: certificates, client CAs,
// minimum version, and the ticket keys derived for it.
type tlsSettings struct {
	cfg *tls.Config
	// salt goes into its ticket keys: the client CAs' digest, so that a
	// ticket issued under other client CAs (another listener's, or before a
	// reload changed them) never resumes a session they would not verify.
	salt    [32]byte
	tickets bool
	// roots are the SHA-256 of each client CA's certificate: a
	// connection's client certificate stands for a key only while the CA
	// its handshake chained it to is still one of the listener's (a reload
	// that drops a CA ends the identity of the connections it verified).
	roots map[[32]byte]bool
	mu    sync.Mutex   // one taking of new keys at a time
	seq   atomic.Int64 // the sequence number of the region's set the keys were taken at
}

// newTLSEdge makes listener k's TLS settings from cfg.
func newTLSEdge(cfg *config.Config, k int, region *shm.Region, rec *meter.Recorder, bounds *connBounds) (*tlsEdge, error) {
	e := &tlsEdge{region: region, set: -1, bounds: bounds}
	if region.HasTickets() {
		e.set = cfg.Listen.TicketSet(k)
	}
	e.outer = &tls.Config{GetConfigForClient: e.forClient}
	e.meter.resolve(rec, cfg.Listen[k].Address)
	s, err := e.settings(cfg.Listen[k].TLS, cfg.Files)
	if err != nil {
		return nil, err
	}
	e.cur.Store(s)
	return e, nil
}

// settings makes t's settings from its files' bytes (the reload frame's:
// what the supervisor validated), which a reload stores in cur: the
// listener's from the next handshake on (connections already open keep
// what they have).
func (e *tlsEdge) settings(t *config.TLS, files config.Files) (*tlsSettings, error) {
	cfg, caPEM, err := t.ServerConfig(files, time.Now())
	if err != nil {
		return nil, err
	}
	s := &tlsSettings{cfg: cfg, tickets: t.Tickets()}
	if caPEM != nil {
		s.salt = sha256.Sum256(caPEM)
		s.roots = map[[32]byte]bool{}
		for rest := caPEM; ; {
			var b *pem.Block
			if b, rest = pem.Decode(rest); b == nil {
				break
			}
			if b.Type == "CERTIFICATE" {
				s.roots[sha256.Sum256(b.Bytes)] = true
			}
		}
	}
	e.takeKeys(s)
	return s, nil
}

// forClient is every handshake's configuration (tls.Config's
// GetConfigForClient): the running one, with the ticket keys of now.
func (e *tlsEdge) forClient(*tls.ClientHelloInfo) (*tls.Config, error) {
	s := e.cur.Load()
	if s.tickets && e.set >= 0 && e.region.TicketSeq(e.set) != s.seq.Load() {
		e.takeKeys(s)
	}
	return s.cfg, nil
}

// takeKeys gives s the region's ticket keys, derived with its salt. With
// no keys in the region (an older region, inherited in a binary upgrade)
// s keeps none, and crypto/tls uses keys of this process's own.
func (e *tlsEdge) takeKeys(s *tlsSettings) {
	if !s.tickets || e.set < 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	keys, _, _, seq, ok := e.region.TicketKeysOf(e.set)
	if !ok || seq == s.seq.Load() {
		return
	}
	derived := make([][32]byte, len(keys))
	for i, k := range keys {
		h := sha256.New()
		h.Write([]byte("sluice session ticket key\x00"))
		h.Write(k[:])
		h.Write(s.salt[:])
		h.Sum(derived[i][:0])
	}
	s.cfg.SetSessionTicketKeys(derived)
	s.seq.Store(seq)
}

// handshakeMeter is a TLS listener's handshake counters, resolved once.
type handshakeMeter struct {
	done   [2][2]meter.CounterWord // by version (1.2, 1.3), then resumed (no, yes)
	failed [numFailures]meter.CounterWord
}

// Why a handshake failed: the reason label of sluice_tls_handshake_failures_total.
type failure int

const (
	failTimeout    failure = iota // client_header_timeout passed: the deadline, or the sweep closed it
	failClosed                    // the client closed or reset the connection
	failPlainHTTP                 // plain HTTP to the TLS port: answered 400 in clear text
	failNotTLS                    // other bytes that are not TLS
	failClientCert                // no client certificate, or one that does not verify
	failProtocol                  // anything else: versions, ciphers, alerts, a bad record
	numFailures
)

var failureNames = [numFailures]string{"timeout", "closed", "plain_http", "not_tls", "client_certificate", "protocol"}

func (m *handshakeMeter) resolve(rec *meter.Recorder, listener string) {
	for v, version := range []string{"1.2", "1.3"} {
		for r, resumed := range []string{"false", "true"} {
			m.done[v][r] = rec.Counter(meter.TLSHandshakes, listener, version, resumed)
		}
	}
	for f, name := range failureNames {
		m.failed[f] = rec.Counter(meter.TLSHandshakeFailures, listener, name)
	}
}

// tlsListener is a TLS listener's socket as hertz sees it: it accepts
// connections (closing one at once when the worker has worker_connections
// open, as the accept gate does) and hands them over as tlsConns.
type tlsListener struct {
	net.Listener
	edge     *tlsEdge
	full     func() bool
	refused  func()
	stopped  atomic.Bool
	accepted atomic.Int64
}

// errAcceptBackoff bounds the wait after an accept that failed for want of
// descriptors or memory: the listener tries again, as net/http does,
// rather than ending the engine.
const errAcceptBackoff = time.Second

// Accept returns the next connection. It fails only once the listener is
// closed (stop, or hertz's Shutdown), with an error hertz reads as closed.
func (l *tlsListener) Accept() (net.Conn, error) {
	delay := 5 * time.Millisecond
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			if l.stopped.Load() || errors.Is(err, net.ErrClosed) {
				return nil, errDraining
			}
			// EMFILE, ENFILE, ENOBUFS, ECONNABORTED: the socket is fine.
			time.Sleep(delay)
			delay = min(2*delay, errAcceptBackoff)
			continue
		}
		delay = 5 * time.Millisecond
		if l.full() {
			c.Close()
			l.refused()
			continue
		}
		l.accepted.Add(1)
		return &tlsConn{Conn: tls.Server(c, l.edge.outer), raw: c, edge: l.edge}, nil
	}
}

// stop closes this worker's copy of the socket (the successor of a
// hand-over has its own: queued connections wait for it) and returns how
// many connections the listener handed out in all.
func (l *tlsListener) stop() int64 {
	l.stopped.Store(true)
	l.Listener.Close() //nolint:errcheck // closed already by Shutdown, at worst
	return l.accepted.Load()
}

// tlsConn is one TLS client connection: its handshake, run at the first
// read, is bounded and counted; each write is bounded by send_timeout.
type tlsConn struct {
	*tls.Conn
	raw  net.Conn
	edge *tlsEdge
	st   *connState // the tracker's record (conns.accept)

	handshook bool // read and written by the goroutine serving the connection only
	version   uint16
	resumed   bool
	// peer is the SHA-256 of the client's certificate, when the handshake
	// verified one against client_ca (hasPeer); root that of the CA it
	// chained to.
	peer, root [32]byte
	hasPeer    bool

	closeOnce sync.Once
	onClose   func() // the tracker's release, once
}

// Read runs the handshake first. Bytes of a keep-alive request's head
// start its client_header_timeout clock (sweep), as netpoll's input buffer
// does for a plain connection.
func (c *tlsConn) Read(b []byte) (int, error) {
	if !c.handshook {
		if err := c.handshake(); err != nil {
			return 0, quiet(err)
		}
	}
	n, err := c.Conn.Read(b)
	if n > 0 && c.st != nil && !c.st.busy.Load() {
		c.st.headSince.CompareAndSwap(0, time.Now().UnixNano())
	}
	if err != nil && err != io.EOF {
		err = quiet(err)
	}
	return n, err
}

// quiet marks err as a connection's end that hertz does not log: hertz
// logs, at error level, every read error on a standard-transport
// connection but this one, which would be a line per hostile client (or
// per connection the sweep closed). Failed handshakes are counted instead
// (sluice_tls_handshake_failures_total).
func quiet(err error) error { return fmt.Errorf("%w: %w", errs.ErrShortConnection, err) }

// Write bounds each write by send_timeout, as nginx's send_timeout bounds
// the time between two writes that make progress.
func (c *tlsConn) Write(b []byte) (int, error) {
	c.Conn.SetWriteDeadline(time.Now().Add(time.Duration(c.edge.bounds.send.Load()))) //nolint:errcheck // a closed conn fails the write
	return c.Conn.Write(b)
}

// Close closes the socket and tells the tracker, once. It sends no
// close_notify alert: that is a write, which tls.Conn's Close would wait
// for up to 5 s on a client that reads nothing (the sweep and a drain close
// such connections), and HTTP/1.1's framing says where an answer ends.
func (c *tlsConn) Close() error {
	err := c.raw.Close()
	c.closeOnce.Do(func() {
		if c.onClose != nil {
			c.onClose()
		}
	})
	return err
}

// ClientCert is the SHA-256 of the client certificate the handshake
// verified, while the CA it chained to is still one of the listener's.
func (c *tlsConn) ClientCert() (sum [32]byte, ok bool) {
	if !c.hasPeer || !c.edge.cur.Load().roots[c.root] {
		return sum, false
	}
	return c.peer, true
}

// verifiesClients reports whether the listener requires and verifies
// client certificates now (client_ca).
func (e *tlsEdge) verifiesClients() bool { return e.cur.Load().roots != nil }

// TLSState is the connection's TLS version and whether its session was
// resumed, once the handshake is done (0 before).
func (c *tlsConn) TLSState() (version uint16, resumed bool) { return c.version, c.resumed }

// handshake runs the TLS handshake under the read deadline conns.accept
// set (client_header_timeout), counts how it went, and answers plain HTTP
// with a 400 in clear text.
func (c *tlsConn) handshake() error {
	err := c.Conn.Handshake()
	m := &c.edge.meter
	if err == nil {
		c.handshook = true
		st := c.Conn.ConnectionState()
		c.version, c.resumed = st.Version, st.DidResume
		// Only a verified chain: without client_ca no certificate is asked
		// for, and one sent anyway is not verified (VerifiedChains empty).
		if len(st.VerifiedChains) > 0 && len(st.PeerCertificates) > 0 {
			chain := st.VerifiedChains[0]
			c.peer, c.root, c.hasPeer = sha256.Sum256(st.PeerCertificates[0].Raw), sha256.Sum256(chain[len(chain)-1].Raw), true
		}
		v, r := 0, 0
		if st.Version >= tls.VersionTLS13 {
			v = 1
		}
		if st.DidResume {
			r = 1
		}
		m.done[v][r].Add(1)
		return nil
	}
	f := classify(err)
	if f == failPlainHTTP {
		c.raw.SetWriteDeadline(time.Now().Add(time.Second)) //nolint:errcheck // best effort: the connection closes after it
		io.WriteString(c.raw, plainHTTPAnswer)              //nolint:errcheck // see above
	}
	m.failed[f].Add(1)
	return err
}

// plainHTTPAnswer is nginx's answer to plain HTTP on an HTTPS port, in
// OpenAI's error shape.
var plainHTTPAnswer = func() string {
	body := `{"error":{"message":"The plain HTTP request was sent to an HTTPS port: use https://.",` +
		`"type":"invalid_request_error","param":null,"code":"http_to_https"}}` + "\n"
	return "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n" + body
}()

// classify says why a handshake failed.
func classify(err error) failure {
	var rh tls.RecordHeaderError
	var ne net.Error
	var cv *tls.CertificateVerificationError
	var alert tls.AlertError
	switch {
	case errors.As(err, &rh):
		if looksLikeHTTP(rh.RecordHeader) {
			return failPlainHTTP
		}
		return failNotTLS
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, net.ErrClosed): // closed here: by the sweep (or a drain)
		return failTimeout
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return failClosed
	case errors.As(err, &cv), errors.As(err, new(x509.UnknownAuthorityError)),
		errors.As(err, &alert) && alert == alertCertificateRequired,
		strings.Contains(err.Error(), "client didn't provide a certificate"):
		return failClientCert
	}
	return failProtocol
}

// alertCertificateRequired is TLS 1.3's certificate_required alert.
const alertCertificateRequired = tls.AlertError(116)

// looksLikeHTTP reports whether a record header is the start of an HTTP
// request (net/http's test: a method's first letters).
func looksLikeHTTP(h [5]byte) bool {
	switch string(h[:]) {
	case "GET /", "HEAD ", "POST ", "PUT /", "OPTIO", "DELET", "PATCH", "CONNE", "TRACE":
		return true
	}
	return false
}
