// Command slowclients holds N slow or idle client connections open against
// a gateway, as hostile clients would, for bench/slowclients.sh: it measures
// what they cost normal traffic. Each client reconnects as soon as the
// gateway closes it, so N stay connected (or trying to) all the time.
//
// Three kinds, in turn: idle (connects and sends nothing), slowloris (a
// request head, one byte every -every, never finished), and slow body (a
// whole head with a key and a Content-Length, then the body a byte every
// -every). The first two are what client_header_timeout closes; the last
// is within client_body_timeout for as long as it keeps sending.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "gateway host:port")
	n := flag.Int("n", 1000, "connections")
	every := flag.Duration("every", 5*time.Second, "pause between two bytes of a slow client")
	key := flag.String("key", "sk-bench", "API key of the slow-body clients")
	flag.Parse()

	var connected, reconnects, dialErrors atomic.Int64
	var wg sync.WaitGroup
	for i := range *n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i) * time.Millisecond) // spread the dials over a second
			for {
				c, err := net.Dial("tcp", *addr)
				if err != nil {
					dialErrors.Add(1)
					time.Sleep(100 * time.Millisecond)
					continue
				}
				connected.Add(1)
				hold(c, i%3, *every, *key)
				connected.Add(-1)
				reconnects.Add(1)
				c.Close()
			}
		}()
	}
	for range time.Tick(time.Second) {
		fmt.Fprintf(os.Stderr, "slowclients: connected %d, closed by the gateway %d, dial errors %d\n",
			connected.Load(), reconnects.Load(), dialErrors.Load())
	}
	wg.Wait()
}

// hold plays one slow client of the given kind on c until the gateway
// closes it (a write or read fails).
func hold(c net.Conn, kind int, every time.Duration, key string) {
	var head string
	switch kind {
	case 0: // idle: wait for the close
		c.Read(make([]byte, 1))
		return
	case 1: // slowloris: a head that never ends
		head = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
	case 2: // slow body
		head = fmt.Sprintf("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
			"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"model\":\"bench\",\"x\":\"", key)
		// Past the 8 KiB hertz reads with the head: the handler reads the rest.
		head += strings.Repeat("x", 9000)
	}
	if _, err := c.Write([]byte(head)); err != nil {
		return
	}
	done := make(chan struct{})
	go func() { c.Read(make([]byte, 4096)); close(done) }() // the gateway's answer or close
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		if _, err := c.Write([]byte("a")); err != nil {
			return
		}
	}
}
