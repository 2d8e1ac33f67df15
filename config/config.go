// Package config holds sluice's configuration schema, its strict YAML
// decoding and its validation. It imports nothing else of sluice's, so the
// supervisor, the workers and `sluice check` all read one definition.
package config

import (
	"cmp"
	"encoding/hex"
	"fmt"
	"math"
	"net"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// Defaults applied to fields the file leaves out.
const (
	DefaultListen          = "127.0.0.1:8080"
	DefaultAdmin           = "127.0.0.1:9090"
	DefaultShutdownTimeout = 30 * time.Second
	DefaultMaxBody         = 32 << 20
	DefaultBodyMemory      = 64 << 20
	DefaultUsageLog        = "stdout"
	DefaultGoMaxProcs      = 1
	DefaultGOGC            = 100
	DefaultAffinityLoadCap = 1.25
	DefaultRetries         = 2
	DefaultHealthInterval  = 5 * time.Second
	DefaultShmCells        = 4096
	DefaultQueueMax        = 1000
	DefaultQueueTimeout    = 30 * time.Second
	DefaultMaxTokens       = 1024
	DefaultLoadInterval    = 500 * time.Millisecond
	DefaultKVSaturation    = 0.8
	DefaultNomadScheme     = "http"
	// The prefix index (see PrefixIndex): 2^16 (block, backend) pairs of
	// 32 bytes (2 MiB of the shared region), blocks of 256 bytes (about 64
	// tokens), at most 512 blocks (128 KiB of prompt) read per request.
	DefaultPrefixEntries   = 1 << 16
	DefaultPrefixBlock     = 256
	DefaultPrefixMaxBlocks = 128

	// The client-side bounds, nginx's defaults (see Config).
	DefaultClientHeaderTimeout = 60 * time.Second
	DefaultClientBodyTimeout   = 60 * time.Second
	DefaultSendTimeout         = 60 * time.Second
	DefaultKeepaliveTimeout    = 75 * time.Second
	DefaultWorkerConnections   = 4096

	// The admin listener's bounds (see AdminTimeouts, AdminMaxConns).
	DefaultAdminReadHeaderTimeout = 5 * time.Second
	DefaultAdminReadTimeout       = 30 * time.Second
	DefaultAdminWriteTimeout      = 30 * time.Second
	DefaultAdminIdleTimeout       = 60 * time.Second
	DefaultAdminMaxConns          = 64
)

// Config is the whole configuration file. Every field is documented in
// docs/configuration.md (a test in docs/ checks the two agree).
type Config struct {
	// Listen is the client-facing listeners: one address (host:port,
	// plain HTTP) or a list of {address, tls} (listen.go).
	Listen Listeners `yaml:"listen"`
	// Admin is the address of the admin listener (/healthz, /readyz).
	Admin string `yaml:"admin"`
	// AdminTLS, when set, makes the admin listener HTTPS: the same block
	// as a listener's tls (certificates, client_ca, min_version,
	// session_tickets; the tickets are the supervisor's own, one process).
	// A reload re-reads its files; adding or removing it takes a restart.
	AdminTLS *TLS `yaml:"admin_tls"`
	// AdminTokenEnv names an environment variable holding a bearer token
	// the admin listener requires on /metrics and /status (empty: none).
	// /healthz and /readyz stay open for probes that send no header.
	AdminTokenEnv string `yaml:"admin_token_env"`
	// AdminTimeouts bound each admin connection (net/http's server
	// timeouts): a request's head, its whole reading, its answer's
	// writing, and a keep-alive connection's wait for its next request.
	AdminTimeouts AdminTimeouts `yaml:"admin_timeouts"`
	// AdminMaxConns caps the admin listener's open connections (default
	// 64). At the cap a new connection closes the one idle longest (a
	// keep-alive connection between requests, or one that has sent
	// nothing yet); with none idle it is answered 503 with Retry-After: 1
	// (a plain probe is answered as a probe) and closed. The supervisor
	// lowers the cap to half the file descriptors RLIMIT_NOFILE leaves it
	// at start, so admin connections can never take the descriptors a
	// worker's restart needs.
	AdminMaxConns int `yaml:"admin_max_conns"`
	// AdminHosts lists the Host header values the admin listener answers
	// besides its own address ("name" for any port, "name:port"). Without
	// admin_token_env, a request to another Host (a browser page that
	// rebound its DNS name to the admin address) is answered 421; with a
	// token, Host is checked only when AdminHosts is given. /healthz and
	// /readyz are never checked.
	AdminHosts []string `yaml:"admin_hosts"`
	// Workers is the number of worker processes: "auto" (one per CPU the
	// process may run on) or a positive number.
	Workers Workers `yaml:"workers"`
	// PinCPUs pins worker i to the i-th CPU of the supervisor's affinity mask.
	PinCPUs bool `yaml:"pin_cpus"`
	// GoMaxProcs is GOMAXPROCS of each worker (default 1).
	GoMaxProcs int `yaml:"gomaxprocs"`
	// GOGC is the garbage collector's GOGC of each worker (default 100, Go's
	// own; lower trades GC CPU for less memory per open stream).
	GOGC int `yaml:"gogc"`
	// ShutdownTimeout bounds how long a stopping worker lets in-flight
	// requests and streams run on.
	ShutdownTimeout Duration `yaml:"shutdown_timeout"`
	// MaxBody is the largest request body accepted ("32MiB", "512KiB" or bytes).
	MaxBody ByteSize `yaml:"max_body"`
	// BodyMemory bounds the request bodies each worker holds in memory
	// (default 64MiB): a body that would pass it goes to a temporary file in
	// BodyTempDir while it is kept for retries.
	BodyMemory ByteSize `yaml:"body_memory"`
	// BodyTempDir is the directory of those files ("" is $TMPDIR, else
	// /var/tmp); "off" keeps every body in memory.
	BodyTempDir string `yaml:"body_temp_dir"`
	// UsageLog is where the one-line-per-request usage log goes: "stdout",
	// "off" or a file path (opened for append).
	UsageLog string `yaml:"usage_log"`
	// UsageLogFlush, when above zero, collects usage lines in a buffer
	// (64 KiB for a file, 4 KiB — what a pipe writes whole — for stdout)
	// written when full and at least this often; 0 (default) writes each
	// line as the request ends. Buffered lines are written on a reload,
	// SIGUSR1 and any stop, and lost only if the worker is killed.
	UsageLogFlush Duration `yaml:"usage_log_flush"`
	// ClientHeaderTimeout bounds a request's head, from a new connection's
	// accept or a keep-alive request's first byte to the end of the head
	// (and the first 8 KiB of the body, which hertz reads with it); past it
	// the connection is closed without an answer (nginx's
	// client_header_timeout).
	ClientHeaderTimeout Duration `yaml:"client_header_timeout"`
	// ClientBodyTimeout bounds each wait for more of a request's body;
	// past it the client gets 408 and the connection is closed (nginx's
	// client_body_timeout).
	ClientBodyTimeout Duration `yaml:"client_body_timeout"`
	// SendTimeout bounds each write of an answer to the client (nginx's
	// send_timeout): a client that does not take a write's bytes within it
	// is cut.
	SendTimeout Duration `yaml:"send_timeout"`
	// KeepaliveTimeout closes a keep-alive connection idle this long
	// between requests (nginx's keepalive_timeout).
	KeepaliveTimeout Duration `yaml:"keepalive_timeout"`
	// WorkerConnections caps each worker's client connections; one more is
	// closed as soon as it is accepted (nginx's worker_connections).
	WorkerConnections int `yaml:"worker_connections"`
	// PidFile is where the supervisor writes its pid (for `sluice reload`
	// and `sluice upgrade`); empty: none.
	PidFile string `yaml:"pid_file"`
	// StateDir is where state that must outlive the service is kept: the
	// keys' quotas and budgets (quota.state, written every second and at
	// a stop). Empty (default): none, and a restart forgets what keys
	// spent. Created (0700) if missing; a change takes a restart.
	StateDir string `yaml:"state_dir"`
	// ShmCells is the capacity of the shared-memory region in named cells:
	// one per key, per model (its queue), per backend of a model and per
	// provider key of a backend (api_keys_env).
	ShmCells int `yaml:"shm_cells"`
	// EndUserTable is the capacity, in entries, of the shared region's
	// table of end users (keys[].end_user); nil: DefaultEndUserTable. A
	// change takes a restart.
	EndUserTable *int `yaml:"end_user_table"`
	// PrefixIndex sizes the shared prefix index that places affinity:
	// prefix requests where their prompt's longest prefix was sent.
	PrefixIndex PrefixIndex `yaml:"prefix_index"`
	// Nomad is how sluice reaches Nomad, for models[].nomad and fleet.
	Nomad NomadClient `yaml:"nomad"`
	// Fleet makes key limits hold for all gateway replicas together.
	Fleet Fleet `yaml:"fleet"`
	// Tracing sends OpenTelemetry spans of requests to an OTLP endpoint
	// (off without an endpoint).
	Tracing Tracing `yaml:"tracing"`
	// QuotaTimezone is the zone of the calendar periods of keys' quotas
	// and budgets (an IANA name; default UTC).
	QuotaTimezone string `yaml:"quota_timezone"`
	// Auth holds the ways of admitting callers other than keys[]' own
	// tokens and certificates.
	Auth Auth `yaml:"auth"`
	// Keys are the API keys clients may use.
	Keys []Key `yaml:"keys"`
	// Models are the models clients may ask for, each with its backends.
	Models []Model `yaml:"models"`

	// Files are the bytes of the TLS files the configuration names, as
	// its validation read them (not a field of the file).
	Files Files `yaml:"-"`
	// frame: decoded by a worker from a reload frame (ParseFrame).
	frame bool
}

// Key is one client API key, stored only as the SHA-256 of the secret.
type Key struct {
	// Name identifies the key in logs and metrics.
	Name string `yaml:"name"`
	// SHA256 is the hex SHA-256 of the bearer token (64 hex characters).
	// Optional when ClientCertSHA256 is set.
	SHA256 string `yaml:"sha256"`
	// ClientCertSHA256 is the SHA-256 fingerprint of a client certificate
	// (of its DER, as `openssl x509 -noout -fingerprint -sha256` prints
	// it; hex, colons optional) that stands in for the bearer token: a
	// request on a TLS connection whose client presented this certificate
	// and had it verified against the listener's client_ca is this key's,
	// unless the token it sends is another key's (then that key's). A
	// token that is no key (the placeholder an SDK needs) is ignored.
	ClientCertSHA256 string `yaml:"client_cert_sha256"`
	// Models lists the model names this key may use; "*" allows all.
	Models []string `yaml:"models"`
	// RequestsPerMinute limits the key's requests (0: no limit), exactly
	// across all workers; a burst of up to the limit is admitted at once.
	RequestsPerMinute int64 `yaml:"requests_per_minute"`
	// TokensPerMinute limits the key's tokens (0: no limit). A request
	// reserves its max_tokens (or the model's default_max_tokens) plus
	// prompt bytes / 4 when admitted; the reservation is settled against
	// the usage the backend reports when the response ends.
	TokensPerMinute int64 `yaml:"tokens_per_minute"`
	// MaxConcurrent limits the key's requests in flight (0: no limit).
	MaxConcurrent int64 `yaml:"max_concurrent"`
	// CacheGroup names the keys whose prompts may share the backends'
	// prefix caches ("" in the file: the key's own name, a group of one).
	// Requests go to vLLM with the group's cache_salt and are matched in
	// the prefix index only against prompts of the same group, so that one
	// tenant cannot learn another's prompts from cache hits; keys that
	// should share a cache (one application's) name the same group.
	CacheGroup string `yaml:"cache_group"`
	// Weight is the key's share of a model's slots while its queue holds
	// requests of several keys: a freed slot goes to the waiting key that
	// has been served the fewest tokens divided by its weight (weighted
	// fair queuing; 0 in the file: DefaultKeyWeight).
	Weight float64 `yaml:"weight"`
	// Priority is the key's tier in a model's queue, 0 (default) to
	// MaxKeyPriority: a waiting request of a higher tier always takes the
	// next free slot before any of a lower one.
	Priority int `yaml:"priority"`
	// Quotas are the key's token quotas over calendar periods (0 or
	// absent: none), in quota_timezone, exact across workers: a request
	// reserves what its token limit reserves (max_tokens, or its model's
	// default, and the prompt's estimate) and settles on its usage.
	Quotas Quotas `yaml:"quotas"`
	// Budget is the key's spend over a period, in USD at its models'
	// prices (an unpriced model costs nothing); nil: none.
	Budget *Budget `yaml:"budget"`
	// EndUser applies limits to each end user of the key (the application
	// behind it serves many); nil: none.
	EndUser *EndUser `yaml:"end_user"`
	// JWT: bearer JWTs that auth.jwt verifies and whose key_claim names
	// this key are this key's requests (its models, limits and cells);
	// such a key needs no sha256.
	JWT bool `yaml:"jwt"`
}

// Auth is the configuration's auth block.
type Auth struct {
	// JWT admits callers by their identity provider's tokens; nil: off.
	JWT *JWT `yaml:"jwt"`
}

// JWT is auth.jwt: bearer tokens that are JWTs signed by the identity
// provider's keys (package jwtauth).
type JWT struct {
	// JWKSFile or JWKSURL is where the provider's key set is: one of them
	// (or neither, with Providers only).
	JWKSFile string `yaml:"jwks_file"`
	JWKSURL  string `yaml:"jwks_url"`
	// JWKSRefresh is how often the set is read again (0 in the file:
	// DefaultJWKSRefresh); a token naming an unknown kid reads it sooner.
	JWKSRefresh Duration `yaml:"jwks_refresh"`
	// Issuers are the "iss" values the key set above signs for (at least
	// one with it).
	Issuers []string `yaml:"issuers"`
	// Providers are further identity providers, each an issuer with its
	// own key set: a token is verified only against the set of the
	// provider whose issuer its "iss" names, so that no provider can sign
	// for another. The claims and limits below are every provider's.
	Providers []JWTProvider `yaml:"providers"`
	// Audiences are the accepted "aud" values: a token's must hold one.
	Audiences []string `yaml:"audiences"`
	// KeyClaim is the claim whose string value names the key (a keys[]
	// entry with jwt: true) whose models and limits the token gets.
	KeyClaim string `yaml:"key_claim"`
	// ModelsClaim, if set, is a claim (a list of model names, or a string
	// of them separated by spaces) that narrows the key's models for the
	// token; a token without it has the key's models.
	ModelsClaim string `yaml:"models_claim"`
	// Algorithms are the accepted "alg"s (nil: RS256, ES256, EdDSA);
	// asymmetric ones only.
	Algorithms []string `yaml:"algorithms"`
	// Leeway is the clock skew allowed on exp, nbf and iat (nil:
	// DefaultJWTLeeway).
	Leeway *Duration `yaml:"leeway"`
}

// JWTProvider is one of auth.jwt.providers: an issuer and its key set.
type JWTProvider struct {
	// Issuer is its "iss".
	Issuer string `yaml:"issuer"`
	// JWKSFile or JWKSURL is where its key set is: one of them.
	JWKSFile string `yaml:"jwks_file"`
	JWKSURL  string `yaml:"jwks_url"`
	// JWKSRefresh is as auth.jwt.jwks_refresh, for its set.
	JWKSRefresh Duration `yaml:"jwks_refresh"`
}

// JWKSSource is one key set of auth.jwt: the issuers it signs for, where
// it is and how often it is read.
type JWKSSource struct {
	Issuers       []string
	File, URL     string
	Refresh       time.Duration
	ProviderIndex int // its auth.jwt.providers index; -1: auth.jwt's own
}

// Sources are j's key sets: its own (if it names one), then its
// providers', in order.
func (j *JWT) Sources() []JWKSSource {
	var out []JWKSSource
	if j.JWKSFile != "" || j.JWKSURL != "" {
		out = append(out, JWKSSource{Issuers: j.Issuers, File: j.JWKSFile, URL: j.JWKSURL, Refresh: j.RefreshOrDefault(), ProviderIndex: -1})
	}
	for i, p := range j.Providers {
		out = append(out, JWKSSource{Issuers: []string{p.Issuer}, File: p.JWKSFile, URL: p.JWKSURL,
			Refresh: cmp.Or(time.Duration(p.JWKSRefresh), DefaultJWKSRefresh), ProviderIndex: i})
	}
	return out
}

// MaxJWTProviders bounds auth.jwt.providers.
const MaxJWTProviders = 16

// auth.jwt's defaults and bounds.
const (
	DefaultJWKSRefresh = 5 * time.Minute
	MinJWKSRefresh     = time.Second
	DefaultJWTLeeway   = 30 * time.Second
	MaxJWTLeeway       = 5 * time.Minute
)

// LeewayOrDefault is j's leeway.
func (j *JWT) LeewayOrDefault() time.Duration {
	if j.Leeway == nil {
		return DefaultJWTLeeway
	}
	return time.Duration(*j.Leeway)
}

// JWTAlgorithms are the algorithms auth.jwt.algorithms may name (as
// jwtauth.Allowed: asymmetric only); DefaultJWTAlgorithms are its default
// (jwtauth.DefaultAlgorithms). Copies: config imports nothing of sluice's.
var (
	JWTAlgorithms        = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
	DefaultJWTAlgorithms = []string{"RS256", "ES256", "EdDSA"}
)

// MaxJWKSBytes bounds a jwks_file (jwtauth.MaxSetBytes).
const MaxJWKSBytes = 1 << 20

// AlgorithmsOrDefault is j's accepted algorithms.
func (j *JWT) AlgorithmsOrDefault() []string {
	if j.Algorithms == nil {
		return DefaultJWTAlgorithms
	}
	return j.Algorithms
}

// RefreshOrDefault is j's refresh interval.
func (j *JWT) RefreshOrDefault() time.Duration {
	return cmp.Or(time.Duration(j.JWKSRefresh), DefaultJWKSRefresh)
}

// EndUser is a key's limits per end user, each distinct end user (as From
// names them) held to them, exact across workers, in the shared region's
// end-user table.
type EndUser struct {
	// From is where a request names its end user: "body.user" (default;
	// the request's "user" field, read as the backend reads it) or
	// "header:<Name>" (a request header, such as an application's
	// X-End-User). A request that names none is the key's anonymous end
	// user: one end user, limited like any other.
	From string `yaml:"from"`
	// RequestsPerMinute, TokensPerMinute and MaxConcurrent are each end
	// user's limits, as the key's own (0: none).
	RequestsPerMinute int64 `yaml:"requests_per_minute"`
	TokensPerMinute   int64 `yaml:"tokens_per_minute"`
	MaxConcurrent     int64 `yaml:"max_concurrent"`
	// Quota is each end user's tokens per calendar period; nil: none.
	Quota *EndUserQuota `yaml:"quota"`
	// MaxTracked bounds how many of the key's end users the table holds
	// at once (0 in the file: DefaultEndUsersTracked): end users beyond it
	// share the key's overflow end user, one end user's limits for them
	// all, so that a flood of distinct ids tightens the limits rather
	// than lifting them, and takes no other key's room.
	MaxTracked int `yaml:"max_tracked"`
}

// EndUserQuota is at most Tokens per Per ("day", "week" or "month").
type EndUserQuota struct {
	Tokens int64  `yaml:"tokens"`
	Per    string `yaml:"per"`
}

// The end-user table's defaults and bounds.
const (
	// DefaultEndUserTable is the end-user table's capacity in entries
	// (72 bytes each: 4.5 MiB, its pages touched only as used).
	DefaultEndUserTable = 1 << 16
	// MaxEndUserTable bounds end_user_table: 16,777,216 entries, 1.1 GiB.
	MaxEndUserTable = 1 << 24
	// DefaultEndUsersTracked is a key's end_user.max_tracked by default.
	DefaultEndUsersTracked = 10_000
	// MaxEndUserQuota bounds end_user.quota.tokens: a reservation of the
	// table is kept in 40 bits.
	MaxEndUserQuota = 1 << 40
)

// EndUserClaim is the JWT claim From names ("claim:<name>"), "" for none.
func (e *EndUser) EndUserClaim() string {
	c, found := strings.CutPrefix(e.From, "claim:")
	if !found {
		return ""
	}
	return c
}

// EndUserHeader is the header name From names, "" for body.user.
func (e *EndUser) EndUserHeader() string {
	h, _ := strings.CutPrefix(e.From, "header:")
	if h == e.From {
		return ""
	}
	return h
}

// Tracked is MaxTracked with its default.
func (e *EndUser) Tracked() int { return cmp.Or(e.MaxTracked, DefaultEndUsersTracked) }

// HasEndUsers reports whether a key has an end_user block.
func (c *Config) HasEndUsers() bool {
	for _, k := range c.Keys {
		if k.EndUser != nil {
			return true
		}
	}
	return false
}

// EndUserEntries is the end-user table's capacity (0: none).
func (c *Config) EndUserEntries() int {
	if c.EndUserTable == nil {
		return DefaultEndUserTable
	}
	return *c.EndUserTable
}

// Quotas are tokens per day, ISO week (from Monday) and month.
type Quotas struct {
	Day   int64 `yaml:"day"`
	Week  int64 `yaml:"week"`
	Month int64 `yaml:"month"`
}

// Budget is at most USD of spend per Per ("day", "week" or "month").
type Budget struct {
	USD float64 `yaml:"usd"`
	Per string  `yaml:"per"`
}

// HasQuotas reports whether k has a token quota over any period.
func (k Key) HasQuotas() bool { return k.Quotas.Day > 0 || k.Quotas.Week > 0 || k.Quotas.Month > 0 }

// MaxBudgetUSD bounds a budget: its pico-USD fit an int64 with room.
const MaxBudgetUSD = 1_000_000

// BudgetPico is b's USD in pico-USD.
func (b *Budget) BudgetPico() int64 { return int64(math.Round(b.USD * 1e12)) }

// CertFingerprint decodes a client_cert_sha256: 64 hex digits, in
// either case, with or without a colon between each two, and with or
// without openssl's "sha256 Fingerprint=" before them (what
// `openssl x509 -noout -fingerprint -sha256` prints, pasted whole).
func CertFingerprint(s string) (sum [32]byte, ok bool) {
	const opensslPrefix = "sha256 fingerprint="
	if len(s) > len(opensslPrefix) && strings.EqualFold(s[:len(opensslPrefix)], opensslPrefix) {
		s = s[len(opensslPrefix):]
	}
	if len(s) == 95 {
		for i := 2; i < len(s); i += 3 {
			if s[i] != ':' {
				return sum, false
			}
		}
		s = strings.ReplaceAll(s, ":", "")
	}
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 32 {
		return sum, false
	}
	copy(sum[:], b)
	return sum, true
}

// Price is a model's price in USD per million tokens (what LiteLLM,
// Bifrost and the providers' price lists use). A request costs its prompt
// tokens the backend's prefix cache did not serve at the input price, the
// ones it did (cached_tokens) at the cached price, and its completion
// tokens at the output price.
type Price struct {
	InputPerMTok  float64 `yaml:"input_per_mtok"`
	OutputPerMTok float64 `yaml:"output_per_mtok"`
	// CachedInputPerMTok is the price of cached prompt tokens; nil: the
	// input price (a backend whose cache hits cost the same).
	CachedInputPerMTok *float64 `yaml:"cached_input_per_mtok"`
}

// QuotaLocation is quota_timezone's zone (validated: UTC if it fails).
func (c *Config) QuotaLocation() *time.Location {
	if loc, err := time.LoadLocation(cmp.Or(c.QuotaTimezone, "UTC")); err == nil {
		return loc
	}
	return time.UTC
}

// MaxPricePerMTok bounds a price: far over any model's, and a request's
// cost in pico-USD then fits an int64 at any token count a context holds.
const MaxPricePerMTok = 10_000

// MaxKeyName bounds a key's name in bytes: its cells in the shared region
// ("budget/" and the name) keep their whole name within the region's
// display name (shm.NameDisplayMax, 96 bytes), so that the quota state
// and an upgrade's new supervisor name each cell exactly.
const MaxKeyName = 80

// PicoPerToken are p's prices in pico-USD per token (USD per million
// tokens × 10^6), rounded: integers, so that costs add up exactly.
func (p *Price) PicoPerToken() (input, cached, output int64) {
	in := math.Round(p.InputPerMTok * 1e6)
	cachedIn := in
	if p.CachedInputPerMTok != nil {
		cachedIn = math.Round(*p.CachedInputPerMTok * 1e6)
	}
	return int64(in), int64(cachedIn), int64(math.Round(p.OutputPerMTok * 1e6))
}

// MaxCacheGroup bounds keys[].cache_group's length in bytes.
const MaxCacheGroup = 256

// DefaultKeyWeight is a key's weight in a model's queue when it sets none.
const DefaultKeyWeight = 1.0

// MinKeyWeight and MaxKeyWeight bound keys[].weight: a ratio of 10^4
// between two keys is more than any fleet uses, and it keeps a key's
// weighted count of tokens in range (see worker's fair queue).
const (
	MinKeyWeight = 0.01
	MaxKeyWeight = 100.0
)

// MaxKeyPriority is the highest keys[].priority: four tiers, 0 to 3.
const MaxKeyPriority = 3

// Model is a model name clients send in the JSON "model" field.
type Model struct {
	// Name is the value of "model" that selects this entry.
	Name string `yaml:"name"`
	// UpstreamModel, when set, replaces "model" in the body sent upstream.
	UpstreamModel string `yaml:"upstream_model"`
	// Affinity keeps a conversation on one backend: "prefix" (the request's
	// "user", else its first message), "user" (only "user") or "none".
	Affinity string `yaml:"affinity"`
	// AffinityLoadCap bounds affinity by load: a backend at half its slots
	// or more is skipped while its in-flight count would pass
	// cap × (model in-flight + 1) / backends (a full one always is).
	AffinityLoadCap float64 `yaml:"affinity_load_cap"`
	// Retries is how many more backends a request is tried on after a
	// connection error or a 5xx/429 answer, while nothing has reached the
	// client yet (default 2).
	Retries *int `yaml:"retries"`
	// Health is the active health check of the model's backends.
	Health Health `yaml:"health"`
	// Timeouts bound the upstream leg of a request.
	Timeouts Timeouts `yaml:"timeouts"`
	// Queue is where requests wait while every backend's slots are taken.
	Queue Queue `yaml:"queue"`
	// DefaultMaxTokens is the completion size a token limit reserves for a
	// request that sets neither max_tokens nor max_completion_tokens
	// (default 1024).
	DefaultMaxTokens int64 `yaml:"default_max_tokens"`
	// MaxContext is the model's context length in tokens (vLLM's
	// max_model_len), 0 when not set. A request without max_tokens may
	// generate up to it less its prompt, and a token limit reserves that
	// much for it instead of DefaultMaxTokens; no output is reserved past it.
	MaxContext int64 `yaml:"max_context"`
	// CacheSalt, true by default, sends each request's cache_salt (its
	// key's cache group's) to the backends, which salt their prefix cache
	// with it (vLLM's V1 engine). false for backends that refuse the field;
	// the gateway's prefix index stays per group either way.
	CacheSalt *bool `yaml:"cache_salt"`
	// Price is what the model's tokens cost (nil: unpriced): each request's
	// cost, from the usage the backend reports, is its usage line's
	// cost_usd.
	Price *Price `yaml:"price"`
	// Fallbacks are the models a request for this one is sent to instead,
	// in order, while nothing has reached the client, when this one cannot
	// serve it: no backend in rotation, its queue full or timed out, or
	// every attempt failed for want of a backend (no connection, no
	// answer, 429 or 5xx with no retries left). Each is admitted again for
	// the key (its models, tokens per minute) and placed on its own
	// backends. The list is the whole chain: a fallback's own fallbacks
	// are not followed.
	Fallbacks []string `yaml:"fallbacks"`
	// ContextFallbacks are tried, in order, when a backend answers 400
	// saying the request is longer than the model's context (vLLM's
	// "maximum context length" error): models with a longer context.
	ContextFallbacks []string `yaml:"context_fallbacks"`
	// Backends are the OpenAI-compatible servers that serve this model.
	// Either Backends or Nomad.
	Backends []Backend `yaml:"backends"`
	// Nomad discovers the backends from Nomad's service discovery instead.
	Nomad *NomadService `yaml:"nomad"`
	// LoadInterval is how often each backend's /metrics is read for its
	// own view of its load, and its prefix-cache counters for the admin
	// /metrics (default 500ms; 0s: never).
	LoadInterval *Duration `yaml:"load_interval"`
	// KVSaturation: a backend whose KV-cache usage is above this fraction
	// takes no new request (default 0.8).
	KVSaturation float64 `yaml:"kv_saturation"`
	// Endpoints, when set, are the APIs this model serves, by name (APIs);
	// a request to another gets 404 endpoint_not_served. Empty: all.
	Endpoints []string `yaml:"endpoints"`
}

// APIs are the names of the APIs the gateway proxies, for
// models[].endpoints: chat (/v1/chat/completions), completions,
// embeddings, responses (/v1/responses and the stored responses under
// it), messages (/v1/messages), count_tokens
// (/v1/messages/count_tokens), rerank, score, tokenize, detokenize,
// pooling, classify. The worker's API descriptions carry the same names
// (a test holds them equal).
var APIs = []string{"chat", "completions", "embeddings", "responses", "messages", "count_tokens",
	"rerank", "score", "tokenize", "detokenize", "pooling", "classify"}

// NomadService is a Nomad native service whose instances are a model's
// backends: address and port become http(s)://address:port.
type NomadService struct {
	Service   string   `yaml:"service"`   // required
	Namespace string   `yaml:"namespace"` // default: nomad.namespace
	Tags      []string `yaml:"tags"`      // an instance must have every one
	Scheme    string   `yaml:"scheme"`    // http (default) or https
	Slots     int      `yaml:"slots"`     // required: slots of each instance
	// APIKeyEnv and APIKeysEnv are every instance's as in Backend.
	APIKeyEnv  string   `yaml:"api_key_env"`
	APIKeysEnv []string `yaml:"api_keys_env"`
}

// NomadClient overrides what nomad/api reads from NOMAD_ADDR, NOMAD_TOKEN,
// NOMAD_NAMESPACE and NOMAD_REGION.
type NomadClient struct {
	Address   string `yaml:"address"`
	Namespace string `yaml:"namespace"`
	Region    string `yaml:"region"`
	// TokenEnv names an environment variable holding the ACL token
	// (default: NOMAD_TOKEN, as nomad/api reads it).
	TokenEnv string `yaml:"token_env"`
}

// Fleet divides every key's limits by the number of live gateway replicas,
// read from Nomad: the instances of NomadService — except the keys'
// quotas and budgets, on which the replicas agree through Nomad
// Variables (package fleetspend) every SpendExchange.
type Fleet struct {
	NomadService string `yaml:"nomad_service"`
	Namespace    string `yaml:"namespace"`
	// SpendExchange is how often each replica exchanges what its keys
	// spent of their quotas and budgets with the others (nil:
	// DefaultSpendExchange; 0: never — each replica then holds its keys to
	// their quotas divided by the live replicas).
	SpendExchange *Duration `yaml:"spend_exchange"`
	// SpendPath is the Nomad variable path under which each key's
	// variable is (default "sluice/spend/" + NomadService).
	SpendPath string `yaml:"spend_path"`
	// Replica is this replica's item in the variables: stable across its
	// restarts, unique in the fleet (default: $NOMAD_ALLOC_ID, else the
	// host name).
	Replica string `yaml:"replica"`
}

// Spend exchange bounds.
const (
	DefaultSpendExchange = 5 * time.Second
	MinSpendExchange     = time.Second
	MaxSpendExchange     = 5 * time.Minute
)

// SpendEvery is how often the spend is exchanged: 0 when it is not (no
// fleet, or spend_exchange: 0).
func (f Fleet) SpendEvery() time.Duration {
	switch {
	case f.NomadService == "":
		return 0
	case f.SpendExchange == nil:
		return DefaultSpendExchange
	}
	return time.Duration(*f.SpendExchange)
}

// SpendPrefix is the variable path the keys' variables are under.
func (f Fleet) SpendPrefix() string { return cmp.Or(f.SpendPath, "sluice/spend/"+f.NomadService) }

// ReplicaName is this replica's name in the variables.
func (f Fleet) ReplicaName() string {
	if f.Replica != "" {
		return f.Replica
	}
	if id := os.Getenv("NOMAD_ALLOC_ID"); id != "" {
		return id
	}
	host, _ := os.Hostname()
	return cmp.Or(host, "sluice")
}

// Tracing is the OpenTelemetry export of request spans.
type Tracing struct {
	// Endpoint is the OTLP receiver's URL (http:// or https://, e.g.
	// http://otel-collector:4318); empty: tracing is off.
	Endpoint string `yaml:"endpoint"`
	// Protocol is http (OTLP/HTTP with protobuf, default; the endpoint's
	// path defaults to /v1/traces) or grpc.
	Protocol string `yaml:"protocol"`
	// SampleRatio is the fraction of new traces sampled, 0 to 1 (nil: 1).
	// A request that carries a W3C traceparent follows its sampled flag.
	SampleRatio *float64 `yaml:"sample_ratio"`
	// ServiceName is the resource's service.name (default "sluice").
	ServiceName string `yaml:"service_name"`
}

// DefaultTracingServiceName is tracing.service_name when none is set.
const DefaultTracingServiceName = "sluice"

// Discovered holds the backends found by service discovery, by model name.
type Discovered map[string][]Backend

// WithDiscovered returns a copy of c whose discovery models have the
// discovered backends (none when nothing is known yet).
func (c *Config) WithDiscovered(d Discovered) *Config {
	out := *c
	out.Models = append([]Model(nil), c.Models...)
	for i := range out.Models {
		if m := &out.Models[i]; m.Nomad != nil {
			m.Backends = d[m.Name]
		}
	}
	return &out
}

// Timeouts of the upstream leg. None of them retries the request or marks
// the backend down: a slow answer is not a broken backend.
type Timeouts struct {
	// Connect bounds the TCP connect to a backend (default 2s); a failed
	// connect is retried on the next backend.
	Connect Duration `yaml:"connect"`
	// StreamIdle bounds the silence between two reads of a stream, the
	// wait for its headers included (default 60s). Streams only: without
	// streaming vLLM is silent until it is done.
	StreamIdle Duration `yaml:"stream_idle"`
	// Total bounds the whole upstream exchange (default 10m).
	Total Duration `yaml:"total"`
	// FirstTokenDeadline (off by default): a stream whose first event has
	// not arrived by then, while nothing has gone to the client, is
	// cancelled on its backend and retried once on the next.
	FirstTokenDeadline Duration `yaml:"first_token_deadline"`
}

// PrefixIndex is the prefix index in the shared region: which backends
// were recently sent which blocks of a prompt (docs/internals.md, "Placement").
type PrefixIndex struct {
	// Entries is its capacity in (block, backend) pairs, 32 bytes each
	// (default 65536, 2 MiB; 0: no index): best about the backends' KV
	// caches together, in blocks. The region is sized once:
	// a change takes a restart.
	Entries *int `yaml:"entries"`
	// Block is the block size in bytes of the prompt as sent (default 256).
	Block int `yaml:"block"`
	// MaxBlocks is the most blocks read of one request (default 128, 32
	// KiB at the default block): the bound on the index's work for a large
	// body. Hashing is per byte: 512 blocks (128 KiB) cost a 100 KB
	// request ~22 µs, 17% of the CPU it took through the gateway before
	// the index (rig scenario b); 128 blocks, ~6 µs.
	MaxBlocks int `yaml:"max_blocks"`
}

// PrefixEntries is the prefix index's capacity (0: none).
func (c *Config) PrefixEntries() int {
	if c.PrefixIndex.Entries == nil {
		return DefaultPrefixEntries
	}
	return *c.PrefixIndex.Entries
}

// Queue bounds the wait for a backend slot. One queue per model, shared by
// all workers, served roughly in arrival order.
type Queue struct {
	// Max is how many requests may wait (default 1000; 0: none wait, a
	// request finding every slot taken is refused at once). Beyond it: 429.
	Max *int `yaml:"max"`
	// Timeout is the longest a request waits (default 30s); then 503.
	Timeout Duration `yaml:"timeout"`
	// MaxPerKey is how many of those places one key may hold, over all
	// workers (default: half of Max, at least 1; 0: no bound of its own).
	// A key past it is refused (429 queue_key_full) while other keys can
	// still queue: one key flooding the queue cannot turn every other
	// key's request into a queue_full. A key's places are counted over
	// every model it waits for.
	MaxPerKey *int `yaml:"max_per_key"`
}

// DefaultQueueMaxPerKey is queue.max_per_key when unset: half of the
// model's queue.max, at least 1 (0 when the queue is 0).
func DefaultQueueMaxPerKey(queueMax int) int {
	if queueMax <= 0 {
		return 0
	}
	return max(1, queueMax/2)
}

// Health configures the active health check: GET Path on every backend
// every Interval; a backend is in rotation only after a 2xx (an open port is
// not health: vLLM listens while it is still loading the model).
type Health struct {
	Path     string   `yaml:"path"`     // default /health
	Interval Duration `yaml:"interval"` // default 5s
}

// Backend is one OpenAI-compatible upstream server (vLLM, mostly).
type Backend struct {
	// URL is the backend's base URL, scheme://host:port, without a path.
	URL string `yaml:"url"`
	// Slots is how many requests the backend serves at once, counted across
	// all workers; a request beyond them waits in the model's queue.
	Slots int `yaml:"slots"`
	// APIKeyEnv names an environment variable holding the backend's own
	// API key, sent as "Authorization: Bearer …".
	APIKeyEnv string `yaml:"api_key_env"`
	// APIKeysEnv names several environment variables, each holding one of
	// the backend's keys (a hosted API with per-key rate limits), instead
	// of APIKeyEnv. They are sent in turn, round robin across all workers;
	// a key answered 401 or 403 is out of rotation until the next reload,
	// a key answered 429 rests for its Retry-After (60 s without one, 1 h
	// at most) and the request goes on with the next key. Logs and metrics
	// name a key by its variable, never by its value.
	APIKeysEnv []string `yaml:"api_keys_env"`
}

// AdminTimeouts are the admin listener's connection timeouts.
type AdminTimeouts struct {
	// ReadHeader bounds a request's head from the connection's accept or
	// the request's first byte (default 5s).
	ReadHeader Duration `yaml:"read_header"`
	// Read bounds a whole request, body included (default 30s).
	Read Duration `yaml:"read"`
	// Write bounds the writing of an answer (default 30s).
	Write Duration `yaml:"write"`
	// Idle closes a keep-alive connection idle this long (default 60s).
	Idle Duration `yaml:"idle"`
}

// AdminHostPattern splits an admin_hosts entry into its host, in lower
// case and without brackets, and its port ("" for any port).
func AdminHostPattern(s string) (host, port string, err error) {
	bad := fmt.Errorf("%q is not host, host:port, [IPv6] or [IPv6]:port (a Host header's value, no scheme or path)", s)
	host = s
	if strings.ContainsAny(s, "/@?#") {
		return "", "", bad
	}
	if h, p, serr := net.SplitHostPort(s); serr == nil {
		host, port = h, p
		if n, perr := strconv.Atoi(p); perr != nil || n < 1 || n > 65535 {
			return "", "", fmt.Errorf("%q: the port must be 1 to 65535", s)
		}
	} else if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		host = s[1 : len(s)-1]
	}
	if host == "" {
		return "", "", fmt.Errorf("%q has no host", s)
	}
	if strings.HasPrefix(s, "[") || strings.Contains(host, ":") { // IPv6 literals only
		if a, perr := netip.ParseAddr(host); perr != nil || !a.Is6() {
			return "", "", bad
		}
		return strings.ToLower(host), port, nil
	}
	for _, ch := range host {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '.' || ch == '-' || ch == '_') {
			return "", "", bad
		}
	}
	return strings.ToLower(host), port, nil
}

