package meter

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/sluice-gw/sluice/shm"
)

func TestDescriptor(t *testing.T) {
	d := Descriptor(Requests, "m", "k", "ok")
	if name, values := Parse(d); name != Requests.Name || strings.Join(values, ",") != "m,k,ok" {
		t.Fatalf("Parse(%q) = %q %q", d, name, values)
	}
	long := strings.Repeat("é", 40) // 80 bytes: cut at 64, on a rune boundary
	_, values := Parse(Descriptor(Requests, long, "k", "ok"))
	if len(values[0]) != labelMax || values[0] != long[:labelMax] {
		t.Fatalf("cut label %q (%d bytes)", values[0], len(values[0]))
	}
	odd := "a" + strings.Repeat("é", 40) // the cut falls inside a rune: one byte less
	if _, values := Parse(Descriptor(Requests, odd, "k", "ok")); len(values[0]) != labelMax-1 {
		t.Fatalf("cut inside a rune: %d bytes", len(values[0]))
	}
	if len(Descriptor(Failures, long, long, long)) > shm.MeterDescMax {
		t.Fatal("the longest descriptor of the metrics does not fit an entry")
	}
}

// What two workers record is one series each, summed, as Prometheus text.
func TestRecordAndCollect(t *testing.T) {
	region, err := shm.Create(4, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer region.Close()
	w0, w1 := NewRecorder(region, 0), NewRecorder(region, 1)
	w0.Counter(Requests, "m", "k", "ok").Add(2)
	w1.Counter(Requests, "m", "k", "ok").Add(3)
	w1.Counter(Requests, "m", "k", "queue_full").Add(1)
	w0.Histogram(TimeToFirstToken, "m").Observe(3 * time.Millisecond)
	w1.Histogram(TimeToFirstToken, "m").Observe(700 * time.Millisecond)
	w1.Histogram(TimeToFirstToken, "m").Observe(time.Hour)
	reg := prometheus.NewRegistry()
	reg.MustRegister(Collector{region})
	want := `
# HELP sluice_requests_total Requests by model, key and outcome: code is the usage line's error code, or ok.
# TYPE sluice_requests_total counter
sluice_requests_total{code="ok",key="k",model="m"} 5
sluice_requests_total{code="queue_full",key="k",model="m"} 1
# HELP sluice_time_to_first_token_seconds Time from a streamed request's arrival to its first content event, by model.
# TYPE sluice_time_to_first_token_seconds histogram
sluice_time_to_first_token_seconds_bucket{model="m",le="0.005"} 1
sluice_time_to_first_token_seconds_bucket{model="m",le="0.01"} 1
sluice_time_to_first_token_seconds_bucket{model="m",le="0.025"} 1
sluice_time_to_first_token_seconds_bucket{model="m",le="0.05"} 1
sluice_time_to_first_token_seconds_bucket{model="m",le="0.1"} 1
sluice_time_to_first_token_seconds_bucket{model="m",le="0.25"} 1
sluice_time_to_first_token_seconds_bucket{model="m",le="0.5"} 1
sluice_time_to_first_token_seconds_bucket{model="m",le="1"} 2
sluice_time_to_first_token_seconds_bucket{model="m",le="2.5"} 2
sluice_time_to_first_token_seconds_bucket{model="m",le="5"} 2
sluice_time_to_first_token_seconds_bucket{model="m",le="10"} 2
sluice_time_to_first_token_seconds_bucket{model="m",le="30"} 2
sluice_time_to_first_token_seconds_bucket{model="m",le="60"} 2
sluice_time_to_first_token_seconds_bucket{model="m",le="120"} 2
sluice_time_to_first_token_seconds_bucket{model="m",le="300"} 2
sluice_time_to_first_token_seconds_bucket{model="m",le="600"} 2
sluice_time_to_first_token_seconds_bucket{model="m",le="+Inf"} 3
sluice_time_to_first_token_seconds_sum{model="m"} 3600.703
sluice_time_to_first_token_seconds_count{model="m"} 3
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), Requests.Name, TimeToFirstToken.Name); err != nil {
		t.Fatal(err)
	}
}

// With no room, recordings count in the overflow counter, and nothing is
// misplaced.
func TestOverflow(t *testing.T) {
	region, err := shm.Create(4, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer region.Close()
	r := NewRecorder(region, 0)
	n := 0
	for i := 0; ; i++ {
		c := r.Counter(Requests, "m", strings.Repeat("k", 40)+string(rune('a'+i%26))+string(rune('a'+i/26%26))+string(rune('a'+i/676)), "ok")
		c.Add(1)
		if c.p == &r.overflow[0] {
			break
		}
		n++
	}
	if n < shm.DefaultMeterSeries/2 {
		t.Fatalf("the meter overflowed after %d series of %d", n, shm.DefaultMeterSeries)
	}
	// A histogram too, when its neighbourhood of the index is full.
	want := int64(1)
	for i := 0; ; i++ {
		h := r.Histogram(TimeToFirstToken, "full"+string(rune('a'+i)))
		h.Observe(time.Second)
		if h.w == nil {
			want++
			break
		}
	}
	if got := region.MeterSum(mustRow(t, region, Descriptor(Overflow))); got != want {
		t.Fatalf("overflow counted %d, want %d", got, want)
	}
}

func mustRow(t *testing.T, r *shm.Region, desc string) int {
	row, ok := r.MeterSeries(desc, 1)
	if !ok {
		t.Fatal("no row")
	}
	return row
}
