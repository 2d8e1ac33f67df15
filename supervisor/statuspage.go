package supervisor

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The status page: GET /ui on the admin listener is a page rendered here
// from LiveStatus, whose script then polls GET /status/live every second
// and redraws the figures. Everything it needs is in the one response
// (inline style and script, no fonts or images), so it works with no
// network beyond the admin listener; its Content-Security-Policy lets the
// browser load nothing else.
//
// With admin_token_env the page and its JSON need the token, as /metrics
// does. A browser's navigation sends no Authorization header, so the page
// also takes a session cookie: GET /ui without either answers 401 with a
// form that POSTs the token to /ui/login, which sets the cookie. The token
// itself never goes into a page, a URL or the cookie: the cookie holds an
// expiry and an HMAC of it keyed by the token, so it proves the token was
// known, stops working at its expiry or when the token changes, and needs
// no state in the supervisor (it outlives a binary upgrade). It is
// HttpOnly (the page's script never sees it) and SameSite=Strict (another
// site's page cannot send it), and it opens /ui and /status/live only —
// not /metrics or /status, whose clients send the header.

//go:embed statuspage.html
var statusPageHTML string

var statusPage = template.Must(template.New("statuspage").Funcs(template.FuncMap{
	"pct":    func(v float64) string { return fmtPct(&v) },
	"pctp":   fmtPct,
	"days":   func(s float64) string { return strconv.FormatFloat(s/86400, 'f', 1, 64) + " days" },
	"secs":   fmtSecs,
	"frac":   func(v float64) string { return fmtPct(&v) },
	"amount": fmtAmount,
	"num":    fmtNum,
	"limit": func(v int64) string {
		if v <= 0 {
			return "–"
		}
		return strconv.FormatInt(v, 10)
	},
	"deref": func(p *int64) string {
		if p == nil {
			return "–"
		}
		return strconv.FormatInt(*p, 10)
	},
}).Parse(statusPageHTML))

// uiCookie is the session cookie of the status page (see above).
const uiCookie = "sluice_admin_ui"

// uiSession is how long a login lasts.
const uiSession = 12 * time.Hour

// maxLoginBody bounds a login form: a token, and some room.
const maxLoginBody = 4 << 10

// allowed reports whether r may see the page: no token is set, or r
// carries it as a bearer header, or a session cookie from a login; and
// whether r guessed wrong (a wrong bearer token: a failed login. A cookie
// that does not open the page is no guess — its MAC cannot be guessed —
// and is not counted, so that a page left polling after the token
// changed does not throttle its user's next login).
func (a *adminAuth) allowed(r *http.Request) (ok, guessed bool) {
	if a.token == "" {
		return true, false
	}
	if scheme, _, found := strings.Cut(r.Header.Get("Authorization"), " "); found && strings.EqualFold(scheme, "Bearer") {
		ok = a.bearerOK(r.Header.Get("Authorization"))
		return ok, !ok
	}
	c, err := r.Cookie(uiCookie)
	return err == nil && a.sessionOK(c.Value, time.Now()), false
}

// admitPage is allowed for a route of the page, with the throttle of
// failed logins (429 written when it refuses); it reports whether r may
// see the page.
func (a *adminAuth) admitPage(w http.ResponseWriter, r *http.Request) (ok, answered bool) {
	if !a.admit(w, r) {
		return false, true
	}
	ok, guessed := a.allowed(r)
	if guessed {
		a.failed(r)
	}
	return ok, false
}

// sessionMAC is the HMAC, keyed by the token, of a session expiring at exp.
func (a *adminAuth) sessionMAC(exp int64) []byte {
	mac := hmac.New(sha256.New, []byte(a.token))
	fmt.Fprintf(mac, "sluice status page session until %d", exp)
	return mac.Sum(nil)
}

// session is the cookie value of a session that ends at exp (Unix seconds).
func (a *adminAuth) session(exp int64) string {
	return strconv.FormatInt(exp, 10) + "." + hex.EncodeToString(a.sessionMAC(exp))
}

// sessionOK reports whether v is a session cookie value, made with this
// token, that has not expired at now.
func (a *adminAuth) sessionOK(v string, now time.Time) bool {
	expText, macText, ok := strings.Cut(v, ".")
	if !ok {
		return false
	}
	exp, err := strconv.ParseInt(expText, 10, 64)
	if err != nil || now.Unix() >= exp {
		return false
	}
	got, err := hex.DecodeString(macText)
	return err == nil && hmac.Equal(got, a.sessionMAC(exp))
}

