package tests

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/quota"
	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// quotaConfig is a gateway of two workers whose key "all" has a daily
// token quota and whose key "limited" has a daily budget, model m priced.
func quotaConfig(be *fakevllm.Server, usage string, quota int, budget string) string {
	cfg := baseConfig(be.URL(), usage, "")
	cfg = strings.Replace(cfg, "    models: [\"*\"]\n", fmt.Sprintf("    models: [\"*\"]\n    quotas: {day: %d}\n", quota), 1)
	cfg = strings.Replace(cfg, "    models: [\"m\"]\n", "    models: [\"m\"]\n    budget: {usd: "+budget+", per: day}\n", 1)
	return strings.Replace(cfg, "  - name: m\n    backends:\n",
		"  - name: m\n    price: {input_per_mtok: 1000, output_per_mtok: 3000}\n    backends:\n", 1)
}

// A key's daily quota and another's daily budget, under 40 requests at
// once over two workers: both refuse once spent (429 quota_exceeded,
// budget_exceeded, with Retry-After at the day's end); what the metrics
// say was spent is exactly the sum of the usage lines of what was served;
// and that passes the quota or budget only by what requests used beyond
// what they reserved. A reload that raises the quota keeps what was spent.
func TestQuotaAndBudgetExactAcrossWorkers(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 2})
	usage := filepath.Join(t.TempDir(), "usage.log")
	const quota = 1000
	cfg := quotaConfig(be, usage, quota, "0.5")
	g := startGateway(t, cfg)
	g.UsageLog = usage

	burst := func(key string) (ids []string, refused map[string]int) {
		t.Helper()
		var mu sync.Mutex
		refused = map[string]int{}
		var wg sync.WaitGroup
		for i := range 40 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body, _ := json.Marshal(map[string]any{"model": "m", "max_tokens": 5,
					"messages": []map[string]string{{"role": "user", "content": fmt.Sprintf("request %d %s", i, strings.Repeat("x", 100))}}})
				res, out := post(t, freshClient(), g.URL+"/v1/chat/completions", key, body, nil)
				mu.Lock()
				defer mu.Unlock()
				switch res.StatusCode {
				case 200:
					ids = append(ids, res.Header.Get("X-Request-Id"))
				case 429:
					var e struct{ Error struct{ Code string } }
					json.Unmarshal(out, &e)
					refused[e.Error.Code]++
					if ra, err := strconv.Atoi(res.Header.Get("Retry-After")); err != nil || ra < 1 || ra > 86400 {
						t.Errorf("Retry-After %q", res.Header.Get("Retry-After"))
					}
				default:
					t.Errorf("status %d: %s", res.StatusCode, out)
				}
			}()
		}
		wg.Wait()
		return ids, refused
	}

	// Tokens.
	ids, refused := burst(keyAll)
	if len(ids) == 0 || refused["quota_exceeded"] == 0 {
		t.Fatalf("served %d, refused %v: want some of each", len(ids), refused)
	}
	usageOf(t, g, ids...)
	lines := exactUsageLines(t, g)
	var sum, overshoot int64
	for _, id := range ids {
		l := lines[id]
		total, _ := l["total_tokens"].(json.Number).Int64()
		bytes, _ := l["prompt_bytes"].(json.Number).Int64()
		sum += total
		overshoot += max(0, total-(bytes/4+5)) // the reservation: the prompt's estimate and max_tokens
	}
	if sum > quota+overshoot {
		t.Errorf("served %d tokens of a quota of %d (%d beyond reservations)", sum, quota, overshoot)
	}
	used := func() float64 {
		v, _ := g.metric("sluice_key_quota_used_tokens", map[string]string{"key": "all", "period": "day"})
		return v
	}
	if got := used(); got != float64(sum) {
		t.Errorf("sluice_key_quota_used_tokens %v, the usage lines %d", got, sum)
	}

	// Spend.
	ids, refused = burst(keyLimited)
	if len(ids) == 0 || refused["budget_exceeded"] == 0 {
		t.Fatalf("budget: served %d, refused %v: want some of each", len(ids), refused)
	}
	usageOf(t, g, ids...)
	lines = exactUsageLines(t, g)
	spent := new(big.Rat)
	for _, id := range ids {
		c, ok := new(big.Rat).SetString(string(lines[id]["cost_usd"].(json.Number)))
		if !ok {
			t.Fatalf("cost_usd %v", lines[id]["cost_usd"])
		}
		spent.Add(spent, c)
	}
	metric, _ := g.metric("sluice_key_spend_usd", map[string]string{"key": "limited", "period": "day"})
	if f, _ := spent.Float64(); f != metric {
		t.Errorf("sluice_key_spend_usd %v, the usage lines %s", metric, spent.FloatString(12))
	}

	// A reload that doubles the quota keeps the day's use.
	g.reloadWith(strings.Replace(cfg, fmt.Sprintf("quotas: {day: %d}", quota), fmt.Sprintf("quotas: {day: %d}", 2*quota+sum), 1))
	await(t, "the reload applied by every worker", func() bool { return g.findLog("configuration reloaded", 0) != nil })
	if got := used(); got != float64(sum) {
		t.Errorf("after the reload, sluice_key_quota_used_tokens %v, want %d", got, sum)
	}
	if res, out := post(t, freshClient(), g.URL+"/v1/chat/completions", keyAll, chatBody("m", false, "after the reload"), nil); res.StatusCode != 200 {
		t.Errorf("after a reload that raised the quota: %d %s", res.StatusCode, out)
	}
}

