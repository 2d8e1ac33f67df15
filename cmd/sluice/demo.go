package main

import (
	"context"
	_ "embed"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/supervisor"
	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// demoConfig is the built-in configuration of `sluice demo`. The key is
// sk-demo; BACKEND_URL is replaced by the mock upstream's address.
//
//go:embed demo.yaml
var demoConfig string

// demoWords is what the mock upstream "generates".
var demoWords = strings.Fields(`Hello from sluice! This answer comes from the built-in MOCK upstream,
not a model: it streams one word at a time, at about 30 tokens a second, the way vLLM streams
tokens. Point a config at your vLLM servers and run sluice serve -c FILE to do it for real.`)

// demo runs the gateway on demoConfig in front of an in-process mock upstream.
func demo(args []string) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:8080", "gateway address")
	admin := fs.String("admin", "127.0.0.1:9090", "admin address")
	if err := fs.Parse(args); err != nil {
		return err
	}
	mock, err := fakevllm.Start("127.0.0.1:0", fakevllm.Options{
		Tokens: len(demoWords), Interval: 33 * time.Millisecond, Words: demoWords,
	})
	if err != nil {
		return fmt.Errorf("start mock upstream: %w", err)
	}
	defer mock.Close()

	data := strings.NewReplacer("BACKEND_URL", mock.URL(), "LISTEN_ADDR", *listen, "ADMIN_ADDR", *admin).Replace(demoConfig)
	cfg, err := config.Parse("demo.yaml (built in)", []byte(data))
	if err != nil {
		return err
	}
	fmt.Printf(`
sluice demo: gateway on http://%s, in front of a MOCK upstream at %s (not a model).
Try a streamed chat completion with the demo key:

  curl -N http://%s/v1/chat/completions \
    -H 'Authorization: Bearer sk-demo' -H 'Content-Type: application/json' \
    -d '{"model":"demo","stream":true,"messages":[{"role":"user","content":"Hello"}]}'

Ctrl-C stops it.

`, *listen, mock.URL(), *listen)
	return supervisor.Run(context.Background(), supervisor.Options{
		ConfigName: "demo.yaml (built in)", ConfigData: []byte(data), Config: cfg, Log: newLogger("proc", "supervisor"),
	})
}
