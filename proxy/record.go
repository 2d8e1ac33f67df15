package proxy

// A request's usage record from its start to its line (the line's
// format is usage.go's).

import (
	"context"
	"time"

	"github.com/cloudwego/hertz/pkg/app"
)

// maxLoggedField bounds the copy a record keeps of a client-chosen string
// (path, User-Agent, an unknown model's name; "user" is kept only up to
// 256 bytes): no more than the largest budget of a usage line, which clips
// each string after escaping (usage.go) so that a line fits one write(2)
// to a pipe whatever a client sends.
const maxLoggedField = logPathMax

// clip returns s as a string of at most maxLoggedField bytes.
func clip[T ~string | ~[]byte](s T) string {
	return string(s[:min(len(s), maxLoggedField)])
}

// beginRecord starts the usage record of a request; ctx is the
// connection's (its client address is formatted once per connection).
func (g *Gateway) beginRecord(ctx context.Context, c *app.RequestContext) *usageRecord {
	rec := new(usageRecord)
	g.startRecord(ctx, rec, c)
	return rec
}

// startRecord starts the usage record rec (a new one: see beginRecord).
func (g *Gateway) startRecord(ctx context.Context, rec *usageRecord, c *app.RequestContext) {
	*rec = usageRecord{start: time.Now(), requestID: g.records.nextID(), path: clip(c.Path()),
		userAgent: clip(c.Request.Header.UserAgent())}
	rec.tried = rec.triedFirst[:0]
	if conn, _ := ctx.Value(ConnKey{}).(Conn); conn != nil && conn.ClientAddr() != "" {
		rec.clientAddr = conn.ClientAddr()
	} else {
		rec.clientAddr = c.RemoteAddr().String()
	}
}

// finish writes the usage line.
func (g *Gateway) finish(rec *usageRecord) {
	now := time.Now()
	g.records.meter.record(g.routes.current.Load(), rec, now)
	g.records.usage.write(rec, now)
}
