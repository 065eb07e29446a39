package soak

import (
	"encoding/xml"
	"math"
	"strings"
	"testing"
	"time"
)

// run is 30 minutes of samples every 20 s: the heap of api1 grows by
// 1 MiB a minute (a leak), its RSS wobbles around 100 MiB, the worker's
// goroutines hold at 120, and the workflow backlog is high while the run
// warms up, then drains before minute 5.
func run() []Sample {
	var out []Sample
	for t := time.Duration(0); t <= 30*time.Minute; t += 20 * time.Second {
		m := t.Minutes()
		backlog := 0.0
		if m < 3 {
			backlog = 400
		}
		out = append(out, Sample{Elapsed: t, Values: map[string]float64{
			"api1_rss_mib": 100 + 3*math.Sin(m), "api1_heap_mib": 40 + m, "api1_goroutines": 60,
			"worker1_rss_mib": 80, "worker1_heap_mib": 30, "worker1_goroutines": 120 + float64(int(m)%3),
			"backlog_workflow_tasks": backlog,
		}})
	}
	return out
}

// A leak is called not flat; a wobble, a steady count and a backlog that
// drained before the window are flat, and the summary says which.
func TestALeakIsNotFlat(t *testing.T) {
	verdicts := judge(run(), 5*time.Minute)
	got := map[string]Verdict{}
	for _, v := range verdicts {
		got[v.Series] = v
	}
	for series, flat := range map[string]bool{"api1_heap_mib": false, "api1_rss_mib": true, "api1_goroutines": true,
		"worker1_goroutines": true, "backlog_workflow_tasks": true, "db_conns_engine": true} {
		v, ok := got[series]
		if !ok || v.Flat != flat {
			t.Errorf("%s: %+v, want flat=%v", series, v, flat)
		}
	}
	if v := got["api1_heap_mib"]; math.Abs(v.Slope-1) > 0.01 || v.At != 45 || v.End != 70 {
		t.Errorf("the leak: %+v; want slope 1 MiB/min from 45 to 70", v)
	}
	summary := Summary(verdicts, 5*time.Minute, 30*time.Minute)
	if !strings.Contains(summary, "| api1_heap_mib | 45 | 70 | +1.000 | +25.0 | ±8.0 | **not flat** |") {
		t.Errorf("summary:\n%s", summary)
	}
}

// The plot has a line per series, through every sample, in a document an
// SVG reader parses.
func TestThePlotDrawsEverySeries(t *testing.T) {
	samples := run()
	var doc struct {
		Polylines []struct {
			Points string `xml:"points,attr"`
		} `xml:"polyline"`
	}
	if err := xml.Unmarshal([]byte(SVG(samples, 5*time.Minute)), &doc); err != nil {
		t.Fatal(err)
	}
	if want := len(columnsOf(samples[0])); len(doc.Polylines) != want {
		t.Fatalf("%d lines, want %d", len(doc.Polylines), want)
	}
	for _, p := range doc.Polylines {
		if n := len(strings.Fields(p.Points)); n != len(samples) {
			t.Errorf("a line through %d points, want %d", n, len(samples))
		}
	}
	if lines := strings.Count(CSV(samples), "\n"); lines != len(samples)+1 {
		t.Errorf("CSV of %d lines, want a header and %d rows", lines, len(samples))
	}
}
