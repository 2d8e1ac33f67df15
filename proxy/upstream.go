package proxy

import (
	"bytes"
	"net/http"
	"time"

	"github.com/cloudwego/hertz/pkg/app"

	"github.com/sluice-gw/sluice/proxy/upstream"
)

// newPool returns the keep-alive pool of one backend (proxy/upstream: the
// request goes out in one writev and is read by the handler's goroutine).
// An error (a URL it cannot dial: config and discovery validate them
// before) refuses the route table — the worker keeps the one it has, or
// fails to start with the reason — rather than panicking every worker.
func newPool(url string, connect time.Duration) (*upstream.Pool, error) {
	return upstream.New(url, upstream.Options{ConnectTimeout: connect})
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
