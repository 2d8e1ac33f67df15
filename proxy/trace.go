package proxy

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/cloudwego/hertz/pkg/app"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/meter"
	"github.com/sluice-gw/sluice/proxy/tracing"
)

// OpenTelemetry spans (proxy/tracing), when tracing.endpoint is set: the
// request's span begins in serve and ends in end, with the queue's wait
// and each upstream attempt as its children. Off, x.trace is nil and each
// hook is a nil check.

// genAIOperation is gen_ai.operation.name for an API: the conventions'
// names where they have one, else the API's own.
var genAIOperation = map[string]string{
	"chat":        "chat",
	"responses":   "chat",
	"messages":    "chat",
	"completions": "text_completion",
	"embeddings":  "embeddings",
}

// headerPeeker lets the propagator read a client request's headers.
type headerPeeker struct{ c *app.RequestContext }

func (h headerPeeker) Peek(name string) []byte { return h.c.Request.Header.Peek(name) }

// tracerState is the worker's tracer (nil: tracing off), replaced by a
// reload that changes tracing.
type tracerState struct {
	cur  atomic.Pointer[tracing.Tracer]
	slot int // the worker's slot, for its spans' resource
}

// startTrace begins the request's span, if tracing is on.
func (g *Gateway) startTrace(c *app.RequestContext, x *exchange) {
	if t := g.tracer.cur.Load(); t != nil {
		x.trace = t.StartRequest(headerPeeker{c}, x.rec.Start)
	}
}

// endTrace ends the request's span with what its usage line says, and
// records its wait in the queue.
func (g *Gateway) endTrace(x *exchange, end time.Time) {
	if !x.trace.Sampled() {
		return
	}
	rec := &x.rec
	if rec.Queued {
		x.trace.Queued(rec.QueueBegan, rec.QueueWait, rec.Priority)
	}
	op := genAIOperation[x.api.name]
	if op == "" {
		op = x.api.name
	}
	// The span's name and gen_ai.request.model are the configured model's
	// (unknown otherwise, as the meter labels it): a client's model string
	// must not make span names without bound.
	model := meter.UnknownModel
	if x.req.model != nil {
		model = x.req.model.name
	}
	x.trace.End(tracing.Outcome{
		Operation: op, RequestModel: model, ResponseModel: rec.UpstreamModel,
		Key: rec.Key, Backend: rec.Backend, Status: rec.Status, ErrorCode: rec.ErrCode, Attempts: rec.Attempts,
		InputTokens: rec.Usage.Prompt, OutputTokens: rec.Usage.Completion, CachedTokens: rec.Usage.Cached, HasUsage: rec.Usage.Found,
		FinishReason: rec.FinishReason, Queued: rec.Queued, QueueWait: rec.QueueWait, TTFT: rec.TTFT, Stream: rec.Stream,
	}, end)
}

// setTracer makes the worker's tracer that of cfg, if it is not already,
// and shuts the one it replaces down in the background (its batch is
// exported within shutdownTimeout). A tracer that cannot be made leaves
// tracing off, logged.
func (g *Gateway) setTracer(cfg config.Tracing) {
	old := g.tracer.cur.Load()
	if old.Is(cfg) {
		return
	}
	t, err := tracing.New(cfg, g.tracer.slot)
	if err != nil {
		g.log.Error("tracing off", "err", err)
		t = nil
	}
	g.tracer.cur.Store(t)
	if old != nil {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			old.Shutdown(ctx) //nolint:errcheck // the collector is gone: the spans are lost, as tracing allows
		}()
	}
}

// flushTraces exports the spans still batched when the worker exits (for
// at most 5 s: a collector that is down loses them).
func (g *Gateway) flushTraces() {
	if t := g.tracer.cur.Load(); t != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		t.Shutdown(ctx) //nolint:errcheck // the collector is gone: the spans are lost
	}
}
