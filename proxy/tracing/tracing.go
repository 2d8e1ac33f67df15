// Package tracing is a worker's OpenTelemetry export of request spans:
// one span per request, named and attributed by the GenAI semantic
// conventions (gen_ai.operation.name, gen_ai.request.model, …) with
// sluice's own attributes, a child span for the wait in the queue and one
// per upstream attempt, the client's W3C traceparent continued and the
// attempt's passed to the backend (vLLM continues it with
// --otlp-traces-endpoint). Spans are batched in the worker and exported by
// the OTLP exporter (HTTP or gRPC) in the background: the request path
// never waits on the collector, and a full batch queue drops spans rather
// than block.
//
// Off (no tracing.endpoint), the worker holds no Tracer and the request
// path pays a nil check.
package tracing

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/sluice-gw/sluice/config"
)

// BatchTimeout is how long a span may wait in the worker's batch before it
// is exported: a second, not the SDK's five, so a trace shows up while its
// request is still on the operator's mind.
const BatchTimeout = time.Second

// MaxQueue is how many ended spans a worker holds for export; past it new
// spans are dropped (the collector is down or slow), never waited for.
const MaxQueue = 8192

// Tracer is a worker's tracer provider and the configuration it was made
// from.
type Tracer struct {
	cfg      config.Tracing
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
}

// New makes the tracer of cfg for worker slot (a resource attribute), or
// nil when tracing is off.
func New(cfg config.Tracing, slot int) (*Tracer, error) {
	if cfg.Endpoint == "" {
		return nil, nil
	}
	var exp sdktrace.SpanExporter
	var err error
	ctx := context.Background()
	switch cfg.Protocol {
	case "grpc":
		exp, err = otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(cfg.Endpoint))
	default:
		exp, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(httpTracesURL(cfg.Endpoint)))
	}
	if err != nil {
		return nil, fmt.Errorf("tracing: the OTLP exporter for %s: %w", cfg.Endpoint, err)
	}
	ratio := 1.0
	if cfg.SampleRatio != nil {
		ratio = *cfg.SampleRatio
	}
	name := cfg.ServiceName
	if name == "" {
		name = config.DefaultTracingServiceName
	}
	res := resource.NewSchemaless(
		attribute.String("service.name", name),
		attribute.String("service.instance.id", "worker-"+strconv.Itoa(slot)),
	)
	p := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(BatchTimeout), sdktrace.WithMaxQueueSize(MaxQueue)),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio))),
		sdktrace.WithResource(res),
	)
	return &Tracer{cfg: cfg, provider: p, tracer: p.Tracer("github.com/sluice-gw/sluice")}, nil
}

// httpTracesURL is the URL spans are posted to over OTLP/HTTP: the
// endpoint as configured, or, when it names no path (a collector's base
// address, http://otel-collector:4318), its /v1/traces — as the OTLP
// exporters read OTEL_EXPORTER_OTLP_ENDPOINT.
func httpTracesURL(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Path != "" && u.Path != "/") {
		return endpoint
	}
	u.Path = "/v1/traces"
	return u.String()
}

// Is reports whether t was made from cfg (a reload that leaves tracing as
// it was keeps the tracer and its batch).
func (t *Tracer) Is(cfg config.Tracing) bool {
	if t == nil {
		return cfg.Endpoint == ""
	}
	a, b := t.cfg, cfg
	ra, rb := 1.0, 1.0
	if a.SampleRatio != nil {
		ra = *a.SampleRatio
	}
	if b.SampleRatio != nil {
		rb = *b.SampleRatio
	}
	return a.Endpoint == b.Endpoint && a.Protocol == b.Protocol && a.ServiceName == b.ServiceName && ra == rb
}

// Shutdown exports what is batched (within ctx) and stops the exporter.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.provider.Shutdown(ctx)
}

// propagator reads and writes W3C trace context (traceparent, tracestate).
var propagator = propagation.TraceContext{}

// Headers is a request's headers as the propagator reads them: Get one by
// its (case-insensitive) name.
type Headers interface{ Peek(name string) []byte }

type carrier struct{ h Headers }

func (c carrier) Get(key string) string { return string(c.h.Peek(key)) }
func (c carrier) Set(string, string)    {}
func (c carrier) Keys() []string        { return []string{"traceparent", "tracestate"} }

// Request is one request's span and its context, for its children.
type Request struct {
	t    *Tracer
	ctx  context.Context
	span trace.Span
}

// StartRequest begins the span of a request that arrived at start, as the
// child of the trace context its headers carry, if any.
func (t *Tracer) StartRequest(h Headers, start time.Time) *Request {
	ctx := propagator.Extract(context.Background(), carrier{h})
	ctx, span := t.tracer.Start(ctx, "request", trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(start))
	return &Request{t: t, ctx: ctx, span: span}
}

// Sampled reports whether the request's span is recorded (and its
// children worth making).
func (r *Request) Sampled() bool { return r != nil && r.span.IsRecording() }

