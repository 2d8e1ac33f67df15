package proxy

// A key's end users (keys[].end_user; package enduser): after the scan
// (phase 4b) the request's end user is read — from the body's "user" as
// the backend reads it, or from a header — its entry of the shared
// end-user table found, and its requests per minute and places in flight
// admitted there; phase 6 reserves its tokens per minute and quota with
// the key's own; end settles them. An end user the table cannot track is
// held, with every other such end user of the key, to the key's overflow
// end user: one end user's limits for them all.

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/cloudwego/hertz/pkg/app"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/enduser"
	"github.com/sluice-gw/sluice/proxy/admission"
	"github.com/sluice-gw/sluice/proxy/reqscan"
	"github.com/sluice-gw/sluice/quota"
	"github.com/sluice-gw/sluice/shm"
)

// keyEndUsers is a key's end_user block, compiled.
type keyEndUsers struct {
	key      enduser.Key
	header   []byte // the header that names the end user; nil: the body's "user"
	claim    string // or the JWT claim that names it ("": none)
	limits   admission.Limits
	overflow *int64 // the key's count of requests held to its overflow end user
}

// compileEndUsers is k's end users, over its cell.
func compileEndUsers(k config.Key, cell *shm.Cell, seed [16]byte) *keyEndUsers {
	e := k.EndUser
	if e == nil {
		return nil
	}
	lim := enduser.Limits{RequestsPerMinute: e.RequestsPerMinute, TokensPerMinute: e.TokensPerMinute, MaxConcurrent: e.MaxConcurrent}
	if q := e.Quota; q != nil {
		lim.Quota = q.Tokens
		lim.Per, _ = quota.ParsePeriod(q.Per) // validated
	}
	return &keyEndUsers{
		// (Max counts the overflow entry too, as Sweep does.)
		key:      enduser.NewKey(seed, k.Name, cell.Scalar(shm.KeyEndUsersScalar), int64(e.Tracked())+1, lim),
		header:   headerName(e.EndUserHeader()),
		claim:    e.EndUserClaim(),
		limits:   admission.Limits{RequestsPerMinute: e.RequestsPerMinute, TokensPerMinute: e.TokensPerMinute, MaxConcurrent: e.MaxConcurrent},
		overflow: cell.Scalar(shm.KeyEndUserOverflowScalar),
	}
}

// endUserHold is what a request took of its end user's limits, until end:
// held in the request's own state (no allocation of its own).
type endUserHold struct {
	held  bool
	entry enduser.Entry
	adm   admission.Admission
}

// 4b. end user: the request's end user of its key, and that end user's
// requests per minute and places in flight.
func (g *Gateway) limitEndUser(_ context.Context, c *app.RequestContext, x *exchange) *apiError {
	eu := x.req.key.endUsers
	if eu == nil {
		return nil
	}
	id, e := endUserID(c, x, eu)
	if e != nil {
		return e
	}
	x.rec.EndUser, x.rec.HasEndUser = id, true
	clk := enduser.Clock{Cal: x.routes.calendar, Now: x.calendarNow()}
	h := &x.req.endUser
	place := g.endUsers.FindInto(&h.entry, &eu.key, id, g.region.Now(), &clk)
	switch place {
	case enduser.None:
		x.req.adm.Refused()
		return &apiError{status: http.StatusTooManyRequests, errType: "requests", code: "end_user_untracked", retryAfter: "1",
			message: fmt.Sprintf("Key `%s` cannot track another end user right now (the end-user table around this one is full): retry shortly.", eu.key.Name)}
	case enduser.Overflow:
		atomic.AddInt64(eu.overflow, 1)
	}
	if no := h.adm.Admit(admission.NoHeaders{}, admission.Key{Name: eu.key.Name, Cell: &h.entry, Limits: eu.limits.Share(g.fleetSize())}, g.col, g.region); no != nil {
		x.req.adm.Refused()
		return endUserLimited(no, eu, id, place)
	}
	h.held = true
	return nil
}

// endUserID is the request's end user as eu reads it: the header's value,
// or the body's "user" decoded as Python's json module decodes it (the
// id the backend sees); "" for none (the key's anonymous end user). An
// id longer than enduser.MaxID, one Go cannot hold exactly as Python
// reads it, or a header sent twice is refused: each could be one end
// user read as several.
func endUserID(c *app.RequestContext, x *exchange, eu *keyEndUsers) (string, *apiError) {
	var id string
	if eu.claim != "" {
		// The token's claim (none for the key's static token, or a token
		// without it: the anonymous end user).
		v, _, bad := x.req.jwt.Claim(eu.claim)
		if bad {
			return "", errInvalid(http.StatusBadRequest, "invalid_end_user", "The token's claim "+strconv.Quote(eu.claim)+", which names the end user, is neither a string nor a number.")
		}
		id = v
	} else if eu.header != nil {
		n := 0
		c.Request.Header.VisitAll(func(k, v []byte) {
			if bytes.EqualFold(k, eu.header) {
				n++
				id = string(v)
			}
		})
		if n > 1 {
			return "", errInvalid(http.StatusBadRequest, "invalid_end_user", "The "+string(eu.header)+" header, which names the end user, is sent more than once.")
		}
	} else if u := x.req.scan.User; u.Len() >= 2 {
		v, exact := reqscan.DecodeString(string(x.req.payload[u.Start+1 : u.End-1]))
		if !exact {
			return "", errInvalid(http.StatusBadRequest, "invalid_end_user", "`user` holds an escape or bytes the gateway cannot read exactly as the backend does (an unpaired surrogate, or not UTF-8).")
		}
		id = v
	}
	if len(id) > enduser.MaxID {
		return "", errInvalid(http.StatusBadRequest, "invalid_end_user", "The end user id is "+strconv.Itoa(len(id))+" bytes; at most "+strconv.Itoa(enduser.MaxID)+" are accepted.")
	}
	return id, nil
}

