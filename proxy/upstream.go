package proxy

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"time"

	"github.com/cloudwego/hertz/pkg/app"

	"github.com/sluice-gw/sluice/proxy/upstream"
)

// Upstream is one backend's connections as the pipeline uses them: Do
// sends a request and returns once the response's head has arrived (its
// body is read by the caller, who closes it); Close ends the idle
// connections. *upstream.Pool is the real one; an in-process test scripts
// its own (Backends).
type Upstream interface {
	Do(ctx context.Context, req *upstream.Request) (*http.Response, error)
	Close()
}

// Backends is how a gateway reaches its backends. The zero value is over
// the network: proxy/upstream's keep-alive pools for requests, a GET over
// net/http for health checks.
type Backends struct {
	// Dial returns the Upstream of the backend at url (no trailing slash),
	// with connect as its connect timeout. An error refuses the route
	// table — the worker keeps the one it has, or fails to start with the
	// reason — rather than panicking every worker.
	Dial func(url string, connect time.Duration) (Upstream, error)
	// Probe sends one health check, a GET of url with auth ("": none) as
	// its Authorization, and returns its status; it must return by ctx's
	// end. Nil: net/http, one client per route table (checkHealth).
	Probe func(ctx context.Context, url, auth string) (status int, err error)
}

// dial is b.Dial, or a proxy/upstream pool (the request goes out in one
// writev and is read by the handler's goroutine).
func (b Backends) dial(url string, connect time.Duration) (Upstream, error) {
	if b.Dial != nil {
		return b.Dial(url, connect)
	}
	return upstream.New(url, upstream.Options{ConnectTimeout: connect})
}

// httpProbe returns a Probe over one net/http client of its own, and what
// closes its kept connections.
func httpProbe() (probe func(ctx context.Context, url, auth string) (int, error), closeIdle func()) {
	transport := &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 1, DisableCompression: true}
	client := &http.Client{Transport: transport}
	probe = func(ctx context.Context, url, auth string) (int, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return 0, err
		}
		if auth != "" {
			// A hosted API's health path (such as /v1/models) wants the key.
			req.Header.Set("Authorization", auth)
		}
		res, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, io.LimitReader(res.Body, 4096)) //nolint:errcheck // the status is the answer
		res.Body.Close()
		return res.StatusCode, nil
	}
	return probe, transport.CloseIdleConnections
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
	"X-Api-Key":     true, // Anthropic's clients send the gateway's key so
	"Cookie":        true,
	// Not a credential, but the gateway's to set: vLLM takes it as the
	// request's id, so the gateway sends its own (sendUpstream).
	"X-Request-Id": true,
}

// scopedToKey are the headers that qualify the credentials a request is
// sent with (OpenAI's organization and project, Azure's api-key). When the
// gateway sends its own key (api_key_env, api_keys_env), the client's must
// not reach the provider: a wrong organization gets the gateway's key a
// 401, and with api_keys_env one request would take every key out of
// rotation.
var scopedToKey = map[string]bool{
	"Openai-Organization": true,
	"Openai-Project":      true,
	"Api-Key":             true,
}

// traceHeaders are the W3C trace context headers: with tracing on, the
// gateway sends its attempt's in place of the client's.
var traceHeaders = map[string]bool{"Traceparent": true, "Tracestate": true}

// appendRequestHeaders appends, as header lines, the client's headers that
// may travel upstream; with ownKey (the gateway sends its own key), not
// those scopedToKey; with ownTrace (it sends its own trace context), not
// traceHeaders. hertz hands the names over in canonical form
// ("Content-Type"), which is how the maps above spell them; a lookup with
// string(k) does not allocate.
func appendRequestHeaders(b []byte, c *app.RequestContext, ownKey, ownTrace bool) []byte {
	conn := c.Request.Header.Peek("Connection")
	c.Request.Header.VisitAll(func(k, v []byte) {
		if hopByHop[string(k)] || neverForward[string(k)] || listsToken(conn, k) || ownKey && scopedToKey[string(k)] ||
			ownTrace && traceHeaders[string(k)] {
			return
		}
		b = append(b, k...)
		b = append(b, ": "...)
		b = append(b, v...)
		b = append(b, "\r\n"...)
	})
	return b
}

// listsToken reports whether a Connection header value names the header
// name (those are hop-by-hop too, RFC 9110 §7.6.1).
func listsToken(conn, name []byte) bool {
	for len(conn) > 0 {
		tok := conn
		if i := bytes.IndexByte(conn, ','); i >= 0 {
			tok, conn = conn[:i], conn[i+1:]
		} else {
			conn = nil
		}
		if bytes.EqualFold(bytes.TrimSpace(tok), name) {
			return true
		}
	}
	return false
}

// copyResponseHeaders copies the backend's response headers to the client.
func copyResponseHeaders(c *app.RequestContext, src http.Header) {
	conn := []byte(src.Get("Connection"))
	for name, vs := range src {
		if hopByHop[name] || name == "Set-Cookie" || (len(conn) > 0 && listsToken(conn, []byte(name))) {
			continue
		}
		for _, v := range vs {
			c.Response.Header.Add(name, v)
		}
	}
}
