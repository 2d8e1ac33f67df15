package tests

import (
	"bytes"
	"context"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// otlpReceiver is an OTLP/HTTP trace receiver: it decodes the protobuf
// export requests the gateway's workers send and keeps their spans.
type otlpReceiver struct {
	srv   *httptest.Server
	mu    sync.Mutex
	spans []*tracepb.Span
	bad   []string // what could not be read
}

func startOTLPReceiver(t *testing.T) *otlpReceiver {
	r := &otlpReceiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		var ex collectortrace.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(body, &ex)
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if err != nil || req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
			r.bad = append(r.bad, req.URL.Path+" "+req.Header.Get("Content-Type")+" "+errText(err))
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		for _, rs := range ex.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				r.spans = append(r.spans, ss.GetSpans()...)
			}
		}
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// trace returns the spans received of the trace id (hex).
func (r *otlpReceiver) trace(id string) []*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*tracepb.Span
	for _, s := range r.spans {
		if hex.EncodeToString(s.GetTraceId()) == id {
			out = append(out, s)
		}
	}
	return out
}

// attrs is a span's attributes, as strings.
func attrs(s *tracepb.Span) map[string]string {
	out := map[string]string{}
	for _, kv := range s.GetAttributes() {
		out[kv.GetKey()] = anyText(kv.GetValue())
	}
	return out
}

func anyText(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return itoa(int(x.IntValue))
	case *commonpb.AnyValue_BoolValue:
		if x.BoolValue {
			return "true"
		}
		return "false"
	case *commonpb.AnyValue_ArrayValue:
		var parts []string
		for _, e := range x.ArrayValue.GetValues() {
			parts = append(parts, anyText(e))
		}
		return strings.Join(parts, ",")
	case *commonpb.AnyValue_DoubleValue:
		return "double"
	}
	return "?"
}

