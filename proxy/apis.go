package proxy

import (
	"bytes"
	"context"
	"fmt"
	"net/http"

	"github.com/cloudwego/hertz/pkg/app"
	"github.com/cloudwego/hertz/pkg/app/server"
	hconfig "github.com/cloudwego/hertz/pkg/common/config"
	"github.com/cloudwego/hertz/pkg/protocol"
	"github.com/cloudwego/hertz/pkg/route"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/jwtauth"
	"github.com/sluice-gw/sluice/proxy/reqscan"
	"github.com/sluice-gw/sluice/proxy/sse"
	"github.com/sluice-gw/sluice/proxy/usage"
)

// apiSpec describes one API the gateway proxies: everything in which a
// request's life differs from one API to another. Adding an endpoint is
// adding a description to apis; the phases (phases.go) read it and are not
// edited.
type apiSpec struct {
	name  string   // the name models[].endpoints uses, and the docs: "chat", "responses", …
	paths []string // paths served (with methods), as vLLM serves them
	// fields are the body's members the API has that the gateway reads
	// (reqscan): its model, stream flag, prompt, token counts. Where the
	// model is, how a stream is asked for.
	fields reqscan.Fields
	// format is how its answers and stream events report usage, finish
	// reason, the first token and a stored response's id (sse). Whether
	// the gateway must ask for usage follows from fields: only an API with
	// stream_options (chat and completions) gets include_usage added.
	format sse.Format
	// errors is the shape of the gateway's own error answers.
	errors errShape
	// xAPIKey: the client's key may arrive as x-api-key (Anthropic's SDKs
	// send it so) as well as Authorization: Bearer.
	xAPIKey bool
	// stored: the backend keeps answers by id in its own memory (vLLM's
	// Responses store), so a request naming one (previous_response_id)
	// goes where it was made (recall.go).
	stored bool
	// byID: a request on one stored response, named in the path (the
	// route's :id), not a generation: storedPhases run, and its answer is
	// neither billed nor remembered again (it is not stored: it was).
	byID bool
	// methods of paths; none: POST.
	methods []string
	// unbilled: the answer is no generation and reports no usage
	// (count_tokens, tokenize, detokenize): a key's tokens_per_minute
	// reserves nothing for it (a reservation would have no usage to be
	// settled against, and stand).
	unbilled bool
}

// apis are the APIs the gateway proxies, in the order their routes are
// registered. The paths are vLLM's (vllm/entrypoints/openai, anthropic,
// pooling and serve/tokenize routers).
var apis = []*apiSpec{
	{name: "chat", paths: []string{"/v1/chat/completions"}, fields: reqscan.ChatFields},
	{name: "completions", paths: []string{"/v1/completions"}, fields: reqscan.ChatFields},
	{name: "embeddings", paths: []string{"/v1/embeddings"}, fields: reqscan.ChatFields},
	{name: "responses", paths: []string{"/v1/responses"}, fields: reqscan.ResponsesFields,
		format: sse.Responses, stored: true},
	{name: "responses", paths: []string{"/v1/responses/:id"}, methods: []string{http.MethodGet, http.MethodDelete},
		format: sse.Responses, byID: true},
	{name: "responses", paths: []string{"/v1/responses/:id/cancel"},
		format: sse.Responses, byID: true},
	{name: "messages", paths: []string{"/v1/messages"}, fields: reqscan.MessagesFields,
		format: sse.Messages, errors: anthropicErrors, xAPIKey: true},
	// count_tokens' request has no stream and no max_tokens
	// (AnthropicCountTokensRequest); its answer, {"input_tokens": N},
	// bills nothing.
	{name: "count_tokens", paths: []string{"/v1/messages/count_tokens"},
		fields: reqscan.MessagesFields &^ (reqscan.FieldStream | reqscan.FieldMaxTokens),
		format: sse.Messages, errors: anthropicErrors, xAPIKey: true, unbilled: true},
	{name: "rerank", paths: []string{"/v1/rerank", "/rerank", "/v2/rerank"}, fields: reqscan.PoolingFields},
	{name: "score", paths: []string{"/v1/score", "/score"}, fields: reqscan.PoolingFields},
	// tokenize and detokenize generate nothing and report no usage.
	{name: "tokenize", paths: []string{"/tokenize"}, fields: reqscan.PoolingFields, unbilled: true},
	{name: "detokenize", paths: []string{"/detokenize"}, fields: reqscan.PoolingFields, unbilled: true},
	{name: "pooling", paths: []string{"/pooling"}, fields: reqscan.PoolingFields},
	{name: "classify", paths: []string{"/classify"}, fields: reqscan.PoolingFields},
}

