// Package nomad reads what sluice needs from Nomad's native service
// discovery, through github.com/hashicorp/nomad/api: the instances of a
// service — a model's backends, or the gateway's own replicas — first as a
// list, then as blocking queries (WaitIndex) that return when the list
// changes. Errors back off (1 s doubling to 30 s) and the last known list
// stays in force while Nomad is unreachable.
package nomad

import (
	"context"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/sluice-gw/sluice/config"
)

// NewClient is a Nomad API client configured as nomad/api's DefaultConfig
// reads the environment (NOMAD_ADDR, NOMAD_TOKEN, NOMAD_NAMESPACE,
// NOMAD_REGION, TLS variables), with the configuration's overrides.
func NewClient(c config.NomadClient) (*api.Client, error) {
	cfg := api.DefaultConfig()
	if c.Address != "" {
		cfg.Address = c.Address
	}
	if c.Namespace != "" {
		cfg.Namespace = c.Namespace
	}
	if c.Region != "" {
		cfg.Region = c.Region
	}
	if c.TokenEnv != "" {
		cfg.SecretID = os.Getenv(c.TokenEnv)
	}
	return api.NewClient(cfg)
}

// Source is one service to watch.
type Source struct {
	Service   string
	Namespace string   // empty: the client's
	Tags      []string // an instance must have every one
}

func (s Source) String() string {
	return fmt.Sprintf("%s (namespace %q, tags %v)", s.Service, s.Namespace, s.Tags)
}

// Instance is one registration of a service.
type Instance struct {
	Address string
	Port    int
}

// Waits and backoff of Watch.
const (
	blockFor   = 5 * time.Minute // a blocking query's wait; Nomad adds jitter
	minBackoff = time.Second
	maxBackoff = 30 * time.Second
)

// Watch follows src until ctx ends. update is called with the instances
// (sorted, tags filtered) at the first answer and at every change; status
// is called after every query with its error (nil: Nomad answered), so the
// caller can log and count outages. While Nomad is unreachable the last
// list stays as it was: update is not called.
func Watch(ctx context.Context, client *api.Client, src Source, update func([]Instance), status func(error)) {
	var index uint64
	var last []Instance
	first := true
	backoff := minBackoff
	for ctx.Err() == nil {
		q := (&api.QueryOptions{Namespace: src.Namespace, WaitIndex: index, WaitTime: blockFor}).WithContext(ctx)
		regs, meta, err := client.Services().Get(src.Service, q)
		if ctx.Err() != nil {
			return
		}
		status(err)
		if err != nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, maxBackoff)
			continue
		}
		backoff = minBackoff
		if meta.LastIndex < index {
			index = 0 // the index went backwards (a new leader's state): start over
		} else {
			index = meta.LastIndex
		}
		found := matching(regs, src.Tags)
		if first || !slices.Equal(found, last) {
			first, last = false, found
			update(found)
		}
	}
}

// matching keeps the registrations that carry every tag, as sorted,
// de-duplicated instances.
func matching(regs []*api.ServiceRegistration, tags []string) []Instance {
	var out []Instance
	for _, r := range regs {
		ok := true
		for _, t := range tags {
			if !slices.Contains(r.Tags, t) {
				ok = false
				break
			}
		}
		if ok && r.Address != "" && r.Port > 0 {
			out = append(out, Instance{Address: r.Address, Port: r.Port})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Address != out[j].Address {
			return out[i].Address < out[j].Address
		}
		return out[i].Port < out[j].Port
	})
	return slices.Compact(out)
}

// Skipped is an instance Backends could not make a backend of, and why.
type Skipped struct {
	Instance
	Err error
}

// Backends turns a model's discovered instances into its backends. An
// instance whose address does not make a URL sluice can dial — an IPv6
// zone (fe80::1%eth0 names an interface of the host that registered it),
// a space, anything but an IP address or a host name — or whose port is
// out of range is skipped and returned in skipped, for the caller to log:
// one bad registration must not take the others, or a worker, with it.
func Backends(n *config.NomadService, found []Instance) (backends []config.Backend, skipped []Skipped) {
	backends = make([]config.Backend, 0, len(found))
	for _, in := range found {
		u, err := backendURL(n.Scheme, in)
		if err != nil {
			skipped = append(skipped, Skipped{in, err})
			continue
		}
		backends = append(backends, config.Backend{URL: u, Slots: n.Slots, APIKeyEnv: n.APIKeyEnv, APIKeysEnv: n.APIKeysEnv})
	}
	return backends, skipped
}

// backendURL is scheme://address:port, or why that is not a URL to dial.
func backendURL(scheme string, in Instance) (string, error) {
	if in.Port < 1 || in.Port > 65535 {
		return "", fmt.Errorf("port %d is out of range", in.Port)
	}
	host := in.Address
	if ip, err := netip.ParseAddr(host); err == nil {
		if ip.Zone() != "" {
			return "", fmt.Errorf("address %q has an IPv6 zone, which only the host that registered it can dial", in.Address)
		}
		host = ip.String()
		if ip.Is6() {
			host = "[" + host + "]"
		}
	} else if !hostName(host) {
		return "", fmt.Errorf("address %q is neither an IP address nor a host name", in.Address)
	}
	raw := fmt.Sprintf("%s://%s:%d", scheme, host, in.Port)
	// Read back as the workers' pools will read it: exactly this host.
	if u, err := url.Parse(raw); err != nil || u.Host != host+":"+strconv.Itoa(in.Port) || u.Path != "" {
		return "", fmt.Errorf("address %q does not make a URL (%s)", in.Address, raw)
	}
	return raw, nil
}

// hostName reports whether s is a DNS host name: dot-separated labels of
// letters, digits, '-' and '_', none empty, at most 253 bytes.
func hostName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(strings.TrimSuffix(s, "."), ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, c := range []byte(label) {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}
