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
	"os"
	"slices"
	"sort"
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

// Backends turns a model's discovered instances into its backends.
func Backends(n *config.NomadService, found []Instance) []config.Backend {
	out := make([]config.Backend, 0, len(found))
	for _, in := range found {
		host := in.Address
		if slices.Contains([]byte(host), ':') {
			host = "[" + host + "]" // IPv6
		}
		out = append(out, config.Backend{URL: fmt.Sprintf("%s://%s:%d", n.Scheme, host, in.Port), Slots: n.Slots, APIKeyEnv: n.APIKeyEnv})
	}
	return out
}
