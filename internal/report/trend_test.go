package report

import (
	"math"
	"regexp"
	"strings"
	"testing"
)

// Commit labels under a chart: at most maxCommitTicks and the last, never two closer than a
// step, the first and the last always labelled.
func TestCommitTicks(t *testing.T) {
	for _, n := range []int{1, 2, 7, 8, 9, 40, 41, 1000} {
		commits := make([]string, n)
		for i := range commits {
			commits[i] = string(rune('a' + i%26))
		}
		ticks := commitTicks(commits)
		if ticks[0].V != 0 || ticks[len(ticks)-1].V != float64(n-1) {
			t.Errorf("%d commits: ticks from %v to %v, want 0 to %d", n, ticks[0].V, ticks[len(ticks)-1].V, n-1)
		}
		if len(ticks) > maxCommitTicks+1 {
			t.Errorf("%d commits: %d ticks, want at most %d", n, len(ticks), maxCommitTicks+1)
		}
		step := math.Ceil(float64(n) / maxCommitTicks)
		for i := 1; i < len(ticks); i++ {
			if gap := ticks[i].V - ticks[i-1].V; gap < step {
				t.Errorf("%d commits: ticks %v and %v closer than a step (%v)", n, ticks[i-1].V, ticks[i].V, step)
			}
		}
	}
}

// A band with a commit that has no value is drawn in two pieces, not bridged over the gap;
// every commit with a value is a point titled with its tip, and a mark names its change.
func TestTrendGapsPointsAndMarks(t *testing.T) {
	nan := math.NaN()
	tr := Trend{ID: "t", Title: "p99", YLabel: "latency", Format: Duration,
		Commits: []string{"a", "b", "c", "d", "e"},
		Bands: []TrendBand{{Name: "P99",
			Lo: []float64{90, 95, nan, 100, 105}, Mid: []float64{100, 100, nan, 110, 115}, Hi: []float64{110, 105, nan, 120, 125},
			Tips: []string{"commit a", "commit b", "commit c", "commit d", "commit e"}}},
		Marks: []TrendMark{{At: 3, Label: "p99 +10% at d"}}}
	svg := tr.SVG()
	if n := strings.Count(svg, "<polygon"); n != 2 {
		t.Errorf("%d band pieces, want 2 (commit c has no value)", n)
	}
	if n := strings.Count(svg, "<polyline"); n != 2 {
		t.Errorf("%d line pieces, want 2", n)
	}
	titles := regexp.MustCompile(`<circle class="point"[^>]*><title>([^<]*)</title>`).FindAllStringSubmatch(svg, -1)
	if len(titles) != 4 || titles[2][1] != "commit d" {
		t.Errorf("points titled %q, want commits a, b, d, e", titles)
	}
	if !strings.Contains(svg, `<g class="knee change"><title>p99 +10% at d</title>`) {
		t.Error("the change at d is not marked")
	}
	if empty := (Trend{ID: "e", Title: "none", Format: Duration}).SVG(); !strings.Contains(empty, "no data") {
		t.Errorf("an empty trend: %s", empty)
	}
}