// Workers is "auto" (0 here) or a positive worker count.
type Workers int

// UnmarshalYAML accepts "auto" or a positive integer.
func (w *Workers) UnmarshalYAML(node ast.Node) error {
	s := scalar(node)
	if s == "auto" {
		*w = 0
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return nodeErrorf(node, "workers must be \"auto\" or a positive number, not %q", s)
	}
	*w = Workers(n)
	return nil
}

// Count resolves the worker count given the CPUs this process may use.
func (w Workers) Count(cpus int) int {
	if w > 0 {
		return int(w)
	}
	if cpus < 1 {
		return runtime.NumCPU()
	}
	return cpus
}

// Duration is a time.Duration written as "30s", "500ms", "10m".
type Duration time.Duration

// UnmarshalYAML parses a Go duration string.
func (d *Duration) UnmarshalYAML(node ast.Node) error {
	s := scalar(node)
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return nodeErrorf(node, "%q is not a duration such as 30s or 500ms", s)
	}
	*d = Duration(v)
	return nil
}

// ByteSize is a size in bytes, written as a number or with a KiB/MiB/GiB suffix.
type ByteSize int64

// UnmarshalYAML parses "1048576", "512KiB", "32MiB" or "1GiB".
func (s *ByteSize) UnmarshalYAML(node ast.Node) error {
	v, err := ParseByteSize(scalar(node))
	if err != nil {
		return nodeErrorf(node, "%v", err)
	}
	*s = ByteSize(v)
	return nil
}

