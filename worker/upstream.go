package worker

import (
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/cloudwego/hertz/pkg/app"
)

// newUpstreamClient returns the keep-alive pool used to reach backends.
// net/http is used for the upstream leg because its requests are cancelled
// by their context at any point (hertz's client checks the context only
// before sending: a client that went away would hold the backend until it
// answered). The benchmark rig decides whether something leaner wins.
func newUpstreamClient(connectTimeout time.Duration) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy: nil, // never send backend traffic through HTTP_PROXY
			DialContext: (&net.Dialer{
				Timeout:   connectTimeout,
				KeepAlive: 30 * time.Second,
			}).DialContext,
			MaxIdleConns:        0, // no global cap; per-host below
			MaxIdleConnsPerHost: 1024,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true, // pass the client's Accept-Encoding through untouched
			ForceAttemptHTTP2:   false,
		},
		// Backends do not redirect; never follow one with a client's body.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// hopByHop are the connection-specific header fields of RFC 9110 §7.6.1
// (plus the de-facto Proxy-Connection and Keep-Alive): a proxy never
// forwards them. Content-Length is set from the body actually sent, and
// Host from the backend URL.
var hopByHop = map[string]bool{
	"Connection":          true,
	"Proxy-Connection":    true,
	"Keep-Alive":          true,
	"Te":                  true,
	"Trailer":             true,
	"Transfer-Encoding":   true,
	"Upgrade":             true,
	"Proxy-Authorization": true,
	"Proxy-Authenticate":  true,
	"Content-Length":      true,
	"Host":                true,
}

// neverForward are end-to-end headers that carry the client's credentials
// for the gateway, not for the backend.
var neverForward = map[string]bool{
	"Authorization": true,
	"Cookie":        true,
}

// copyRequestHeaders copies the client's headers that may travel upstream.
func copyRequestHeaders(dst http.Header, c *app.RequestContext) {
	connTokens := connectionTokens(string(c.Request.Header.Peek("Connection")))
	c.Request.Header.VisitAll(func(k, v []byte) {
		name := http.CanonicalHeaderKey(string(k))
		if hopByHop[name] || neverForward[name] || connTokens[name] {
			return
		}
		dst[name] = append(dst[name], string(v))
	})
}

// copyResponseHeaders copies the backend's response headers to the client.
func copyResponseHeaders(c *app.RequestContext, src http.Header) {
	connTokens := connectionTokens(src.Get("Connection"))
	for name, vs := range src {
		if hopByHop[name] || connTokens[name] || name == "Set-Cookie" {
			continue
		}
		for _, v := range vs {
			c.Response.Header.Add(name, v)
		}
	}
}

// connectionTokens returns the header names listed in a Connection header,
// which are hop-by-hop too (RFC 9110 §7.6.1).
func connectionTokens(v string) map[string]bool {
	if v == "" {
		return nil
	}
	m := map[string]bool{}
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f != "" {
			m[http.CanonicalHeaderKey(f)] = true
		}
	}
	return m
}
