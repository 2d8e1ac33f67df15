package supervisor

// The fleet's spend exchange (fleet.spend_exchange; package fleetspend):
// every period the supervisor publishes what this replica's keys used of
// their quotas and budgets, and what its requests in flight reserved, as
// its item of each key's Nomad variable, and writes what the other
// replicas' items say (their use and reservations) into the key's fleet cells,
// which the workers add to their own use when they admit a request. The
// figures hold for three periods: past that (Nomad unreachable, the
// variable refused) the workers divide the limits by the live replicas
// again, as without the exchange.

import (
	"cmp"
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/fleetspend"
	"github.com/sluice-gw/sluice/nomad"
	"github.com/sluice-gw/sluice/quota"
	"github.com/sluice-gw/sluice/shm"
)

// spendFreshFor is how many exchange periods the others' figures hold.
const spendFreshFor = 3

// spendKey is one key's cells in an exchange round.
type spendKey struct {
	name  string
	own   [fleetspend.NumKinds]*shm.Cell // its quota and budget cells (nil: none)
	fleet [fleetspend.NumKinds]*shm.Cell // their fleet cells
}

// spendExchange is the supervisor's side of the exchange.
type spendExchange struct {
	ctx     context.Context // ends when the supervisor stops
	log     *slog.Logger
	results *prometheus.CounterVec // sluice_fleet_spend_exchanges_total{result}

	client    config.NomadClient // the one store was made for
	store     fleetspend.Store
	namespace string

	// prior is, for each key, what its own item in the variable said
	// beyond what this replica's cells held when it started, at the first
	// exchange after the start: spend of this replica's that a restart
	// without state_dir forgot (with state_dir the cells hold it, and
	// nothing is beyond). It is published with the cells' and counted,
	// for the periods it was of.
	prior map[string]*fleetspend.Figures
	// atStart is what each key's cells held when the exchange began,
	// before any worker served (a key a reload adds: at its first round).
	atStart map[string]fleetspend.Figures
}

// newSpendExchange is the exchange, its cells' start taken now: before
// the first worker starts.
func (s *supervisor) newSpendExchange() *spendExchange {
	x := &spendExchange{log: s.log, results: s.metrics.spendExchanges,
		prior: map[string]*fleetspend.Figures{}, atStart: map[string]fleetspend.Figures{}}
	cal := quota.NewCalendar(s.cfg.QuotaLocation())
	for _, k := range spendKeys(s.region, s.cfg) {
		x.atStart[k.name] = k.figures(cal, cal.Now())
	}
	return x
}

// exchangeSpend runs the exchange until stop, each round with the
// configuration in force.
func (s *supervisor) exchangeSpend(x *spendExchange, stop <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-stop; cancel() }() // a call to Nomad in flight ends with the supervisor
	x.ctx = ctx
	for {
		s.cfgMu.Lock()
		cfg := s.cfg
		s.cfgMu.Unlock()
		every := cfg.Fleet.SpendEvery()
		wait := every
		if every == 0 || s.upgraded.Load() {
			wait = time.Second // off: looked at again, for a reload that turns it on
		}
		select {
		case <-stop:
			return
		case <-time.After(wait):
		}
		if every > 0 && !s.upgraded.Load() {
			x.round(s, cfg, every)
		}
	}
}