// ParseByteSize parses a byte count with an optional binary suffix.
func ParseByteSize(s string) (int64, error) {
	mult := int64(1)
	num := s
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1000}, {"MB", 1000_000}, {"GB", 1000_000_000}, {"B", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			num, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%q is not a size such as 32MiB, 512KiB or 1048576", s)
	}
	return n * mult, nil
}

// scalar is the text of a scalar node, without quotes.
func scalar(node ast.Node) string {
	if s, ok := node.(*ast.StringNode); ok {
		return s.Value
	}
	return strings.TrimSpace(node.String())
}

// nodeError is a decoding error located at a YAML node.
type nodeError struct {
	line, column int
	msg          string
}

func (e *nodeError) Error() string { return e.msg }

func nodeErrorf(node ast.Node, format string, args ...any) error {
	e := &nodeError{msg: fmt.Sprintf(format, args...)}
	if tk := node.GetToken(); tk != nil && tk.Position != nil {
		e.line, e.column = tk.Position.Line, tk.Position.Column
	}
	return e
}

// ProcessChanges lists the changed fields a reload applies by replacing
// the workers (new sockets or processes): listen, workers, pin_cpus and
// gomaxprocs, and keepalive_timeout. Each entry says what changed.
func ProcessChanges(old, new *Config) []string {
	var out []string
	diff(&out, "listen", old.Listen.String(), new.Listen.String())
	diff(&out, "workers", old.Workers, new.Workers)
	diff(&out, "pin_cpus", old.PinCPUs, new.PinCPUs)
	diff(&out, "gomaxprocs", old.GoMaxProcs, new.GoMaxProcs)
	// hertz takes its keep-alive idle timeout once, when its server is made.
	diff(&out, "keepalive_timeout", old.KeepaliveTimeout, new.KeepaliveTimeout)
	return out
}

