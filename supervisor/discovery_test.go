package supervisor

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// readLoad sums running and waiting over a vLLM page's series and takes
// the KV usage from the current metric name or the older one.
func TestReadLoad(t *testing.T) {
	pages := map[string]struct {
		body string
		load int64
		kv   float64
		ok   bool
	}{
		"current": {`# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="a"} 3
vllm:num_requests_running{model_name="b"} 2
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{model_name="a"} 4
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{model_name="a"} 0.5
`, 9, 0.5, true},
		"older": {`# TYPE vllm:num_requests_running gauge
vllm:num_requests_running 1
# TYPE vllm:gpu_cache_usage_perc gauge
vllm:gpu_cache_usage_perc 0.85
`, 1, 0.85, true},
		"not vllm": {"# TYPE up gauge\nup 1\n", 0, 0, false},
		"garbage":  {"{{{", 0, 0, false},
	}
	for name, p := range pages {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Write([]byte(p.body))
			}))
			defer srv.Close()
			load, kv, ok := readLoad(context.Background(), srv.Client(), srv.URL)
			if load != p.load || kv != p.kv || ok != p.ok {
				t.Errorf("readLoad = %d, %v, %v; want %d, %v, %v", load, kv, ok, p.load, p.kv, p.ok)
			}
		})
	}
}
