package supervisor

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func newPageAuth(token string) *adminAuth { return newAdminAuth(token, nil) }

// A session cookie opens the page until its expiry, and only under the
// token that made it; an edited expiry or MAC, or garbage, opens nothing.
func TestPageSession(t *testing.T) {
	a := newPageAuth("token-a")
	now := time.Unix(1_800_000_000, 0)
	exp := now.Add(time.Hour).Unix()
	v := a.session(exp)
	if strings.Contains(v, "token-a") {
		t.Fatalf("the cookie %q holds the token", v)
	}
	for _, c := range []struct {
		what  string
		auth  *adminAuth
		value string
		at    time.Time
		ok    bool
	}{
		{"fresh", a, v, now, true},
		{"a second before expiry", a, v, time.Unix(exp-1, 0), true},
		{"at expiry", a, v, time.Unix(exp, 0), false},
		{"another token's", newPageAuth("token-b"), v, now, false},
		{"expiry pushed back", a, strings.Replace(v, "1800003600", "1900003600", 1), now, false},
		{"MAC edited", a, v[:len(v)-1] + "0", now, false},
		{"no MAC", a, "1800003600", now, false},
		{"not hex", a, "1800003600.zz", now, false},
		{"empty", a, "", now, false},
	} {
		if got := c.auth.sessionOK(c.value, c.at); got != c.ok {
			t.Errorf("%s: sessionOK(%q) = %v, want %v", c.what, c.value, got, c.ok)
		}
	}
}

// Who may see the page: everyone without a token; with one, a request
// with the bearer token or a session cookie (a wrong bearer header is
// refused whatever cookie comes with it).
func TestPageAllowed(t *testing.T) {
	req := func(auth string, cookie string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/ui", nil)
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		if cookie != "" {
			r.AddCookie(&http.Cookie{Name: uiCookie, Value: cookie})
		}
		return r
	}
	if ok, _ := newPageAuth("").allowed(req("", "")); !ok {
		t.Error("without a token the page is open")
	}
	a := newPageAuth("tok")
	good := a.session(time.Now().Add(time.Hour).Unix())
	for _, c := range []struct {
		auth, cookie string
		ok, guessed  bool // guessed: a failed login, counted by the throttle
	}{
		{"", "", false, false},
		{"Bearer tok", "", true, false},
		{"bearer tok", "", true, false},
		{"Bearer nope", "", false, true},
		{"Basic tok", "", false, false},
		{"", good, true, false},
		{"Bearer nope", good, false, true},
		{"", "1." + strings.Repeat("0", 64), false, false},
	} {
		if ok, guessed := a.allowed(req(c.auth, c.cookie)); ok != c.ok || guessed != c.guessed {
			t.Errorf("Authorization %q, cookie %q: allowed %v guessed %v, want %v %v", c.auth, c.cookie, ok, guessed, c.ok, c.guessed)
		}
	}
}

// Names from the configuration are text on the page, never markup, and
// the page loads nothing from elsewhere (its CSP allows its own script
// only, by a nonce fresh for each answer).
func TestPageEscapes(t *testing.T) {
	evil := `<script>alert(1)</script>"'&`
	var st LiveStatus
	st.Config = evil
	st.LastReload = &ReloadResult{At: "now", Error: evil}
	st.Backends = []BackendStatus{{Model: evil, Backend: evil, LoadRead: "off"}}
	st.Queues = []QueueStatus{{Model: evil}}
	st.Keys = []KeyStatus{{Key: evil}}
	st.DiscoveryError = evil
	nonces := map[string]bool{}
	for range 2 {
		w := httptest.NewRecorder()
		renderPage(w, http.StatusOK, pageData{LiveStatus: st})
		page := w.Body.String()
		if n := strings.Count(page, "<script"); n != 1 || strings.Contains(page, "alert(1)</script>") {
			t.Fatalf("a name went into the page as markup (%d scripts):\n%s", n, page)
		}
		if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("the names are not on the page as text")
		}
		csp := w.Header().Get("Content-Security-Policy")
		nonce, _, _ := strings.Cut(strings.SplitAfter(csp, "'nonce-")[1], "'")
		if !strings.HasPrefix(csp, "default-src 'none'") || !strings.Contains(page, `<script nonce="`+nonce+`">`) {
			t.Errorf("CSP %q; the script's nonce is not its own", csp)
		}
		nonces[nonce] = true
	}
	if len(nonces) != 2 {
		t.Error("two answers had the same nonce")
	}
}

// The page's formats, which its script repeats.
func TestPageFormats(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, c := range []struct{ got, want string }{
		{fmtPct(nil), "–"}, {fmtPct(f(0.42)), "42.0 %"}, {fmtPct(f(1)), "100.0 %"},
		{fmtSecs(nil), "–"}, {fmtSecs(f(0.0123)), "12 ms"}, {fmtSecs(f(2.5)), "2.50 s"},
		{fmtNum(nil), "–"}, {fmtNum(f(4100)), "4100"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