// A day's quota spent is refused until midnight (in quota_timezone),
// and served again once the day rolls over, on a calendar moved to just
// before midnight (SLUICE_TEST_QUOTA_SHIFT).
func TestQuotaRollsOverAtMidnight(t *testing.T) {
	now := time.Now().UTC()
	midnight := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
	const margin = 20 * time.Second // the gateway starts and spends the quota within it, on a loaded machine too
	t.Setenv("SLUICE_TEST_QUOTA_SHIFT", (midnight.Add(-margin).Sub(now)).String())
	be := startBackend(t, fakevllm.Options{Tokens: 2})
	usage := filepath.Join(t.TempDir(), "usage.log")
	g := startGateway(t, quotaConfig(be, usage, 60, "1"))
	g.UsageLog = usage
	send := func() (*http.Response, []byte) {
		return post(t, freshClient(), g.URL+"/v1/chat/completions", keyAll, []byte(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"a prompt of some forty bytes, or so."}]}`), nil)
	}
	served := 0
	for served < 10 {
		res, out := send()
		if res.StatusCode == 429 {
			ra, _ := strconv.Atoi(res.Header.Get("Retry-After"))
			if !strings.Contains(string(out), "quota_exceeded") || ra < 1 || time.Duration(ra)*time.Second > margin+time.Second {
				t.Fatalf("refused: Retry-After %q, %s", res.Header.Get("Retry-After"), out)
			}
			break
		}
		if res.StatusCode != 200 {
			t.Fatalf("status %d %s", res.StatusCode, out)
		}
		served++
	}
	if served == 0 || served == 10 {
		t.Fatalf("served %d before the quota refused one", served)
	}
	await(t, "the next day's quota", func() bool {
		res, _ := send()
		return res.StatusCode == 200
	})
}

// Spend outlives the service (state_dir): a clean stop loses nothing; a
// kill -9 of the supervisor and every worker loses only what was settled
// after the last checkpoint (here nothing: the test waits for it); a state
// file with a corrupt line and a torn one is reported and read around.
func TestQuotaSurvivesRestarts(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 2})
	dir := t.TempDir()
	usage := filepath.Join(dir, "usage.log")
	cfg := strings.Replace(quotaConfig(be, usage, 1_000_000, "100"), "usage_log:", "state_dir: "+filepath.Join(dir, "state")+"\nusage_log:", 1)
	sent := int64(0)
	spend := func(g *gateway, n int) { t.Helper(); sent += spendTokens(t, g, n) }
	start := func() *gateway {
		g := startGateway(t, cfg)
		g.UsageLog = usage
		return g
	}

	// A clean stop right after the last request.
	g := start()
	spend(g, 5)
	g.stop()
	g = start()
	if got := quotaUsed(g); got != float64(sent) {
		t.Fatalf("after a clean stop: %v used, want %d", got, sent)
	}

	// kill -9 of everything, once a checkpoint holds the spend.
	spend(g, 5)
	stateFile := filepath.Join(dir, "state", "quota.state")
	await(t, "a checkpoint with the spend", func() bool { return stateHolds(stateFile, "quota/all", sent) })
	for _, pid := range append(g.workerPIDs(), g.cmd.Process.Pid) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	<-g.exited
	await(t, "the killed workers gone", func() bool { return len(g.workerPIDs()) == 0 })
	g = start()
	if got := quotaUsed(g); got != float64(sent) {
		t.Fatalf("after kill -9: %v used, want %d", got, sent)
	}
	g.stop()

	// A corrupt line and a torn one around the good ones.
	good, err := os.ReadFile(stateFile)
	if err != nil {
		t.Fatal(err)
	}
	torn := "0badc0de {\"cell\":\"quota/x\"}\n" + string(good) + string(good[:len(good)/2])
	if err := os.WriteFile(stateFile, []byte(torn), 0o600); err != nil {
		t.Fatal(err)
	}
	g = start()
	if got := quotaUsed(g); got != float64(sent) {
		t.Fatalf("from a damaged state file: %v used, want %d", got, sent)
	}
	if l := g.findLog("quota state: unreadable lines skipped; the spend they held is lost", 0); l == nil || l["lines"] != 2.0 {
		t.Fatalf("the damage was not reported: %v", l)
	}

	// The key removed, its cells freed, then added back: what it spent
	// this day is its own again.
	block := fmt.Sprintf("  - name: all\n    sha256: %s\n    models: [\"*\"]\n    quotas: {day: 1000000}\n", sha(keyAll))
	if !strings.Contains(cfg, block) {
		t.Fatal("the key's block is not in the configuration")
	}
	freed := func() float64 { v, _ := g.metric("sluice_shm_cells_freed_total", nil); return v }
	before := freed()
	g.reloadWith(strings.Replace(cfg, block, "", 1))
	await(t, "the removed key's cells freed", func() bool { return freed() >= before+2 })
	g.reloadWith(cfg)
	if got := quotaUsed(g); got != float64(sent) {
		t.Fatalf("the key added back: %v used, want %d", got, sent)
	}
}

// A kill -9 of every process loses no spend (the workers' spend
// journals): with checkpoints an hour apart, so that only the journals
// can hold what was spent, the restart finds every token and every
// pico-USD the usage lines say was used. The journals set aside, the
// same restart finds nothing — the test can fail — and put back beside
// the newer checkpoint, they are merged into it.
func TestQuotaKillLosesNothing(t *testing.T) {
	t.Setenv("SLUICE_TEST_QUOTA_CHECKPOINT", "1h")
	be := startBackend(t, fakevllm.Options{Tokens: 2})
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	usage := filepath.Join(dir, "usage.log")
	cfg := strings.Replace(quotaConfig(be, usage, 1_000_000, "100"), "usage_log:", "state_dir: "+state+"\nusage_log:", 1)
	start := func() *gateway {
		g := startGateway(t, cfg)
		g.UsageLog = usage
		return g
	}
	spent := func(g *gateway) float64 {
		v, _ := g.metric("sluice_key_spend_usd", map[string]string{"key": "limited", "period": "day"})
		return v
	}
	killAll := func(g *gateway) {
		for _, pid := range append(g.workerPIDs(), g.cmd.Process.Pid) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		<-g.exited
		await(t, "the killed workers gone", func() bool { return len(g.workerPIDs()) == 0 })
	}
	spendBoth := func(g *gateway, n int) (tokens int64, usd float64) {
		t.Helper()
		tokens = spendTokens(t, g, n)
		spendAs(t, g, keyLimited, "budget", n) // its lines written: the settles are done
		return tokens, spent(g)
	}

	g := start()
	sent, usd := spendBoth(g, 6)
	if sent == 0 || usd == 0 {
		t.Fatalf("nothing spent: %d tokens, %v USD", sent, usd)
	}
	killAll(g)

	// Without the journals the restart finds nothing: no checkpoint ran.
	aside := filepath.Join(dir, "aside")
	os.Mkdir(aside, 0o700)
	journals := quota.JournalFiles(state)
	if len(journals) == 0 {
		t.Fatal("no spend journal in state_dir")
	}
	for _, f := range journals {
		if err := os.Rename(f, filepath.Join(aside, filepath.Base(f))); err != nil {
			t.Fatal(err)
		}
	}
	g = start()
	if got := quotaUsed(g); got != 0 {
		t.Fatalf("without the journals: %v used; the test would not tell the journal's work from the checkpoint's", got)
	}
	g.stop() // a checkpoint of nothing spent

	// With them, beside that newer checkpoint: everything.
	for _, f := range journals {
		if err := os.Rename(filepath.Join(aside, filepath.Base(f)), f); err != nil {
			t.Fatal(err)
		}
	}
	g = start()
	if got, gotUSD := quotaUsed(g), spent(g); got != float64(sent) || gotUSD != usd {
		t.Fatalf("from the journals: %v tokens, %v USD; want %d, %v", got, gotUSD, sent, usd)
	}
	if l := g.findLog("quota state read", 0); l == nil || l["from_journal"].(float64) < 2 {
		t.Fatalf("the restart did not say it read the journals: %v", l)
	}

	// Once more, on top: kill -9 right after the last answer.
	more, usd2 := spendBoth(g, 4)
	killAll(g)
	g = start()
	if got, gotUSD := quotaUsed(g), spent(g); got != float64(sent+more) || gotUSD != usd2 {
		t.Fatalf("after a second kill -9: %v tokens, %v USD; want %d, %v", got, gotUSD, sent+more, usd2)
	}
}

// spendTokens sends n requests of key "all" and returns the tokens their
// usage lines say they used.
func spendTokens(t *testing.T, g *gateway, n int) (sent int64) {
	t.Helper()
	for _, l := range spendAs(t, g, keyAll, "spend", n) {
		sent += int64(l["total_tokens"].(float64))
	}
	return sent
}

// quotaUsed is what the metrics say key "all" used of its day's quota.
func quotaUsed(g *gateway) float64 {
	v, _ := g.metric("sluice_key_quota_used_tokens", map[string]string{"key": "all", "period": "day"})
	return v
}

// stateHolds reports whether the state file holds cell with total.
func stateHolds(file, cell string, total int64) bool {
	f, err := os.Open(file)
	if err != nil {
		return false
	}
	defer f.Close()
	entries, _, _ := quota.Read(f)
	for _, e := range entries {
		if e.Cell == cell && e.Total == total {
			return true
		}
	}
	return false
}

// A binary upgrade keeps spend: the new supervisor inherits the region
// (the key in the configuration keeps its cells), and takes from the
// state file what a key removed before the upgrade spent, for when it
// comes back. The old supervisor stops writing the file once it hands
// over.
func TestQuotaSurvivesUpgrade(t *testing.T) {
	be := startBackend(t, fakevllm.Options{Tokens: 2})
	dir := t.TempDir()
	usage := filepath.Join(dir, "usage.log")
	stateFile := filepath.Join(dir, "state", "quota.state")
	g, cfg, pidFile := controllableGateway(t, func(extra string) string {
		c := strings.Replace(quotaConfig(be, usage, 1_000_000, "100"), "usage_log:", "state_dir: "+filepath.Join(dir, "state")+"\nusage_log:", 1)
		return strings.Replace(c, "workers: 2", "workers: 2\n"+extra, 1)
	})
	g.UsageLog = usage
	sent := spendTokens(t, g, 4)

	// Key "all" removed and its cells freed; key "limited" spends.
	block := fmt.Sprintf("  - name: all\n    sha256: %s\n    models: [\"*\"]\n    quotas: {day: 1000000}\n", sha(keyAll))
	if !strings.Contains(cfg, block) {
		t.Fatal("the key's block is not in the configuration")
	}
	without := strings.Replace(cfg, block, "", 1)
	freed := func() float64 { v, _ := g.metric("sluice_shm_cells_freed_total", nil); return v }
	before := freed()
	g.reloadWith(without)
	await(t, "the removed key's cells freed", func() bool { return freed() >= before+2 })
	res, out := post(t, freshClient(), g.URL+"/v1/chat/completions", keyLimited, chatBody("m", false, "spend"), nil)
	if res.StatusCode != 200 {
		t.Fatalf("%d %s", res.StatusCode, out)
	}
	spent := func() float64 {
		v, _ := g.metric("sluice_key_spend_usd", map[string]string{"key": "limited", "period": "day"})
		return v
	}
	limitedSpent := spent()
	if limitedSpent <= 0 {
		t.Fatalf("key limited spent %v", limitedSpent)
	}
	await(t, "a checkpoint keeping the removed key's spend", func() bool { return stateHolds(stateFile, "quota/all", sent) })

	oldPID := g.cmd.Process.Pid
	if out, err := sluiceUpgrade(g); err != nil || !strings.Contains(string(out), "upgraded") {
		t.Fatalf("sluice upgrade: %v\n%s", err, out)
	}
	successor(t, pidFile, oldPID)
	awaitExit(t, "the old supervisor to exit", oldPID)
	if got := spent(); got != limitedSpent {
		t.Fatalf("after the upgrade key limited spent %v, want %v", got, limitedSpent)
	}
	// The key comes back: what it spent before it left is its own again.
	if err := os.WriteFile(g.Config, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := sluiceReload(g); err != nil {
		t.Fatalf("sluice reload: %v\n%s", err, out)
	}
	await(t, "key all back with its spend", func() bool { return quotaUsed(g) == float64(sent) })
	sent += spendTokens(t, g, 2)
	if got := quotaUsed(g); got != float64(sent) {
		t.Fatalf("after two more: %v used, want %d", got, sent)
	}
	await(t, "the new supervisor's checkpoint", func() bool { return stateHolds(stateFile, "quota/all", sent) })
}

// spendAs sends n requests of key, each 200, and returns their usage lines.
func spendAs(t *testing.T, g *gateway, key, prompt string, n int) []map[string]any {
	t.Helper()
	var ids []string
	for i := range n {
		res, out := post(t, freshClient(), g.URL+"/v1/chat/completions", key, chatBody("m", false, fmt.Sprintf("%s %d", prompt, i)), nil)
		if res.StatusCode != 200 {
			t.Fatalf("%d %s", res.StatusCode, out)
		}
		ids = append(ids, res.Header.Get("X-Request-Id"))
	}
	return usageOf(t, g, ids...)
}
