package meter

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-gw/sluice/shm"
)

// Collector reads a region's meter at scrape time: every series any
// worker recorded, summed over the worker columns. Its series are not
// known in advance, so it describes none (an unchecked collector).
type Collector struct{ Region *shm.Region }

// descs are the metrics' Prometheus descriptions.
var descs = func() map[*Metric]*prometheus.Desc {
	out := map[*Metric]*prometheus.Desc{}
	for _, m := range Metrics {
		out[m] = prometheus.NewDesc(m.Name, m.Help, m.Labels, nil)
	}
	return out
}()

// Describe sends nothing: the series are the region's.
func (Collector) Describe(chan<- *prometheus.Desc) {}

// Collect sends every series of the meter. A series of a metric this
// binary does not know (a newer binary's, sharing the region through an
// upgrade), or whose shape is not the one it knows, is left out.
func (c Collector) Collect(ch chan<- prometheus.Metric) {
	r := c.Region
	c.Region.MeterEach(func(desc string, row, rows int) {
		name, values := Parse(desc)
		m := ByName(name)
		if m == nil || len(values) != len(m.Labels) || rows != m.rows() {
			return
		}
		var pm prometheus.Metric
		var err error
		switch m.Kind {
		case Counter:
			pm, err = prometheus.NewConstMetric(descs[m], prometheus.CounterValue, float64(r.MeterSum(row)), values...)
		case Histogram:
			buckets := make(map[float64]uint64, len(Buckets)) // kept by the metric: one each
			var count uint64
			for i, upper := range Buckets {
				count += uint64(max(r.MeterSum(row+i), 0))
				buckets[upper] = count
			}
			count += uint64(max(r.MeterSum(row+len(Buckets)), 0))
			sum := float64(r.MeterSum(row+rows-1)) / 1e9
			pm, err = prometheus.NewConstHistogram(descs[m], count, sum, buckets, values...)
		}
		if err == nil { // a label value that is not UTF-8: not one a worker wrote whole
			ch <- pm
		}
	})
}
