package proxy

// A key's quotas and budget (keys[].quotas, keys[].budget; package
// quota): phase 6 reserves the request's worst case on each — its token
// reservation, and that many tokens at its model's prices — and end
// settles what it used. Exact across workers, over the key's quota and
// budget cells; divided by the fleet's live replicas, as the key's other
// limits are.

import (
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/cloudwego/hertz/pkg/app"

	"github.com/sluice-gw/sluice/proxy/admission"
	"github.com/sluice-gw/sluice/proxy/sse"
	"github.com/sluice-gw/sluice/proxy/usage"
	"github.com/sluice-gw/sluice/quota"
	"github.com/sluice-gw/sluice/shm"
)

// keyQuotas are a key's quotas and budget, compiled; nil cells: none.
type keyQuotas struct {
	tokens      *shm.Cell
	tokenLimits []quota.Limit
	spend       *shm.Cell
	spendLimit  []quota.Limit // one, in pico-USD

	// tokensJ and spendJ are the cells as the spend journal writes them.
	tokensJ, spendJ quota.Journaled
	// tokensFleet and spendFleet hold what the other replicas spent
	// (fleet.spend_exchange; nil without).
	tokensFleet, spendFleet *shm.Cell
}

// quotaHold is what a request reserved on its key's quotas, until end.
type quotaHold struct {
	tokens, pico int64
}

// admitQuotas reserves the request's worst case — want tokens, and want
// less its prompt's estimate of output at the model's prices — on the
// key's quotas and budget (the fleet's share of each), or refuses it with
// 429 quota_exceeded or budget_exceeded until the period's end.
func (g *Gateway) admitQuotas(c *app.RequestContext, x *exchange, want, prompt int64) *apiError {
	q := &x.req.key.quotas
	if q.tokens == nil && q.spend == nil {
		return nil
	}
	cal := x.routes.calendar
	n := g.fleetSize()
	if q.tokens != nil {
		limits, fleet := fleetShare(q.tokenLimits, q.tokensFleet, n)
		if no := quota.ReserveAt(q.tokens, fleet, g.col, want, limits, cal, x.calendarNow()); no != nil {
			return quotaRefusal(c, x, no, "quota_exceeded", fmt.Sprintf(
				"Key `%s` has used %d of its %d tokens this %s (quotas.%s); this request reserves %d. The quota resets at %s.",
				x.req.key.name, no.Used, no.Limit.Max, no.Limit.P, no.Limit.P, no.Want, no.ResetAt.UTC().Format(time.RFC3339)))
		}
		x.quota.tokens = want
	}
	if price := x.req.model.limits.price; q.spend != nil && price != nil {
		pico := price.Of(sse.Usage{Prompt: prompt, Completion: max(want-prompt, 0)})
		limits, fleet := fleetShare(q.spendLimit, q.spendFleet, n)
		if no := quota.ReserveAt(q.spend, fleet, g.col, pico, limits, cal, x.calendarNow()); no != nil {
			g.releaseQuotas(x, false)
			return quotaRefusal(c, x, no, "budget_exceeded", fmt.Sprintf(
				"Key `%s` has spent %s of its %s USD budget this %s; this request may cost up to %s. The budget resets at %s.",
				x.req.key.name, usd(no.Used), usd(no.Limit.Max), no.Limit.P, usd(no.Want), no.ResetAt.UTC().Format(time.RFC3339)))
		}
		x.quota.pico = pico
	}
	return nil
}

// releaseQuotas settles what the request reserved on its key's quotas:
// with what it used (settled), or nothing (a refusal, or a model that
// will not serve it).
func (g *Gateway) releaseQuotas(x *exchange, settled bool) {
	q, h := &x.req.key.quotas, &x.quota
	var tokens, pico int64
	if settled && x.rec.Usage.Found {
		tokens = usage.Billable(x.rec.Usage).Total
		if x.rec.Priced {
			pico = x.rec.CostPico
		}
	}
	var wrote quota.Journaled
	var spent quota.Journaled
	if q.tokens != nil && (h.tokens > 0 || tokens > 0) {
		quota.Settle(q.tokens, g.col, h.tokens, tokens)
		if tokens > 0 {
			wrote = q.tokensJ
		}
	}
	if q.spend != nil && (h.pico > 0 || pico > 0) {
		quota.Settle(q.spend, g.col, h.pico, pico)
		if pico > 0 {
			spent = q.spendJ
		}
	}
	if wrote.Cell != nil || spent.Cell != nil {
		g.journal.Record(wrote, spent) // after the settles: a crash before it loses only this request's, as its usage line
	}
	*h = quotaHold{}
}

// calendarNow is the request's moment on its quotas' calendar, read
// once for all of them (reading the clock and the zone is not free).
func (x *exchange) calendarNow() time.Time {
	if x.req.calNow.IsZero() {
		x.req.calNow = x.routes.calendar.Now()
	}
	return x.req.calNow
}

// fleetSize is the number of live replicas of the gateway (1 without
// fleet.nomad_service).
func (g *Gateway) fleetSize() int64 {
	if g.marks.fleet == nil {
		return 1
	}
	return max(atomic.LoadInt64(g.marks.fleet.Scalar(0)), 1)
}

// fleetShare is how a quota holds across n replicas: whole, counting the
// other replicas' spend (fleet), while the last exchange's figures hold;
// divided by n otherwise — no exchange configured, or none lately (the
// store unreachable), when the others' spend since is unknown.
func fleetShare(limits []quota.Limit, fleet *shm.Cell, n int64) ([]quota.Limit, *shm.Cell) {
	if fleet != nil && quota.Fresh(fleet, time.Now().UnixNano()) {
		return limits, fleet
	}
	return share(limits, n), nil
}

// share is each limit divided by n replicas, at least 1.
func share(limits []quota.Limit, n int64) []quota.Limit {
	if n <= 1 {
		return limits
	}
	out := make([]quota.Limit, len(limits))
	for i, l := range limits {
		out[i] = quota.Limit{P: l.P, Max: max(l.Max/n, 1)}
	}
	return out
}

// headerResetQuota says when a quota or budget refused a request resets.
const headerResetQuota = "X-Ratelimit-Reset-Quota"

// quotaRefusal is the 429 of a quota or budget, in OpenAI's shape, with
// Retry-After and x-ratelimit-reset-quota at the period's end. The
// request's other limits are given back: it counts against none.
func quotaRefusal(c *app.RequestContext, x *exchange, no *quota.Refusal, code, msg string) *apiError {
	x.req.adm.Refused()
	wait := max(no.ResetAt.Sub(x.calendarNow()), time.Second)
	c.Response.Header.Set(headerResetQuota, wait.Round(time.Second).String())
	return &apiError{status: http.StatusTooManyRequests, errType: "tokens", code: code, message: msg,
		retryAfter: admission.RetryAfterSecs(int64(wait))}
}

// usd writes pico-USD as dollars to the cent's hundredth.
func usd(pico int64) string { return strconv.FormatFloat(float64(pico)/1e12, 'f', 4, 64) }
