package tests

// The worked example of docs/migrating-from-openresty.md: the rig's
// nginx+Lua peer (bench/peers/nginx-lua.conf, bench/peers/lua/gateway.lua)
// translated whole into deploy/openresty-migration/sluice.yaml. The first
// test holds the translation to the peer's own files; the second drives
// the same requests through both gateways, in front of one fake vLLM, and
// compares what each answers and what each writes in its usage log —
// equal where the guide says they agree, the documented difference where
// it says they do not.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/tests/fakevllm"
)

const (
	orConfig     = "../deploy/openresty-migration/sluice.yaml"
	orNginxConf  = "../bench/peers/nginx-lua.conf"
	orGatewayLua = "../bench/peers/lua/gateway.lua"
	orKey        = "sk-bench"    // the peer's one key (its hash is in gateway.lua)
	orBackendKey = "backend-key" // what the peer sends upstream ("Bearer backend-key")
)

// nginxDirective is the value of a main-, events- or http-level directive
// of the peer's config: one at no or four spaces of indentation, so the
// upstream block's own keepalive_timeout is not taken for the client's.
func nginxDirective(t *testing.T, conf, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^(?:    )?` + regexp.QuoteMeta(name) + `\s+([^;]+);`).FindStringSubmatch(conf)
	if m == nil {
		t.Fatalf("%s: no %s directive", orNginxConf, name)
	}
	return m[1]
}

// The translated config passes `sluice check`, and says what the peer's
// files say: every value the guide maps is read from both and compared,
// so neither can change without the other.
func TestOpenRestyMigrationConfig(t *testing.T) {
	t.Setenv("VLLM_API_KEY", orBackendKey)
	out, err := exec.Command(sluiceBin, "check", "-c", orConfig).CombinedOutput()
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), ": OK") {
		t.Fatalf("sluice check -c %s: %v\n%s", orConfig, err, out)
	}
	cfg, err := config.Load(orConfig)
	if err != nil {
		t.Fatal(err)
	}
	confBytes, err := os.ReadFile(orNginxConf)
	if err != nil {
		t.Fatal(err)
	}
	luaBytes, err := os.ReadFile(orGatewayLua)
	if err != nil {
		t.Fatal(err)
	}
	conf, lua := string(confBytes), string(luaBytes)
	dur := func(name string) time.Duration {
		d, err := time.ParseDuration(nginxDirective(t, conf, name))
		if err != nil {
			t.Fatalf("%s %s: %v", name, nginxDirective(t, conf, name), err)
		}
		return d
	}
	num := func(name string) int {
		n, err := strconv.Atoi(nginxDirective(t, conf, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return n
	}
	m := cfg.Models[0]
	checks := []struct {
		what      string
		nginx, sl any
	}{
		{"worker_processes → workers", num("worker_processes"), int(cfg.Workers)},
		{"worker_connections", num("worker_connections"), cfg.WorkerConnections},
		{"keepalive_timeout", dur("keepalive_timeout"), time.Duration(cfg.KeepaliveTimeout)},
		{"proxy_connect_timeout → timeouts.connect", dur("proxy_connect_timeout"), time.Duration(m.Timeouts.Connect)},
		{"proxy_read_timeout → timeouts.stream_idle", dur("proxy_read_timeout"), time.Duration(m.Timeouts.StreamIdle)},
		{"client_max_body_size → max_body", nginxDirective(t, conf, "client_max_body_size"),
			strconv.FormatInt(int64(cfg.MaxBody)>>20, 10) + "m"},
		{"client_body_buffer_size = client_max_body_size → body_temp_dir off",
			nginxDirective(t, conf, "client_body_buffer_size") == nginxDirective(t, conf, "client_max_body_size"),
			cfg.BodyTempDir == "off"},
		// nginx's defaults, which the peer leaves alone.
		{"client_header_timeout (nginx default)", 60 * time.Second, time.Duration(cfg.ClientHeaderTimeout)},
		{"client_body_timeout (nginx default)", 60 * time.Second, time.Duration(cfg.ClientBodyTimeout)},
		{"send_timeout (nginx default)", 60 * time.Second, time.Duration(cfg.SendTimeout)},
	}
	for _, c := range checks {
		if c.nginx != c.sl {
			t.Errorf("%s: nginx %v, sluice %v", c.what, c.nginx, c.sl)
		}
	}

	// KEYS: hash → name, rpm, max_inflight.
	keys := regexp.MustCompile(`\["([0-9a-f]{64})"\] = \{\s*name = "([^"]+)", rpm = (\d+), max_inflight = (\d+)`).FindAllStringSubmatch(lua, -1)
	if len(keys) != len(cfg.Keys) {
		t.Fatalf("gateway.lua has %d keys, the config %d", len(keys), len(cfg.Keys))
	}
	for i, k := range keys {
		ck := cfg.Keys[i]
		if ck.SHA256 != k[1] || ck.Name != k[2] || strconv.FormatInt(ck.RequestsPerMinute, 10) != k[3] ||
			strconv.FormatInt(ck.MaxConcurrent, 10) != k[4] || !slices.Equal(ck.Models, []string{"*"}) {
			t.Errorf("key %d: gateway.lua %q, config %+v", i, k[1:], ck)
		}
	}
	if keys[0][1] != sha(orKey) {
		t.Errorf("the peer's key is not %q", orKey)
	}

	// MODELS: name → one upstream, the backend's key; the locations →
	// endpoints.
	models := regexp.MustCompile(`(?m)^    (\w+) = \{ upstream = "backend", backends = \{[^}]*\}, auth = "Bearer ([^"]+)" \}`).FindAllStringSubmatch(lua, -1)
	if len(models) != 1 || len(cfg.Models) != 1 || models[0][1] != m.Name || models[0][2] != orBackendKey {
		t.Fatalf("gateway.lua's MODELS %q; config's models %d, first %q", models, len(cfg.Models), m.Name)
	}
	if len(m.Backends) != 1 || m.Backends[0].APIKeyEnv != "VLLM_API_KEY" {
		t.Errorf("backends %+v: want one, its key from VLLM_API_KEY", m.Backends)
	}
	api := map[string]string{"chat/completions": "chat", "completions": "completions", "embeddings": "embeddings"}
	var locs []string
	for _, l := range regexp.MustCompile(`location = /v1/([\w/]+) \{`).FindAllStringSubmatch(conf, -1) {
		locs = append(locs, api[l[1]])
	}
	if !slices.Equal(locs, m.Endpoints) {
		t.Errorf("the peer's locations serve %q, the model's endpoints are %q", locs, m.Endpoints)
	}
}

