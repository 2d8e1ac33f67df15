package worker

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cloudwego/hertz/pkg/app"
)

// apiError is an error the gateway itself answers with, in OpenAI's shape:
// {"error":{"message":…,"type":…,"param":null,"code":…}}.
type apiError struct {
	status  int
	errType string // OpenAI "type": invalid_request_error, server_error, …
	code    string // OpenAI "code": machine-readable reason
	message string
	param   string // OpenAI "param": the request field at fault, or "" (null)
}

func (e *apiError) Error() string { return e.message }

func errInvalid(status int, code, msg string) *apiError {
	return &apiError{status: status, errType: "invalid_request_error", code: code, message: msg}
}

func errServer(status int, code, msg string) *apiError {
	return &apiError{status: status, errType: "server_error", code: code, message: msg}
}

// writeError sends e as the whole response.
func writeError(c *app.RequestContext, e *apiError) {
	b := appendErrorJSON(make([]byte, 0, 96+len(e.message)), e)
	c.Response.Header.SetContentType("application/json")
	c.Response.SetStatusCode(e.status)
	c.Response.SetBodyRaw(append(b, '\n'))
}

// appendErrorEvent appends e as an SSE event, for a stream already under way.
func appendErrorEvent(b []byte, e *apiError) []byte {
	b = append(b, "data: "...)
	b = appendErrorJSON(b, e)
	return append(b, "\n\n"...)
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
