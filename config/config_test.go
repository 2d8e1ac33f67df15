package config

import (
	"cmp"
	"os"
	"strings"
	"testing"
	"time"
)

const validYAML = `listen: 127.0.0.1:8080
admin: 127.0.0.1:9090
workers: auto
pin_cpus: true
usage_log: stdout
keys:
  - name: team-a
    sha256: 2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae
    models: ["*"]
models:
  - name: llama-3.1-8b
    upstream_model: meta-llama/Llama-3.1-8B-Instruct
    backends:
      - url: http://127.0.0.1:8000
        slots: 16
`

func TestParseValidAndDefaults(t *testing.T) {
	c, err := Parse("ok.yaml", []byte(validYAML))
	if err != nil {
		t.Fatal(err)
	}
	if c.Workers != 0 || !c.PinCPUs || c.GoMaxProcs != 1 {
		t.Errorf("workers=%d pin=%v gomaxprocs=%d", c.Workers, c.PinCPUs, c.GoMaxProcs)
	}
	if time.Duration(c.ShutdownTimeout) != 30*time.Second || c.MaxBody != 32<<20 {
		t.Errorf("defaults: shutdown=%v max_body=%d", time.Duration(c.ShutdownTimeout), c.MaxBody)
	}
	if wantDir := cmp.Or(os.Getenv("TMPDIR"), "/var/tmp"); c.BodyMemory != 64<<20 || c.BodyTempDirPath() != wantDir {
		t.Errorf("defaults: body_memory=%d body_temp_dir=%q", c.BodyMemory, c.BodyTempDirPath())
	}
	if off, _ := Parse("off.yaml", []byte(validYAML+"body_temp_dir: \"off\"\n")); off == nil || off.BodyTempDirPath() != "" {
		t.Errorf("body_temp_dir: off → %+v", off)
	}
	if time.Duration(c.ClientHeaderTimeout) != 60*time.Second || time.Duration(c.ClientBodyTimeout) != 60*time.Second ||
		time.Duration(c.SendTimeout) != 60*time.Second || time.Duration(c.KeepaliveTimeout) != 75*time.Second ||
		c.WorkerConnections != 4096 {
		t.Errorf("defaults: client_header_timeout %v client_body_timeout %v send_timeout %v keepalive_timeout %v worker_connections %d",
			time.Duration(c.ClientHeaderTimeout), time.Duration(c.ClientBodyTimeout), time.Duration(c.SendTimeout),
			time.Duration(c.KeepaliveTimeout), c.WorkerConnections)
	}
	if got := c.Models[0].Backends[0].Slots; got != 16 {
		t.Errorf("slots = %d", got)
	}
	m := c.Models[0]
	if c.PrefixEntries() != 1<<16 || c.PrefixIndex.Block != 256 || c.PrefixIndex.MaxBlocks != 128 {
		t.Errorf("prefix_index defaults: %d entries, block %d, max_blocks %d", c.PrefixEntries(), c.PrefixIndex.Block, c.PrefixIndex.MaxBlocks)
	}
	if *m.Queue.MaxPerKey != 500 {
		t.Errorf("queue.max_per_key defaults to %d, want half of queue.max (500)", *m.Queue.MaxPerKey)
	}
	if *m.Queue.Max != 1000 || time.Duration(m.Queue.Timeout) != 30*time.Second || m.DefaultMaxTokens != 1024 || c.ShmCells != 4096 {
		t.Errorf("defaults: queue %d/%v default_max_tokens %d shm_cells %d", *m.Queue.Max, time.Duration(m.Queue.Timeout), m.DefaultMaxTokens, c.ShmCells)
	}
}

func TestParseTypedFields(t *testing.T) {
	src := strings.Replace(validYAML, "workers: auto", "workers: 3\nshutdown_timeout: 90s\nmax_body: 512KiB", 1)
	c, err := Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if c.Workers.Count(8) != 3 || time.Duration(c.ShutdownTimeout) != 90*time.Second || c.MaxBody != 512<<10 {
		t.Errorf("got workers=%d shutdown=%v max_body=%d", c.Workers, time.Duration(c.ShutdownTimeout), c.MaxBody)
	}
}

