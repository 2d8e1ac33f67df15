package config

import (
	"cmp"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// Problem is one thing wrong with a configuration file, located by file,
// line and column where the file says where, and always by field path.
type Problem struct {
	File   string
	Line   int // 0 when unknown
	Column int
	Path   string // e.g. models[0].backends[1].url; empty for syntax errors
	Msg    string
}

func (p Problem) String() string {
	loc := p.File
	if p.Line > 0 {
		loc = fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Column)
	}
	if p.Path != "" {
		return fmt.Sprintf("%s: %s: %s", loc, p.Path, p.Msg)
	}
	return fmt.Sprintf("%s: %s", loc, p.Msg)
}

// Problems is every problem found in one file; Load reports them together,
// the way `nginx -t` and Nomad's Validate do, so one run fixes them all.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Load reads, decodes and validates the configuration file at path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return Parse(path, data)
}

// Parse decodes and validates a configuration; name is used in messages.
// Decoding is strict: an unknown field or a value of the wrong type is an
// error at its line and column. The TLS files it names are read once, into
// the Config's Files.
func Parse(name string, data []byte) (*Config, error) { return parse(name, data, nil, false) }

// ParseFrame is Parse as a worker reads the configuration the supervisor
// validated and sent (a reload frame): the listeners' TLS files from
// files (a file it lacks is read from disk), and admin_tls left
// unchecked, its files being the supervisor's alone (its key never
// reaches a worker).
func ParseFrame(name string, data []byte, files Files) (*Config, error) {
	return parse(name, data, files, true)
}

func parse(name string, data []byte, files Files, frame bool) (*Config, error) {
	c := Config{Files: Files{}, frame: frame}
	for path, b := range files {
		c.Files[path] = b
	}
	if err := yaml.UnmarshalWithOptions(data, &c, yaml.Strict()); err != nil {
		return nil, Problems{decodeProblem(name, err)}
	}
	c.applyDefaults()
	probs := c.validate()
	if len(probs) == 0 {
		return &c, nil
	}
	locate(name, data, probs)
	return nil, probs
}

// decodeProblem turns a go-yaml error into a Problem with its position.
func decodeProblem(name string, err error) Problem {
	p := Problem{File: name, Msg: err.Error()}
	var ne *nodeError
	var ye yaml.Error
	if errors.As(err, &ne) {
		p.Msg, p.Line, p.Column = ne.msg, ne.line, ne.column
	} else if errors.As(err, &ye) {
		p.Msg = ye.GetMessage()
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			p.Line, p.Column = tk.Position.Line, tk.Position.Column
		}
	}
	return p
}

// locate fills in file, line and column of each problem from its path.
func locate(name string, data []byte, probs Problems) {
	file, err := parser.ParseBytes(data, 0)
	for i := range probs {
		probs[i].File = name
		if err != nil || probs[i].Path == "" {
			continue
		}
		path, perr := yaml.PathString("$." + probs[i].Path)
		if perr != nil {
			continue
		}
		node, ferr := path.FilterFile(file)
		if ferr != nil || node == nil {
			// The field is absent: point at its parent, the closest thing that exists.
			node = parentNode(file, probs[i].Path)
		}
		if node != nil {
			if tk := node.GetToken(); tk != nil && tk.Position != nil {
				probs[i].Line, probs[i].Column = tk.Position.Line, tk.Position.Column
			}
		}
	}
}

func parentNode(file *ast.File, p string) ast.Node {
	for {
		cut := strings.LastIndexAny(p, ".[")
		if cut <= 0 {
			return nil
		}
		p = p[:cut]
		if path, err := yaml.PathString("$." + p); err == nil {
			if n, err := path.FilterFile(file); err == nil && n != nil {
				return n
			}
		}
	}
}

