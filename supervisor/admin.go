package supervisor

import (
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/supervisor/adminguard"
	"github.com/sluice-gw/sluice/supervisor/probe"
)

// Failed logins: loginFailures per loginWindow from one address (IPv6 by
// /64) are answered; past them every token-guarded route answers 429
// until the address is back under its share. loginAddrs bounds the
// addresses tracked (the oldest goes first).
const (
	loginFailures = 10
	loginWindow   = time.Minute
	loginAddrs    = 1024
)

// startAdmin serves /healthz (the supervisor is alive) and /readyz (every
// worker slot has a worker accepting connections) on the admin address,
// and /metrics, /status and the status page behind the token when it is
// set (admin_token_env). The probes stay open: Nomad's and systemd's
// checks send no header, and they tell nothing but liveness and
// readiness.
//
// The listener is bounded (issue 30 item 5): admin_timeouts on every
// connection, admin_max_conns connections at most (lowered to half the
// free descriptors), the Host header checked against DNS rebinding, and
// failed logins throttled.
func (s *supervisor) startAdmin(cfg *config.Config) (*http.Server, string, error) {
	ln, err := s.o.Handover.Listen(cfg.Admin)
	if err != nil {
		return nil, "", fmt.Errorf("admin listener: %w", err)
	}
	token := cfg.AdminToken()
	// The probes: plain ones on fresh connections are answered before
	// net/http (docs/accept-path.md), the mux answers the rest the same.
	probes := map[string]probe.Answer{
		"/healthz": func() (int, string) { return http.StatusOK, "ok\n" },
		"/readyz":  s.readiness,
	}
	mux := http.NewServeMux()
	for path, answer := range probes {
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) {
			status, body := answer()
			if status != http.StatusOK {
				w.WriteHeader(status)
			}
			w.Write([]byte(body)) //nolint:errcheck
		})
	}
	a := newAdminAuth(token, s.metrics)
	mux.Handle("GET /metrics", a.require(s.metrics.handler()))
	mux.Handle("GET /status", a.require(http.HandlerFunc(s.status)))
	s.routeStatusPage(mux, a)

	t := cfg.AdminTimeouts
	tc, err := adminTLSOf(cfg)
	if err != nil {
		ln.Close()
		return nil, "", err
	}
	var serve net.Listener
	if tc != nil {
		// HTTPS (admin_tls): the probes' clear-text fast path cannot read
		// the head; net/http answers them, its handshake bounded by
		// read_header. A reload swaps the settings (supervisor.reload).
		s.adminTLS.Store(tc)
		conns := adminguard.NewConns(ln, s.adminConnsCap(cfg.AdminMaxConns), nil)
		conns.Silent = true
		s.adminConns.Store(conns)
		serve = tls.NewListener(conns, &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			return s.adminTLS.Load(), nil
		}})
	} else {
		conns := adminguard.NewConns(ln, s.adminConnsCap(cfg.AdminMaxConns), func(head []byte) []byte {
			return probe.AnswerHead(nil, head, probes)
		})
		s.adminConns.Store(conns)
		serve = probe.Wrap(conns, probes, time.Duration(t.ReadHeader))
	}
	srv := &http.Server{
		Handler:           s.checkHost(mux, adminHosts(cfg, ln.Addr(), token)),
		ReadHeaderTimeout: time.Duration(t.ReadHeader),
		ReadTimeout:       time.Duration(t.Read),
		WriteTimeout:      time.Duration(t.Write),
		IdleTimeout:       time.Duration(t.Idle),
		ConnState:         s.adminConns.Load().ConnState,
	}
	go srv.Serve(serve) //nolint:errcheck // ends with Close
	return srv, ln.Addr().String(), nil
}

// adminTLSOf is the admin listener's TLS settings of cfg, made before a
// reload applies (a failure refuses it); nil when it is plain.
func adminTLSOf(cfg *config.Config) (*tls.Config, error) {
	if cfg.AdminTLS == nil {
		return nil, nil
	}
	tc, _, err := cfg.AdminTLS.ServerConfig(cfg.Files, time.Now())
	if err != nil {
		return nil, fmt.Errorf("admin_tls: %w", err)
	}
	return tc, nil
}

// adminConnsCap is admin_max_conns, lowered to half the descriptors the
// process has free now (logged when it is).
func (s *supervisor) adminConnsCap(maxConns int) int {
	limit, open, err := fdHeadroom()
	if err != nil {
		s.log.Warn("could not read the file descriptor limit: admin_max_conns applies as configured", "err", err)
		return maxConns
	}
	capped, lowered := adminConnsCap(maxConns, limit, open)
	if lowered {
		s.log.Warn("admin_max_conns lowered to half the free file descriptors", "admin_max_conns", maxConns,
			"effective", capped, "nofile", limit, "open_fds", open)
	}
	return capped
}

