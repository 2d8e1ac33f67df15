package tests

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// openStreams opens n held streams at once (each on its own connection,
// so they spread over the workers), checks every one is a 200 SSE stream
// past its first event, and returns them.
func openStreams(t *testing.T, g *gateway, n int, key, hold string) []*http.Response {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	var open []*http.Response
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := openStream(t, g, key, hold, chatBody("m", true, "stream "+strconv.Itoa(i)))
			mu.Lock()
			open = append(open, res)
			mu.Unlock()
		}()
	}
	wg.Wait()
	for _, r := range open {
		if r.StatusCode != 200 {
			t.Fatalf("stream: %s", r.Status)
		}
	}
	return open
}

// awaitStreamsDone reads every stream to its end and fails the test for
// each that did not end with [DONE].
func awaitStreamsDone(t *testing.T, streams []*http.Response) {
	t.Helper()
	for i, r := range streams {
		var buf strings.Builder
		if _, err := copyAll(&buf, r); err != nil || !strings.Contains(buf.String(), "[DONE]") {
			t.Errorf("stream %d did not complete: %v", i, err)
		}
	}
}

// steadyTraffic runs two loops of non-streamed requests for model until
// the returned stop is called (it is also called when the test ends);
// stop returns how many were sent and how many failed. Every failure is
// reported. fresh: a new connection per request.
func steadyTraffic(t *testing.T, g *gateway, model string, fresh bool) (stop func() (sent, failed int64)) {
	return steadyLoops(t, func() func() error {
		client := &http.Client{Transport: &http.Transport{}}
		if fresh {
			client = freshClient()
		}
		return func() error {
			req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/chat/completions", strings.NewReader(string(chatBody(model, false, "steady"))))
			req.Header.Set("Authorization", "Bearer "+keyAll)
			res, err := client.Do(req)
			if err != nil {
				return err
			}
			res.Body.Close()
			if res.StatusCode != 200 {
				return fmt.Errorf("%s", res.Status)
			}
			return nil
		}
	})
}

// sdkTraffic is steadyTraffic through the OpenAI SDK (openai-go) over a
// new connection per request. Like OpenAI's SDKs in other languages it
// retries a request whose connection failed before any answer (2 retries
// by default); retried counts those failures — what a raw client would
// have seen.
func sdkTraffic(t *testing.T, g *gateway, model string, retried *atomic.Int64) (stop func() (sent, failed int64)) {
	return steadyLoops(t, func() func() error {
		hc := freshClient()
		hc.Transport = countingTransport{hc.Transport, retried}
		client := openai.NewClient(option.WithBaseURL(g.URL+"/v1/"), option.WithAPIKey(keyAll), option.WithHTTPClient(hc))
		params := openai.ChatCompletionNewParams{Model: model, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("steady")}}
		return func() error {
			_, err := client.Chat.Completions.New(context.Background(), params)
			return err
		}
	})
}

// countingTransport counts round trips that failed without an answer.
type countingTransport struct {
	next  http.RoundTripper
	count *atomic.Int64
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := c.next.RoundTrip(r)
	if err != nil {
		c.count.Add(1)
	}
	return res, err
}

// steadyLoops runs two loops, each calling the sender newSender made for
// it, until stop.
func steadyLoops(t *testing.T, newSender func() func() error) (stop func() (sent, failed int64)) {
	var sentN, failedN atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			send := newSender()
			for {
				select {
				case <-done:
					return
				default:
				}
				err := send()
				sentN.Add(1)
				if err != nil {
					failedN.Add(1)
					t.Errorf("steady request: %v", err)
				}
			}
		}()
	}
	var once sync.Once
	stop = func() (int64, int64) {
		once.Do(func() { close(done); wg.Wait() })
		return sentN.Load(), failedN.Load()
	}
	t.Cleanup(func() { stop() }) // before anything can end the test
	return stop
}

// awaitExit waits until process pid is gone.
func awaitExit(t *testing.T, what string, pid int) {
	t.Helper()
	await(t, what, func() bool {
		_, err := os.Stat("/proc/" + strconv.Itoa(pid))
		return err != nil
	})
}
