package soak

import (
	"fmt"
	"html"
	"math"
	"strings"
	"time"
)

// The plot's geometry: one panel per kind of series, stacked, each with
// its axes from zero, a dashed line where the judged window starts and a
// legend on the right.
const (
	plotWidth   = 960
	panelHeight = 170
	marginLeft  = 60
	marginRight = 220
	marginTop   = 28
	panelGap    = 46
)

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"}

// SVG draws the samples, one panel per kind of series.
func SVG(samples []Sample, steadyFrom time.Duration) string {
	if len(samples) == 0 {
		return ""
	}
	cols := columnsOf(samples[0])
	end := samples[len(samples)-1].Elapsed.Minutes()
	height := marginTop + len(panels)*(panelHeight+panelGap)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n",
		plotWidth, height, plotWidth, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	for i, panel := range panels {
		var in []column
		for _, c := range cols {
			if c.panel == panel {
				in = append(in, c)
			}
		}
		top := marginTop + i*(panelHeight+panelGap)
		drawPanel(&b, panel, in, samples, top, end, steadyFrom.Minutes())
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func drawPanel(b *strings.Builder, title string, cols []column, samples []Sample, top int, end, steady float64) {
	innerW := float64(plotWidth - marginLeft - marginRight)
	top64, h := float64(top), float64(panelHeight)
	var peak float64
	for _, c := range cols {
		for _, s := range samples {
			peak = math.Max(peak, s.Values[c.name])
		}
	}
	ymax := niceCeil(peak * 1.1)
	x := func(min float64) float64 { return marginLeft + min/math.Max(end, 1e-9)*innerW }
	y := func(v float64) float64 { return top64 + h - v/ymax*h }

	fmt.Fprintf(b, `<text x="%d" y="%.0f" font-size="13" font-weight="bold">%s</text>`+"\n", marginLeft, top64-8, html.EscapeString(title))
	fmt.Fprintf(b, `<rect x="%d" y="%.0f" width="%.0f" height="%.0f" fill="none" stroke="#999"/>`+"\n", marginLeft, top64, innerW, h)
	for i := 0; i <= 4; i++ {
		v := ymax * float64(i) / 4
		fmt.Fprintf(b, `<line x1="%d" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#eee"/>`, marginLeft, marginLeft+innerW, y(v), y(v))
		fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", marginLeft-4, y(v)+4, tick(v))
	}
	step := 5.0
	if end < 10 {
		step = 1
	}
	for m := 0.0; m <= end+1e-9; m += step {
		fmt.Fprintf(b, `<text x="%.1f" y="%.0f" text-anchor="middle">%g min</text>`+"\n", x(m), top64+h+14, m)
	}
	if steady < end {
		fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="%.0f" y2="%.0f" stroke="#555" stroke-dasharray="4 3"/>`+"\n", x(steady), x(steady), top64, top64+h)
	}
	for i, c := range cols {
		color := palette[i%len(palette)]
		var pts []string
		for _, s := range samples {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(s.Elapsed.Minutes()), y(s.Values[c.name])))
		}
		fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`+"\n", color, strings.Join(pts, " "))
		ly := top64 + 10 + float64(i)*14
		fmt.Fprintf(b, `<line x1="%.0f" x2="%.0f" y1="%.0f" y2="%.0f" stroke="%s" stroke-width="3"/>`, marginLeft+innerW+10, marginLeft+innerW+26, ly-4, ly-4, color)
		fmt.Fprintf(b, `<text x="%.0f" y="%.0f">%s</text>`+"\n", marginLeft+innerW+30, ly, html.EscapeString(c.name))
	}
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten (at least 1).
func niceCeil(v float64) float64 {
	if v <= 1 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func tick(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}
