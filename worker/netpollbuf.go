package worker

import "github.com/cloudwego/netpoll"

// netpoll gives every connection an 8 KiB input buffer, and a connection
// keeps its last buffer node for as long as it is open: for an open stream,
// whose backend connection carries a ~330-byte event now and then, that was
// a sixth of its memory. 4 KiB holds a burst of events and a typical request
// head; a larger body is still read in growing steps (netpoll doubles its
// read size while reads fill it). 2 KiB saved 2 KiB more per stream but
// cost the 100 KB streamed request ~7% (more reads per answer).
func init() {
	if err := netpoll.Configure(netpoll.Config{BufferSize: 4 << 10}); err != nil {
		panic(err)
	}
}