// validate checks what decoding cannot: names, URLs, ranges, references and
// the environment. It returns every problem, not just the first.
func (c *Config) validate() Problems {
	var ps Problems
	add := func(path, format string, args ...any) {
		ps = append(ps, Problem{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	c.validateListeners(add)
	if _, _, err := net.SplitHostPort(c.Admin); err != nil {
		add("admin", "%q is not host:port", c.Admin)
	}
	if c.AdminTLS != nil && !c.frame {
		c.AdminTLS.validate("admin_tls", c.Files, add)
	}
	if c.AdminTokenEnv != "" && c.AdminToken() == "" {
		add("admin_token_env", "environment variable %s is not set (the admin listener's bearer token)", c.AdminTokenEnv)
	}
	if c.GoMaxProcs < 1 {
		add("gomaxprocs", "must be at least 1")
	}
	if c.GOGC < 10 || c.GOGC > 1000 {
		add("gogc", "must be between 10 and 1000, got %d", c.GOGC)
	}
	for _, d := range []struct {
		name string
		v    Duration
	}{
		{"client_header_timeout", c.ClientHeaderTimeout},
		{"client_body_timeout", c.ClientBodyTimeout},
		{"send_timeout", c.SendTimeout},
		{"keepalive_timeout", c.KeepaliveTimeout},
		{"admin_timeouts.read_header", c.AdminTimeouts.ReadHeader},
		{"admin_timeouts.read", c.AdminTimeouts.Read},
		{"admin_timeouts.write", c.AdminTimeouts.Write},
		{"admin_timeouts.idle", c.AdminTimeouts.Idle},
	} {
		if time.Duration(d.v) < time.Millisecond {
			add(d.name, "must be at least 1ms, got %s", time.Duration(d.v))
		}
	}
	if at := c.AdminTimeouts; at.ReadHeader > at.Read {
		add("admin_timeouts.read_header", "must not be over admin_timeouts.read (%s, which bounds the head too), got %s",
			time.Duration(at.Read), time.Duration(at.ReadHeader))
	}
	if c.AdminMaxConns < 1 {
		add("admin_max_conns", "must be at least 1, got %d", c.AdminMaxConns)
	}
	for i, h := range c.AdminHosts {
		if _, _, err := AdminHostPattern(h); err != nil {
			add(fmt.Sprintf("admin_hosts[%d]", i), "%v", err)
		}
	}
	if c.WorkerConnections < 1 {
		add("worker_connections", "must be at least 1, got %d", c.WorkerConnections)
	}
	if len(c.Keys) == 0 {
		add("keys", "at least one key is required")
	}
	if len(c.Models) == 0 {
		add("models", "at least one model is required")
	}

	models := map[string]bool{}
	for i, m := range c.Models {
		p := fmt.Sprintf("models[%d]", i)
		switch {
		case m.Name == "":
			add(p+".name", "is required")
		case models[m.Name]:
			add(p+".name", "duplicate model name %q", m.Name)
		case hasControl(m.Name):
			add(p+".name", "has a control character (%q): it names the model in metrics and logs", m.Name)
		}
		models[m.Name] = true
		switch n := m.Nomad; {
		case n == nil && len(m.Backends) == 0:
			add(p+".backends", "at least one backend is required (or nomad: to discover them)")
		case n != nil && len(m.Backends) > 0:
			add(p+".nomad", "give either backends or nomad, not both")
		case n != nil:
			if n.Service == "" {
				add(p+".nomad.service", "is required: the Nomad service whose instances are the backends")
			}
			if n.Slots < 1 {
				add(p+".nomad.slots", "must be at least 1 (slots of each instance), got %d", n.Slots)
			}
			if n.Scheme != "http" && n.Scheme != "https" {
				add(p+".nomad.scheme", "must be http or https, not %q", n.Scheme)
			}
			checkKeyEnvs(add, p+".nomad", n.APIKeyEnv, n.APIKeysEnv)
		}
		if m.KVSaturation <= 0 || m.KVSaturation > 1 {
			add(p+".kv_saturation", "must be in (0, 1], got %v", m.KVSaturation)
		}
		for j, e := range m.Endpoints {
			if !slices.Contains(APIs, e) {
				add(fmt.Sprintf("%s.endpoints[%d]", p, j), "must be one of %s, not %q", strings.Join(APIs, ", "), e)
			}
		}
		switch m.Affinity {
		case "prefix", "user", "none":
		default:
			add(p+".affinity", "must be prefix, user or none, not %q", m.Affinity)
		}
		if !strings.HasPrefix(m.Health.Path, "/") {
			add(p+".health.path", "must start with /, got %q", m.Health.Path)
		}
		if time.Duration(m.Health.Interval) < 100*time.Millisecond {
			add(p+".health.interval", "must be at least 100ms")
		}
		if *m.Retries < 0 {
			add(p+".retries", "must be 0 or more, got %d", *m.Retries)
		}
		if *m.Queue.Max < 0 {
			add(p+".queue.max", "must be 0 or more, got %d", *m.Queue.Max)
		}
		if n := *m.Queue.MaxPerKey; n < 0 || n > max(*m.Queue.Max, 0) {
			add(p+".queue.max_per_key", "must be 0 (no bound) to queue.max (%d), got %d", *m.Queue.Max, n)
		}
		if m.MaxContext < 0 {
			add(p+".max_context", "must be 0 (not set) or more tokens, got %d", m.MaxContext)
		}
		if pr := m.Price; pr != nil {
			for _, f := range []struct {
				name string
				v    *float64
			}{{"input_per_mtok", &pr.InputPerMTok}, {"output_per_mtok", &pr.OutputPerMTok}, {"cached_input_per_mtok", pr.CachedInputPerMTok}} {
				if f.v != nil && !(*f.v >= 0 && *f.v <= MaxPricePerMTok) {
					add(p+".price."+f.name, "must be 0 to %d (USD per million tokens), got %v", MaxPricePerMTok, *f.v)
				}
			}
		}
		if m.DefaultMaxTokens < 1 {
			add(p+".default_max_tokens", "must be at least 1, got %d", m.DefaultMaxTokens)
		}
		if m.AffinityLoadCap < 1 {
			add(p+".affinity_load_cap", "must be at least 1 (1.25 lets a backend take 25%% more than an even share), got %v", m.AffinityLoadCap)
		}
		urls := map[string]bool{}
		for j, b := range m.Backends {
			bp := fmt.Sprintf("%s.backends[%d]", p, j)
			if err := checkBackendURL(b.URL); err != nil {
				add(bp+".url", "%v", err)
			} else if urls[b.URL] {
				add(bp+".url", "duplicate backend %q in model %q", b.URL, m.Name)
			}
			urls[b.URL] = true
			if b.Slots < 1 {
				add(bp+".slots", "must be at least 1, got %d", b.Slots)
			}
			checkKeyEnvs(add, bp, b.APIKeyEnv, b.APIKeysEnv)
		}
	}

	names, hashes, certs := map[string]bool{}, map[string]bool{}, map[[32]byte]bool{}
	verifiesClients := false
	for _, l := range c.Listen {
		verifiesClients = verifiesClients || l.TLS != nil && l.TLS.ClientCA != ""
	}
	for i, m := range c.Models {
		for _, list := range []struct {
			field string
			names []string
		}{{"fallbacks", m.Fallbacks}, {"context_fallbacks", m.ContextFallbacks}} {
			seen := map[string]bool{}
			for j, f := range list.names {
				fp := fmt.Sprintf("models[%d].%s[%d]", i, list.field, j)
				switch {
				case !models[f]:
					add(fp, "unknown model %q", f)
				case f == m.Name:
					add(fp, "the chain loops: %q falls back to itself", f)
				case seen[f]:
					add(fp, "the chain loops: %q is in it twice", f)
				}
				seen[f] = true
			}
		}
	}
	if j := c.Auth.JWT; j != nil {
		checkJWT(add, j, c.frame)
	}
	tracked := 0 // end users the keys' end_user blocks may track, together
	for i, k := range c.Keys {
		p := fmt.Sprintf("keys[%d]", i)
		switch {
		case k.Name == "":
			add(p+".name", "is required")
		case names[k.Name]:
			add(p+".name", "duplicate key name %q", k.Name)
		case hasControl(k.Name):
			add(p+".name", "has a control character (%q): it names the key in metrics and logs", k.Name)
		case len(k.Name) > MaxKeyName:
			add(p+".name", "is %d bytes, more than %d: it names the key's cells in the shared region, and its quota state", len(k.Name), MaxKeyName)
		}
		names[k.Name] = true
		switch b, err := hex.DecodeString(k.SHA256); {
		case k.SHA256 == "" && k.ClientCertSHA256 != "": // a key of client certificates alone
		case k.SHA256 == "" && k.JWT: // a key of JWTs alone
		case err != nil || len(b) != 32:
			add(p+".sha256", "must be 64 hex characters (the SHA-256 of the key, e.g. `printf %%s \"$KEY\" | sha256sum`)")
		case hashes[strings.ToLower(k.SHA256)]:
			add(p+".sha256", "the same key hash appears twice")
		default:
			hashes[strings.ToLower(k.SHA256)] = true
		}
		if k.ClientCertSHA256 != "" {
			switch sum, ok := CertFingerprint(k.ClientCertSHA256); {
			case !ok:
				add(p+".client_cert_sha256", "must be the SHA-256 fingerprint of a client certificate: 64 hex characters, colons between pairs optional (`openssl x509 -in client.pem -noout -fingerprint -sha256`)")
			case certs[sum]:
				add(p+".client_cert_sha256", "the same client certificate appears twice")
			case !verifiesClients:
				add(p+".client_cert_sha256", "no TLS listener has a client_ca, so no client ever presents a certificate: set listen[].tls.client_ca")
			default:
				certs[sum] = true
			}
		}
		if len(k.Models) == 0 {
			add(p+".models", "list the models this key may use, or [\"*\"] for all")
		}
		for j, m := range k.Models {
			if m != "*" && !models[m] {
				add(fmt.Sprintf("%s.models[%d]", p, j), "unknown model %q", m)
			}
		}
		checkRates(add, p, k.RequestsPerMinute, k.TokensPerMinute, k.MaxConcurrent)
		if k.Weight != 0 && !(k.Weight >= MinKeyWeight && k.Weight <= MaxKeyWeight) {
			add(p+".weight", "must be between %g and %g (default %g), got %g", MinKeyWeight, MaxKeyWeight, DefaultKeyWeight, k.Weight)
		}
		if k.Priority < 0 || k.Priority > MaxKeyPriority {
			add(p+".priority", "must be 0 (default) to %d, got %d", MaxKeyPriority, k.Priority)
		}
		for _, q := range []struct {
			field string
			v     int64
		}{{"day", k.Quotas.Day}, {"week", k.Quotas.Week}, {"month", k.Quotas.Month}} {
			if q.v < 0 {
				add(p+".quotas."+q.field, "must be 0 (no quota) or more tokens, got %d", q.v)
			}
		}
		if b := k.Budget; b != nil {
			if !(b.USD > 0 && b.USD <= MaxBudgetUSD) {
				add(p+".budget.usd", "must be over 0 and at most %d, got %v", MaxBudgetUSD, b.USD)
			}
			switch b.Per {
			case "day", "week", "month":
			default:
				add(p+".budget.per", "must be day, week or month, got %q", b.Per)
			}
		}
		if e := k.EndUser; e != nil {
			tracked += e.Tracked() + 1 // and its overflow end user
			checkEndUser(add, p+".end_user", e)
			if e.EndUserClaim() != "" && !k.JWT {
				add(p+".end_user.from", "claim:%s reads a JWT's claim, but this key takes no JWTs: set jwt: true", e.EndUserClaim())
			}
		}
		if k.JWT && c.Auth.JWT == nil {
			add(p+".jwt", "needs auth.jwt: the identity provider whose tokens this key takes")
		}
		if len(k.CacheGroup) > MaxCacheGroup {
			add(p+".cache_group", "must be at most %d bytes, got %d", MaxCacheGroup, len(k.CacheGroup))
		}
	}
	switch n := c.EndUserEntries(); {
	case n < 0 || n > MaxEndUserTable:
		add("end_user_table", "must be 0 (no table) to %d entries, got %d", MaxEndUserTable, n)
	case 2*tracked > n:
		add("end_user_table", "holds %d end users, and the keys' end_user.max_tracked (each and its overflow end user) add up to %d: "+
			"the table needs twice that, so that its buckets of eight do not fill (raise end_user_table, a restart, or lower max_tracked)", n, tracked)
	}
	if f := c.Fleet; f.NomadService != "" {
		if d := f.SpendExchange; d != nil && *d != 0 && (time.Duration(*d) < MinSpendExchange || time.Duration(*d) > MaxSpendExchange) {
			add("fleet.spend_exchange", "must be 0 (off: quotas divided by the replicas) or %s to %s, got %s", MinSpendExchange, MaxSpendExchange, time.Duration(*d))
		}
		if p := f.SpendPrefix(); !nomadVariablePath(p) {
			add("fleet.spend_path", "must be a Nomad variable path of at most 88 bytes: segments of letters, digits, '-', '_', '~' and '.' between single slashes, got %q", p)
		}
		if r := f.Replica; r != "" && (len(r) > 128 || strings.Trim(r, nomadVariableChars) != "") {
			add("fleet.replica", "must be at most 128 letters, digits, '-', '_', '~' and '.', got %q", r)
		}
	} else if f.SpendExchange != nil || f.SpendPath != "" || f.Replica != "" {
		add("fleet", "spend_exchange, spend_path and replica need fleet.nomad_service")
	}
	if c.StateDir != "" && !filepath.IsAbs(c.StateDir) {
		add("state_dir", "must be an absolute path (e.g. /var/lib/sluice), got %q", c.StateDir)
	}
	if _, err := time.LoadLocation(cmp.Or(c.QuotaTimezone, "UTC")); err != nil {
		add("quota_timezone", "is not a time zone this machine knows (an IANA name such as Europe/Paris): %v", err)
	}
	if tr := c.Tracing; tr.Endpoint != "" || tr.Protocol != "" || tr.SampleRatio != nil {
		if u, err := url.Parse(tr.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add("tracing.endpoint", "must be an http:// or https:// URL of an OTLP receiver (e.g. http://otel-collector:4318), got %q", tr.Endpoint)
		}
		if tr.Protocol != "" && tr.Protocol != "http" && tr.Protocol != "grpc" {
			add("tracing.protocol", "must be http or grpc, got %q", tr.Protocol)
		}
		if r := tr.SampleRatio; r != nil && !(*r >= 0 && *r <= 1) {
			add("tracing.sample_ratio", "must be between 0 and 1, got %g", *r)
		}
	}
	if c.UsageLogFlush < 0 {
		add("usage_log_flush", "must be 0 (a write per line) or more, got %s", time.Duration(c.UsageLogFlush))
	}
	if dir := c.BodyTempDir; dir != "" && dir != "off" { // the default is looked at when used
		if fi, err := os.Stat(dir); err != nil {
			add("body_temp_dir", "%v (a directory for request bodies over body_memory, or \"off\")", err)
		} else if !fi.IsDir() {
			add("body_temp_dir", "%s is not a directory", dir)
		}
	}
	if n := c.PrefixEntries(); n < 0 || n > 1<<26 {
		add("prefix_index.entries", "must be 0 (no index) to 67108864 (2 GiB), got %d", n)
	}
	if b := c.PrefixIndex.Block; b < 16 || b > 1<<16 {
		add("prefix_index.block", "must be 16 to 65536 bytes, got %d", b)
	}
	if m := c.PrefixIndex.MaxBlocks; m < 1 || m > 1<<16 {
		add("prefix_index.max_blocks", "must be 1 to 65536, got %d", m)
	}
	if c.ShmCells < 1 {
		add("shm_cells", "must be at least 1, got %d", c.ShmCells)
	} else if need := c.CellsNeeded(); need > c.ShmCells {
		add("shm_cells", "the configuration needs %d shared-memory cells (one per key, per model, per backend and per api_keys_env entry, and six for the gateway's own gauges) "+
			"and the region holds %d: raise shm_cells", need, c.ShmCells)
	}
	return ps
}

// checkKeyEnvs checks a backend's api_key_env or api_keys_env (at path p):
// not both, every variable set, no name twice.
func checkKeyEnvs(add func(path, format string, args ...any), p, one string, many []string) {
	if one != "" && len(many) > 0 {
		add(p+".api_keys_env", "give either api_key_env or api_keys_env, not both")
	}
	if one != "" && os.Getenv(one) == "" {
		add(p+".api_key_env", "environment variable %s is not set", one)
	}
	seen := map[string]bool{}
	for i, name := range many {
		ep := fmt.Sprintf("%s.api_keys_env[%d]", p, i)
		switch {
		case name == "":
			add(ep, "is empty: name an environment variable holding one of the backend's keys")
		case seen[name]:
			add(ep, "%s is listed twice", name)
		case os.Getenv(name) == "":
			add(ep, "environment variable %s is not set", name)
		}
		seen[name] = true
	}
}

func checkBackendURL(raw string) error {
	if raw == "" {
		return errors.New("is required")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%q: scheme must be http or https", raw)
	}
	if u.Host == "" || u.Port() == "" && strings.HasSuffix(u.Host, ":") {
		return fmt.Errorf("%q has no host", raw)
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("%q: give only scheme://host:port (no path, query or credentials)", raw)
	}
	return nil
}

// hasControl reports whether s holds a control character (a NUL would
// split a metric series' descriptor; a line feed would break a log line
// and a label).
func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return true
		}
	}
	return false
}