// routeStatusPage adds the status page's routes to the admin mux: GET /ui
// (the page), GET /status/live (its JSON), GET / (to /ui), and with a
// token POST /ui/login and GET /ui/logout. A wrong token, in a bearer
// header or the login form, is a failed login (see adminAuth.admit).
func (s *supervisor) routeStatusPage(mux *http.ServeMux, a *adminAuth) {
	token := a.token
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/ui", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /ui", func(w http.ResponseWriter, r *http.Request) {
		ok, answered := a.admitPage(w, r)
		if answered {
			return
		}
		if !ok {
			loginPage(w, http.StatusUnauthorized, "")
			return
		}
		s.servePage(w, token != "")
	})
	mux.HandleFunc("GET /status/live", func(w http.ResponseWriter, r *http.Request) {
		ok, answered := a.admitPage(w, r)
		if answered {
			return
		}
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="sluice admin"`)
			http.Error(w, "401 unauthorized: this admin route needs the bearer token admin_token_env names, or the status page's login", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		json.NewEncoder(w).Encode(s.liveStatus()) //nolint:errcheck // the client went away
	})
	if token == "" {
		return
	}
	// The one route of the admin listener that is not a GET: a token goes
	// in a form's body, never in a URL (logs, history, Referer).
	mux.HandleFunc("POST /ui/login", func(w http.ResponseWriter, r *http.Request) {
		if !a.admit(w, r) {
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxLoginBody)
		if err := r.ParseForm(); err != nil || !a.tokenOK(r.PostForm.Get("token")) {
			a.failed(r)
			loginPage(w, http.StatusUnauthorized, "That is not the admin token.")
			return
		}
		exp := time.Now().Add(uiSession).Unix()
		http.SetCookie(w, &http.Cookie{Name: uiCookie, Value: a.session(exp), Path: "/",
			MaxAge: int(uiSession / time.Second), HttpOnly: true, SameSite: http.SameSiteStrictMode})
		http.Redirect(w, r, "/ui", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /ui/logout", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: uiCookie, Value: "", Path: "/", MaxAge: -1,
			HttpOnly: true, SameSite: http.SameSiteStrictMode})
		http.Redirect(w, r, "/ui", http.StatusSeeOther)
	})
}

// pageData is what the page's template renders.
type pageData struct {
	LiveStatus
	Nonce  string // the script's CSP nonce
	Login  bool   // render the login form instead of the figures
	Error  string // the login form's message
	Logout bool   // a token is set: offer to log out
}

// servePage renders the page with the figures of now.
func (s *supervisor) servePage(w http.ResponseWriter, logout bool) {
	renderPage(w, http.StatusOK, pageData{LiveStatus: s.liveStatus(), Logout: logout})
}

// loginPage renders the login form with status code and message msg.
func loginPage(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="sluice admin"`)
	renderPage(w, code, pageData{Login: true, Error: msg})
}

// renderPage writes the page. Its only script is the one in the template,
// allowed by a nonce fresh for each response; the browser may fetch
// nothing but the admin listener's own URLs, and post the login form
// nowhere else.
func renderPage(w http.ResponseWriter, code int, d pageData) {
	var nonce [16]byte
	rand.Read(nonce[:])                                      //nolint:errcheck // never fails (crypto/rand)
	d.Nonce = base64.RawURLEncoding.EncodeToString(nonce[:]) // no character html/template would escape
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'nonce-"+d.Nonce+"'; style-src 'unsafe-inline'; "+
		"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(code)
	statusPage.Execute(w, d) //nolint:errcheck // the client went away
}

// The figures' formats; the page's script has the same ones (fmtPct…).

// fmtPct writes a fraction 0–1 as a percentage with one decimal.
func fmtPct(p *float64) string {
	if p == nil {
		return "–"
	}
	return strconv.FormatFloat(*p*100, 'f', 1, 64) + " %"
}

// fmtAmount writes a quota's tokens whole, a budget's USD to the cent.
func fmtAmount(kind string, v float64) string {
	if kind == "usd" {
		return "$" + strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// fmtSecs writes a duration in seconds: milliseconds below one second.
func fmtSecs(p *float64) string {
	if p == nil {
		return "–"
	}
	if *p < 1 {
		return strconv.FormatFloat(*p*1000, 'f', 0, 64) + " ms"
	}
	return strconv.FormatFloat(*p, 'f', 2, 64) + " s"
}

// fmtNum writes a count that may be absent, or a float count, without
// decimals.
func fmtNum(p *float64) string {
	if p == nil {
		return "–"
	}
	return strconv.FormatFloat(*p, 'f', 0, 64)
}