// round exchanges every key's spend once.
func (x *spendExchange) round(s *supervisor, cfg *config.Config, every time.Duration) {
	ns := cmp.Or(cfg.Fleet.Namespace, cfg.Nomad.Namespace)
	if x.store == nil || x.client != cfg.Nomad || x.namespace != ns {
		client, err := nomad.NewClient(cfg.Nomad)
		if err != nil {
			x.log.Error("fleet spend exchange: nomad client", "err", err)
			return
		}
		x.store, x.client, x.namespace = fleetspend.NomadStore(x.ctx, client, ns), cfg.Nomad, ns
	}
	keys := spendKeys(s.region, cfg)
	cal := quota.NewCalendar(cfg.QuotaLocation())
	prefix, replica := cfg.Fleet.SpendPrefix(), cfg.Fleet.ReplicaName()
	failed := 0
	for _, k := range keys {
		if x.ctx.Err() != nil {
			return
		}
		now := cal.Now()
		var ids [quota.NumPeriods]int64
		for p := quota.Day; p < quota.NumPeriods; p++ {
			ids[p] = cal.ID(p, now)
		}
		prior := x.prior[k.name]
		start, known := x.atStart[k.name]
		own := func(prev *fleetspend.Figures) fleetspend.Item {
			f := k.figures(cal, now)
			if !known { // a key a reload added
				start, known = f, true
				x.atStart[k.name] = f
			}
			if prior == nil { // the first exchange since the start
				prior = &fleetspend.Figures{}
				if prev != nil {
					for kind := range fleetspend.NumKinds {
						for p := quota.Day; p < quota.NumPeriods; p++ {
							if gap := prev.Used(kind, p, ids[p]) - start.Used(kind, p, ids[p]); gap > 0 {
								prior[kind][p] = [2]int64{ids[p], gap}
							}
						}
					}
				}
				x.prior[k.name] = prior
			}
			for kind := range fleetspend.NumKinds {
				for p := quota.Day; p < quota.NumPeriods; p++ {
					f[kind][p][1] += prior.Used(kind, p, ids[p])
				}
			}
			// With what this replica's requests in flight reserved now,
			// for the others to count until our figures would go stale.
			return fleetspend.Item{Figures: f, Reserved: k.reserved(), At: now.Unix(), Hold: int64((spendFreshFor*every + time.Second - 1) / time.Second)}
		}
		res, err := fleetspend.Exchange(x.store, fleetspend.Path(prefix, k.name), replica, own, ids, now)
		x.results.WithLabelValues("conflict").Add(float64(res.Conflicts))
		if err != nil {
			x.results.WithLabelValues("error").Inc()
			if failed == 0 {
				x.log.Warn("fleet spend exchange failed; the others' last figures hold for a while, then each quota is divided by the replicas",
					"key", k.name, "path", fleetspend.Path(prefix, k.name), "err", err)
			}
			failed++
			continue
		}
		x.results.WithLabelValues("ok").Inc()
		until := time.Now().Add(spendFreshFor * every).UnixNano()
		for kind, f := range k.fleet {
			if f == nil {
				continue
			}
			for p := quota.Day; p < quota.NumPeriods; p++ {
				quota.SetOthers(f, p, ids[p], res.Others.Used(kind, p, ids[p])+prior.Used(kind, p, ids[p])+res.Reserved[kind])
			}
			quota.SetFresh(f, until)
		}
	}
}

// spendKeys are the keys of cfg with a quota or a budget, and their cells.
func spendKeys(r *shm.Region, cfg *config.Config) []spendKey {
	var keys []spendKey
	for _, k := range cfg.Keys {
		sk := spendKey{name: k.Name}
		if k.HasQuotas() {
			sk.own[fleetspend.Tokens], sk.fleet[fleetspend.Tokens] = r.Lookup(shm.QuotaCell(k.Name)), r.Lookup(shm.FleetQuotaCell(k.Name))
		}
		if k.Budget != nil {
			sk.own[fleetspend.Pico], sk.fleet[fleetspend.Pico] = r.Lookup(shm.BudgetCell(k.Name)), r.Lookup(shm.FleetBudgetCell(k.Name))
		}
		if sk.own != [fleetspend.NumKinds]*shm.Cell{} {
			keys = append(keys, sk)
		}
	}
	return keys
}

// reserved is what this replica's requests in flight reserved of each of
// k's kinds: the sum of its cells' worker columns.
func (k spendKey) reserved() (r [fleetspend.NumKinds]int64) {
	for kind, c := range k.own {
		if c != nil {
			r[kind] = max(c.Total(), 0)
		}
	}
	return r
}

// figures are what k's cells say this replica used in each period at now.
func (k spendKey) figures(cal quota.Calendar, now time.Time) fleetspend.Figures {
	var f fleetspend.Figures
	for kind, c := range k.own {
		if c == nil {
			continue
		}
		for p := quota.Day; p < quota.NumPeriods; p++ {
			f[kind][p] = [2]int64{cal.ID(p, now), quota.Used(c, p, cal, now)}
		}
	}
	return f
}
