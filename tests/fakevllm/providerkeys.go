package fakevllm

// Per-key answers, for the gateway's provider keys (rotated over a pool):
// the fake acts as a provider that knows some keys and answers each with
// a status. This is not a vLLM behaviour (vLLM's --api-key answers 401
// {"error":"Unauthorized"} to any other key); the errors are in the shape
// of the endpoint's API: OpenAI's (as api.openai.com answers them) on the
// OpenAI-compatible endpoints, Anthropic's on /v1/messages.

import (
	"fmt"
	"net/http"
	"strings"
)

// keyAnswer is what a key gets.
type keyAnswer struct {
	status     int
	retryAfter string // the Retry-After of a 429
}

// SetKeyAnswer makes requests with key get status (200: served; any
// other: an error answer; a 429 comes with "Retry-After: retryAfter", "1"
// when retryAfter is ""). Status 0 forgets the key. While some key is set,
// a request whose key is not set gets 401. Safe while serving: a test
// flips a key's answer between requests.
func (s *Server) SetKeyAnswer(key string, status int, retryAfter string) {
	if status == http.StatusTooManyRequests && retryAfter == "" {
		retryAfter = "1"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if status == 0 {
		delete(s.keys, key)
	} else {
		s.keys[key] = keyAnswer{status: status, retryAfter: retryAfter}
	}
	s.keysOn.Store(len(s.keys) > 0)
}

// KeyRequests is the number of requests received with key (served or
// refused), counted by the inference endpoints. Received's Key says the
// same request by request (NoRecord keeps neither).
func (s *Server) KeyRequests(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keyUses[key]
}

// requestKey is the key r carries: "Authorization: Bearer KEY", else
// "x-api-key: KEY" (Anthropic's header).
func requestKey(r *http.Request) string {
	if a := r.Header.Get("Authorization"); a != "" {
		if k, ok := strings.CutPrefix(a, "Bearer "); ok {
			return strings.TrimSpace(k)
		}
		return strings.TrimSpace(a)
	}
	return r.Header.Get("X-Api-Key")
}

// keyServed answers r with its key's error and returns false, or returns
// true when the key is served (or no key is set).
func (s *Server) keyServed(w http.ResponseWriter, r *http.Request) bool {
	if !s.keysOn.Load() {
		return true
	}
	s.mu.Lock()
	key := requestKey(r)
	a, ok := s.keys[key]
	s.mu.Unlock()
	if !ok {
		a = keyAnswer{status: http.StatusUnauthorized}
	}
	if a.status == http.StatusOK {
		return true
	}
	if a.status == http.StatusTooManyRequests && a.retryAfter != "" {
		w.Header().Set("Retry-After", a.retryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	if strings.HasPrefix(r.URL.Path, "/v1/messages") {
		typ := map[int]string{401: "authentication_error", 403: "permission_error", 429: "rate_limit_error",
			400: "invalid_request_error", 404: "not_found_error", 529: "overloaded_error"}[a.status]
		if typ == "" {
			typ = "api_error"
		}
		fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":%q}}`, typ, keyMessage(a.status, key))
		return false
	}
	typ, code := "invalid_request_error", "null"
	switch a.status {
	case http.StatusUnauthorized:
		code = `"invalid_api_key"`
	case http.StatusForbidden:
		code = `"forbidden"`
	case http.StatusTooManyRequests:
		typ, code = "requests", `"rate_limit_exceeded"`
	default:
		if a.status >= 500 {
			typ = "server_error"
		}
	}
	fmt.Fprintf(w, `{"error":{"message":%q,"type":%q,"param":null,"code":%s}}`, keyMessage(a.status, key), typ, code)
	return false
}

func keyMessage(status int, key string) string {
	switch status {
	case http.StatusUnauthorized:
		if key == "" {
			return "You didn't provide an API key."
		}
		return "Incorrect API key provided: " + maskKey(key) + "."
	case http.StatusForbidden:
		return "The API key " + maskKey(key) + " is not allowed to use this resource."
	case http.StatusTooManyRequests:
		return "Rate limit reached for the API key " + maskKey(key) + ". Please try again later."
	}
	return "the fake backend answers the API key " + maskKey(key) + " with " + http.StatusText(status)
}

// maskKey shows a key's first and last characters only, as providers do.
func maskKey(k string) string {
	if len(k) <= 8 {
		return strings.Repeat("*", len(k))
	}
	return k[:3] + strings.Repeat("*", len(k)-7) + k[len(k)-4:]
}
