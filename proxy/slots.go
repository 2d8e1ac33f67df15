package proxy

// Backend slots, the pipeline's side: a request takes one on a candidate
// before it is sent (package queue: at once, or after its turn in the
// model's queue across workers), and gives it back when its answer ends.

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/sluice-gw/sluice/proxy/queue"
	"github.com/sluice-gw/sluice/proxy/usage"
	"github.com/sluice-gw/sluice/shm"
)

// Healthy reports whether b may be sent requests at now (queue.Backend).
func (b *backendRoute) Healthy(now time.Time) bool { return b.healthy(now) }

// Acquire takes a slot of b for the worker of column col when it has one
// free and is not saturated (queue.Backend).
func (b *backendRoute) Acquire(col int, regionNow int64) bool {
	_, full := b.load(regionNow)
	return !full && b.cell.Acquire(col, b.slots)
}

// Cell is b's cell in the shared region (queue.Backend).
func (b *backendRoute) Cell() *shm.Cell { return b.cell }

// SiblingQueues are the queue cells of the other models that list b's
// server (queue.Backend).
func (b *backendRoute) SiblingQueues() []*shm.Cell { return b.siblingQueues }

// takeSlot returns a backend from cands whose slot this request of key now
// holds, at once or after its turn in m's queue (queue.Set.Take: the key
// is charged tokens as it asks, refunded if it never gets a slot), and
// records the wait in rec. pinned: cands is the one backend the request
// needs (a stored response's holder). Whoever gets a slot must give it
// back with releaseSlot.
func (g *Gateway) takeSlot(ctx context.Context, m *modelRoute, cands []*backendRoute, rec *usage.Record, pinned bool, key queue.Key, tokens int64) (*backendRoute, *apiError) {
	rec.Priority = key.Priority
	b, wait, err := g.queues.Take(ctx, m.queue, cands, pinned, key, tokens, m.limits.queue)
	if wait.Queued {
		if !rec.Queued {
			rec.QueueBegan = wait.Began
		}
		rec.Queued = true
		rec.QueueWait += wait.Waited
	}
	if err != nil {
		return nil, queueError(m, err)
	}
	if wait.Queued { // a retry that finds a slot at once keeps the hand-off of the wait before
		rec.Handoff = wait.Handoff
	}
	rec.Served = queue.ServedTokens(wait.Start)
	return b, nil
}

// releaseSlot gives back a slot of backend b taken for model m.
func (g *Gateway) releaseSlot(m *modelRoute, b *backendRoute) {
	g.queues.Release(m.queue, b)
}

// queueError is the client's error for a refusal of m's queue.
func queueError(m *modelRoute, err error) *apiError {
	switch err {
	case queue.ErrLeft:
		return errClientClosed
	case queue.ErrTimeout:
		e := errServer(http.StatusServiceUnavailable, "queue_timeout",
			fmt.Sprintf("Every backend of model `%s` stayed busy for the queue timeout of %s. Retry shortly.", m.name, m.limits.queue.Timeout))
		e.retryAfter = "1"
		return e
	case queue.ErrKeyFull:
		return &apiError{status: http.StatusTooManyRequests, errType: "server_error", code: "queue_key_full",
			message: fmt.Sprintf("Every backend of model `%s` is busy and your key already has %d requests waiting, its share of the queue. Retry when one has finished.",
				m.name, m.limits.queue.MaxPerKey),
			retryAfter: "1", source: usage.SourceGateway}
	}
	return &apiError{status: http.StatusTooManyRequests, errType: "server_error", code: "queue_full",
		message:    fmt.Sprintf("Every backend of model `%s` is busy and its queue is full (%d waiting). Retry shortly.", m.name, m.limits.queue.Max),
		retryAfter: "1", source: usage.SourceGateway}
}

// errClientClosed marks a request whose client left while it waited.
var errClientClosed = &apiError{status: statusClientClosed, errType: "invalid_request_error", code: "client_closed", message: "client closed the request"}