// nginxLua finds nginx and what the peer needs (the files
// bench/install-peers.sh installs), or skips: with
// SLUICE_TEST_REQUIRE_PEERS=1 (.ci/run sets it) it fails instead.
func nginxLua(t *testing.T) string {
	t.Helper()
	var missing []string
	bin, err := exec.LookPath("nginx")
	if err != nil {
		bin = "/usr/sbin/nginx" // not on a non-root PATH
		if _, err := os.Stat(bin); err != nil {
			missing = append(missing, "nginx")
		}
	}
	for _, f := range []string{"/usr/lib/nginx/modules/ndk_http_module.so", "/usr/lib/nginx/modules/ngx_http_lua_module.so",
		"/usr/share/lua/5.1/resty/core.lua"} {
		if _, err := os.Stat(f); err != nil {
			missing = append(missing, f)
		}
	}
	if m, _ := filepath.Glob("/usr/lib/*/lua/5.1/cjson.so"); len(m) == 0 {
		missing = append(missing, "lua-cjson (cjson.so)")
	}
	if m, _ := filepath.Glob("/usr/share/lua/5.1/*/sha256.lua"); len(m) == 0 {
		missing = append(missing, "lua-resty-string (sha256.lua)")
	}
	if len(missing) > 0 {
		msg := fmt.Sprintf("nginx with its Lua module is not installed (missing %s): run bench/install-peers.sh as root",
			strings.Join(missing, ", "))
		if os.Getenv("SLUICE_TEST_REQUIRE_PEERS") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

// luaPeer is the rig's nginx+Lua peer, running.
type luaPeer struct {
	URL      string
	UsageLog string
	dir      string
	cmd      *exec.Cmd
	exited   chan struct{}
	stopOnce sync.Once
}

// testKeys are keys the differential test adds to both gateways, beside
// the peer's own, to reach the limits: a requests-per-minute limit of 3
// and one request in flight. name, secret, rpm, in flight.
var orTestKeys = []struct {
	name, secret  string
	rpm, inflight int
}{
	{"rpm3", "sk-rpm3", 3, 1000000},
	{"one", "sk-one", 100000000, 1},
}

// startLuaPeer renders the peer as the rig does (bench/rig renderNginx:
// placeholders replaced, a temporary prefix) with gateway.lua's KEYS
// extended by orTestKeys, and starts nginx in front of backend (host:port).
func startLuaPeer(t *testing.T, nginx, backend string) *luaPeer {
	t.Helper()
	dir := t.TempDir()
	for _, sub := range []string{"client_body_temp", "proxy_temp", "fastcgi_temp", "uwsgi_temp", "scgi_temp", "lua"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	src, err := os.ReadFile(orGatewayLua)
	if err != nil {
		t.Fatal(err)
	}
	var extra strings.Builder
	for _, k := range orTestKeys {
		fmt.Fprintf(&extra, "    [%q] = { name = %q, rpm = %d, max_inflight = %d },\n", sha(k.secret), k.name, k.rpm, k.inflight)
	}
	lua := mustReplaceOnce(t, orGatewayLua, string(src), "local KEYS = {\n", "local KEYS = {\n"+extra.String())
	if err := os.WriteFile(filepath.Join(dir, "lua", "gateway.lua"), lua, 0o644); err != nil {
		t.Fatal(err)
	}
	tmpl, err := os.ReadFile(orNginxConf)
	if err != nil {
		t.Fatal(err)
	}
	// A free port, then nginx on it: another process may take it between
	// the two, so a start that fails to bind is tried again.
	for try := 0; ; try++ {
		listen := freeAddr(t)
		conf := strings.NewReplacer("@LISTEN@", listen, "        @TLS@\n", "", "@BACKEND@", backend, "@PREFIX@", dir,
			"@LUADIR@", filepath.Join(dir, "lua")).Replace(string(tmpl))
		path := filepath.Join(dir, "nginx.conf")
		if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(nginx, "-t", "-q", "-p", dir, "-c", path, "-e", filepath.Join(dir, "error.log")).CombinedOutput(); err != nil {
			t.Fatalf("nginx -t: %v\n%s", err, out)
		}
		p := &luaPeer{URL: "http://" + listen, UsageLog: filepath.Join(dir, "usage.log"), dir: dir, exited: make(chan struct{})}
		p.cmd = exec.Command(nginx, "-p", dir, "-c", path, "-e", filepath.Join(dir, "error.log"))
		p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the master and its worker, stopped together
		var stderr syncBuffer
		p.cmd.Stdout, p.cmd.Stderr = &stderr, &stderr
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { p.cmd.Wait(); close(p.exited) }()
		t.Cleanup(p.stop)
		if p.awaitReady() {
			return p
		}
		p.stop()
		errLog, _ := os.ReadFile(filepath.Join(dir, "error.log"))
		if try == 2 || !strings.Contains(string(errLog), "Address already in use") {
			t.Fatalf("nginx did not start:\n%s%s", stderr.String(), errLog)
		}
	}
}

// awaitReady polls GET /health until it answers 200, or nginx exits.
func (p *luaPeer) awaitReady() bool {
	end := time.Now().Add(deadline)
	for time.Now().Before(end) {
		select {
		case <-p.exited:
			return false
		default:
		}
		if res, err := http.Get(p.URL + "/health"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return true
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// stop is nginx's graceful stop (QUIT): requests finish, and the usage
// log is flushed before the worker exits. Whatever is left after the
// deadline is killed, by process group (the master's, of our starting).
func (p *luaPeer) stop() {
	p.stopOnce.Do(func() {
		p.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-p.exited:
		case <-time.After(deadline):
		}
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) // the worker, if it outlived its master
		<-p.exited
	})
}

func mustReplaceOnce(t *testing.T, file, s, old, new string) []byte {
	t.Helper()
	if n := strings.Count(s, old); n != 1 {
		t.Fatalf("%s: %q appears %d times, want once", file, old, n)
	}
	return []byte(strings.Replace(s, old, new, 1))
}

// migratedConfig is deploy/openresty-migration/sluice.yaml with what a
// test must choose put in: the addresses (port 0), the fake backend, the
// usage log and pid file in dir, and orTestKeys. Each replaced text must
// be in the file once, so the test runs the file as written.
func migratedConfig(t *testing.T, backendURL, dir string) string {
	t.Helper()
	data, err := os.ReadFile(orConfig)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	var keys strings.Builder
	for _, k := range orTestKeys {
		fmt.Fprintf(&keys, "  - name: %s\n    sha256: %s\n    models: [\"*\"]\n    requests_per_minute: %d\n    max_concurrent: %d\n",
			k.name, sha(k.secret), k.rpm, k.inflight)
	}
	for _, r := range [][2]string{
		{"\nlisten: 127.0.0.1:8080\n", "\nlisten: 127.0.0.1:0\n"},
		{"\nadmin: 127.0.0.1:9090\n", "\nadmin: 127.0.0.1:0\n"},
		{"url: http://127.0.0.1:8000\n", "url: " + backendURL + "\n"},
		{"\nusage_log: /var/log/sluice/usage.log\n", "\nusage_log: " + filepath.Join(dir, "usage.log") + "\n"},
		{"\npid_file: /run/sluice/sluice.pid\n", "\npid_file: " + filepath.Join(dir, "sluice.pid") + "\n"},
		{"\n# MODELS:", "\n" + keys.String() + "\n# MODELS:"},
	} {
		s = string(mustReplaceOnce(t, orConfig, s, r[0], r[1]))
	}
	return s
}

// orCase is one request, sent alike to both gateways, and what each is to
// answer and log: the same unless the guide documents a difference.
type orCase struct {
	name   string
	method string // default POST
	path   string // default /v1/chat/completions
	key    string
	body   string
	hdr    map[string]string
	// rawLength, when set, declares this Content-Length (a body over
	// max_body) and sends only its first 64 KiB (orSendHead).
	rawLength int

	peerStatus, sluiceStatus int
	peerCode, sluiceCode     string // the usage line's error ("" none)
	peerKey, sluiceKey       string // the usage line's key ("" none)
	peerLogs                 bool   // the peer writes a usage line (sluice always does)
	served                   bool   // reaches the backend: usage is compared
}

// orAnswer is what a client got.
type orAnswer struct {
	status    int
	header    http.Header
	body      []byte
	events    []string // a stream's data payloads
	continued bool     // a 100 Continue came first (rawLength with Expect)
}

// orSend sends c to the gateway at base, with a User-Agent naming the case
// (how its usage line is found) and a Cookie (which must not reach the
// backend).
func orSend(t *testing.T, base string, c orCase) orAnswer {
	t.Helper()
	method, path := c.method, c.path
	if method == "" {
		method = http.MethodPost
	}
	if path == "" {
		path = "/v1/chat/completions"
	}
	if c.rawLength > 0 {
		return orSendHead(t, base, c, method, path)
	}
	req, err := http.NewRequest(method, base+path, strings.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", "or-"+c.name)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Cookie", "session=client-secret")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	for k, v := range c.hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", c.name, base, err)
	}
	defer res.Body.Close()
	a := orAnswer{status: res.StatusCode, header: res.Header}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		a.events = readEvents(t, bufio.NewReader(res.Body))
	} else {
		a.body, _ = io.ReadAll(res.Body)
	}
	return a
}

// orSendHead sends a request head declaring c.rawLength body bytes and
// reads the answer. Without Expect it then sends 64 KiB of the body (what
// a client does; sluice reads the first 8 KiB of a body with the head
// before it answers, nginx answers from the head alone) and never the
// rest; with "Expect: 100-continue" it sends those 64 KiB only once a
// 100 Continue invites them, and notes whether one came.
func orSendHead(t *testing.T, base string, c orCase, method, path string) orAnswer {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(deadline))
	head := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: gw\r\nUser-Agent: or-%s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n",
		method, path, c.name, c.rawLength)
	if c.key != "" {
		head += "Authorization: Bearer " + c.key + "\r\n"
	}
	for k, v := range c.hdr {
		head += k + ": " + v + "\r\n"
	}
	if _, err := io.WriteString(conn, head+"\r\n"); err != nil {
		t.Fatal(err)
	}
	if c.hdr["Expect"] == "" {
		go conn.Write(make([]byte, 64<<10)) // fails once the gateway has closed: no matter
	}
	br := bufio.NewReader(conn)
	var a orAnswer
	for {
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%s %s: %v", c.name, base, err)
		}
		if res.StatusCode == http.StatusContinue && !a.continued {
			a.continued = true
			go conn.Write(make([]byte, 64<<10)) // invited: the body comes
			continue
		}
		a.status, a.header = res.StatusCode, res.Header
		a.body, _ = io.ReadAll(res.Body)
		res.Body.Close()
		return a
	}
}

