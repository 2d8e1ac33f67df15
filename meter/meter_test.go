package meter

import (
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/sluice-gw/sluice/shm"
)

func TestDescriptor(t *testing.T) {
	d := Descriptor(Requests, "m", "k", "ok")
	if name, values := Parse(d); name != Requests.Name || strings.Join(values, ",") != "m,k,ok" {
		t.Fatalf("Parse(%q) = %q %q", d, name, values)
	}
	long := strings.Repeat("é", 40) // 80 bytes: cut, on a rune boundary, and marked with its hash
	_, values := Parse(Descriptor(Requests, long, "k", "ok"))
	if len(values[0]) > labelMax || !strings.HasPrefix(long, strings.Split(values[0], "~")[0]) || !strings.Contains(values[0], "~") {
		t.Fatalf("cut label %q (%d bytes)", values[0], len(values[0]))
	}
	// Two long values that differ only past the cut keep two series.
	other := long[:len(long)-2] + "e!"
	_, v2 := Parse(Descriptor(Requests, other, "k", "ok"))
	if v2[0] == values[0] {
		t.Fatalf("two long names that differ past the cut share the label %q", v2[0])
	}
	if !utf8.ValidString(values[0]) || !utf8.ValidString(v2[0]) {
		t.Fatal("a cut label is not valid UTF-8")
	}
	if len(Descriptor(Failures, long, long, long)) > shm.MeterDescMax {
		t.Fatal("the longest descriptor of the metrics does not fit an entry")
	}
}

// What two workers record is one series each, summed, as Prometheus text
// that Prometheus' own parser reads back.
func TestRecordAndWriteMeter(t *testing.T) {
	region, err := shm.Create(4, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer region.Close()
	w0, w1 := NewRecorder(region, 0), NewRecorder(region, 1)
	w0.Counter(Requests, "m", "k", "ok").Add(2)
	w1.Counter(Requests, "m", "k", "ok").Add(3)
	w1.Counter(Requests, "m", `odd "key"\`+"\n", "queue_full").Add(1)
	w0.Histogram(TimeToFirstToken, "m").Observe(3 * time.Millisecond)
	w1.Histogram(TimeToFirstToken, "m").Observe(700 * time.Millisecond)
	w1.Histogram(TimeToFirstToken, "m").Observe(time.Hour)
	var out strings.Builder
	text := NewText(&out)
	text.WriteMeter(region)
	if err := text.Flush(); err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(out.String()))
	if err != nil {
		t.Fatalf("the text does not parse: %v\n%s", err, out.String())
	}
	got := map[string]float64{}
	for _, m := range fams[Requests.Name].GetMetric() {
		l := map[string]string{}
		for _, p := range m.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		got[l["key"]+"/"+l["code"]] = m.GetCounter().GetValue()
	}
	if got["k/ok"] != 5 || got[`odd "key"\`+"\n/queue_full"] != 1 || len(got) != 2 {
		t.Errorf("requests: %v", got)
	}
	h := fams[TimeToFirstToken.Name].GetMetric()[0].GetHistogram()
	if h.GetSampleCount() != 3 || h.GetSampleSum() != 3600.703 {
		t.Errorf("histogram count %d sum %v", h.GetSampleCount(), h.GetSampleSum())
	}
	for _, b := range h.GetBucket() {
		want := uint64(1)
		switch {
		case math.IsInf(b.GetUpperBound(), 1):
			want = 3
		case b.GetUpperBound() >= 1:
			want = 2
		}
		if b.GetCumulativeCount() != want {
			t.Errorf("bucket le=%v: %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), want)
		}
	}
	if len(h.GetBucket()) != len(Buckets)+1 {
		t.Errorf("%d buckets, want %d and +Inf", len(h.GetBucket()), len(Buckets))
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