// Queued records the request's wait for a slot, from began for wait, as a
// child span.
func (r *Request) Queued(began time.Time, wait time.Duration, priority int) {
	if !r.Sampled() {
		return
	}
	_, s := r.t.tracer.Start(r.ctx, "queue wait", trace.WithTimestamp(began),
		trace.WithAttributes(attribute.Int("sluice.queue.priority", priority)))
	s.End(trace.WithTimestamp(began.Add(wait)))
}

// Attempt is one upstream attempt's span.
type Attempt struct{ span trace.Span }

// StartAttempt begins the span of attempt n (0: the first) on backend
// url, and returns it with the traceparent (and tracestate) header lines
// to send to the backend: "traceparent: …\r\n". Without a sampled request
// span it returns nil spans and the request's own context's header lines,
// so a backend still joins an unsampled trace the client started.
func (r *Request) StartAttempt(n int, url string, lines []byte) (*Attempt, []byte) {
	if r == nil {
		return nil, lines
	}
	ctx := r.ctx
	var a *Attempt
	if r.Sampled() {
		var s trace.Span
		ctx, s = r.t.tracer.Start(r.ctx, "upstream", trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attribute.String("server.address", url), attribute.Int("sluice.attempt", n+1)))
		a = &Attempt{s}
	}
	mc := propagation.MapCarrier{}
	propagator.Inject(ctx, mc)
	for _, k := range []string{"traceparent", "tracestate"} {
		if v := mc[k]; v != "" {
			lines = append(append(append(append(lines, k...), ": "...), v...), "\r\n"...)
		}
	}
	return a, lines
}

// End ends the attempt: the backend's status (0: no answer), and the kind
// of failure ("" for none).
func (a *Attempt) End(status int, failure string) {
	if a == nil {
		return
	}
	if status > 0 {
		a.span.SetAttributes(attribute.Int("http.response.status_code", status))
	}
	if failure != "" {
		a.span.SetAttributes(attribute.String("error.type", failure))
		a.span.SetStatus(codes.Error, failure)
	}
	a.span.End()
}

// Outcome is what the request span records when the request ends: one
// field per attribute of the span, flat as the span's attributes are.
type Outcome struct {
	Operation     string // gen_ai.operation.name: chat, text_completion, embeddings, …
	RequestModel  string // the model the client asked for
	ResponseModel string // the model the backend was asked for (upstream_model)
	Key           string
	Backend       string
	Status        int
	ErrorCode     string // the gateway's error code, "" for none
	Attempts      int
	InputTokens   int64
	OutputTokens  int64
	CachedTokens  int64
	HasUsage      bool
	FinishReason  string
	QueueWait     time.Duration
	Queued        bool
	TTFT          time.Duration
	Stream        bool
}

// End ends the request's span at end with what it came to. The span is
// named as the conventions ask: "{operation} {model}".
func (r *Request) End(o Outcome, end time.Time) {
	if !r.Sampled() {
		return
	}
	s := r.span
	if o.Operation != "" {
		s.SetName(o.Operation + " " + o.RequestModel)
	}
	attrs := []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", o.Operation),
		attribute.String("gen_ai.request.model", o.RequestModel),
		attribute.String("sluice.key", o.Key),
		attribute.Int("http.response.status_code", o.Status),
		attribute.Int("sluice.attempts", o.Attempts),
		attribute.Bool("sluice.stream", o.Stream),
	}
	if o.ResponseModel != "" {
		attrs = append(attrs, attribute.String("gen_ai.response.model", o.ResponseModel))
	}
	if o.Backend != "" {
		attrs = append(attrs, attribute.String("sluice.backend", o.Backend))
	}
	if o.HasUsage {
		attrs = append(attrs, attribute.Int64("gen_ai.usage.input_tokens", o.InputTokens),
			attribute.Int64("gen_ai.usage.output_tokens", o.OutputTokens),
			attribute.Int64("sluice.usage.cached_tokens", o.CachedTokens))
	}
	if o.FinishReason != "" {
		attrs = append(attrs, attribute.StringSlice("gen_ai.response.finish_reasons", []string{o.FinishReason}))
	}
	if o.Queued {
		attrs = append(attrs, attribute.Float64("sluice.queue_wait_ms", float64(o.QueueWait)/1e6))
	}
	if o.TTFT > 0 {
		attrs = append(attrs, attribute.Float64("sluice.ttft_ms", float64(o.TTFT)/1e6))
	}
	if o.ErrorCode != "" {
		attrs = append(attrs, attribute.String("error.type", o.ErrorCode))
		s.SetStatus(codes.Error, o.ErrorCode)
	} else if o.Status >= 500 {
		attrs = append(attrs, attribute.String("error.type", strconv.Itoa(o.Status)))
		s.SetStatus(codes.Error, "")
	}
	s.SetAttributes(attrs...)
	s.End(trace.WithTimestamp(end))
}