// adminHosts is the Host check of the admin listener bound at bound: nil
// (none) with a token and no admin_hosts, the token being the guard.
func adminHosts(cfg *config.Config, bound net.Addr, token string) *adminguard.Hosts {
	if token != "" && len(cfg.AdminHosts) == 0 {
		return nil
	}
	var allow []adminguard.Pattern
	for _, h := range cfg.AdminHosts {
		if host, port, err := config.AdminHostPattern(h); err == nil { // validated at load
			allow = append(allow, adminguard.Pattern{Host: host, Port: port})
		}
	}
	return adminguard.NewHosts(cfg.Admin, bound, allow)
}

// checkHost answers 421 Misdirected Request to a request whose Host hosts
// does not allow, but for the probes: a load balancer's or an
// orchestrator's check may name the address it knows, and they tell
// nothing a page could misuse.
func (s *supervisor) checkHost(h http.Handler, hosts *adminguard.Hosts) http.Handler {
	if hosts == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" && r.URL.Path != "/readyz" && !hosts.Allowed(r.Host) {
			if s.metrics != nil {
				s.metrics.hostRejected.Inc()
			}
			http.Error(w, "421 misdirected request: the Host header is not this admin listener's address, nor in admin_hosts",
				http.StatusMisdirectedRequest)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// readiness is /readyz's answer: 200 when every worker slot has a worker
// accepting connections and the supervisor is not stopping, 503 otherwise.
func (s *supervisor) readiness() (status int, body string) {
	ready := 0
	for _, sl := range s.slots {
		if sl.ready.Load() {
			ready++
		}
	}
	status = http.StatusOK
	if s.stopping.Load() || ready < len(s.slots) {
		status = http.StatusServiceUnavailable
	}
	return status, "workers ready: " + strconv.Itoa(ready) + "/" + strconv.Itoa(len(s.slots)) + "\n"
}

// adminAuth checks the token-guarded admin routes' requests against the
// admin token (none: every route is open), and throttles the addresses
// that fail too often.
type adminAuth struct {
	token    string   // "" when the admin listener has none: everything is open
	want     [32]byte // the token's hash: compared in constant time
	throttle *adminguard.Throttle
	m        *metrics // nil in unit tests
}

func newAdminAuth(token string, m *metrics) *adminAuth {
	return &adminAuth{token: token, want: sha256.Sum256([]byte(token)),
		throttle: adminguard.NewThrottle(loginFailures, loginWindow, loginAddrs), m: m}
}

// tokenOK reports whether got is the token. The comparison takes the same
// time whatever the guess: both sides are hashed to equal length, then
// compared in constant time.
func (a *adminAuth) tokenOK(got string) bool {
	have := sha256.Sum256([]byte(strings.TrimSpace(got)))
	return subtle.ConstantTimeCompare(have[:], a.want[:]) == 1
}

// bearerOK reports whether an Authorization header value is "Bearer
// <token>" (the scheme in any case).
func (a *adminAuth) bearerOK(header string) bool {
	scheme, got, _ := strings.Cut(header, " ")
	return strings.EqualFold(scheme, "Bearer") && a.tokenOK(got)
}

// admit is the first step of a token-guarded route: with a token, a
// request from an address over its failed logins is answered 429 with
// Retry-After (however right its credentials: they are not looked at) and
// admit returns false.
func (a *adminAuth) admit(w http.ResponseWriter, r *http.Request) bool {
	if a.token == "" {
		return true
	}
	wait, blocked := a.throttle.Blocked(r.RemoteAddr)
	if !blocked {
		return true
	}
	if a.m != nil {
		a.m.loginThrottled.Inc()
	}
	w.Header().Set("Retry-After", strconv.Itoa(int((wait+time.Second-1)/time.Second)))
	http.Error(w, "429 too many requests: too many failed logins from this address; retry after Retry-After seconds",
		http.StatusTooManyRequests)
	return false
}

// failed records a failed login of r: a wrong token presented. (A request
// that presents none guesses nothing, and is not counted.)
func (a *adminAuth) failed(r *http.Request) {
	a.throttle.Fail(r.RemoteAddr)
	if a.m != nil {
		a.m.loginFailures.Inc()
	}
}

// require serves h only to requests carrying "Authorization: Bearer
// token" (401 otherwise; 429 once the address failed too often); with no
// token, to every request.
func (a *adminAuth) require(h http.Handler) http.Handler {
	if a.token == "" {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !a.admit(w, r) {
			return
		}
		if header := r.Header.Get("Authorization"); !a.bearerOK(header) {
			if header != "" {
				a.failed(r)
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="sluice admin"`)
			http.Error(w, "401 unauthorized: this admin route needs the bearer token admin_token_env names", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}