// RestartChanges lists the changed fields only a restart applies: admin,
// admin_tls being there or not (its files a reload re-reads), admin_token_env, admin_timeouts, admin_max_conns and admin_hosts (the
// admin listener is set up once), pid_file (how
// `sluice reload` finds the running supervisor) and shm_cells and
// prefix_index.entries and end_user_table (the size of the shared region).
func RestartChanges(old, new *Config) []string {
	var out []string
	diff(&out, "admin", old.Admin, new.Admin)
	diff(&out, "admin_tls", onOff(old.AdminTLS != nil), onOff(new.AdminTLS != nil))
	diff(&out, "admin_token_env", old.AdminTokenEnv, new.AdminTokenEnv)
	diff(&out, "admin_timeouts", old.AdminTimeouts, new.AdminTimeouts)
	diff(&out, "admin_max_conns", old.AdminMaxConns, new.AdminMaxConns)
	diff(&out, "admin_hosts", fmt.Sprint(old.AdminHosts), fmt.Sprint(new.AdminHosts))
	diff(&out, "pid_file", old.PidFile, new.PidFile)
	diff(&out, "state_dir", old.StateDir, new.StateDir)
	diff(&out, "shm_cells", old.ShmCells, new.ShmCells)
	diff(&out, "prefix_index.entries", old.PrefixEntries(), new.PrefixEntries())
	diff(&out, "end_user_table", old.EndUserEntries(), new.EndUserEntries())
	return out
}

