package tracing

import (
	"testing"

	"github.com/sluice-gw/sluice/config"
)

func TestHTTPTracesURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://c:4318":            "http://c:4318/v1/traces",
		"http://c:4318/":           "http://c:4318/v1/traces",
		"https://c/otlp/v1/traces": "https://c/otlp/v1/traces",
		"http://c:4318/custom":     "http://c:4318/custom",
		"http://c:4318?tenant=a":   "http://c:4318/v1/traces?tenant=a",
	} {
		if got := httpTracesURL(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}

// A tracer is kept across a reload that leaves tracing as it was, and
// replaced when anything of it changed; off is nil.
func TestTracerIs(t *testing.T) {
	half, one := 0.5, 1.0
	cfg := config.Tracing{Endpoint: "http://127.0.0.1:1", SampleRatio: &half}
	tr, err := New(cfg, 0)
	if err != nil || tr == nil {
		t.Fatalf("New: %v, %v", tr, err)
	}
	defer tr.Shutdown(t.Context()) //nolint:errcheck
	same := cfg
	same.SampleRatio = new(float64)
	*same.SampleRatio = 0.5
	if !tr.Is(same) {
		t.Error("the same settings read as a change")
	}
	for _, c := range []config.Tracing{
		{Endpoint: "http://127.0.0.1:2", SampleRatio: &half},
		{Endpoint: "http://127.0.0.1:1", SampleRatio: &one},
		{Endpoint: "http://127.0.0.1:1", SampleRatio: &half, Protocol: "grpc"},
		{},
	} {
		if tr.Is(c) {
			t.Errorf("%+v reads as unchanged", c)
		}
	}
	if off, err := New(config.Tracing{}, 0); off != nil || err != nil {
		t.Errorf("no endpoint: %v, %v", off, err)
	}
	var none *Tracer
	if !none.Is(config.Tracing{}) || none.Is(cfg) {
		t.Error("a nil tracer is not off")
	}
}
