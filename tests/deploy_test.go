package tests

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/sluice-gw/sluice/tests/fakevllm"
)

// The Nomad job parses as HCL (no Nomad agent here to plan it).
func TestNomadJobParses(t *testing.T) {
	_, diags := hclparse.NewParser().ParseHCLFile("../deploy/nomad/sluice.nomad.hcl")
	if diags.HasErrors() {
		t.Fatalf("deploy/nomad/sluice.nomad.hcl: %s", diags.Error())
	}
}

// blocks returns the nested blocks of body of type typ.
func blocks(body *hclsyntax.Body, typ string) []*hclsyntax.Block {
	var out []*hclsyntax.Block
	for _, b := range body.Blocks {
		if b.Type == typ {
			out = append(out, b)
		}
	}
	return out
}

// attr is the literal value of attribute name of b ("" when absent).
func attr(t *testing.T, b *hclsyntax.Block, name string) string {
	t.Helper()
	a := b.Body.Attributes[name]
	if a == nil {
		return ""
	}
	v, diags := a.Expr.Value(&hcl.EvalContext{})
	if diags.HasErrors() {
		t.Fatalf("%s: %s", name, diags.Error())
	}
	if v.Type().FriendlyName() == "bool" {
		if v.True() {
			return "true"
		}
		return "false"
	}
	return v.AsString()
}

// The Nomad job does not publish the admin listener on every interface
// unprotected: the admin address is the allocation's (NOMAD_IP_admin), the
// configuration sets admin_token_env, the variable it names comes from an
// env template (a Nomad variable), and the health check probes a route
// that needs no token.
func TestNomadJobAdminProtected(t *testing.T) {
	f, diags := hclparse.NewParser().ParseHCLFile("../deploy/nomad/sluice.nomad.hcl")
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	job := blocks(f.Body.(*hclsyntax.Body), "job")[0]
	group := blocks(job.Body, "group")[0]
	task := blocks(group.Body, "task")[0]
	var cfg, env string
	for _, tpl := range blocks(task.Body, "template") {
		switch {
		case strings.HasSuffix(attr(t, tpl, "destination"), "sluice.yaml"):
			cfg = attr(t, tpl, "data")
		case attr(t, tpl, "env") == "true":
			env += attr(t, tpl, "data")
		}
	}
	admin := regexp.MustCompile(`(?m)^\s*admin:\s*(.*)$`).FindStringSubmatch(cfg)
	if admin == nil || admin[1] != `{{ env "NOMAD_IP_admin" }}:{{ env "NOMAD_PORT_admin" }}` {
		t.Errorf("the admin listener binds to %q; want the allocation's address and port", admin)
	}
	tokenEnv := regexp.MustCompile(`(?m)^\s*admin_token_env:\s*(\S+)\s*$`).FindStringSubmatch(cfg)
	if tokenEnv == nil {
		t.Fatal("the job's configuration sets no admin_token_env")
	}
	if !regexp.MustCompile(`(?m)^\s*` + tokenEnv[1] + `=\{\{ \.\w+ \}\}\s*$`).MatchString(env) {
		t.Errorf("no env template sets %s from a Nomad variable:\n%s", tokenEnv[1], env)
	}
	for _, svc := range blocks(group.Body, "service") {
		for _, check := range blocks(svc.Body, "check") {
			if p := attr(t, check, "path"); p != "/readyz" && p != "/healthz" {
				t.Errorf("a check probes %s, which needs the admin token", p)
			}
		}
	}
}

