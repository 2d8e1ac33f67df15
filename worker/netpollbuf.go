package worker

import (
	"time"

	"github.com/cloudwego/netpoll"
)

// netpoll gives every connection an 8 KiB input buffer, and a connection
// keeps its last buffer node for as long as it is open: for an open stream,
// whose backend connection carries a ~330-byte event now and then, that was
// a sixth of its memory. 4 KiB holds a burst of events and a typical request
// head; a larger body is still read in growing steps (netpoll doubles its
// read size while reads fill it). 2 KiB saved 2 KiB more per stream but
// cost the 100 KB streamed request ~7% (more reads per answer).
//
// Connection tasks run on goroutines kept waiting for the next one (see
// taskRunner): a new goroutine per connection cost half the accept path.
func init() {
	if err := netpoll.Configure(netpoll.Config{BufferSize: 4 << 10, Runner: connTasks.run}); err != nil {
		panic(err)
	}
}

// connTasks runs netpoll's connection tasks; 64 goroutines waiting for
// a second are far more than a worker on one core switches between.
var connTasks = newTaskRunner(64, time.Second)
