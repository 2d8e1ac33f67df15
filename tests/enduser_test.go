package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/sluice-gw/sluice/enduser"
	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// endUserConfig is a gateway of two workers whose key "all" limits each
// end user (the body's "user") to 2 requests a minute, tracking at most 16
// of them, and whose key "limited" limits each end user its X-End-User
// header names to a daily quota.
func endUserConfig(be *fakevllm.Server, usage string) string {
	cfg := baseConfig(be.URL(), usage, "end_user_table: 128")
	cfg = strings.Replace(cfg, "    models: [\"*\"]\n",
		"    models: [\"*\"]\n    end_user: {requests_per_minute: 2, max_tracked: 16}\n", 1)
	return strings.Replace(cfg, "    models: [\"m\"]\n",
		"    models: [\"m\"]\n    end_user: {from: \"header:X-End-User\", quota: {tokens: 200, per: day}, max_tracked: 16}\n", 1)
}

// Each end user of a key is held to the key's end_user limits, exact
// across two workers, read as the backend reads "user" (an escaped id is
// the same end user); a flood of 300 distinct ids is admitted no more than
// the key's 16 tracked end users and its overflow end user allow, takes no
// tracked end user's state and no other key's end users' room; a header
// end user is held to its quota; the usage line names the end user; the
// official SDK sees OpenAI's error.
func TestEndUserLimits(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 2})
	usage := filepath.Join(t.TempDir(), "usage.log")
	g := startGateway(t, endUserConfig(be, usage))
	g.UsageLog = usage
	chat := func(user string) []byte {
		if user == "" {
			return []byte(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`)
		}
		return []byte(`{"model":"m","max_tokens":5,"user":` + user + `,"messages":[{"role":"user","content":"hi"}]}`)
	}
	ask := func(body []byte, key string, hdr map[string]string) (*http.Response, []byte) {
		t.Helper()
		return post(t, freshClient(), g.URL+"/v1/chat/completions", key, body, hdr)
	}

	// alice: two a minute, on fresh connections (both workers); bob and
	// the anonymous end user have their own.
	for i := range 2 {
		if res, out := ask(chat(`"alice"`), keyAll, nil); res.StatusCode != 200 {
			t.Fatalf("alice's request %d: %d %s", i+1, res.StatusCode, out)
		}
	}
	res, out := ask(chat(`"\u0061lice"`), keyAll, nil) // the same end user, escaped
	if _, code, _ := openError(t, out); res.StatusCode != 429 || code != "end_user_rate_limit_exceeded" || res.Header.Get("Retry-After") == "" {
		t.Fatalf("alice's third request, escaped: %d %s (Retry-After %q)", res.StatusCode, out, res.Header.Get("Retry-After"))
	}
	if !strings.Contains(string(out), `end user \"alice\" of key`) {
		t.Errorf("the refusal does not name the end user: %s", out)
	}
	// A duplicated "user": read as Python reads it (the last), or refused:
	// never a way past alice's limit.
	if res, out := ask([]byte(`{"model":"m","user":"someone","user":"alice","messages":[{"role":"user","content":"hi"}]}`), keyAll, nil); res.StatusCode == 200 {
		t.Fatalf("a duplicated user key passed alice's limit: %s", out)
	}
	// Ids read differently by Go and Python (an unpaired surrogate), and
	// ids past the bound, are refused rather than guessed at.
	for _, u := range []string{`"\ud800alice"`, `"` + strings.Repeat("u", 1025) + `"`} {
		res, out := ask(chat(u), keyAll, nil)
		if _, code, _ := openError(t, out); res.StatusCode != 400 || code != "invalid_end_user" {
			t.Fatalf("end user %.20s…: %d %s", u, res.StatusCode, out)
		}
	}
	if res, out := ask(chat(`"`+strings.Repeat("u", 1024)+`"`), keyAll, nil); res.StatusCode != 200 {
		t.Fatalf("an end user id of 1,024 bytes: %d %s", res.StatusCode, out)
	}
	for _, u := range []string{`"bob"`, ""} {
		res, out := ask(chat(u), keyAll, nil)
		if res.StatusCode != 200 {
			t.Fatalf("end user %s: %d %s", u, res.StatusCode, out)
		}
		want := strings.Trim(u, `"`)
		if line := g.usageLineFor(t, res.Header.Get("X-Request-Id")); line["end_user"] != want {
			t.Errorf("usage line end_user %v, want %q", line["end_user"], want)
		}
	}
	// The key's own x-ratelimit headers are untouched by its end users'
	// (it has no limits of its own: none are sent).
	if res, _ := ask(chat(`"carol"`), keyAll, nil); res.Header.Get("X-Ratelimit-Limit-Requests") != "" {
		t.Errorf("an end user's limit spoke for the key: X-Ratelimit-Limit-Requests %q", res.Header.Get("X-Ratelimit-Limit-Requests"))
	}

	// The official SDK sets user; it reads the refusal as OpenAI's.
	client := openai.NewClient(option.WithBaseURL(g.URL+"/v1/"), option.WithAPIKey(keyAll), option.WithMaxRetries(0))
	params := openai.ChatCompletionNewParams{Model: "m", User: openai.String("sdk-user"),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}
	for i := range 2 {
		if _, err := client.Chat.Completions.New(context.Background(), params); err != nil {
			t.Fatalf("SDK request %d: %v", i+1, err)
		}
	}
	_, err := client.Chat.Completions.New(context.Background(), params)
	var apiErr *openai.Error
	if !asError(err, &apiErr) || apiErr.StatusCode != 429 || apiErr.Code != "end_user_rate_limit_exceeded" {
		raw, _ := json.Marshal(apiErr)
		t.Fatalf("the SDK's third request: %v %s", err, raw)
	}

	// 300 distinct end users at once: at most the 16 tracked (6 are taken
	// already) once each, and the overflow end user twice, are served.
	// A sweep in the middle could let claims past it only if it lost
	// them from the count: it adds what it counted less what it began
	// with, never overwrites.
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for i := range 300 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, _ := ask(chat(fmt.Sprintf(`"flood-%d"`, i)), keyAll, nil)
			mu.Lock()
			codes[res.StatusCode]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	// (The key's count takes in its overflow end user once the supervisor
	// has counted it: until then one more end user may be tracked.)
	if max := 16 + 1 - 6 + 2; codes[200] > max || codes[200]+codes[429] != 300 {
		t.Fatalf("a flood of 300 end users: %v; at most %d served", codes, max)
	}
	if res, out := ask(chat(`"alice"`), keyAll, nil); res.StatusCode != 429 {
		t.Fatalf("alice after the flood: %d %s: her state was lost", res.StatusCode, out)
	}
	if v, _ := g.metric("sluice_end_user_overflow_total", map[string]string{"key": "all"}); v < 1 {
		t.Errorf("sluice_end_user_overflow_total{key=all} %v", v)
	}
	await(t, "the sweep's count of tracked end users", func() bool {
		v, ok := g.metric("sluice_end_users_tracked", map[string]string{"key": "all"})
		return ok && v >= 4 && v <= 16+1+1 // the overflow end user counted, and one more between counts
	})

	// The other key's end users have room, and their own quota: 200
	// tokens a day, each request reserving 5 and the prompt's estimate.
	hdr := func(u string) map[string]string { return map[string]string{"X-End-User": u} }
	served := 0
	for ; served < 100; served++ {
		res, out := ask(chat(""), keyLimited, hdr("dave"))
		if res.StatusCode == 429 {
			if _, code, _ := openError(t, out); code != "end_user_quota_exceeded" {
				t.Fatalf("dave refused: %s", out)
			}
			break
		}
		if res.StatusCode != 200 {
			t.Fatalf("dave: %d %s", res.StatusCode, out)
		}
		if served == 0 {
			if line := g.usageLineFor(t, res.Header.Get("X-Request-Id")); line["end_user"] != "dave" {
				t.Errorf("usage line end_user %v, want dave", line["end_user"])
			}
		}
	}
	if served == 0 || served == 100 {
		t.Fatalf("dave served %d before his quota refused one", served)
	}
	if res, out := ask(chat(""), keyLimited, hdr("erin")); res.StatusCode != 200 {
		t.Fatalf("erin, after dave's quota: %d %s", res.StatusCode, out)
	}
	// The header sent twice names two end users: refused.
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/chat/completions", strings.NewReader(string(chat(""))))
	req.Header.Set("Authorization", "Bearer "+keyLimited)
	req.Header.Add("X-End-User", "dave")
	req.Header.Add("X-End-User", "frank")
	twice, err := freshClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	twice.Body.Close()
	if twice.StatusCode != 400 {
		t.Fatalf("X-End-User twice: %d", twice.StatusCode)
	}

}

// An end user's places in flight are counted across workers, and those
// of a worker killed holding them are forgotten (the supervisor starts a
// new epoch of the table) rather than kept taken for good.
func TestEndUserPlacesOfAKilledWorker(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 2})
	cfg := strings.Replace(baseConfig(be.URL(), "off", ""), "    models: [\"*\"]\n",
		"    models: [\"*\"]\n    end_user: {max_concurrent: 1}\n", 1)
	g := startGateway(t, cfg)
	body := []byte(`{"model":"m","stream":true,"user":"held","messages":[{"role":"user","content":"hi"}]}`)
	if s := openStream(t, g, keyAll, "enduser-held", body); s.StatusCode != 200 {
		t.Fatalf("the held stream: %d", s.StatusCode)
	}
	one := []byte(`{"model":"m","user":"held","messages":[{"role":"user","content":"hi"}]}`)
	for range 4 { // fresh connections: either worker
		res, out := post(t, freshClient(), g.URL+"/v1/chat/completions", keyAll, one, nil)
		if _, code, _ := openError(t, out); res.StatusCode != 429 || code != "end_user_rate_limit_exceeded" {
			t.Fatalf("a second request while one is in flight: %d %s", res.StatusCode, out)
		}
	}
	pids := g.workerPIDs()
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	be.Release("enduser-held") // the backend ends the stream nobody reads now
	await(t, "new workers serving the end user", func() bool {
		req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/chat/completions", strings.NewReader(string(one)))
		req.Header.Set("Authorization", "Bearer "+keyAll)
		res, err := freshClient().Do(req)
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == 200
	})
	if now := g.workerPIDs(); len(now) != len(pids) || now[0] == pids[0] {
		t.Fatalf("workers %v after killing %v", now, pids)
	}
}

