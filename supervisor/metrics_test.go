package supervisor

import (
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/sluice-gw/sluice/cells"
	"github.com/sluice-gw/sluice/config"
	"github.com/sluice-gw/sluice/shm"
)

// The provider keys' series come from their cells, one per configured
// key name: up is 0 while a key is out (until the generation after its
// 401/403) or resting after a 429.
func TestMetricsProviderKeys(t *testing.T) {
	const model, url = "m", "https://api.example:443"
	keys := []string{"KEY_A", "KEY_B", "KEY_C"}
	cfg := &config.Config{Models: []config.Model{{Name: model, Backends: []config.Backend{{URL: url, Slots: 4, APIKeysEnv: keys}}}}}
	region, err := shm.Create(cfg.CellsNeeded(), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer region.Close()
	if err := cells.Alloc(region, cfg); err != nil {
		t.Fatal(err)
	}
	region.SetGeneration(1)
	set := func(key string, i int, v int64) { *region.Lookup(shm.BackendKeyCell(model, url, key)).Scalar(i) = v }
	set("KEY_A", shm.BackendKeyRequestsScalar, 7)
	set("KEY_B", shm.BackendKeyOutScalar, 2) // rejected under generation 1
	set("KEY_B", shm.BackendKeyRejectedScalar, 1)
	set("KEY_C", shm.BackendKeyRestScalar, region.Now()+int64(time.Hour))
	set("KEY_C", shm.BackendKeyRateLimitedScalar, 3)

	s := &supervisor{region: region, cfg: cfg, gen: 1}
	scrape := func() map[string]map[string]float64 {
		fams, err := newMetrics(s).reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]map[string]float64{}
		for _, f := range fams {
			for _, m := range f.GetMetric() {
				labels := map[string]string{}
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				if labels["key"] == "" {
					continue
				}
				if labels["model"] != model || labels["backend"] != url {
					t.Fatalf("%s has labels %v", f.GetName(), labels)
				}
				if out[f.GetName()] == nil {
					out[f.GetName()] = map[string]float64{}
				}
				out[f.GetName()][labels["key"]] = value(m)
			}
		}
		return out
	}
	got := scrape()
	for name, want := range map[string]map[string]float64{
		"sluice_backend_key_up":                 {"KEY_A": 1, "KEY_B": 0, "KEY_C": 0},
		"sluice_backend_key_requests_total":     {"KEY_A": 7, "KEY_B": 0, "KEY_C": 0},
		"sluice_backend_key_rejected_total":     {"KEY_A": 0, "KEY_B": 1, "KEY_C": 0},
		"sluice_backend_key_rate_limited_total": {"KEY_A": 0, "KEY_B": 0, "KEY_C": 3},
	} {
		for k, v := range want {
			if g, ok := got[name][k]; !ok || g != v {
				t.Errorf("%s{key=%q} = %v (present %v), want %v", name, k, g, ok, v)
			}
		}
		if len(got[name]) != len(keys) {
			t.Errorf("%s has %d series, want %d", name, len(got[name]), len(keys))
		}
	}
	region.SetGeneration(2) // a reload brings KEY_B back
	if up := scrape()["sluice_backend_key_up"]; up["KEY_B"] != 1 || up["KEY_C"] != 0 {
		t.Errorf("after a reload: up %v", up)
	}
}

func value(m *dto.Metric) float64 {
	if c := m.GetCounter(); c != nil {
		return c.GetValue()
	}
	return m.GetGauge().GetValue()
}