// onOff names whether a block is there, for diff.
func onOff(set bool) string {
	if set {
		return "set"
	}
	return "not set"
}

func diff(out *[]string, field string, a, b any) {
	if a != b {
		*out = append(*out, fmt.Sprintf("%s changed from %v to %v", field, a, b))
	}
}

// AdminToken is the admin listener's bearer token, from the environment
// variable admin_token_env names, without surrounding white space (as
// Prometheus reads its credentials_file); "" when none is configured.
func (c *Config) AdminToken() string {
	if c.AdminTokenEnv == "" {
		return ""
	}
	return strings.TrimSpace(os.Getenv(c.AdminTokenEnv))
}

// CellsNeeded is how many shared-memory cells the configuration takes: one
// per key (and one for its quotas, one for its budget, when it has them),
// one per model (its queue), one per backend of each model and
// one per api_keys_env entry of each backend, and six for the gateway's own
// gauges.
func (c *Config) CellsNeeded() int {
	n := 6 + len(c.Keys) + len(c.Models)
	fleet := c.Fleet.SpendEvery() > 0
	for _, k := range c.Keys {
		if k.HasQuotas() {
			n += 1 + b2i(fleet)
		}
		if k.Budget != nil {
			n += 1 + b2i(fleet)
		}
	}
	for _, m := range c.Models {
		for _, b := range m.Backends {
			n += 1 + len(b.APIKeysEnv)
		}
	}
	return n
}