// End users' quotas survive restarts (state_dir): dave spends his daily
// quota, and after a clean stop, and after a kill -9 of every process
// once a checkpoint holds his use, the restarted gateway still refuses
// him while erin is served. With the end users' state file set aside the
// same restart serves dave (the test can fail); put back, it refuses him
// again.
func TestEndUserQuotaSurvivesRestarts(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 2})
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	usage := filepath.Join(dir, "usage.log")
	cfg := strings.Replace(endUserConfig(be, usage), "usage_log:", "state_dir: "+state+"\nusage_log:", 1)
	start := func() *gateway {
		g := startGateway(t, cfg)
		g.UsageLog = usage
		return g
	}
	ask := func(g *gateway, user string) (int, string) {
		t.Helper()
		res, out := post(t, freshClient(), g.URL+"/v1/chat/completions", keyLimited,
			[]byte(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`), map[string]string{"X-End-User": user})
		if res.StatusCode == 200 {
			return 200, ""
		}
		_, code, _ := openError(t, out)
		return res.StatusCode, code
	}
	refused := func(g *gateway, when string) {
		t.Helper()
		if status, code := ask(g, "dave"); status != 429 || code != "end_user_quota_exceeded" {
			t.Fatalf("%s: dave's request %d %s, want 429 end_user_quota_exceeded", when, status, code)
		}
		if status, _ := ask(g, "erin"); status != 200 {
			t.Fatalf("%s: erin's request %d", when, status)
		}
	}

	g := start()
	served := 0
	for ; served < 100; served++ {
		status, code := ask(g, "dave")
		if status == 429 && code == "end_user_quota_exceeded" {
			break
		}
		if status != 200 {
			t.Fatalf("dave: %d %s", status, code)
		}
	}
	if served == 0 || served == 100 {
		t.Fatalf("dave served %d before his quota refused one", served)
	}
	g.stop()
	g = start()
	refused(g, "after a clean stop")
	if l := g.findLog("end-user state read", 0); l == nil || l["restored"] != 1.0 {
		t.Fatalf("the restart did not say it restored dave: %v", l)
	}

	// kill -9 of everything, once a checkpoint holds erin's second request.
	file := filepath.Join(state, "endusers.state")
	killAll := func(g *gateway) {
		for _, pid := range append(g.workerPIDs(), g.cmd.Process.Pid) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		<-g.exited
		await(t, "the killed workers gone", func() bool { return len(g.workerPIDs()) == 0 })
	}
	before := endUsersUsed(file)
	if before == 0 {
		t.Fatal("the clean stop's state file holds no end user's use")
	}
	if status, _ := ask(g, "erin"); status != 200 {
		t.Fatalf("erin: %d", status)
	}
	await(t, "a checkpoint of erin's request", func() bool { return endUsersUsed(file) > before })
	killAll(g)

	aside := filepath.Join(dir, "endusers.aside")
	if err := os.Rename(file, aside); err != nil {
		t.Fatal(err)
	}
	g = start()
	if status, _ := ask(g, "dave"); status != 200 {
		t.Fatalf("without the end users' state file dave was refused (%d): the test would not tell the file's work", status)
	}
	killAll(g) // (its checkpoints are replaced next)
	if err := os.Rename(aside, file); err != nil {
		t.Fatal(err)
	}
	g = start()
	refused(g, "after kill -9")
}

// endUsersUsed is what the end users' state file says its end users used
// this period, all together (0 if it cannot be read).
func endUsersUsed(file string) (used int64) {
	f, err := os.Open(file)
	if err != nil {
		return 0
	}
	defer f.Close()
	_, _, saved, _, _ := enduser.ReadState(f)
	for _, e := range saved {
		used += e.Total - e.Base
	}
	return used
}
