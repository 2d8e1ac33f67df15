package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Part 6 (issue 30, item 2): a key that cuts its streams before their last
// event — where the usage comes — against an honest key, both keeping the
// queue full. Until the gateway billed what a cut stream generated, the
// cutting key paid nothing and won 8.8 slots to the honest key's one.

// cutResult is what the two keys of part 6 were served over the window.
type cutResult struct {
	label              string
	tokens, cutAt      int // each answer's tokens; the cutting key reads this many content events, then closes
	window             time.Duration
	reqs               [2]int   // honest, cutter: requests that started in the window and ended
	billed             [2]int64 // their tokens as the usage lines bill them (prompt + completion)
	gatewayCounted     int      // the cutter's lines with usage_source "gateway"
	honestErr, cutErrs int
}

// cutKeys are part 6's keys: the honest one, then the cutting one.
var cutKeys = [2]string{"honest", "cutter"}

// streamOnce sends one streamed chat completion of key (answers of tokens
// tokens, interval ms apart) and reads it whole, or with cutAt > 0 until
// cutAt content events arrived, then closes the connection.
func (g *gateway) streamOnce(ctx context.Context, tr *http.Transport, key string, tokens, intervalMs, cutAt int) error {
	b, _ := json.Marshal(map[string]any{
		"model": modelName, "stream": true,
		"messages": []map[string]string{{"role": "user", "content": fmt.Sprintf("fair queue bench, key %-6s %s", key, strings.Repeat("x", *cutPrompt))}},
	})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.url+"/v1/chat/completions", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+secret(key))
	req.Header.Set("X-Test-Key", key)
	req.Header.Set("X-Fake-Tokens", strconv.Itoa(tokens))
	req.Header.Set("X-Fake-Interval-Ms", strconv.Itoa(intervalMs))
	res, err := tr.RoundTrip(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		return fmt.Errorf("status %d", res.StatusCode)
	}
	sc := bufio.NewScanner(res.Body)
	content := 0
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "data: ") && strings.Contains(line, `"content":"`) && !strings.Contains(line, `"content":""`) {
			content++
			if cutAt > 0 && content >= cutAt {
				return nil // the deferred Close cuts the stream
			}
		}
	}
	return sc.Err()
}

// cutShare runs loops closed loops of each key of cutKeys for dur after
// warm: the honest key reads its streams whole, the cutter closes each
// after cutAt content events of tokens. It counts, from the usage log,
// what each was billed for the requests that started in the window.
func (g *gateway) cutShare(label string, loops, tokens, cutAt, intervalMs int, warm, dur time.Duration) cutResult {
	r := cutResult{label: label, tokens: tokens, cutAt: cutAt}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var mu sync.Mutex
	tr := &http.Transport{MaxIdleConnsPerHost: 512, DisableCompression: true}
	for i, key := range cutKeys {
		at := 0
		if i == 1 {
			at = cutAt
		}
		for range loops {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					if err := g.streamOnce(ctx, tr, key, tokens, intervalMs, at); err != nil && ctx.Err() == nil {
						mu.Lock()
						if i == 0 {
							r.honestErr++
						} else {
							r.cutErrs++
						}
						mu.Unlock()
						time.Sleep(10 * time.Millisecond)
					}
				}
			}()
		}
	}
	time.Sleep(warm)
	t0 := time.Now()
	time.Sleep(dur)
	t1 := time.Now()
	r.window = t1.Sub(t0)
	cancel()
	wg.Wait()
	g.drain()
	for _, u := range g.usageLines() {
		if u.Time.Before(t0) || !u.Time.Before(t1) {
			continue
		}
		for i, key := range cutKeys {
			if u.Key == key && (u.Status == 200 || u.Status == 499) {
				r.reqs[i]++
				r.billed[i] += u.Prompt + u.Completion
				if i == 1 && u.UsageSource == "gateway" {
					r.gatewayCounted++
				}
			}
		}
	}
	log.Printf("part 6: %s: honest %d requests %d tokens, cutter %d requests %d tokens (%d counted by the gateway); errors %d/%d",
		label, r.reqs[0], r.billed[0], r.reqs[1], r.billed[1], r.gatewayCounted, r.honestErr, r.cutErrs)
	return r
}

// honestShare is the honest key's share of the tokens billed, over an
// even split: 1.0 is fair (equal weights).
func (r cutResult) honestShare() float64 {
	total := r.billed[0] + r.billed[1]
	if total == 0 {
		return 0
	}
	return float64(r.billed[0]) / (float64(total) / 2)
}

// cutReport is part 6's section of the report.
func cutReport(rs []cutResult) string {
	var b strings.Builder
	b.WriteString("### 6. A key that cuts its streams against an honest key\n\n")
	b.WriteString("Both keys keep the queue full with streamed chat completions; the honest key reads each answer whole, the cutter closes its connection after a number of content events, before the usage event. Slots are the requests each was served; tokens are what the usage log bills (prompt + completion: the backend's usage for the honest key, the gateway's count — `usage_source: gateway` — for the cut streams). Fair is an equal share of the tokens.\n\n")
	fmt.Fprintf(&b, "Each prompt is a short line and %d bytes of padding. The fake counts a prompt as its whole body's bytes / 4 (JSON included), the gateway's estimate of a cut stream's prompt is its content's bytes / 4: with short prompts that gap, not the cut, dominates the slots each key gets (a 30-byte prompt: 2.35 slots to the honest key's one at a fair token share of 0.99).\n\n", *cutPrompt)
	b.WriteString("| run | answer / cut at | honest requests | cutter requests | slots cutter:honest | honest tokens | cutter tokens (gateway-counted lines) | honest key's token share (1.0 = fair) |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		fmt.Fprintf(&b, "| %s | %d / %d | %d | %d | %.2f | %d | %d (%d) | %.2f |\n", r.label, r.tokens, r.cutAt, r.reqs[0], r.reqs[1],
			float64(r.reqs[1])/max(float64(r.reqs[0]), 1), r.billed[0], r.billed[1], r.gatewayCounted, r.honestShare())
	}
	b.WriteString("\n")
	return b.String()
}
