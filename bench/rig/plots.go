package main

import (
	"fmt"
	"image/color"
	"log"
	"path/filepath"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// proxyColors keeps each proxy's colour the same in every plot.
var proxyColors = map[string]color.Color{
	"sluice":    color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	"nginx":     color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	"nginx-lua": color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
}

// chart is one line plot: y against x for each proxy, from the rows of one
// scenario whose variant is the x value.
type chart struct {
	file, title, xLabel, yLabel string
	scenario                    string
	logX, logY                  bool
	y                           func(r row) (float64, bool)
}

// writePlots draws the report's PNG plots next to it; it returns the
// markdown that shows them.
func writePlots(rows []row) string {
	charts := []chart{
		{file: "cpu-vs-prompt.png", title: "CPU per request against prompt size (f)", xLabel: "prompt bytes (log)", yLabel: "CPU µs per request (log)",
			scenario: "f", logX: true, logY: true, y: func(r row) (float64, bool) { return r.cpuReq, r.cpuReq > 0 }},
		{file: "rss-vs-streams.png", title: "RSS under N open streams, 100 KB prompts (c)", xLabel: "open streams", yLabel: "RSS MiB, all processes",
			scenario: "c", y: func(r row) (float64, bool) { return r.rssLoad / 1024, r.rssLoad > 0 }},
		{file: "cpu-vs-rate.png", title: "CPU per request against offered load, 300 ms upstream (d)", xLabel: "requests per second (open loop)", yLabel: "CPU µs per request",
			scenario: "d", y: func(r row) (float64, bool) { return r.cpuReq, r.cpuReq > 0 }},
		{file: "kib-per-stream-vs-streams.png", title: "RSS per open stream against open streams, 100 KB prompts (c)", xLabel: "open streams", yLabel: "KiB per open stream",
			scenario: "c", y: func(r row) (float64, bool) { return r.perStream, r.perStream > 0 }},
		{file: "rss-per-stream-vs-prompt.png", title: "RSS per open stream against prompt size (f2)", xLabel: "prompt bytes (log)", yLabel: "KiB per open stream",
			scenario: "f2", logX: true, y: func(r row) (float64, bool) { return r.perStream, r.perStream > 0 }},
	}
	var md string
	for _, c := range charts {
		if path, ok := c.draw(rows); ok {
			md += fmt.Sprintf("![%s](%s)\n\n", c.title, path)
		}
	}
	return md
}

func (c chart) draw(rows []row) (string, bool) {
	series := map[string]plotter.XYs{}
	for _, r := range rows {
		if r.scenario != c.scenario || r.proxy == "direct" {
			continue
		}
		x, err := strconv.ParseFloat(r.variant, 64)
		y, ok := c.y(r)
		if err != nil || !ok {
			continue
		}
		series[r.proxy] = append(series[r.proxy], plotter.XY{X: x, Y: y})
	}
	if len(series) == 0 {
		return "", false
	}
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = c.title, c.xLabel, c.yLabel
	if c.logX {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	}
	if c.logY {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	}
	p.Legend.Top, p.Legend.Left = true, true
	names := make([]string, 0, len(series))
	for name := range series {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		xys := series[name]
		sort.Slice(xys, func(i, j int) bool { return xys[i].X < xys[j].X })
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			log.Printf("plot %s: %v", c.file, err)
			return "", false
		}
		col := proxyColors[name]
		if col == nil {
			col = color.Black
		}
		line.Color, points.Color, points.Shape = col, col, draw.CircleGlyph{}
		p.Add(line, points)
		p.Legend.Add(name, line, points)
	}
	rel := filepath.Join("img", c.file)
	out := filepath.Join(filepath.Dir(*reportMD), rel)
	if err := p.Save(7*vg.Inch, 4*vg.Inch, out); err != nil {
		log.Printf("plot %s: %v", c.file, err)
		return "", false
	}
	return rel, true
}