// With tracing on, a request's span continues the client's W3C trace,
// carries the GenAI attributes and sluice's own, and has a child span for
// its wait in the queue and one for its upstream attempt, whose context is
// the traceparent the backend receives. A trace the client did not sample
// is not recorded, and with sample_ratio 0 neither is a new one.
func TestTracingSpans(t *testing.T) {
	recv := startOTLPReceiver(t)
	be := startBackend(t, fakevllm.Options{Tokens: 4})
	cfg := slotsConfig(be.URL(), "off", 1, "{max: 10, timeout: 60s}")
	cfg = strings.Replace(cfg, "keys:\n", "tracing:\n  endpoint: "+recv.srv.URL+"\n  sample_ratio: 0\nkeys:\n", 1)
	g := startGateway(t, cfg)

	const clientTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	const clientSpan = "00f067aa0ba902b7"
	send := func(traceparent, content string) {
		t.Helper()
		hdr := map[string]string{}
		if traceparent != "" {
			hdr["traceparent"] = traceparent
		}
		res, body := post(t, freshClient(), g.URL+"/v1/chat/completions", keyAll, chatBody("m", false, content), hdr)
		if res.StatusCode != 200 {
			t.Fatalf("%s: %s %s", content, res.Status, body)
		}
	}
	// The slot is held by a stream; a sampled request waits for it.
	stream, _, closer := openHeldStream(t, g, "trace")
	defer closer.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/chat/completions", bytes.NewReader(chatBody("m", false, "traced")))
		req.Header.Set("Authorization", "Bearer "+keyAll)
		req.Header.Set("traceparent", "00-"+clientTrace+"-"+clientSpan+"-01")
		if res, err := freshClient().Do(req); err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
	}()
	await(t, "the traced request to queue", func() bool {
		v, _ := g.metric("sluice_queue_depth", map[string]string{"model": "m"})
		return v == 1
	})
	be.Release("trace")
	io.Copy(io.Discard, stream)
	<-done
	const unsampled = "5bf92f3577b34da6a3ce929d0e0e4737"
	send("00-"+unsampled+"-00f067aa0ba902b8-00", "not sampled by the client")
	send("", "a new trace, sample_ratio 0")

	var spans []*tracepb.Span
	await(t, "the traced request's spans", func() bool {
		spans = recv.trace(clientTrace)
		return len(spans) >= 3
	})
	byName := map[string]*tracepb.Span{}
	for _, s := range spans {
		byName[s.GetName()] = s
	}
	req, queue, up := byName["chat m"], byName["queue wait"], byName["upstream"]
	if req == nil || queue == nil || up == nil || len(spans) != 3 {
		var names []string
		for _, s := range spans {
			names = append(names, s.GetName())
		}
		t.Fatalf("spans %q, want chat m, queue wait, upstream", names)
	}
	if hex.EncodeToString(req.GetParentSpanId()) != clientSpan || req.GetKind() != tracepb.Span_SPAN_KIND_SERVER {
		t.Errorf("request span: parent %x kind %v, want the client's span %s, server", req.GetParentSpanId(), req.GetKind(), clientSpan)
	}
	for _, child := range []*tracepb.Span{queue, up} {
		if !bytes.Equal(child.GetParentSpanId(), req.GetSpanId()) {
			t.Errorf("span %q is not a child of the request's", child.GetName())
		}
	}
	a := attrs(req)
	for k, want := range map[string]string{
		"gen_ai.operation.name": "chat", "gen_ai.request.model": "m", "gen_ai.usage.output_tokens": "4",
		"gen_ai.response.finish_reasons": "length", "sluice.key": "all", "sluice.backend": be.URL(),
		"http.response.status_code": "200", "sluice.attempts": "1",
	} {
		if a[k] != want {
			t.Errorf("request span %s = %q, want %q", k, a[k], want)
		}
	}
	if a["gen_ai.usage.input_tokens"] == "" || a["sluice.queue_wait_ms"] != "double" {
		t.Errorf("request span attributes %v", a)
	}
	if queue.GetEndTimeUnixNano() > up.GetStartTimeUnixNano() || up.GetKind() != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("the wait ends after the attempt starts, or the attempt is not a client span")
	}
	// The backend got the attempt's context, not the client's.
	var got string
	for _, r := range be.Received() {
		if tp := r.Header.Get("Traceparent"); strings.Contains(tp, clientTrace) {
			got = tp
		}
	}
	if want := "00-" + clientTrace + "-" + hex.EncodeToString(up.GetSpanId()) + "-01"; got != want {
		t.Errorf("the backend received traceparent %q, want %q (the attempt's span)", got, want)
	}

	// Exiting, the workers export what they hold: nothing of the unsampled
	// traces.
	g.stop()
	if n := len(recv.trace(unsampled)); n != 0 {
		t.Errorf("%d spans of a trace the client did not sample", n)
	}
	recv.mu.Lock()
	defer recv.mu.Unlock()
	if len(recv.spans) != 3 || len(recv.bad) > 0 {
		t.Errorf("%d spans in all (want the traced request's 3); unreadable exports: %q", len(recv.spans), recv.bad)
	}
}

// grpcReceiver is an OTLP/gRPC trace receiver keeping the spans it gets.
type grpcReceiver struct {
	collectortrace.UnimplementedTraceServiceServer
	mu    sync.Mutex
	spans []*tracepb.Span
}

func (r *grpcReceiver) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			r.spans = append(r.spans, ss.GetSpans()...)
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// With protocol grpc the spans go over OTLP/gRPC, the same spans.
func TestTracingGRPC(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	recv := &grpcReceiver{}
	collectortrace.RegisterTraceServiceServer(srv, recv)
	go srv.Serve(ln) //nolint:errcheck // ends with Stop
	t.Cleanup(srv.Stop)

	be := startBackend(t, fakevllm.Options{Tokens: 2})
	cfg := baseConfig(be.URL(), "off", "tracing:\n  endpoint: http://"+ln.Addr().String()+"\n  protocol: grpc\n")
	g := startGateway(t, cfg)
	const traceID = "6bf92f3577b34da6a3ce929d0e0e4738"
	res, body := post(t, freshClient(), g.URL+"/v1/chat/completions", keyAll, chatBody("m", false, "over grpc"),
		map[string]string{"traceparent": "00-" + traceID + "-00f067aa0ba902b9-01"})
	if res.StatusCode != 200 {
		t.Fatalf("%s %s", res.Status, body)
	}
	await(t, "the spans over gRPC", func() bool {
		recv.mu.Lock()
		defer recv.mu.Unlock()
		n := 0
		for _, s := range recv.spans {
			if hex.EncodeToString(s.GetTraceId()) == traceID && (s.GetName() == "chat m" || s.GetName() == "upstream") {
				n++
			}
		}
		return n == 2
	})
}
