package proxy

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// An ejected backend is out for 1 s, doubling per further failure up to
// 30 s, and back when that time is up: on time alone, no active check
// needed.
func TestEjectionDoublesAndReturnsOnTime(t *testing.T) {
	b := &backendRoute{}
	b.state.up.Store(true)
	now := time.Unix(1000, 0)
	for _, want := range []time.Duration{1, 2, 4, 8, 16, 30, 30} {
		want *= time.Second
		if d := b.eject(now); d != want {
			t.Fatalf("ejected for %v, want %v", d, want)
		}
		if b.healthy(now.Add(want - time.Nanosecond)) {
			t.Fatalf("in rotation before its %v were up", want)
		}
		now = now.Add(want)
		if !b.healthy(now) {
			t.Fatalf("still out when its %v were up", want)
		}
	}
}

// A health check sends the backend's key: a hosted API's health path
// (/v1/models) answers 401 without one, and the backend would never be up.
func TestHealthCheckSendsBackendKey(t *testing.T) {
	hosted := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer provider-key" {
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	defer hosted.Close()
	for _, auth := range []string{"", "Bearer provider-key"} {
		b := &backendRoute{url: hosted.URL, authHeader: auth}
		m := &modelRoute{name: "m", health: healthCheck{path: "/v1/models", interval: time.Hour}, backends: []*backendRoute{b}}
		stop := checkHealth(&routeTable{order: []*modelRoute{m}}, Backends{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
		stop()
		if up := b.state.up.Load(); up != (auth != "") {
			t.Errorf("with Authorization %q the backend is up=%v", auth, up)
		}
	}
}