// checkRates validates the limits a key and its end users both have, at p.
func checkRates(add func(field, format string, args ...any), p string, rpm, tpm, concurrent int64) {
	for _, l := range []struct {
		field string
		v     int64
	}{{"requests_per_minute", rpm}, {"tokens_per_minute", tpm}, {"max_concurrent", concurrent}} {
		if l.v < 0 {
			add(p+"."+l.field, "must be 0 (no limit) or more, got %d", l.v)
		}
	}
}

// checkJWT validates auth.jwt; a jwks_file must hold a usable key set
// (except in a frame, whose files are read where it runs).
func checkJWT(add func(field, format string, args ...any), j *JWT, frame bool) {
	const p = "auth.jwt"
	own := j.JWKSFile != "" || j.JWKSURL != ""
	switch {
	case own || len(j.Providers) == 0:
		checkJWKS(add, p, j.JWKSFile, j.JWKSURL, j.JWKSRefresh, frame)
		if len(j.Issuers) == 0 {
			add(p+".issuers", "at least one issuer is required: a token of any other is refused")
		}
	case len(j.Issuers) > 0:
		add(p+".issuers", "name a key set for them (jwks_file or jwks_url), or give each its entry in providers")
	}
	if len(j.Providers) > MaxJWTProviders {
		add(p+".providers", "at most %d providers, got %d", MaxJWTProviders, len(j.Providers))
	}
	seen := map[string]string{}
	for i, iss := range j.Issuers {
		seen[iss] = fmt.Sprintf("%s.issuers[%d]", p, i)
	}
	for i, pr := range j.Providers {
		pp := fmt.Sprintf("%s.providers[%d]", p, i)
		switch first, dup := seen[pr.Issuer]; {
		case pr.Issuer == "":
			add(pp+".issuer", "is required: the \"iss\" its key set signs for")
		case dup:
			add(pp+".issuer", "%q is %s's already: an issuer has one key set", pr.Issuer, first)
		default:
			seen[pr.Issuer] = pp
		}
		checkJWKS(add, pp, pr.JWKSFile, pr.JWKSURL, pr.JWKSRefresh, frame)
	}
	if len(j.Audiences) == 0 {
		add(p+".audiences", "at least one audience is required: a token issued for another service must not pass here")
	}
	if j.KeyClaim == "" {
		add(p+".key_claim", "is required: the claim naming the key (keys[].name, with jwt: true) a token stands for")
	}
	for i, a := range j.Algorithms {
		if !slices.Contains(JWTAlgorithms, a) {
			add(fmt.Sprintf("%s.algorithms[%d]", p, i), "must be one of %s (asymmetric), not %q", strings.Join(JWTAlgorithms, ", "), a)
		}
	}
	if j.Algorithms != nil && len(j.Algorithms) == 0 {
		add(p+".algorithms", "must name at least one algorithm (or be left out: %s)", strings.Join(DefaultJWTAlgorithms, ", "))
	}
	if l := j.LeewayOrDefault(); l < 0 || l > MaxJWTLeeway {
		add(p+".leeway", "must be 0 to %s, got %s", MaxJWTLeeway, l)
	}
}

