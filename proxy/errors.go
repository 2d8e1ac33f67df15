package proxy

import (
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cloudwego/hertz/pkg/app"
	"github.com/sluice-gw/sluice/proxy/sse"
	"github.com/sluice-gw/sluice/proxy/usage"
)

// apiError is an error the gateway itself answers with: in OpenAI's shape
// {"error":{"message":…,"type":…,"param":null,"code":…}}, or in
// Anthropic's for the Messages API (errShape).
type apiError struct {
	status  int
	errType string // OpenAI "type": invalid_request_error, server_error, …
	code    string // OpenAI "code": machine-readable reason
	message string
	param   string // OpenAI "param": the request field at fault, or "" (null)
	// retryAfter is the Retry-After header the answer carries ("" none):
	// when the client may try again.
	retryAfter string
	// source is whose fault the failure is: the usage line's error_source.
	source usage.Source
}

func (e *apiError) Error() string { return e.message }

// errShape is the shape of the gateway's own error answers: the one the
// client's SDK reads, so it raises its typed errors.
type errShape uint8

const (
	openAIErrors    errShape = iota // {"error":{"message","type","param","code"}}
	anthropicErrors                 // {"type":"error","error":{"type","message"}}
)

// anthropicStatus is the status and Anthropic error type e is answered
// with in Anthropic's shape (docs.anthropic.com "Errors"): the SDKs map the
// status to their typed errors. A full queue or no backend to take the
// request is Anthropic's 529 overloaded_error, which its clients retry.
func anthropicStatus(e *apiError) (int, string) {
	switch e.code {
	case "queue_full", "queue_timeout", "no_healthy_backend":
		return 529, "overloaded_error"
	}
	switch s := e.status; {
	case s == http.StatusUnauthorized:
		return s, "authentication_error"
	case s == http.StatusForbidden:
		return s, "permission_error"
	case s == http.StatusNotFound:
		return s, "not_found_error"
	case s == http.StatusRequestEntityTooLarge:
		return s, "request_too_large"
	case s == http.StatusTooManyRequests:
		return s, "rate_limit_error"
	case s == http.StatusGatewayTimeout:
		return s, "timeout_error"
	case s >= 500:
		return s, "api_error"
	}
	return e.status, "invalid_request_error"
}

func errInvalid(status int, code, msg string) *apiError {
	return &apiError{status: status, errType: "invalid_request_error", code: code, message: msg}
}

func errServer(status int, code, msg string) *apiError {
	return &apiError{status: status, errType: "server_error", code: code, message: msg, source: usage.SourceGateway}
}

// errUpstream is a failure of the backend, answered as OpenAI's server_error.
func errUpstream(status int, code, msg string) *apiError {
	return &apiError{status: status, errType: "server_error", code: code, message: msg, source: usage.SourceUpstream}
}

// writeError sends e as the whole response, in shape.
func writeError(c *app.RequestContext, e *apiError, shape errShape) {
	b := make([]byte, 0, 96+len(e.message))
	status := e.status
	if shape == anthropicErrors {
		var typ string
		status, typ = anthropicStatus(e)
		b = appendAnthropicError(b, typ, e.message)
	} else {
		b = appendErrorJSON(b, e)
	}
	c.Response.Header.SetContentType("application/json")
	c.Response.SetStatusCode(status)
	c.Response.SetBodyRaw(append(b, '\n'))
}

// appendErrorEvent appends e as an SSE event of API a's stream, already
// under way: a data-only event in OpenAI's shape, Anthropic's "error"
// event in its own, and for the Responses API its "error" event (OpenAI's
// ResponseErrorEvent: type, code, message, param).
func appendErrorEvent(b []byte, e *apiError, a *apiSpec) []byte {
	if a.format == sse.Responses {
		b = append(b, `event: error`+"\n"+`data: {"type":"error","code":`...)
		b = appendJSONString(b, e.code)
		b = append(b, `,"message":`...)
		b = appendJSONString(b, e.message)
		return append(b, `,"param":null}`+"\n\n"...)
	}
	if a.errors == anthropicErrors {
		_, typ := anthropicStatus(e)
		b = append(b, "event: error\ndata: "...)
		b = appendAnthropicError(b, typ, e.message)
		return append(b, "\n\n"...)
	}
	b = append(b, "data: "...)
	b = appendErrorJSON(b, e)
	return append(b, "\n\n"...)
}

// appendAnthropicError appends an error in Anthropic's shape.
func appendAnthropicError(b []byte, typ, message string) []byte {
	b = append(b, `{"type":"error","error":{"type":`...)
	b = appendJSONString(b, typ)
	b = append(b, `,"message":`...)
	b = appendJSONString(b, message)
	return append(b, "}}"...)
}

// appendErrorJSON appends e in OpenAI's error shape.
func appendErrorJSON(b []byte, e *apiError) []byte {
	b = append(b, `{"error":{"message":`...)
	b = appendJSONString(b, e.message)
	b = append(b, `,"type":`...)
	b = appendJSONString(b, e.errType)
	if e.param == "" {
		b = append(b, `,"param":null,"code":`...)
	} else {
		b = append(b, `,"param":`...)
		b = appendJSONString(b, e.param)
		b = append(b, `,"code":`...)
	}
	b = appendJSONString(b, e.code)
	return append(b, "}}"...)
}

// appendJSONString appends s as a JSON string literal. Hand-written rather
// than encoding/json so that the usage line and error bodies are built by
// appending into a reused buffer, with no reflection and no allocation.
func appendJSONString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c != 0x7f {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendInt appends a decimal integer.
func appendInt(b []byte, v int64) []byte { return strconv.AppendInt(b, v, 10) }