// generates reports whether the API's requests generate output: those
// with an output limit in their body (max_tokens and the like). A token
// limit reserves default_max_tokens for one that sets none; an API that
// generates nothing (rerank, score, tokenize, pooling, count_tokens…)
// reserves only its prompt.
func (a *apiSpec) generates() bool {
	return a.fields&(reqscan.FieldMaxTokens|reqscan.FieldMaxCompletionTokens|reqscan.FieldMaxOutputTokens) != 0
}

// Mount makes e serve the pipeline: its Server header, the answer to
// Expect: 100-continue (MayContinue), the middleware first (the worker's)
// and CheckHead before every handler, and the routes of every API
// (register). e is built with ServerOptions. verifiesClients says whether
// e's listener verifies client certificates now (nil: never, a plain
// one), which MayContinue needs to know.
func (g *Gateway) Mount(e *route.Engine, verifiesClients func() bool, first ...app.HandlerFunc) {
	e.Name = "sluice" // the Server header
	e.ContinueHandler = func(h *protocol.RequestHeader) bool {
		return g.MayContinue(h, verifiesClients != nil && verifiesClients())
	}
	e.Use(append(first, g.CheckHead)...)
	g.register(e)
}

// ServerOptions are the hertz options the pipeline's handlers are written
// for: how a request is read and answered. The worker adds its own (the
// listener, the transport, its timeouts); an in-process test uses these
// alone.
func ServerOptions(cfg *config.Config) []hconfig.Option {
	return []hconfig.Option{
		server.WithStreamBody(true), // read the body ourselves, bounded by max_body
		server.WithMaxRequestBodySize(int(cfg.MaxBody)),
		// A request's body buffer goes back to hertz's shared pool when
		// reset, not kept in its context (released as soon as the body is
		// read: readRequest).
		server.WithMaxKeepBodySize(0),
		server.WithSenseClientDisconnection(true), // cancel the upstream when the client leaves
		// The whole head; a line of it is bounded by CheckHead.
		server.WithMaxHeaderBytes(MaxHeadBytes),
		// hertz would otherwise read a multipart/form-data body whole,
		// into memory and files, before any handler runs: before the key
		// is checked and unbounded by max_body. The body is the proxy's
		// to read (or refuse), whatever its content type.
		server.WithDisablePreParseMultipartForm(true),
		server.WithDisablePrintRoute(true),
		// "/v1/models/" is an unknown URL (404 with a request id and a
		// usage line), not a redirect answered by hertz itself.
		server.WithRedirectTrailingSlash(false),
		server.WithHandleMethodNotAllowed(true),
	}
}

// register adds the routes of every API to h.
func (g *Gateway) register(h *route.Engine) {
	for _, a := range apis {
		serve := func(ctx context.Context, c *app.RequestContext) { g.serve(ctx, c, a) }
		methods := a.methods
		if methods == nil {
			methods = []string{http.MethodPost}
		}
		for _, p := range a.paths {
			for _, method := range methods {
				h.Handle(method, p, serve)
			}
		}
	}
	h.GET("/v1/models", g.models)
	h.NoRoute(g.notFound)
	h.NoMethod(g.methodNotAllowed)
}

// clientKey returns the key the client sent for the gateway (the token of
// Authorization: Bearer, or for an API whose clients send it so, the value
// of x-api-key), and whether it sent a credential at all.
func (a *apiSpec) clientKey(c *app.RequestContext) (token []byte, sent bool) {
	auth := c.Request.Header.Peek("Authorization")
	if a.xAPIKey {
		if k := c.Request.Header.Peek("X-Api-Key"); len(k) > 0 {
			return k, true
		}
	}
	return bearerToken(auth), len(auth) > 0
}

// identify returns the key a request is of, or the 401 that refuses it:
// the key it sent (clientKey) when that is a key, else the one its
// connection's verified client certificate stands for
// (keys[].client_cert_sha256). The certificate answers for a token that
// is no key too: the official SDKs refuse to run without one, so a
// service that authenticates by certificate sends a placeholder. Either
// credential is the caller's own; a valid key names which of its keys.
//
// A token that is a JWT, with auth.jwt on, is verified instead
// (byJWT): its key and its identity, or its 401.
func (a *apiSpec) identify(ctx context.Context, c *app.RequestContext, t *routeTable) (*keyRoute, *jwtauth.Identity, *apiError) {
	token, sent := a.clientKey(c)
	if sent {
		if key := t.authenticate(token); key != nil {
			return key, nil, nil
		}
		if t.jwt != nil && jwtauth.LooksLikeJWT(token) {
			return t.byJWT(a, token)
		}
	}
	key, presented := t.byCert(ctx)
	if key != nil {
		return key, nil, nil
	}
	e := errUnauthorized(a, sent)
	if presented {
		e.message += " The client certificate presented is not one of this gateway's keys."
	}
	return nil, nil, e
}