// The Nomad job serves HTTPS from a certificate a template renders, and
// that template reloads sluice (SIGHUP) when the certificate changes.
func TestNomadJobTLSReloadsOnRenewal(t *testing.T) {
	f, diags := hclparse.NewParser().ParseHCLFile("../deploy/nomad/sluice.nomad.hcl")
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	task := blocks(blocks(blocks(f.Body.(*hclsyntax.Body), "job")[0].Body, "group")[0].Body, "task")[0]
	var cfg string
	signals := map[string]string{} // destination -> the signal its change sends
	for _, tpl := range blocks(task.Body, "template") {
		dest := attr(t, tpl, "destination")
		if strings.HasSuffix(dest, "sluice.yaml") {
			cfg = attr(t, tpl, "data")
		}
		if attr(t, tpl, "change_mode") == "signal" {
			signals[dest] = attr(t, tpl, "change_signal")
		}
	}
	files := regexp.MustCompile(`(?m)^\s*(?:- )?(?:cert|key): \{\{ env "NOMAD_SECRETS_DIR" \}\}/(\S+)\s*$`).FindAllStringSubmatch(cfg, -1)
	if len(files) == 0 || !strings.Contains(cfg, "tls:") {
		t.Fatalf("the job's configuration has no TLS listener with its files:\n%s", cfg)
	}
	for _, m := range files {
		if sig := signals["secrets/"+m[1]]; sig != "SIGHUP" {
			t.Errorf("the template of %s sends %q on a change, not SIGHUP", m[1], sig)
		}
	}
}

// The systemd unit reads the environment file that can hold the admin
// token, for check, serve and reload alike.
func TestSystemdUnitEnvironmentFile(t *testing.T) {
	unit, err := os.ReadFile("../deploy/systemd/sluice.service")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^EnvironmentFile=-/etc/sluice/sluice.env$`).Match(unit) {
		t.Error("the unit reads no optional EnvironmentFile for admin_token_env")
	}
}

// Every metric the Grafana dashboard queries is one a running gateway
// exposes: after requests of each kind (answered, streamed, refused, queued)
// against a backend whose /metrics reports load and prefix-cache counters,
// each name in the dashboard's expressions is a family of /metrics.
func TestGrafanaDashboardMetricsExist(t *testing.T) {
	raw, err := os.ReadFile("../deploy/grafana/sluice.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("deploy/grafana/sluice.json: %v", err)
	}
	be := startBackend(t, fakevllm.Options{Tokens: 3})
	be.SetPrefixCache(10, 100)
	be.SetKVUsage(0.25)
	g := startGateway(t, slotsConfig(be.URL(), "off", 1, "{max: 10, timeout: 60s}"))
	r, _, closer := openHeldStream(t, g, "dash")
	defer closer.Close()
	queued := make(chan error, 1)
	go func() { // waits for the held stream's slot
		req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/chat/completions", bytes.NewReader(chatBody("m", false, "queued")))
		req.Header.Set("Authorization", "Bearer "+keyAll)
		res, err := freshClient().Do(req)
		if err == nil {
			_, err = io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
		queued <- err
	}()
	await(t, "a request to queue", func() bool { v, _ := g.metric("sluice_queue_depth", map[string]string{"model": "m"}); return v == 1 })
	be.Release("dash")
	if _, err := io.Copy(io.Discard, r); err != nil {
		t.Fatal(err)
	}
	if err := <-queued; err != nil {
		t.Fatal(err)
	}
	post(t, freshClient(), g.URL+"/v1/chat/completions", "sk-wrong", chatBody("m", false, "refused"), nil)
	post(t, freshClient(), g.URL+"/v1/chat/completions", keyAll, chatBody("m", false, "broken"), map[string]string{"X-Fake-Fail": "reset"})
	await(t, "the backend's load and prefix-cache counters to be read", func() bool {
		_, ok := g.metric("sluice_backend_prefix_cache_hits_total", nil)
		return ok
	})
	fams := g.metricFamilies()
	name := regexp.MustCompile(`sluice_[a-z_]+`)
	n := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			for _, m := range name.FindAllString(tg.Expr, -1) {
				n++
				base := strings.TrimSuffix(m, "_bucket")
				if fams[base] == nil && fams[m] == nil {
					t.Errorf("panel %q queries %s, which /metrics does not have", p.Title, m)
				}
			}
		}
	}
	if n < 20 {
		t.Fatalf("found %d metric names in the dashboard: the file changed shape", n)
	}
}
