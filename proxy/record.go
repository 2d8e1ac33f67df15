package proxy

// A request's usage record from its start to its line (the line's
// format is usage.go's).

import (
	"context"
	"time"

	"github.com/cloudwego/hertz/pkg/app"
	"github.com/sluice-gw/sluice/proxy/usage"
)

// maxLoggedField bounds the copy a record keeps of a client-chosen string
// (path, User-Agent, an unknown model's name; "user" is kept only up to
// 256 bytes): no more than the largest budget of a usage line, which clips
// each string after escaping (usage.go) so that a line fits one write(2)
// to a pipe whatever a client sends.
const maxLoggedField = usage.PathMax

// clip returns s as a string of at most maxLoggedField bytes.
func clip[T ~string | ~[]byte](s T) string {
	return string(s[:min(len(s), maxLoggedField)])
}

// beginRecord starts the usage record of a request; ctx is the
// connection's (its client address is formatted once per connection).
func (g *Gateway) beginRecord(ctx context.Context, c *app.RequestContext) *usage.Record {
	rec := new(usage.Record)
	g.startRecord(ctx, rec, c)
	return rec
}

// startRecord starts the usage record rec (a new one: see beginRecord).
func (g *Gateway) startRecord(ctx context.Context, rec *usage.Record, c *app.RequestContext) {
	*rec = usage.Record{Start: time.Now(), RequestID: g.records.nextID(), Path: clip(c.Path()),
		UserAgent: clip(c.Request.Header.UserAgent())}
	rec.Tried = rec.TriedFirst[:0]
	conn, _ := ctx.Value(ConnKey{}).(Conn)
	if conn != nil && conn.ClientAddr() != "" {
		rec.ClientAddr = conn.ClientAddr()
	} else {
		rec.ClientAddr = c.RemoteAddr().String()
	}
	if conn != nil {
		rec.TLSVersion, rec.TLSResumed = conn.TLS()
	}
}

// finish writes the usage line.
func (g *Gateway) finish(rec *usage.Record) {
	now := time.Now()
	g.records.meter.record(g.routes.current.Load(), rec, now)
	g.records.usage.Write(rec, now)
}