// checkJWKS validates one key set of auth.jwt, at p: one of file and url,
// its refresh, and a file's shape.
func checkJWKS(add func(field, format string, args ...any), p, file, addr string, refresh Duration, frame bool) {
	switch {
	case (file == "") == (addr == ""):
		add(p, "give one of jwks_file and jwks_url: where the identity provider's key set is")
	case addr != "":
		if u, err := url.Parse(addr); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add(p+".jwks_url", "must be an http or https URL, got %q", addr)
		}
	}
	if refresh != 0 && time.Duration(refresh) < MinJWKSRefresh {
		add(p+".jwks_refresh", "must be at least %s, got %s", MinJWKSRefresh, time.Duration(refresh))
	}
	if file == "" || frame {
		return
	}
	// Its shape only: which keys can verify is package jwtauth's to say,
	// when a worker loads it (config imports nothing of sluice's).
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	data, err := os.ReadFile(file)
	switch {
	case err != nil:
		add(p+".jwks_file", "%v", err)
	case len(data) > MaxJWKSBytes:
		add(p+".jwks_file", "is %d bytes, more than %d", len(data), MaxJWKSBytes)
	case json.Unmarshal(data, &doc) != nil:
		add(p+".jwks_file", "is not a JWKS document (a JSON object with \"keys\")")
	case len(doc.Keys) == 0:
		add(p+".jwks_file", "holds no key")
	}
}