// BodyTempDirPath is the directory spilled request bodies go to, or ""
// when body_temp_dir is "off".
func (c *Config) BodyTempDirPath() string {
	switch c.BodyTempDir {
	case "off":
		return ""
	case "":
		// Not os.TempDir's /tmp: that is a tmpfs (memory) on many systems,
		// where a spilled body would stay in RAM; /var/tmp is on disk.
		if dir := os.Getenv("TMPDIR"); dir != "" {
			return dir
		}
		return "/var/tmp"
	}
	return c.BodyTempDir
}

// applyDefaults fills every field the file left out.
func (c *Config) applyDefaults() {
	if len(c.Listen) == 0 {
		c.Listen = Listeners{{Address: DefaultListen}}
	}
	for _, l := range c.Listen {
		if l.TLS != nil {
			l.TLS.MinVersion = cmp.Or(l.TLS.MinVersion, DefaultTLSMinVersion)
		}
	}
	if c.AdminTLS != nil {
		c.AdminTLS.MinVersion = cmp.Or(c.AdminTLS.MinVersion, DefaultTLSMinVersion)
		c.AdminTLS.setDefaults()
	}
	if c.Admin == "" {
		c.Admin = DefaultAdmin
	}
	if c.GoMaxProcs == 0 {
		c.GoMaxProcs = DefaultGoMaxProcs
	}
	if c.GOGC == 0 {
		c.GOGC = DefaultGOGC
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = Duration(DefaultShutdownTimeout)
	}
	if c.MaxBody == 0 {
		c.MaxBody = DefaultMaxBody
	}
	for _, d := range []struct {
		f   *Duration
		def time.Duration
	}{
		{&c.ClientHeaderTimeout, DefaultClientHeaderTimeout},
		{&c.ClientBodyTimeout, DefaultClientBodyTimeout},
		{&c.SendTimeout, DefaultSendTimeout},
		{&c.KeepaliveTimeout, DefaultKeepaliveTimeout},
		{&c.AdminTimeouts.ReadHeader, DefaultAdminReadHeaderTimeout},
		{&c.AdminTimeouts.Read, DefaultAdminReadTimeout},
		{&c.AdminTimeouts.Write, DefaultAdminWriteTimeout},
		{&c.AdminTimeouts.Idle, DefaultAdminIdleTimeout},
	} {
		if *d.f == 0 {
			*d.f = Duration(d.def)
		}
	}
	if c.WorkerConnections == 0 {
		c.WorkerConnections = DefaultWorkerConnections
	}
	for _, l := range c.Listen {
		if l.TLS != nil {
			l.TLS.setDefaults()
		}
	}
	if c.AdminMaxConns == 0 {
		c.AdminMaxConns = DefaultAdminMaxConns
	}
	if c.BodyMemory == 0 {
		c.BodyMemory = DefaultBodyMemory
	}
	if c.UsageLog == "" {
		c.UsageLog = DefaultUsageLog
	}
	if c.ShmCells == 0 {
		c.ShmCells = DefaultShmCells
	}
	if c.PrefixIndex.Entries == nil {
		n := DefaultPrefixEntries
		c.PrefixIndex.Entries = &n
	}
	if c.PrefixIndex.Block == 0 {
		c.PrefixIndex.Block = DefaultPrefixBlock
	}
	if c.PrefixIndex.MaxBlocks == 0 {
		c.PrefixIndex.MaxBlocks = DefaultPrefixMaxBlocks
	}
	for i := range c.Models {
		m := &c.Models[i]
		if m.Affinity == "" {
			m.Affinity = "prefix"
		}
		if m.AffinityLoadCap == 0 {
			m.AffinityLoadCap = DefaultAffinityLoadCap
		}
		if m.Health.Path == "" {
			m.Health.Path = "/health"
		}
		if m.Health.Interval == 0 {
			m.Health.Interval = Duration(DefaultHealthInterval)
		}
		if m.Timeouts.Connect == 0 {
			m.Timeouts.Connect = Duration(2 * time.Second)
		}
		if m.Timeouts.StreamIdle == 0 {
			m.Timeouts.StreamIdle = Duration(60 * time.Second)
		}
		if m.Timeouts.Total == 0 {
			m.Timeouts.Total = Duration(10 * time.Minute)
		}
		if m.Retries == nil {
			r := DefaultRetries
			m.Retries = &r
		}
		if m.Queue.Max == nil {
			q := DefaultQueueMax
			m.Queue.Max = &q
		}
		if m.Queue.Timeout == 0 {
			m.Queue.Timeout = Duration(DefaultQueueTimeout)
		}
		if m.Queue.MaxPerKey == nil {
			q := DefaultQueueMaxPerKey(*m.Queue.Max)
			m.Queue.MaxPerKey = &q
		}
		if m.DefaultMaxTokens == 0 {
			m.DefaultMaxTokens = DefaultMaxTokens
		}
		if m.LoadInterval == nil {
			d := Duration(DefaultLoadInterval)
			m.LoadInterval = &d
		}
		if m.KVSaturation == 0 {
			m.KVSaturation = DefaultKVSaturation
		}
		if n := m.Nomad; n != nil {
			if n.Scheme == "" {
				n.Scheme = DefaultNomadScheme
			}
			if n.Namespace == "" {
				n.Namespace = c.Nomad.Namespace
			}
		}
	}
}

// b2i is 1 for true.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
