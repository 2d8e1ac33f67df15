package proxy

import "testing"

// Which backend answers are worth another backend: overload (429) and
// server errors, never a client error, which every backend would repeat.
func TestRetryableStatus(t *testing.T) {
	for code, want := range map[int]bool{
		200: false, 400: false, 401: false, 403: false, 404: false, 408: false, 413: false, 422: false,
		429: true, 500: true, 502: true, 503: true, 504: true,
	} {
		if got := retryableStatus(code); got != want {
			t.Errorf("retryableStatus(%d) = %v, want %v", code, got, want)
		}
	}
}
