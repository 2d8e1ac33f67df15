package tests

import (
	"net/http"
	"strconv"
	"syscall"
	"testing"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// meterLabel is the label set a usage line's request is counted under in
// sluice_requests_total: its model (configured, else "unknown"), its key
// (else "none") and its outcome (the error code; a backend's status of 400
// or more relayed as "upstream_N"; else "ok").
func meterLabel(l map[string]any) [3]string {
	model, _ := l["model"].(string)
	if model != "m" && model != "m-alias" {
		model = "unknown"
	}
	key, _ := l["key"].(string)
	if key == "" {
		key = "none"
	}
	code, _ := l["error"].(string)
	if status := int(l["status"].(float64)); code == "" && status >= 400 {
		code = "upstream_" + strconv.Itoa(status)
	} else if code == "" {
		code = "ok"
	}
	return [3]string{model, key, code}
}

// The request and token counters and the histograms are exact across
// workers — what /metrics says is what the usage lines say, request for
// request — and a killed worker's counts are neither lost nor counted
// twice.
func TestRequestMetrics(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 5})
	usage := t.TempDir() + "/usage.log"
	g := startGateway(t, baseConfig(be.URL(), usage, ""))
	g.UsageLog = usage

	var sent int
	send := func(key, model string, stream bool, hdr map[string]string) {
		t.Helper()
		post(t, freshClient(), g.URL+"/v1/chat/completions", key, chatBody(model, stream, "count me "+strconv.Itoa(sent)), hdr)
		sent++
	}
	traffic := func() {
		for i := range 12 {
			send(keyAll, "m", i%2 == 0, nil) // ok, streamed and not
		}
		send(keyLimited, "m", false, nil)
		send(keyAll, "m-alias", true, nil)
		send(keyAll, "no-such-model", false, nil)                               // 404
		send("sk-wrong", "m", false, nil)                                       // 401
		send(keyLimited, "m-alias", false, nil)                                 // 403: limited may not use it
		send(keyAll, "m", false, map[string]string{"X-Fake-Fail": "reset"})     // the one backend fails: 502
		send(keyAll, "m", false, map[string]string{"X-Fake-Break-After": "10"}) // broken mid-answer
	}
	traffic()
	await(t, "every usage line", func() bool { return len(g.usageLines()) == sent })

	// check compares every series with the usage lines.
	check := func() {
		t.Helper()
		want := map[[3]string]float64{}
		tokens := map[[3]string]float64{}
		streams, attempts := 0.0, 0.0
		durations := map[string]float64{}
		for _, l := range g.usageLines() {
			lbl := meterLabel(l)
			want[lbl]++
			durations[lbl[0]]++
			attempts += l["attempts"].(float64)
			if l["usage_source"] != nil { // the backend's figures, or the gateway's count of a cut stream
				for _, kind := range []string{"prompt", "completion", "cached"} {
					v, _ := l[kind+"_tokens"].(float64)
					tokens[[3]string{lbl[0], lbl[1], kind}] += v
				}
			}
			if l["stream"] == true && l["status"].(float64) == 200 && l["error"] == "" {
				streams++
			}
		}
		for lbl, n := range want {
			got, _ := g.metric("sluice_requests_total", map[string]string{"model": lbl[0], "key": lbl[1], "code": lbl[2]})
			if got != n {
				t.Errorf("sluice_requests_total%v = %v, want %v (from the usage lines)", lbl, got, n)
			}
		}
		for lbl, n := range tokens {
			got, _ := g.metric("sluice_tokens_total", map[string]string{"model": lbl[0], "key": lbl[1], "kind": lbl[2]})
			if got != n {
				t.Errorf("sluice_tokens_total%v = %v, want %v", lbl, got, n)
			}
		}
		for model, n := range durations {
			if got := g.histogramCount("sluice_request_duration_seconds", map[string]string{"model": model}); got != n {
				t.Errorf("sluice_request_duration_seconds{model=%s} count %v, want %v", model, got, n)
			}
		}
		ttft := g.histogramCount("sluice_time_to_first_token_seconds", map[string]string{"model": "m"}) +
			g.histogramCount("sluice_time_to_first_token_seconds", map[string]string{"model": "m-alias"})
		if ttft != streams {
			t.Errorf("time to first token observed %v times, want %v (the streams that answered)", ttft, streams)
		}
		var gotAttempts float64
		for _, model := range []string{"m", "m-alias"} {
			v, _ := g.metric("sluice_backend_attempts_total", map[string]string{"model": model, "backend": be.URL()})
			gotAttempts += v
		}
		if gotAttempts != attempts {
			t.Errorf("sluice_backend_attempts_total = %v, want %v (the usage lines' attempts)", gotAttempts, attempts)
		}
	}
	check()
	if v, _ := g.metric("sluice_backend_failures_total", map[string]string{"model": "m", "kind": "connect"}); v < 1 {
		t.Errorf("sluice_backend_failures_total{kind=connect} = %v after a reset", v)
	}
	if v, _ := g.metric("sluice_backend_ejections_total", map[string]string{"model": "m"}); v < 1 {
		t.Errorf("sluice_backend_ejections_total = %v after a reset", v)
	}
	if v, _ := g.metric("sluice_requests_total", map[string]string{"model": "unknown", "code": "model_not_found"}); v != 1 {
		t.Errorf("the unknown model's request counted %v times under model=unknown", v)
	}

	// A worker dies: its counts stay, its replacement adds to them.
	pids := g.workerPIDs()
	if len(pids) != 2 {
		t.Fatalf("workers %v", pids)
	}
	syscall.Kill(pids[0], syscall.SIGKILL)
	g.awaitReady()
	await(t, "the backend back in rotation", func() bool {
		res, _ := post(t, freshClient(), g.URL+"/v1/chat/completions", keyAll, chatBody("m", false, "probe"), nil)
		sent++
		return res.StatusCode == http.StatusOK
	})
	traffic()
	await(t, "every usage line after the restart", func() bool { return len(g.usageLines()) == sent })
	check()
}