// Each broken file must be refused with its file:line:column and a message
// naming what is wrong.
func TestParseProblems(t *testing.T) {
	cases := []struct {
		name, from, to string
		want           []string
	}{
		{"unknown field", "pin_cpus: true", "pin_cpus: true\nlisten_port: 80", []string{"bad.yaml:5:1", "listen_port"}},
		{"wrong type", "slots: 16", "slots: many", []string{"bad.yaml:15:16"}},
		{"bad workers", "workers: auto", "workers: lots", []string{"bad.yaml:3:", "workers"}},
		{"bad duration", "workers: auto", "workers: auto\nshutdown_timeout: soon", []string{"bad.yaml:4:", "duration"}},
		{"short sha", "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae", "2c26", []string{"bad.yaml:8:13", "keys[0].sha256", "64 hex"}},
		{"slots zero", "slots: 16", "slots: 0", []string{"bad.yaml:15:16", "models[0].backends[0].slots", "at least 1"}},
		{"bad url", "http://127.0.0.1:8000", "ftp://x:1", []string{"models[0].backends[0].url", "scheme"}},
		{"url with path", "http://127.0.0.1:8000", "http://127.0.0.1:8000/v1", []string{"models[0].backends[0].url", "no path"}},
		{"unknown model in key", `models: ["*"]`, `models: ["gpt-9"]`, []string{"bad.yaml:9:", "keys[0].models[0]", "gpt-9"}},
		{"unknown endpoint", "    backends:", "    endpoints: [chat, responses, chats]\n    backends:", []string{"models[0].endpoints[2]", "must be one of chat, completions", `not "chats"`}},
		{"missing env", "slots: 16", "slots: 16\n        api_key_env: SLUICE_TEST_SURELY_UNSET", []string{"models[0].backends[0].api_key_env", "SLUICE_TEST_SURELY_UNSET is not set"}},
		{"api_key_env and api_keys_env", "slots: 16", "slots: 16\n        api_key_env: HOME\n        api_keys_env: [HOME]", []string{"bad.yaml:17:", "models[0].backends[0].api_keys_env", "either api_key_env or api_keys_env"}},
		{"api_keys_env unset", "slots: 16", "slots: 16\n        api_keys_env: [HOME, SLUICE_TEST_SURELY_UNSET]", []string{"bad.yaml:16:", "models[0].backends[0].api_keys_env[1]", "SLUICE_TEST_SURELY_UNSET is not set"}},
		{"api_keys_env twice", "slots: 16", "slots: 16\n        api_keys_env:\n          - HOME\n          - PATH\n          - HOME", []string{"bad.yaml:19:13", "models[0].backends[0].api_keys_env[2]", "HOME is listed twice"}},
		{"api_keys_env empty name", "slots: 16", "slots: 16\n        api_keys_env: [HOME, '']", []string{"models[0].backends[0].api_keys_env[1]", "is empty"}},
		{"nomad api_keys_env unset", "    backends:\n      - url: http://127.0.0.1:8000\n        slots: 16\n",
			"    nomad: {service: vllm, slots: 4, api_keys_env: [SLUICE_TEST_SURELY_UNSET]}\n", []string{"models[0].nomad.api_keys_env[0]", "SLUICE_TEST_SURELY_UNSET is not set"}},
		{"duplicate model", "models:\n", "models:\n  - name: llama-3.1-8b\n    backends: [{url: 'http://127.0.0.1:1', slots: 1}]\n", []string{"models[1].name", "duplicate model name"}},
		{"bad affinity", "slots: 16", "slots: 16\n    affinity: sticky", []string{"models[0].affinity", "prefix, user or none"}},
		{"negative limit", `models: ["*"]`, "models: [\"*\"]\n    requests_per_minute: -5", []string{"bad.yaml:10:", "keys[0].requests_per_minute", "0 (no limit) or more"}},
		{"weight too small", `models: ["*"]`, "models: [\"*\"]\n    weight: 0.001", []string{"bad.yaml:10:", "keys[0].weight", "between 0.01 and 100"}},
		{"negative weight", `models: ["*"]`, "models: [\"*\"]\n    weight: -2", []string{"bad.yaml:10:", "keys[0].weight"}},
		{"priority too high", `models: ["*"]`, "models: [\"*\"]\n    priority: 4", []string{"bad.yaml:10:", "keys[0].priority", "0 (default) to 3"}},
		{"tracing without endpoint", "workers: auto", "workers: auto\ntracing: {protocol: grpc}", []string{"tracing.endpoint", "http:// or https://"}},
		{"tracing bad protocol", "workers: auto", "workers: auto\ntracing: {endpoint: 'http://c:4318', protocol: thrift}", []string{"tracing.protocol", "http or grpc"}},
		{"tracing ratio", "workers: auto", "workers: auto\ntracing: {endpoint: 'http://c:4318', sample_ratio: 1.5}", []string{"tracing.sample_ratio", "between 0 and 1"}},
		{"control character in a key name", "name: team-a", "name: \"team\\0a\"", []string{"keys[0].name", "control character"}},
		{"end_user without a limit", `models: ["*"]`, "models: [\"*\"]\n    end_user: {from: body.user}", []string{"bad.yaml:10:", "keys[0].end_user", "sets no limit"}},
		{"end_user from", `models: ["*"]`, "models: [\"*\"]\n    end_user: {from: cookie, max_concurrent: 1}", []string{"keys[0].end_user.from", "body.user, header:<Name>"}},
		{"end_user header name", `models: ["*"]`, "models: [\"*\"]\n    end_user: {from: \"header:X End\", max_concurrent: 1}", []string{"keys[0].end_user.from"}},
		{"end_user quota period", `models: ["*"]`, "models: [\"*\"]\n    end_user: {quota: {tokens: 5, per: year}}", []string{"keys[0].end_user.quota.per", "day, week or month"}},
		{"end_user quota tokens", `models: ["*"]`, "models: [\"*\"]\n    end_user: {quota: {tokens: 0, per: day}}", []string{"keys[0].end_user.quota.tokens", "must be 1 to"}},
		{"end_user over the table", `models: ["*"]`, "models: [\"*\"]\n    end_user: {max_concurrent: 1, max_tracked: 100000}", []string{"end_user_table", "add up to 100001"}},
		{"jwt key without auth.jwt", `models: ["*"]`, "models: [\"*\"]\n    jwt: true", []string{"bad.yaml:10:", "keys[0].jwt", "needs auth.jwt"}},
		{"claim end user without jwt", `models: ["*"]`, "models: [\"*\"]\n    end_user: {from: \"claim:sub\", max_concurrent: 1}", []string{"keys[0].end_user.from", "set jwt: true"}},
		{"auth.jwt without a source", "workers: auto", "workers: auto\nauth:\n  jwt: {issuers: [i], audiences: [a], key_claim: team}", []string{"bad.yaml:5:", "auth.jwt", "one of jwks_file and jwks_url"}},
		{"auth.jwt both sources", "workers: auto", "workers: auto\nauth:\n  jwt: {jwks_url: 'https://i/k', jwks_file: /etc/hostname, issuers: [i], audiences: [a], key_claim: team}", []string{"auth.jwt", "one of jwks_file and jwks_url"}},
		{"auth.jwt bad url", "workers: auto", "workers: auto\nauth:\n  jwt: {jwks_url: 'ftp://i/k', issuers: [i], audiences: [a], key_claim: team}", []string{"auth.jwt.jwks_url", "http or https"}},
		{"auth.jwt no issuer", "workers: auto", "workers: auto\nauth:\n  jwt: {jwks_url: 'https://i/k', audiences: [a], key_claim: team}", []string{"auth.jwt.issuers", "at least one"}},
		{"auth.jwt no audience", "workers: auto", "workers: auto\nauth:\n  jwt: {jwks_url: 'https://i/k', issuers: [i], key_claim: team}", []string{"auth.jwt.audiences", "at least one"}},
		{"auth.jwt no key claim", "workers: auto", "workers: auto\nauth:\n  jwt: {jwks_url: 'https://i/k', issuers: [i], audiences: [a]}", []string{"auth.jwt.key_claim", "is required"}},
		{"auth.jwt HS256", "workers: auto", "workers: auto\nauth:\n  jwt: {jwks_url: 'https://i/k', issuers: [i], audiences: [a], key_claim: t, algorithms: [RS256, HS256]}", []string{"auth.jwt.algorithms[1]", "asymmetric", "HS256"}},
		{"auth.jwt leeway", "workers: auto", "workers: auto\nauth:\n  jwt: {jwks_url: 'https://i/k', issuers: [i], audiences: [a], key_claim: t, leeway: 1h}", []string{"auth.jwt.leeway", "0 to 5m0s"}},
		{"auth.jwt refresh", "workers: auto", "workers: auto\nauth:\n  jwt: {jwks_url: 'https://i/k', issuers: [i], audiences: [a], key_claim: t, jwks_refresh: 10ms}", []string{"auth.jwt.jwks_refresh", "at least 1s"}},
		{"auth.jwt jwks_file not a set", "workers: auto", "workers: auto\nauth:\n  jwt: {jwks_file: /etc/hostname, issuers: [i], audiences: [a], key_claim: t}", []string{"auth.jwt.jwks_file", "not a JWKS document"}},
		{"fleet spend_exchange", "workers: auto", "workers: auto\nfleet: {nomad_service: gw, spend_exchange: 100ms}", []string{"fleet.spend_exchange", "0 (off"}},
		{"fleet spend_path", "workers: auto", "workers: auto\nfleet: {nomad_service: gw, spend_path: 'a//b'}", []string{"fleet.spend_path", "Nomad variable path"}},
		{"fleet replica", "workers: auto", "workers: auto\nfleet: {nomad_service: gw, replica: 'gw 1'}", []string{"fleet.replica", "at most 128"}},
		{"fleet exchange without a service", "workers: auto", "workers: auto\nfleet: {spend_exchange: 5s}", []string{"fleet", "need fleet.nomad_service"}},
		{"auth.jwt provider without issuer", "workers: auto", "workers: auto\nauth:\n  jwt: {audiences: [a], key_claim: t, providers: [{jwks_url: 'https://i/k'}]}", []string{"auth.jwt.providers[0].issuer", "is required"}},
		{"auth.jwt provider without a set", "workers: auto", "workers: auto\nauth:\n  jwt: {audiences: [a], key_claim: t, providers: [{issuer: i}]}", []string{"auth.jwt.providers[0]", "one of jwks_file and jwks_url"}},
		{"auth.jwt provider bad url", "workers: auto", "workers: auto\nauth:\n  jwt: {audiences: [a], key_claim: t, providers: [{issuer: i, jwks_url: 'file:///k'}]}", []string{"auth.jwt.providers[0].jwks_url", "http or https"}},
		{"auth.jwt provider issuer twice", "workers: auto", "workers: auto\nauth:\n  jwt: {jwks_url: 'https://i/k', issuers: [i], audiences: [a], key_claim: t, providers: [{issuer: j, jwks_url: 'https://j/k'}, {issuer: i, jwks_url: 'https://k/k'}]}", []string{"auth.jwt.providers[1].issuer", `"i" is auth.jwt.issuers[0]'s already`}},
		{"auth.jwt issuers without a set", "workers: auto", "workers: auto\nauth:\n  jwt: {issuers: [i], audiences: [a], key_claim: t, providers: [{issuer: j, jwks_url: 'https://j/k'}]}", []string{"auth.jwt.issuers", "name a key set for them"}},
		{"auth.jwt provider refresh", "workers: auto", "workers: auto\nauth:\n  jwt: {audiences: [a], key_claim: t, providers: [{issuer: j, jwks_url: 'https://j/k', jwks_refresh: 1ms}]}", []string{"auth.jwt.providers[0].jwks_refresh", "at least 1s"}},
		{"auth.jwt jwks_file missing", "workers: auto", "workers: auto\nauth:\n  jwt: {jwks_file: /surely/not/jwks.json, issuers: [i], audiences: [a], key_claim: t}", []string{"auth.jwt.jwks_file", "no such file"}},
		{"key name too long", "name: team-a", "name: " + strings.Repeat("k", 81), []string{"keys[0].name", "81 bytes, more than 80"}},
		{"negative queue", "slots: 16", "slots: 16\n    queue: {max: -1}", []string{"models[0].queue.max", "0 or more"}},
		{"queue max_per_key over max", "slots: 16", "slots: 16\n    queue: {max: 10, max_per_key: 11}", []string{"bad.yaml:16:", "models[0].queue.max_per_key", "0 (no bound) to queue.max (10)"}},
		{"negative max_context", "slots: 16", "slots: 16\n    max_context: -1", []string{"bad.yaml:16:", "models[0].max_context", "must be 0 (not set) or more"}},
		{"cache_group too long", "models: [\"*\"]", "models: [\"*\"]\n    cache_group: " + strings.Repeat("g", 257), []string{"keys[0].cache_group", "at most 256 bytes"}},
		{"region too small", "workers: auto", "workers: auto\nshm_cells: 2", []string{"bad.yaml:4:", "shm_cells", "needs 9 shared-memory cells", "raise shm_cells"}},
		{"missing body_temp_dir", "workers: auto", "workers: auto\nbody_temp_dir: /surely/not/here", []string{"bad.yaml:4:", "body_temp_dir", "no such file"}},
		{"body_temp_dir a file", "workers: auto", "workers: auto\nbody_temp_dir: /etc/hostname", []string{"bad.yaml:4:", "body_temp_dir", "not a directory"}},
		{"body_memory zero", "workers: auto", "workers: auto\nbody_memory: 0", []string{"bad.yaml:4:", "not a size"}},
		{"bad listen", "listen: 127.0.0.1:8080", "listen: nowhere", []string{"bad.yaml:1:", "listen"}},
		{"timeout under 1ms", "workers: auto", "workers: auto\nclient_body_timeout: 500us", []string{"bad.yaml:4:", "client_body_timeout", "at least 1ms"}},
		{"prefix block too small", "workers: auto", "workers: auto\nprefix_index:\n  block: 8", []string{"bad.yaml:5:", "prefix_index.block", "16 to 65536"}},
		{"prefix entries negative", "workers: auto", "workers: auto\nprefix_index: {entries: -1, max_blocks: 0}", []string{"bad.yaml:4:", "prefix_index.entries", "0 (no index)"}},
		{"negative worker_connections", "workers: auto", "workers: auto\nworker_connections: -1", []string{"bad.yaml:4:", "worker_connections", "at least 1"}},
		{"admin timeout not a duration", "workers: auto", "workers: auto\nadmin_timeouts:\n  idle: forever", []string{"bad.yaml:5:", "duration"}},
		{"admin timeout under 1ms", "workers: auto", "workers: auto\nadmin_timeouts:\n  write: 10us", []string{"bad.yaml:5:", "admin_timeouts.write", "at least 1ms"}},
		{"admin read_header over read", "workers: auto", "workers: auto\nadmin_timeouts:\n  read_header: 40s", []string{"bad.yaml:5:", "admin_timeouts.read_header", "must not be over admin_timeouts.read (30s"}},
		{"unknown admin timeout", "workers: auto", "workers: auto\nadmin_timeouts: {header: 5s}", []string{"bad.yaml:4:", "header"}},
		{"negative admin_max_conns", "workers: auto", "workers: auto\nadmin_max_conns: -3", []string{"bad.yaml:4:", "admin_max_conns", "at least 1"}},
		{"admin_hosts with a scheme", "workers: auto", "workers: auto\nadmin_hosts:\n  - gw.example\n  - http://gw.example", []string{"bad.yaml:6:", "admin_hosts[1]", "no scheme or path"}},
		{"admin_hosts bad port", "workers: auto", "workers: auto\nadmin_hosts: [\"gw.example:0\"]", []string{"bad.yaml:4:", "admin_hosts[0]", "1 to 65535"}},
		{"admin_hosts empty", "workers: auto", "workers: auto\nadmin_hosts: [\"\"]", []string{"admin_hosts[0]", "no host"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(validYAML, tc.from, tc.to, 1)
			if src == validYAML {
				t.Fatalf("replacement %q did not apply", tc.from)
			}
			_, err := Parse("bad.yaml", []byte(src))
			if err == nil {
				t.Fatal("accepted a broken config")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestProblemsAreAllReported(t *testing.T) {
	src := strings.Replace(validYAML, "slots: 16", "slots: 0", 1)
	src = strings.Replace(src, "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae", "xyz", 1)
	_, err := Parse("bad.yaml", []byte(src))
	ps, ok := err.(Problems)
	if !ok || len(ps) != 2 {
		t.Fatalf("want 2 problems, got %v", err)
	}
}

func TestParseByteSize(t *testing.T) {
	for in, want := range map[string]int64{"1048576": 1 << 20, "512KiB": 512 << 10, "32MiB": 32 << 20, "1GiB": 1 << 30, "2MB": 2e6} {
		got, err := ParseByteSize(in)
		if err != nil || got != want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "12XB", "MiB"} {
		if _, err := ParseByteSize(in); err == nil {
			t.Errorf("ParseByteSize(%q) accepted", in)
		}
	}
}

// admin_token_env must name a set variable; the token is its value, and
// changing the field needs a restart (the admin listener is set up once).
func TestAdminTokenEnv(t *testing.T) {
	withToken := strings.Replace(validYAML, "admin: 127.0.0.1:9090\n", "admin: 127.0.0.1:9090\nadmin_token_env: SLUICE_CONFIG_TEST_ADMIN\n", 1)
	t.Setenv("SLUICE_CONFIG_TEST_ADMIN", "")
	if _, err := Parse("t.yaml", []byte(withToken)); err == nil || !strings.Contains(err.Error(), "admin_token_env: environment variable SLUICE_CONFIG_TEST_ADMIN is not set") {
		t.Fatalf("an unset token variable: %v", err)
	}
	t.Setenv("SLUICE_CONFIG_TEST_ADMIN", "s3cret")
	c, err := Parse("t.yaml", []byte(withToken))
	if err != nil || c.AdminToken() != "s3cret" {
		t.Fatalf("%v %q", err, c.AdminToken())
	}
	plain, _ := Parse("p.yaml", []byte(validYAML))
	if plain.AdminToken() != "" {
		t.Fatal("a token without admin_token_env")
	}
	if ch := RestartChanges(plain, c); len(ch) != 1 || !strings.HasPrefix(ch[0], "admin_token_env changed") {
		t.Fatalf("RestartChanges: %v", ch)
	}
}

// api_keys_env: every named variable set, and each entry takes a cell of
// its own (its rotation state, shared by the workers).
func TestAPIKeysEnv(t *testing.T) {
	t.Setenv("SLUICE_CONFIG_TEST_K1", "sk-1")
	t.Setenv("SLUICE_CONFIG_TEST_K2", "sk-2")
	t.Setenv("SLUICE_CONFIG_TEST_EMPTY", "")
	src := strings.Replace(validYAML, "slots: 16", "slots: 16\n        api_keys_env: [SLUICE_CONFIG_TEST_K1, SLUICE_CONFIG_TEST_K2]", 1)
	c, err := Parse("k.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Models[0].Backends[0].APIKeysEnv; len(got) != 2 || got[1] != "SLUICE_CONFIG_TEST_K2" {
		t.Fatalf("api_keys_env = %v", got)
	}
	if plain, _ := Parse("p.yaml", []byte(validYAML)); c.CellsNeeded() != plain.CellsNeeded()+2 {
		t.Fatalf("CellsNeeded %d with two provider keys, %d without", c.CellsNeeded(), plain.CellsNeeded())
	}
	empty := strings.Replace(src, "SLUICE_CONFIG_TEST_K2", "SLUICE_CONFIG_TEST_EMPTY", 1)
	if _, err := Parse("e.yaml", []byte(empty)); err == nil || !strings.Contains(err.Error(), "api_keys_env[1]: environment variable SLUICE_CONFIG_TEST_EMPTY is not set") {
		t.Fatalf("a variable set to the empty string: %v", err)
	}
}

// prefix_index: entries 0 turns the index off (not the default); a change
// of entries takes a restart (it sizes the region), block and max_blocks
// apply at a reload.
func TestPrefixIndexConfig(t *testing.T) {
	plain, err := Parse("p.yaml", []byte(validYAML))
	if err != nil {
		t.Fatal(err)
	}
	off, err := Parse("o.yaml", []byte(validYAML+"prefix_index: {entries: 0, block: 512}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if off.PrefixEntries() != 0 || off.PrefixIndex.Block != 512 || off.PrefixIndex.MaxBlocks != DefaultPrefixMaxBlocks {
		t.Fatalf("entries %d block %d max_blocks %d", off.PrefixEntries(), off.PrefixIndex.Block, off.PrefixIndex.MaxBlocks)
	}
	if ch := RestartChanges(plain, off); len(ch) != 1 || ch[0] != "prefix_index.entries changed from 65536 to 0" {
		t.Fatalf("RestartChanges: %v", ch)
	}
	if (&Config{}).PrefixEntries() != DefaultPrefixEntries {
		t.Fatal("a config built in code has no index")
	}
}

// The admin listener's bounds: defaults, a file's own values, and a change
// of any of them needs a restart.
func TestAdminBounds(t *testing.T) {
	plain, err := Parse("p.yaml", []byte(validYAML))
	if err != nil {
		t.Fatal(err)
	}
	want := AdminTimeouts{ReadHeader: Duration(5 * time.Second), Read: Duration(30 * time.Second),
		Write: Duration(30 * time.Second), Idle: Duration(60 * time.Second)}
	if plain.AdminTimeouts != want || plain.AdminMaxConns != 64 || plain.AdminHosts != nil {
		t.Fatalf("defaults: admin_timeouts %+v admin_max_conns %d admin_hosts %v", plain.AdminTimeouts, plain.AdminMaxConns, plain.AdminHosts)
	}
	set, err := Parse("s.yaml", []byte(validYAML+"admin_timeouts: {read_header: 2s, idle: 5m}\nadmin_max_conns: 8\nadmin_hosts: [gw.example, \"[::1]:9090\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if at := set.AdminTimeouts; time.Duration(at.ReadHeader) != 2*time.Second || time.Duration(at.Idle) != 5*time.Minute ||
		time.Duration(at.Read) != 30*time.Second || set.AdminMaxConns != 8 || len(set.AdminHosts) != 2 {
		t.Fatalf("admin_timeouts %+v admin_max_conns %d admin_hosts %v", at, set.AdminMaxConns, set.AdminHosts)
	}
	ch := RestartChanges(plain, set)
	if len(ch) != 3 || !strings.HasPrefix(ch[0], "admin_timeouts changed") || !strings.HasPrefix(ch[1], "admin_max_conns changed from 64 to 8") ||
		!strings.HasPrefix(ch[2], "admin_hosts changed") {
		t.Fatalf("RestartChanges: %v", ch)
	}
}

func TestAdminHostPattern(t *testing.T) {
	for in, want := range map[string][2]string{
		"gw.example":      {"gw.example", ""},
		"GW.Example:9090": {"gw.example", "9090"},
		"10.0.0.7":        {"10.0.0.7", ""},
		"10.0.0.7:9090":   {"10.0.0.7", "9090"},
		"[::1]":           {"::1", ""},
		"[FE80::1]:9090":  {"fe80::1", "9090"},
		"::1":             {"::1", ""},
		"admin_host":      {"admin_host", ""},
	} {
		host, port, err := AdminHostPattern(in)
		if err != nil || host != want[0] || port != want[1] {
			t.Errorf("AdminHostPattern(%q) = %q, %q, %v; want %q, %q", in, host, port, err, want[0], want[1])
		}
	}
	for _, in := range []string{"", ":9090", "gw.example:", "gw.example:http", "gw.example:70000", "gw example", "gw.example/ui", "http://gw.example", "[gw.example]:1", "a:b:c", "*.example"} {
		if host, port, err := AdminHostPattern(in); err == nil {
			t.Errorf("AdminHostPattern(%q) = %q, %q; want an error", in, host, port)
		}
	}
}

// models[].fallbacks and context_fallbacks name configured models, never
// the model itself or one twice, each refused at its line.
func TestModelFallbackChains(t *testing.T) {
	head := "keys:\n  - name: k\n    sha256: " + strings.Repeat("a", 64) + "\n    models: [\"*\"]\nmodels:\n" +
		"  - name: b\n    backends: [{url: http://127.0.0.1:1, slots: 1}]\n  - name: a\n    backends: [{url: http://127.0.0.1:1, slots: 1}]\n"
	if _, err := Parse("ok.yaml", []byte(head+"    fallbacks: [b]\n    context_fallbacks: [b]\n")); err != nil {
		t.Fatalf("a valid chain: %v", err)
	}
	for _, tc := range []struct{ chain, want string }{
		{"    fallbacks: [nope]\n", "bad.yaml:10:17: models[1].fallbacks[0]: unknown model \"nope\""},
		{"    fallbacks: [b, a]\n", "bad.yaml:10:20: models[1].fallbacks[1]: the chain loops: \"a\" falls back to itself"},
		{"    context_fallbacks: [b, b]\n", "bad.yaml:10:28: models[1].context_fallbacks[1]: the chain loops: \"b\" is in it twice"},
	} {
		if _, err := Parse("bad.yaml", []byte(head+tc.chain)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.chain, err, tc.want)
		}
	}
}

// models[].price: each figure 0 to MaxPricePerMTok, refused at its line
// otherwise (a negative price, NaN, infinity); cached defaults to input.
func TestModelPrice(t *testing.T) {
	head := "keys:\n  - name: k\n    sha256: " + strings.Repeat("a", 64) + "\n    models: [\"*\"]\nmodels:\n  - name: m\n    backends:\n      - url: http://127.0.0.1:1\n        slots: 1\n"
	c, err := Parse("ok.yaml", []byte(head+"    price: {input_per_mtok: 0.15, output_per_mtok: 0.6}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if in, cached, out := c.Models[0].Price.PicoPerToken(); in != 150_000 || cached != 150_000 || out != 600_000 {
		t.Errorf("PicoPerToken: %d %d %d", in, cached, out)
	}
	for _, tc := range []struct{ price, want string }{
		{"{input_per_mtok: -1}", "bad.yaml:10:29: models[0].price.input_per_mtok: must be 0 to 10000"},
		{"{output_per_mtok: .nan}", "models[0].price.output_per_mtok: must be 0 to 10000"},
		{"{cached_input_per_mtok: .inf}", "models[0].price.cached_input_per_mtok: must be 0 to 10000"},
		{"{input_per_mtok: 20000}", "models[0].price.input_per_mtok: must be 0 to 10000"},
	} {
		if _, err := Parse("bad.yaml", []byte(head+"    price: "+tc.price+"\n")); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.price, err, tc.want)
		}
	}
}

// auth.jwt's key sets: its own and each provider's, in order, each for
// its own issuers; providers alone need no top-level set.
func TestJWTSources(t *testing.T) {
	both := strings.Replace(validYAML, "workers: auto", `workers: auto
auth:
  jwt:
    jwks_url: https://a.example/jwks
    issuers: [https://a.example, https://a2.example]
    audiences: [sluice]
    key_claim: team
    providers:
      - {issuer: https://b.example, jwks_url: https://b.example/jwks, jwks_refresh: 1m}
      - {issuer: https://c.example, jwks_file: /dev/null}`, 1)
	c, err := Parse("ok.yaml", []byte(strings.Replace(both, "/dev/null", "/surely/not", 1)))
	if err == nil || !strings.Contains(err.Error(), "auth.jwt.providers[1].jwks_file") {
		t.Fatalf("a provider's missing jwks_file: %v", err)
	}
	c, err = Parse("ok.yaml", []byte(strings.Replace(both, "jwks_file: /dev/null", "jwks_url: https://c.example/k", 1)))
	if err != nil {
		t.Fatal(err)
	}
	got := c.Auth.JWT.Sources()
	if len(got) != 3 || got[0].URL != "https://a.example/jwks" || len(got[0].Issuers) != 2 || got[0].ProviderIndex != -1 ||
		got[1].Issuers[0] != "https://b.example" || got[1].Refresh != time.Minute || got[1].ProviderIndex != 0 ||
		got[2].URL != "https://c.example/k" || got[2].Refresh != DefaultJWKSRefresh {
		t.Fatalf("sources %+v", got)
	}
	only := strings.Replace(validYAML, "workers: auto", `workers: auto
auth:
  jwt: {audiences: [sluice], key_claim: team, providers: [{issuer: https://b.example, jwks_url: https://b.example/jwks}]}`, 1)
	if c, err = Parse("ok.yaml", []byte(only)); err != nil {
		t.Fatal(err)
	}
	if got := c.Auth.JWT.Sources(); len(got) != 1 || got[0].Issuers[0] != "https://b.example" {
		t.Fatalf("providers alone: %+v", got)
	}
}