// readUsage parses a JSON-lines usage log, by User-Agent (each case sends
// its own); a case sent several times has several lines.
func readUsage(t *testing.T, path string) map[string][]map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]map[string]any{}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%s: a line that is not JSON: %q", path, l)
		}
		ua, _ := m["user_agent"].(string)
		out[ua] = append(out[ua], m)
	}
	return out
}

// usageStr is a usage line's string field, "" for null or absent.
func usageStr(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// usageNum is a usage line's number field, -1 for null or absent.
func usageNum(m map[string]any, k string) int {
	f, ok := m[k].(float64)
	if !ok {
		return -1
	}
	return int(f)
}

// The rig's nginx+Lua peer and sluice on its translated config, in front
// of one fake vLLM: the same requests through both, their answers and
// usage lines compared.
func TestOpenRestyMigrationDifferential(t *testing.T) {
	nginx := nginxLua(t)
	be := startBackend(t, fakevllm.Options{Tokens: 8, Keys: map[string]int{orBackendKey: 200}})
	peer := startLuaPeer(t, nginx, strings.TrimPrefix(be.URL(), "http://"))
	t.Setenv("VLLM_API_KEY", orBackendKey)
	dir := t.TempDir()
	g := startGateway(t, migratedConfig(t, be.URL(), dir))
	g.UsageLog = filepath.Join(dir, "usage.log")

	chat := `{"model":"bench","messages":[{"role":"user","content":"hello from the migration test"}]}`
	stream := `{"model":"bench","stream":true,"messages":[{"role":"user","content":"hello, streamed"}]}`
	asked := `{"model":"bench","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"asked for usage"}]}`
	cases := []orCase{
		{name: "chat", key: orKey, body: chat, peerStatus: 200, sluiceStatus: 200,
			peerKey: "bench", sluiceKey: "bench", peerLogs: true, served: true},
		{name: "stream", key: orKey, body: stream, peerStatus: 200, sluiceStatus: 200,
			peerKey: "bench", sluiceKey: "bench", peerLogs: true, served: true},
		{name: "stream-asked", key: orKey, body: asked, peerStatus: 200, sluiceStatus: 200,
			peerKey: "bench", sluiceKey: "bench", peerLogs: true, served: true},
		{name: "completions", path: "/v1/completions", key: orKey, body: `{"model":"bench","prompt":"once upon a time"}`,
			peerStatus: 200, sluiceStatus: 200, peerKey: "bench", sluiceKey: "bench", peerLogs: true, served: true},
		{name: "embeddings", path: "/v1/embeddings", key: orKey, body: `{"model":"bench","input":"embed me"}`,
			peerStatus: 200, sluiceStatus: 200, peerKey: "bench", sluiceKey: "bench", peerLogs: true, served: true},
		{name: "wrong-key", key: "sk-wrong", body: chat, peerStatus: 401, sluiceStatus: 401,
			peerCode: "invalid_api_key", sluiceCode: "invalid_api_key", peerLogs: true},
		// Difference: the peer says invalid_api_key for no key too.
		{name: "no-key", body: chat, peerStatus: 401, sluiceStatus: 401,
			peerCode: "invalid_api_key", sluiceCode: "missing_api_key", peerLogs: true},
		{name: "unknown-model", key: orKey, body: `{"model":"gpt-4","messages":[]}`, peerStatus: 404, sluiceStatus: 404,
			peerCode: "model_not_found", sluiceCode: "model_not_found", peerKey: "bench", sluiceKey: "bench", peerLogs: true},
		// Difference: no model is an unknown one to the peer (404), a bad
		// request to sluice (400).
		{name: "no-model", key: orKey, body: `{"messages":[]}`, peerStatus: 404, sluiceStatus: 400,
			peerCode: "model_not_found", sluiceCode: "missing_model", peerKey: "bench", sluiceKey: "bench", peerLogs: true},
		{name: "bad-json", key: orKey, body: `{"model":"bench",`, peerStatus: 400, sluiceStatus: 400,
			peerCode: "invalid_json", sluiceCode: "invalid_json", peerKey: "bench", sluiceKey: "bench", peerLogs: true},
		{name: "empty-body", key: orKey, body: ``, peerStatus: 400, sluiceStatus: 400,
			peerCode: "invalid_body", sluiceCode: "invalid_json", peerKey: "bench", sluiceKey: "bench", peerLogs: true},
		// Difference: nginx's `return 405` runs before access_by_lua, so
		// the peer's line has no key and no error code.
		{name: "get", method: http.MethodGet, key: orKey, peerStatus: 405, sluiceStatus: 405,
			sluiceCode: "method_not_allowed", sluiceKey: "", peerLogs: true},
		// Difference: `location /` has no log_by_lua; sluice logs every request.
		{name: "unknown-path", path: "/v1/nope", key: orKey, body: chat, peerStatus: 404, sluiceStatus: 404,
			sluiceCode: "unknown_url"},
		// Difference: the peer's readiness probe is on its client port;
		// sluice's are on the admin listener.
		{name: "health", method: http.MethodGet, path: "/health", peerStatus: 200, sluiceStatus: 404, sluiceCode: "unknown_url"},
		// Difference: nginx checks client_max_body_size before any Lua,
		// sluice checks the key first: no key in the peer's line, and a
		// wrong key is 413 to the peer, 401 to sluice.
		{name: "too-large", key: orKey, rawLength: 32<<20 + 1, peerStatus: 413, sluiceStatus: 413,
			sluiceCode: "request_too_large", sluiceKey: "bench", peerLogs: true},
		{name: "too-large-wrong-key", key: "sk-wrong", rawLength: 32<<20 + 1, peerStatus: 413, sluiceStatus: 401,
			sluiceCode: "invalid_api_key", peerLogs: true},
		// With Expect: 100-continue both answer 413 at once, without
		// inviting the body (asserted below).
		{name: "too-large-expect", key: orKey, rawLength: 32<<20 + 1, hdr: map[string]string{"Expect": "100-continue"},
			peerStatus: 413, sluiceStatus: 413, sluiceCode: "request_too_large", sluiceKey: "bench", peerLogs: true},
	}

	type run struct {
		name    string
		url     string
		log     string
		answers map[string]orAnswer
		rpm     []orAnswer // four requests of key rpm3 (limit 3)
		held    orAnswer   // key one's second request while its first is in flight
	}
	runs := []*run{{name: "peer", url: peer.URL, log: peer.UsageLog}, {name: "sluice", url: g.URL, log: g.UsageLog}}
	for _, r := range runs {
		r.answers = map[string]orAnswer{}
		for _, c := range cases {
			r.answers[c.name] = orSend(t, r.url, c)
		}
		for range 4 {
			r.rpm = append(r.rpm, orSend(t, r.url, orCase{name: "rpm3", key: "sk-rpm3", body: chat}))
		}
		// Key "one" (one request in flight): a stream held by the backend
		// after its first event, and a second request meanwhile.
		hold := "hold-" + r.name
		req, _ := http.NewRequest(http.MethodPost, r.url+"/v1/chat/completions", strings.NewReader(stream))
		req.Header.Set("Authorization", "Bearer sk-one")
		req.Header.Set("User-Agent", "or-one-held")
		req.Header.Set("X-Fake-Hold", hold)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(res.Body)
		if _, err := nextEvent(br); err != nil {
			t.Fatalf("%s: held stream: %v", r.name, err)
		}
		r.held = orSend(t, r.url, orCase{name: "one-second", key: "sk-one", body: chat})
		be.Release(hold)
		io.Copy(io.Discard, br)
		res.Body.Close()
	}
	// Both usage logs are written whole by a graceful stop (the peer's
	// flush timer and sluice's usage_log_flush: 1s hold lines until then).
	peer.stop()
	g.stop()
	usage := map[string]map[string][]map[string]any{}
	for _, r := range runs {
		usage[r.name] = readUsage(t, r.log)
	}

	for _, c := range cases {
		ua := "or-" + c.name
		for _, r := range runs {
			a := r.answers[c.name]
			wantStatus, wantCode, wantKey, logs := c.sluiceStatus, c.sluiceCode, c.sluiceKey, true
			keyField, pathField := "key", "path"
			if r.name == "peer" {
				wantStatus, wantCode, wantKey, logs = c.peerStatus, c.peerCode, c.peerKey, c.peerLogs
				keyField, pathField = "key_name", "endpoint"
			}
			if a.status != wantStatus {
				t.Errorf("%s %s: status %d, want %d (%s)", r.name, c.name, a.status, wantStatus, a.body)
			}
			lines := usage[r.name][ua]
			if !logs {
				if len(lines) != 0 {
					t.Errorf("%s %s: %d usage lines, want none", r.name, c.name, len(lines))
				}
				continue
			}
			if len(lines) != 1 {
				t.Errorf("%s %s: %d usage lines, want 1", r.name, c.name, len(lines))
				continue
			}
			l := lines[0]
			if usageNum(l, "status") != wantStatus || usageStr(l, "error") != wantCode || usageStr(l, keyField) != wantKey {
				t.Errorf("%s %s: usage line status %v error %q key %q, want %d %q %q",
					r.name, c.name, l["status"], usageStr(l, "error"), usageStr(l, keyField), wantStatus, wantCode, wantKey)
			}
			path := c.path
			if path == "" {
				path = "/v1/chat/completions"
			}
			if usageStr(l, pathField) != path {
				t.Errorf("%s %s: usage line path %q", r.name, c.name, usageStr(l, pathField))
			}
			if c.served && usageStr(l, "model") != "bench" {
				t.Errorf("%s %s: usage line model %q", r.name, c.name, usageStr(l, "model"))
			}
		}
	}

	// What reached the backend, and the usage both logged from its answers.
	for _, c := range cases {
		if !c.served {
			continue
		}
		ua := "or-" + c.name
		var seen []fakevllm.Received
		for _, rc := range be.Received() {
			if rc.Header.Get("User-Agent") == ua {
				seen = append(seen, rc)
			}
		}
		if len(seen) != 2 {
			t.Errorf("%s: the backend saw %d requests, want one from each gateway", c.name, len(seen))
			continue
		}
		for i, rc := range seen {
			// The backend's key replaces the client's; no Cookie passes.
			if rc.Key != orBackendKey || rc.Header.Get("Cookie") != "" {
				t.Errorf("%s: request %d reached the backend with key %q, cookie %q", c.name, i, rc.Key, rc.Header.Get("Cookie"))
			}
			if strings.Contains(c.body, `"stream":true`) && !rc.IncludeUsage {
				t.Errorf("%s: request %d reached the backend without include_usage", c.name, i)
			}
		}
		// The usage each logged is the backend's: the fake counts a prompt
		// token per 4 bytes of the body it received, and the two bodies of
		// a stream differ (the peer re-encodes the JSON; sluice inserts
		// stream_options in the client's bytes), so the prompts are
		// compared with what each sent, the completions with each other.
		pl, sl := usage["peer"][ua], usage["sluice"][ua]
		if len(pl) != 1 || len(sl) != 1 {
			continue // reported above
		}
		var prompts []int
		for _, rc := range seen {
			prompts = append(prompts, rc.BodyLen/4)
		}
		if c.path == "/v1/embeddings" {
			prompts = []int{4, 4}
		}
		slices.Sort(prompts)
		got := []int{usageNum(pl[0], "prompt_tokens"), usageNum(sl[0], "prompt_tokens")}
		slices.Sort(got)
		if !slices.Equal(got, prompts) {
			t.Errorf("%s: prompt tokens logged %v, the backend's %v", c.name, got, prompts)
		}
		for _, f := range []string{"completion_tokens"} {
			if usageNum(pl[0], f) != usageNum(sl[0], f) || usageNum(pl[0], f) < 0 {
				t.Errorf("%s: %s peer %d, sluice %d", c.name, f, usageNum(pl[0], f), usageNum(sl[0], f))
			}
		}
		for _, l := range []map[string]any{pl[0], sl[0]} {
			if usageNum(l, "total_tokens") != usageNum(l, "prompt_tokens")+usageNum(l, "completion_tokens") {
				t.Errorf("%s: total_tokens %v in %v", c.name, l["total_tokens"], l)
			}
		}
		if pl[0]["stream"] != sl[0]["stream"] || pl[0]["usage_injected"] != sl[0]["usage_injected"] ||
			usageStr(pl[0], "finish_reason") != usageStr(sl[0], "finish_reason") {
			t.Errorf("%s: stream/usage_injected/finish_reason peer %v %v %q, sluice %v %v %q", c.name,
				pl[0]["stream"], pl[0]["usage_injected"], usageStr(pl[0], "finish_reason"),
				sl[0]["stream"], sl[0]["usage_injected"], usageStr(sl[0], "finish_reason"))
		}
	}

	peerAns, slAns := runs[0].answers, runs[1].answers

	// Difference: the peer hands the client the usage event it asked the
	// backend for, asked or not; sluice keeps it from a client that did not
	// ask. Both pass it on when asked.
	hasUsage := func(events []string) bool {
		return slices.ContainsFunc(events, func(e string) bool { return strings.Contains(e, `"usage":{`) })
	}
	if !hasUsage(peerAns["stream"].events) || hasUsage(slAns["stream"].events) {
		t.Errorf("stream without include_usage: usage event to the client: peer %v (want true), sluice %v (want false)",
			hasUsage(peerAns["stream"].events), hasUsage(slAns["stream"].events))
	}
	if !hasUsage(peerAns["stream-asked"].events) || !hasUsage(slAns["stream-asked"].events) {
		t.Errorf("stream with include_usage: usage event missing: peer %v, sluice %v",
			hasUsage(peerAns["stream-asked"].events), hasUsage(slAns["stream-asked"].events))
	}

	// Error bodies: both answer OpenAI's shape from Lua/Go, but nginx's own
	// refusals (405, 413) are its HTML pages; sluice's are all JSON.
	for _, name := range []string{"get", "too-large"} {
		if ct := peerAns[name].header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
			t.Errorf("peer %s: Content-Type %q, want nginx's HTML page", name, ct)
		}
	}
	for _, c := range cases {
		a := slAns[c.name]
		if a.status < 400 {
			continue
		}
		var e struct {
			Error struct{ Code string } `json:"error"`
		}
		if json.Unmarshal(a.body, &e) != nil || e.Error.Code != c.sluiceCode {
			t.Errorf("sluice %s: body %q, want an OpenAI error with code %q", c.name, a.body, c.sluiceCode)
		}
		if a.header.Get("X-Request-Id") == "" {
			t.Errorf("sluice %s: no X-Request-Id", c.name)
		}
	}

	// Difference: a model that does not exist is logged as the client
	// sent it by sluice, as null by the peer.
	if l := usage["peer"]["or-unknown-model"]; len(l) == 1 && l[0]["model"] != nil {
		t.Errorf("peer: unknown model logged as %v", l[0]["model"])
	}
	if l := usage["sluice"]["or-unknown-model"]; len(l) == 1 && usageStr(l[0], "model") != "gpt-4" {
		t.Errorf("sluice: unknown model logged as %v", l[0]["model"])
	}

	if peerAns["too-large-expect"].continued || slAns["too-large-expect"].continued {
		t.Errorf("a body over max_body with Expect: 100-continue: 100 Continue first: peer %v, sluice %v (want neither)",
			peerAns["too-large-expect"].continued, slAns["too-large-expect"].continued)
	}

	// requests_per_minute 3. sluice (GCRA): three at once, the fourth
	// refused with Retry-After. The peer (a counter per calendar minute):
	// the same within one minute — its line logs the count, and the test
	// holds it to "refused exactly when the minute's count passed 3".
	for i, r := range runs {
		want := []int{200, 200, 200, 429}
		var got []int
		for _, a := range r.rpm {
			got = append(got, a.status)
		}
		if i == 0 {
			lines := usage["peer"]["or-rpm3"]
			if len(lines) != 4 {
				t.Fatalf("peer: %d usage lines for rpm3, want 4", len(lines))
			}
			// Its line logs the minute's count of an admitted request (a
			// refused one's is null): 1, 2, 3 is one minute; anything else
			// means a minute began between them, and the fourth may pass.
			counts := []int{usageNum(lines[0], "rpm"), usageNum(lines[1], "rpm"), usageNum(lines[2], "rpm")}
			if !slices.Equal(counts, []int{1, 2, 3}) {
				t.Logf("peer rpm3: a minute began between the requests (counts %v, then %v)", counts, lines[3]["rpm"])
				continue
			}
			if usageStr(lines[3], "error") != "rate_limit_exceeded" {
				t.Errorf("peer rpm3: the fourth request's line %v", lines[3])
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s rpm3: statuses %v, want %v", r.name, got, want)
		}
		last := r.rpm[3]
		// Difference: only sluice sends Retry-After and x-ratelimit-*.
		if i == 0 && (last.header.Get("Retry-After") != "" || r.rpm[0].header.Get("X-Ratelimit-Limit-Requests") != "") {
			t.Errorf("peer rpm3: Retry-After %q, x-ratelimit-limit-requests %q: the peer sends neither",
				last.header.Get("Retry-After"), r.rpm[0].header.Get("X-Ratelimit-Limit-Requests"))
		}
		if i == 1 && (last.header.Get("Retry-After") == "" || r.rpm[0].header.Get("X-Ratelimit-Limit-Requests") != "3") {
			t.Errorf("sluice rpm3: Retry-After %q, x-ratelimit-limit-requests %q", last.header.Get("Retry-After"),
				r.rpm[0].header.Get("X-Ratelimit-Limit-Requests"))
		}
	}

	// max_concurrent 1: the second request while the first streams is
	// refused by both; the error's type says "requests" in the peer,
	// "concurrency" in sluice.
	for _, r := range runs {
		var e struct {
			Error struct{ Type, Code string } `json:"error"`
		}
		json.Unmarshal(r.held.body, &e)
		wantType := map[string]string{"peer": "requests", "sluice": "concurrency"}[r.name]
		if r.held.status != 429 || e.Error.Code != "rate_limit_exceeded" || e.Error.Type != wantType {
			t.Errorf("%s: a second request of key one: %d %s, want 429 rate_limit_exceeded of type %s",
				r.name, r.held.status, r.held.body, wantType)
		}
		// Difference: the peer counts a request in the minute before it
		// checks the key's requests in flight, so one refused for
		// concurrency still used one of the minute's requests; sluice
		// checks concurrency first and gives nothing of the minute away.
		if second := usage[r.name]["or-one-second"]; r.name == "peer" && (len(second) != 1 || usageNum(second[0], "rpm") < 1) {
			t.Errorf("peer: the refused request of key one is not counted in its minute: %v", second)
		}
		lines := usage[r.name]["or-one-held"]
		if len(lines) != 1 || usageNum(lines[0], "status") != 200 || usageNum(lines[0], "completion_tokens") != 8 {
			t.Errorf("%s: the held stream's usage lines %v", r.name, lines)
		}
	}
}
