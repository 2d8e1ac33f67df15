package tests

import (
	"fmt"
	"testing"
)

// One key cannot fill a model's queue for everyone (issue 30, item 3):
// with 2 slots busy and its requests filling its share of the queue
// (queue.max_per_key, half of queue.max by default), a key is refused
// queue_key_full while another key's request still queues and is served.
// Before, the flooding key took all 30 places and the other key's first
// request was a 429 queue_full.
func TestOneKeyCannotFillTheQueue(t *testing.T) {
	g, be := startSlotsGateway(t, 2, "{max: 30, timeout: 120s}")
	served := []<-chan outcome{}
	for i := range 2 {
		c, _ := launchAs(g, keyAll, "m", "flood", fmt.Sprintf("served-%d", i))
		served = append(served, c)
	}
	await(t, "both slots taken", func() bool { return be.Running() == 2 })
	// The flooding key queues until it is refused: at its share, 15.
	var queued []<-chan outcome
	for i := 0; ; i++ {
		if i > 30 {
			t.Fatal("31 requests of one key queued: the queue has 30 places")
		}
		c, _ := launchAs(g, keyAll, "m", "flood", fmt.Sprintf("queued-%d", i))
		var o outcome
		await(t, "the request to queue or be refused", func() bool {
			select {
			case o = <-c:
				return true
			default:
			}
			v, _ := g.metric("sluice_queue_depth", map[string]string{"model": "m"})
			return int(v) == len(queued)+1
		})
		if o.status == 0 && o.err == nil {
			queued = append(queued, c)
			continue
		}
		if o.status != 429 || o.code != "queue_key_full" {
			t.Fatalf("the flooding key's request %d: %d %q %v, want 429 queue_key_full", i, o.status, o.code, o.err)
		}
		break
	}
	if len(queued) != 15 {
		t.Fatalf("the flooding key queued %d requests, want its share of 30 places: 15", len(queued))
	}
	// Another key still gets a place, and is served.
	other, _ := launchAs(g, keyLimited, "m", "flood", "other")
	await(t, "the other key's request to queue", func() bool {
		select {
		case o := <-other:
			t.Fatalf("the other key's request, with 15 of 30 places free: %d %q %v", o.status, o.code, o.err)
		default:
		}
		v, _ := g.metric("sluice_queue_depth", map[string]string{"model": "m"})
		return int(v) == 16
	})
	be.Release("flood")
	expect(t, "", append(append(served, queued...), other)...)
}