// bearerToken returns the token of an Authorization: Bearer header, or nil.
func bearerToken(authorization []byte) []byte {
	const prefix = "Bearer "
	if len(authorization) <= len(prefix) || !bytes.EqualFold(authorization[:len(prefix)], []byte(prefix)) {
		return nil
	}
	return authorization[len(prefix):]
}

// errUnauthorized distinguishes a missing key from a wrong one, as OpenAI
// does, and says how the API's clients send one.
func errUnauthorized(a *apiSpec, sent bool) *apiError {
	if !sent {
		how := "'Authorization: Bearer YOUR_KEY'"
		if a.xAPIKey {
			how = "'x-api-key: YOUR_KEY' or " + how
		}
		return errInvalid(http.StatusUnauthorized, "missing_api_key",
			"You didn't provide an API key. Send it as "+how+".")
	}
	return errInvalid(http.StatusUnauthorized, "invalid_api_key", "Incorrect API key provided.")
}

// readAnswer records what a whole answer says of its usage and finish,
// and returns the id under which the backend stored it ("" if none).
func (a *apiSpec) readAnswer(rec *usage.Record, data []byte) (storedID string) {
	rec.Usage = sse.BodyUsageAs(a.format, data)
	rec.FinishReason = sse.BodyFinishReason(a.format, data)
	if a.stored {
		storedID = sse.BodyResponseID(a.format, data)
	}
	return storedID
}

// shapeOf is the error shape of an answer to path when no API route took
// it (an unknown URL, a wrong method): the shape of the API whose paths it
// extends, so an SDK reads it.
func shapeOf(path []byte) errShape {
	for _, a := range apis {
		for _, p := range a.paths {
			if len(path) >= len(p) && string(path[:len(p)]) == p {
				return a.errors
			}
		}
	}
	return openAIErrors
}

// modelList is how GET /v1/models takes the client's key: either way, as
// OpenAI's and Anthropic's SDKs both list models there.
var modelList = &apiSpec{name: "models", xAPIKey: true}

// models handles GET /v1/models: the models the caller's key may use, in
// OpenAI's list shape.
func (g *Gateway) models(ctx context.Context, c *app.RequestContext) {
	rec := g.beginRecord(ctx, c)
	defer g.finish(rec)
	routes := g.acquireRoutes()
	defer routes.refs.Add(-1)
	key, id, e := modelList.identify(ctx, c, routes)
	if e != nil {
		g.refuseUnread(c, rec, e, openAIErrors)
		return
	}
	rec.Key = key.name
	b := append(make([]byte, 0, 256), `{"object":"list","data":[`...)
	first := true
	for _, m := range routes.order {
		if !key.allows(m.name) || !id.Allows(m.name) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, `{"id":`...)
		b = appendJSONString(b, m.name)
		b = append(b, `,"object":"model","created":`...)
		b = appendInt(b, g.life.started.Unix())
		b = append(b, `,"owned_by":"sluice"}`...)
	}
	b = append(b, "]}\n"...)
	rec.Status = http.StatusOK
	c.Response.Header.Set("X-Request-Id", rec.RequestID)
	c.Response.Header.SetContentType("application/json")
	c.Response.SetBodyRaw(b)
	rec.BytesOut = int64(len(b))
}

// notFound answers every path the gateway does not serve (with a request
// id and a usage line, like every other answer).
func (g *Gateway) notFound(ctx context.Context, c *app.RequestContext) {
	rec := g.beginRecord(ctx, c)
	defer g.finish(rec)
	g.refuseUnread(c, rec, errInvalid(http.StatusNotFound, "unknown_url",
		fmt.Sprintf("Unknown request URL: %s %s.", c.Method(), c.Path())), shapeOf(c.Path()))
}

// methodNotAllowed answers a known path with the wrong method.
func (g *Gateway) methodNotAllowed(ctx context.Context, c *app.RequestContext) {
	rec := g.beginRecord(ctx, c)
	defer g.finish(rec)
	g.refuseUnread(c, rec, errInvalid(http.StatusMethodNotAllowed, "method_not_allowed",
		fmt.Sprintf("Method %s is not allowed on %s.", c.Method(), c.Path())), shapeOf(c.Path()))
}