// headerName is name as bytes, nil for none.
func headerName(name string) []byte {
	if name == "" {
		return nil
	}
	return []byte(name)
}

// endUserLimited is the 429 of an end user's limit, in OpenAI's shape.
func endUserLimited(no *admission.Refusal, eu *keyEndUsers, id string, place enduser.Place) *apiError {
	who := fmt.Sprintf("end user %s of key `%s`", strconv.Quote(clipID(id, 64)), eu.key.Name)
	if place == enduser.Overflow {
		who = fmt.Sprintf("the end users key `%s` cannot track separately (its end_user.max_tracked reached: they share one end user's limits)", eu.key.Name)
	}
	var msg string
	switch no.Kind {
	case "concurrency":
		msg = fmt.Sprintf("Too many requests in flight for %s: the limit is %d at a time. Retry when one has finished.", who, no.Limit)
	case "requests":
		msg = fmt.Sprintf("Rate limit reached for %s on requests per minute: limit %d. Please try again in %s.", who, no.Limit, admission.WaitText(no.Wait))
	default:
		if no.TooLarge {
			msg = fmt.Sprintf("Request too large for %s: it reserves %d tokens and the limit is %d tokens per minute.", who, no.Want, no.Limit)
		} else {
			msg = fmt.Sprintf("Rate limit reached for %s on tokens per minute: limit %d, requested %d. Please try again in %s.", who, no.Limit, no.Want, admission.WaitText(no.Wait))
		}
	}
	return &apiError{status: http.StatusTooManyRequests, errType: no.Kind, code: "end_user_rate_limit_exceeded", message: msg, retryAfter: no.RetryAfter()}
}

// clipID is an end user id cut to at most n bytes, for a message.
func clipID(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// admitEndUserTokens reserves the request's tokens on its end user's
// tokens per minute and quota (phase 6, after the key's own), or refuses
// it; the key's reservations are the caller's to give back.
func (g *Gateway) admitEndUserTokens(x *exchange, want int64) *apiError {
	h, eu := &x.req.endUser, x.req.key.endUsers
	if !h.held {
		return nil
	}
	if no := h.adm.ReserveTokens(admission.NoHeaders{}, want, g.region); no != nil {
		return endUserLimited(no, eu, x.rec.EndUser, enduser.Tracked)
	}
	cal := x.routes.calendar
	lim := eu.key.Limits
	if n := g.fleetSize(); n > 1 && lim.Quota > 0 {
		lim.Quota = max(lim.Quota/n, 1)
	}
	if no := h.entry.ReserveQuota(want, lim, cal, x.calendarNow()); no != nil {
		h.adm.ReturnTokens()
		wait := max(no.ResetAt.Sub(x.calendarNow()), time.Second)
		return &apiError{status: http.StatusTooManyRequests, errType: "tokens", code: "end_user_quota_exceeded",
			retryAfter: admission.RetryAfterSecs(int64(wait)),
			message: fmt.Sprintf("End user %s of key `%s` has used %d of its %d tokens this %s (end_user.quota); this request reserves %d. The quota resets at %s.",
				strconv.Quote(clipID(x.rec.EndUser, 64)), eu.key.Name, no.Used, no.Max, lim.Per, no.Want, no.ResetAt.UTC().Format(time.RFC3339))}
	}
	return nil
}

// refuseEndUser gives back what the request took of its end user's
// limits when a later limit refuses it (phase 6): it counts against none.
func (x *exchange) refuseEndUser() {
	if h := &x.req.endUser; h.held {
		h.adm.Refused()
		h.entry.ReturnQuota()
	}
}

// returnEndUserTokens gives back the end user's token and quota
// reservations unused (a refusal after them, a fallback that reserves
// its own).
func (x *exchange) returnEndUserTokens() {
	if h := &x.req.endUser; h.held {
		h.adm.ReturnTokens()
		h.entry.ReturnQuota()
	}
}

// releaseEndUser settles what the request took of its end user's limits
// with what it used (tokens: its billable total, when reported).
func (x *exchange) releaseEndUser(used int64, reported bool) {
	h := &x.req.endUser
	if !h.held {
		return
	}
	h.adm.Release(used, reported)
	if !reported || x.req.key.endUsers.key.Limits.Quota <= 0 {
		used = 0 // nothing generated (no answer), as the key's quota settles; or no quota to count it
	}
	h.entry.SettleQuota(used)
	h.held = false
}
