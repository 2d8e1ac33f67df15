package meter

import (
	"bufio"
	"io"
	"strconv"

	"github.com/sluice-gw/sluice/shm"
)

// Text writes metric families in Prometheus' text format (version 0.0.4)
// for the families too many to go through client_golang's registry at
// every scrape: a family's HELP and TYPE lines, then its samples.
//
// Written by hand rather than through the registry's const metrics: a
// scrape of 24,000 series (1,000 keys × 4 models × request codes and token
// kinds) took 63 ms through NewConstMetric, Gather and expfmt — most of it
// allocating, sorting and checking metrics one by one — against the 10 ms
// a scrape may take (BenchmarkScrape1000Keys).
type Text struct {
	w      *bufio.Writer
	b      []byte
	name   string
	labels []string
}

// NewText writes to w (buffered: Flush at the end).
func NewText(w io.Writer) *Text { return &Text{w: bufio.NewWriterSize(w, 64<<10)} }

// Family begins a family: typ is counter, gauge or histogram; its samples
// carry the labels, in this order.
func (t *Text) Family(name, help, typ string, labels ...string) {
	b := append(t.b[:0], "# HELP "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = appendEscaped(b, help, false)
	b = append(b, "\n# TYPE "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = append(b, typ...)
	b = append(b, '\n')
	t.w.Write(b) //nolint:errcheck // the error is Flush's
	t.b, t.name, t.labels = b, name, labels
}

// Int writes a sample of the family with an integer value and the label
// values (in the family's order).
func (t *Text) Int(v int64, values ...string) {
	t.b = appendSample(t.b[:0], t.name, "", t.labels, values, "", v)
	t.w.Write(t.b) //nolint:errcheck
}

// Float writes a sample of the family with a float value.
func (t *Text) Float(v float64, values ...string) {
	b := appendSeries(t.b[:0], t.name, "", t.labels, values, "")
	b = strconv.AppendFloat(b, v, 'g', -1, 64)
	t.b = append(b, '\n')
	t.w.Write(t.b) //nolint:errcheck
}

// histogram writes a sample of a histogram family from its rows in r.
func (t *Text) histogram(r *shm.Region, row, rows int, values []string) {
	b := t.b[:0]
	var count int64
	for i, upper := range Buckets {
		count += max(r.MeterSum(row+i), 0)
		b = appendSample(b, t.name, "_bucket", t.labels, values, strconv.FormatFloat(upper, 'f', -1, 64), count)
	}
	count += max(r.MeterSum(row+len(Buckets)), 0)
	b = appendSample(b, t.name, "_bucket", t.labels, values, "+Inf", count)
	b = appendSeries(b, t.name, "_sum", t.labels, values, "")
	b = strconv.AppendFloat(b, float64(r.MeterSum(row+rows-1))/1e9, 'g', -1, 64)
	b = append(b, '\n')
	t.b = appendSample(b, t.name, "_count", t.labels, values, "", count)
	t.w.Write(t.b) //nolint:errcheck
}

// Flush writes what is buffered.
func (t *Text) Flush() error { return t.w.Flush() }

// WriteMeter writes every series of the region's meter, summed over the
// worker columns: the families this binary knows, each with its HELP and
// TYPE, then its series. A series of a metric this binary does not know (a
// newer binary's, sharing the region through an upgrade), or whose shape
// is not the one it knows, is left out.
func (t *Text) WriteMeter(r *shm.Region) {
	type series struct {
		values    []string
		row, rows int
	}
	byMetric := make(map[*Metric][]series, len(Metrics))
	r.MeterEach(func(desc string, row, rows int) {
		name, values := Parse(desc)
		m := ByName(name)
		if m == nil || len(values) != len(m.Labels) || rows != m.rows() {
			return
		}
		byMetric[m] = append(byMetric[m], series{values, row, rows})
	})
	for _, m := range Metrics {
		ss := byMetric[m]
		if len(ss) == 0 {
			continue
		}
		typ := "counter"
		if m.Kind == Histogram {
			typ = "histogram"
		}
		t.Family(m.Name, m.Help, typ, m.Labels...)
		for _, s := range ss {
			if m.Kind == Histogram {
				t.histogram(r, s.row, s.rows, s.values)
			} else {
				t.Int(r.MeterSum(s.row), s.values...)
			}
		}
	}
}

// appendSample appends one sample line with an integer value.
func appendSample(b []byte, name, suffix string, labels, values []string, le string, v int64) []byte {
	b = appendSeries(b, name, suffix, labels, values, le)
	b = strconv.AppendInt(b, v, 10)
	return append(b, '\n')
}

// appendSeries appends a sample's name and labels (and le, if not empty),
// and the space before its value.
func appendSeries(b []byte, name, suffix string, labels, values []string, le string) []byte {
	b = append(b, name...)
	b = append(b, suffix...)
	if len(labels) > 0 || le != "" {
		b = append(b, '{')
		for i, l := range labels {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, l...)
			b = append(b, `="`...)
			b = appendEscaped(b, values[i], true)
			b = append(b, '"')
		}
		if le != "" {
			if len(labels) > 0 {
				b = append(b, ',')
			}
			b = append(b, `le="`...)
			b = append(b, le...)
			b = append(b, '"')
		}
		b = append(b, '}')
	}
	return append(b, ' ')
}

// appendEscaped appends s escaped as the text format wants: backslash and
// line feed always, the double quote in a label value.
func appendEscaped(b []byte, s string, quote bool) []byte {
	plain := true
	for i := 0; i < len(s) && plain; i++ {
		plain = s[i] != '\\' && s[i] != '\n' && s[i] != '"'
	}
	if plain {
		return append(b, s...)
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b = append(b, `\\`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '"' && quote:
			b = append(b, `\"`...)
		default:
			b = append(b, c)
		}
	}
	return b
}
