package fakevllm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
)

// sseWriter writes an event stream as vLLM's routers for the Responses
// and Messages APIs do: each event "event: TYPE\ndata: JSON\n\n", written
// and flushed on its own.
type sseWriter struct {
	w  http.ResponseWriter
	fl http.Flusher
}

// startSSE writes the head of an event stream (the same head as the chat
// streams').
func startSSE(w http.ResponseWriter) *sseWriter {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	return &sseWriter{w: w, fl: fl}
}

// event writes one event; false when the client is gone.
func (e *sseWriter) event(typ string, data []byte) bool {
	buf := make([]byte, 0, len(typ)+len(data)+16)
	buf = append(buf, "event: "...)
	buf = append(buf, typ...)
	buf = append(buf, "\ndata: "...)
	buf = append(buf, data...)
	buf = append(buf, "\n\n"...)
	if _, err := e.w.Write(buf); err != nil {
		return false
	}
	if e.fl != nil {
		e.fl.Flush()
	}
	return true
}

// marshal is JSON as Python's json module writes it for vLLM (compact,
// <>& not escaped), without the trailing newline of json.Encoder.
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // the fake's own types always encode
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// quote is s as a JSON string.
func quote(s string) json.RawMessage { return marshal(s) }

// randomUUID is vLLM's random_uuid(): 32 hex digits.
func randomUUID() string {
	return fmt.Sprintf("%016x%016x", rand.Uint64(), rand.Uint64())
}

// errorInfo and errorResponse are vLLM's ErrorInfo and ErrorResponse.
type errorInfo struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Param   json.RawMessage `json:"param"`
	Code    int             `json:"code"`
}

type errorResponse struct {
	Error errorInfo `json:"error"`
}

// vllmError writes vLLM's ErrorResponse, {"error":{"message","type",
// "param","code"}} with the HTTP status as code; param "" is null.
func vllmError(w http.ResponseWriter, status int, typ, msg, param string) {
	p := json.RawMessage("null")
	if param != "" {
		p = quote(param)
	}
	body := marshal(errorResponse{errorInfo{Message: msg, Type: typ, Param: p, Code: status}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}