// checkEndUser validates a key's end_user block at p.
func checkEndUser(add func(field, format string, args ...any), p string, e *EndUser) {
	switch h := e.EndUserHeader(); {
	case e.From == "" || e.From == "body.user":
	case h != "" && validHeaderName(h):
	case e.EndUserClaim() != "":
	default:
		add(p+".from", "must be body.user, header:<Name> (a header name, e.g. header:X-End-User) or claim:<name> (a JWT claim), got %q", e.From)
	}
	checkRates(add, p, e.RequestsPerMinute, e.TokensPerMinute, e.MaxConcurrent)
	if q := e.Quota; q != nil {
		if q.Tokens <= 0 || q.Tokens > MaxEndUserQuota {
			add(p+".quota.tokens", "must be 1 to %d tokens, got %d", int64(MaxEndUserQuota), q.Tokens)
		}
		switch q.Per {
		case "day", "week", "month":
		default:
			add(p+".quota.per", "must be day, week or month, got %q", q.Per)
		}
	}
	if e.RequestsPerMinute == 0 && e.TokensPerMinute == 0 && e.MaxConcurrent == 0 && e.Quota == nil {
		add(p, "sets no limit: give requests_per_minute, tokens_per_minute, max_concurrent or quota")
	}
	if e.MaxTracked < 0 || e.MaxTracked > MaxEndUserTable {
		add(p+".max_tracked", "must be 0 (default %d) to %d, got %d", DefaultEndUsersTracked, MaxEndUserTable, e.MaxTracked)
	}
}

// validHeaderName reports whether h is an HTTP header name (RFC 9110's
// token characters).
func validHeaderName(h string) bool {
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return h != ""
}

// nomadVariableChars are those a Nomad variable path's segment may hold.
const nomadVariableChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_~."

// NomadVariableSegment reports whether s may be a segment of a Nomad
// variable path: not empty, ".", or "..", and only letters, digits, '-',
// '_', '~' and '.'.
func NomadVariableSegment(s string) bool {
	return s != "" && s != "." && s != ".." && strings.Trim(s, nomadVariableChars) == ""
}

// nomadVariablePath reports whether p is a variable path sluice may put
// its keys' variables under: short enough for a key's segment after it
// (Nomad allows 128 bytes), no empty, "." or ".." segment.
func nomadVariablePath(p string) bool {
	if p == "" || len(p) > 88 {
		return false
	}
	for _, seg := range strings.Split(p, "/") {
		if !NomadVariableSegment(seg) {
			return false
		}
	}
	return true
}
