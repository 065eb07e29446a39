package soak

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// column is one series: its CSV name, the panel of the plot it is drawn
// in, and how it is judged (not at all, for the cumulative counts).
type column struct {
	name, panel string
	judged      bool
	// A series is flat when its drift over the judged window (the
	// least-squares slope times the window) is at most floor, or at most
	// relative times its mean over the window.
	floor, relative float64
	brief           bool // shown in the run's log line
}

// The rules, by what the series measure.
const (
	memoryFloor = 8    // MiB: a GC cycle's swing of a small heap
	countFloor  = 20   // goroutines, tasks, events, workflows
	connFloor   = 3    // database connections
	relative    = 0.10 // of the mean
)

// panels in the plot's order.
var panels = []string{"RSS (MiB)", "Go heap in use (MiB)", "Goroutines", "Database connections", "Backlogs",
	"Workflows: running, and cached by each worker", "Refusals and errors (cumulative)"}

// columnsOf lists the columns of a run's samples, the processes' first
// (in the order they were started: APIs, then workers).
func columnsOf(s Sample) []column {
	var procs []string
	for k := range s.Values {
		if p, ok := strings.CutSuffix(k, "_goroutines"); ok {
			procs = append(procs, p)
		}
	}
	slices.SortFunc(procs, func(a, b string) int {
		if (strings.HasPrefix(a, "api")) != (strings.HasPrefix(b, "api")) {
			if strings.HasPrefix(a, "api") {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	var cols, cached []column
	for _, p := range procs {
		cols = append(cols,
			column{name: p + "_rss_mib", panel: panels[0], judged: true, floor: memoryFloor, relative: relative, brief: true},
			column{name: p + "_heap_mib", panel: panels[1], judged: true, floor: memoryFloor, relative: relative},
			column{name: p + "_goroutines", panel: panels[2], judged: true, floor: countFloor, relative: relative, brief: true})
		if _, ok := s.Values[p+"_cached_workflows"]; ok {
			cached = append(cached, column{name: p + "_cached_workflows", panel: panels[5], judged: true, floor: countFloor, relative: relative})
		}
	}
	cols = append(cols,
		column{name: "db_conns_engine", panel: panels[3], judged: true, floor: connFloor, brief: true},
		column{name: "db_conns_temporal", panel: panels[3], judged: true, floor: connFloor},
		column{name: "backlog_workflow_tasks", panel: panels[4], judged: true, floor: countFloor, brief: true},
		column{name: "backlog_activity_tasks", panel: panels[4], judged: true, floor: countFloor, brief: true},
		column{name: "backlog_webhook_events", panel: panels[4], judged: true, floor: countFloor, brief: true},
		column{name: "backlog_session_starts", panel: panels[4], judged: true, floor: countFloor},
		column{name: "workflows_running", panel: panels[5], judged: true, floor: countFloor, relative: relative, brief: true})
	cols = append(cols, cached...)
	return append(cols,
		column{name: "sessions_opened", panel: panels[6], brief: true},
		column{name: "refusals", panel: panels[6], brief: true},
		column{name: "errors", panel: panels[6], brief: true})
}

// Verdict is one series judged over the window from SteadyFrom to the
// end.
type Verdict struct {
	Series string
	// At and End are the series at the window's start (the first sample
	// at or after it) and at the last sample; Mean its mean over the
	// window; Slope its least-squares slope, per minute; Drift the slope
	// over the whole window; Limit the drift allowed.
	At, End, Mean, Slope, Drift, Limit float64
	Flat                               bool
}

// judge judges every judged series over the samples from steadyFrom on.
func judge(samples []Sample, steadyFrom time.Duration) []Verdict {
	var window []Sample
	for _, s := range samples {
		if s.Elapsed >= steadyFrom {
			window = append(window, s)
		}
	}
	if len(window) < 2 {
		return nil
	}
	span := (window[len(window)-1].Elapsed - window[0].Elapsed).Minutes()
	var out []Verdict
	for _, c := range columnsOf(samples[0]) {
		if !c.judged {
			continue
		}
		xs, ys := make([]float64, len(window)), make([]float64, len(window))
		for i, s := range window {
			xs[i], ys[i] = s.Elapsed.Minutes(), s.Values[c.name]
		}
		v := Verdict{Series: c.name, At: ys[0], End: ys[len(ys)-1], Mean: mean(ys), Slope: slope(xs, ys)}
		v.Drift = v.Slope * span
		v.Limit = math.Max(c.floor, c.relative*math.Abs(v.Mean))
		v.Flat = math.Abs(v.Drift) <= v.Limit
		out = append(out, v)
	}
	return out
}

func mean(ys []float64) float64 {
	var sum float64
	for _, y := range ys {
		sum += y
	}
	return sum / float64(len(ys))
}

// slope is the least-squares slope of ys over xs.
func slope(xs, ys []float64) float64 {
	mx, my := mean(xs), mean(ys)
	var num, den float64
	for i := range xs {
		num += (xs[i] - mx) * (ys[i] - my)
		den += (xs[i] - mx) * (xs[i] - mx)
	}
	if den == 0 {
		return 0
	}
	return num / den
}

// Summary is the verdicts as a table in Markdown, with the rule stated.
func Summary(verdicts []Verdict, steadyFrom, end time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| series | minute %g | minute %g | slope /min | drift over the window | allowed | verdict |\n", steadyFrom.Minutes(), math.Round(end.Minutes()))
	b.WriteString("|---|---:|---:|---:|---:|---:|---|\n")
	for _, v := range verdicts {
		verdict := "flat"
		if !v.Flat {
			verdict = "**not flat**"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %+.3f | %+.1f | ±%.1f | %s |\n", v.Series, num(v.At), num(v.End), v.Slope, v.Drift, v.Limit, verdict)
	}
	fmt.Fprintf(&b, "\nFlat: the least-squares drift from minute %g to the end is within %.0f%% of the series' mean there, "+
		"or within a floor (%d MiB of memory, %d goroutines, tasks, events or workflows, %d connections), whichever is larger.\n",
		steadyFrom.Minutes(), relative*100, memoryFloor, countFloor, connFloor)
	return b.String()
}

func num(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// CSV is the samples, one row each, the elapsed seconds first.
func CSV(samples []Sample) string {
	if len(samples) == 0 {
		return ""
	}
	cols := columnsOf(samples[0])
	var b strings.Builder
	b.WriteString("elapsed_s")
	for _, c := range cols {
		b.WriteString("," + c.name)
	}
	b.WriteString("\n")
	for _, s := range samples {
		fmt.Fprintf(&b, "%.0f", s.Elapsed.Seconds())
		for _, c := range cols {
			fmt.Fprintf(&b, ",%s", strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", s.Values[c.name]), "0"), "."))
		}
		b.WriteString("\n")
	}
	return b.String()
}
