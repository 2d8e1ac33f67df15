package proxy

import (
	"testing"
	"time"

	"github.com/sluice-gw/sluice/meter"
	"github.com/sluice-gw/sluice/proxy/sse"
	"github.com/sluice-gw/sluice/proxy/usage"
	"github.com/sluice-gw/sluice/shm"
)

func TestOutcomeCode(t *testing.T) {
	for _, c := range []struct {
		rec  usage.Record
		want string
	}{
		{usage.Record{Status: 200}, "ok"},
		{usage.Record{Status: 429, ErrCode: "rate_limited"}, "rate_limited"},
		{usage.Record{Status: 500}, "upstream_500"},
		{usage.Record{Status: 400}, "upstream_400"},
		{usage.Record{Status: 399}, "ok"},
		{usage.Record{Status: statusClientClosed, ErrCode: "client_closed"}, "client_closed"},
	} {
		if got := outcomeCode(&c.rec); got != c.want {
			t.Errorf("status %d code %q: %q, want %q", c.rec.Status, c.rec.ErrCode, got, c.want)
		}
	}
}

// BenchmarkMeterRecord is what the meter adds to one answered request:
// its attempt (one, with its time to headers) and its end (outcome,
// tokens, TTFT, duration), series already resolved.
func BenchmarkMeterRecord(b *testing.B) {
	region, err := shm.Create(4, 2)
	if err != nil {
		b.Fatal(err)
	}
	defer region.Close()
	rm := newRequestMeter(meter.NewRecorder(region, 0))
	routes := &routeTable{models: map[string]*modelRoute{"llama": {name: "llama"}}}
	be := &backendRoute{url: "http://10.0.0.1:8000"}
	rec := &usage.Record{Start: time.Now(), Model: "llama", Key: "team-a", Status: 200,
		Usage: sse.Usage{Prompt: 100, Completion: 20, Total: 120, Found: true}, TTFT: 30 * time.Millisecond}
	for b.Loop() {
		rm.meterAttempt(be, "llama", 0, time.Millisecond, noFailure, false)
		rm.record(routes, rec, time.Now())
	}
}

// BenchmarkTracingOff is what tracing costs a request when it is off (no
// tracing.endpoint): the hooks of serve, attempt and end, each a nil check.
func BenchmarkTracingOff(b *testing.B) {
	g := &Gateway{}
	x := &exchange{api: &apiSpec{name: "chat"}, rec: usage.Record{Start: time.Now()}}
	for b.Loop() {
		g.startTrace(nil, x)
		span, lines := x.trace.StartAttempt(0, "http://b", nil)
		if span != nil || lines != nil {
			b.Fatal("a span with tracing off")
		}
		if x.trace != nil {
			g.endTrace(x, time.Now())
		}
	}
}
