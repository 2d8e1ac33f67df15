// Command fakevllm runs the fake vLLM of tests/fakevllm as a process, for
// the benchmark rig: instant JSON answers, SSE streams at a fixed pace with
// a final usage event, and an optional fixed delay.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

func main() {
	addr := flag.String("listen", "127.0.0.1:8000", "address to serve on")
	tokens := flag.Int("tokens", 16, "tokens per answer (a request's max_tokens or X-Fake-Tokens overrides)")
	interval := flag.Duration("interval", 0, "pause between stream events")
	delay := flag.Duration("delay", 0, "pause before the response headers")
	flag.Parse()
	s, err := fakevllm.Start(*addr, fakevllm.Options{Tokens: *tokens, Interval: *interval, StartDelay: *delay, NoRecord: true,
		// Nothing kept per Responses answer (vLLM without its store): a
		// run sends hundreds of thousands.
		ResponsesNoStore: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("fakevllm listening on", s.URL())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	s.Close()
}
