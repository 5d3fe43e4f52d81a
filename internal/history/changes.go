package history

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/authzbench/authzbench/internal/changepoint"
)

// Figure is a figure of a series that changes are looked for in.
type Figure string

const (
	Throughput Figure = "throughput" // ok responses per second
	P50        Figure = "p50"
	P99        Figure = "p99"
	ErrorRate  Figure = "error_rate" // responses that were not served decisions, of all
)

// Figures are those Changes searches, in the order it reports them.
var Figures = []Figure{Throughput, P50, P99, ErrorRate}

// HigherIsBetter is true of throughput only: latencies and errors going up are regressions.
func (f Figure) HigherIsBetter() bool { return f == Throughput }

// Of is the figure of one repetition, and whether it has one: throughput and latencies need a
// repetition that ran to its end and served something; an error rate needs requests.
func (f Figure) Of(r Repetition) (float64, bool) {
	switch f {
	case Throughput:
		return r.Throughput, r.Usable
	case P50:
		return r.P50, r.Usable
	case P99:
		return r.P99, r.Usable
	case ErrorRate:
		return r.ErrorRatio, r.Requests > 0
	}
	return 0, false
}

// Defaults of ChangeOptions.
const (
	DefaultAlpha     = 0.05
	DefaultMinEffect = 0.05
	DefaultMinPoints = 3
	// DefaultMinErrorRate is the smallest change of an error rate reported, in absolute terms
	// (a rate rising from 0 has no relative size): one response in a hundred.
	DefaultMinErrorRate = 0.01
)

// ChangeOptions say which series to search and how sure a change must be.
type ChangeOptions struct {
	Series string // words the series' label must hold (Series.Label); "" for all
	Branch string // "" for every branch, each on its own
	// Alpha is the permutation test's level; MinEffect the smallest relative change of a mean
	// reported (0.05: 5 %); MinPoints the fewest commits on each side of a change.
	Alpha     float64
	MinEffect float64
	MinPoints int
	// Permutations bounds the permutation test (199 by default); Seed makes it reproducible.
	Permutations int
	Seed         uint64
}

func (o ChangeOptions) withDefaults() ChangeOptions {
	if o.Alpha <= 0 {
		o.Alpha = DefaultAlpha
	}
	if o.MinEffect <= 0 {
		o.MinEffect = DefaultMinEffect
	}
	if o.MinPoints <= 0 {
		o.MinPoints = DefaultMinPoints
	}
	return o
}

// Method names how changes are found, as the output says it.
const Method = "E-divisive means (Matteson & James 2014, alpha 1) over per-repetition values, permutation test; change with a 95 % bootstrap interval"

// Change is a change point in one figure of one series along one branch.
type Change struct {
	Series int64  `json:"series"`
	Label  string `json:"label"`
	Branch string `json:"branch"`
	Figure Figure `json:"figure"`
	// Commit is where the new segment begins; Previous the commit before it. Time is Commit's.
	Commit   string    `json:"commit"`
	Previous string    `json:"previous"`
	Time     time.Time `json:"time"`
	// Before and After are the means of the segments on either side, over their repetitions;
	// NBefore and NAfter count those repetitions.
	Before  float64 `json:"before"`
	After   float64 `json:"after"`
	NBefore int     `json:"n_before"`
	NAfter  int     `json:"n_after"`
	// Relative is After over Before minus one (+0.15: 15 % more), with its 95 % interval; nil
	// when Before is 0 (an error rate rising from none).
	Relative *float64    `json:"relative,omitempty"`
	CI95     *[2]float64 `json:"ci95,omitempty"`
	P        float64     `json:"p"`
	// Regression: slower, less served, or more errors; otherwise an improvement.
	Regression bool `json:"regression"`
	// Environment is what changed in the machine or the build between Previous and Commit (a
	// kernel, Go, the engine's version, the CPU frequency policy): a change found there may be
	// theirs rather than the code's.
	Environment []EnvironmentChange `json:"environment_changed,omitempty"`
}

// NoSeriesError is a --series or --branch filter no series matches: a typo in a CI job's
// filter must not read as "no change".
type NoSeriesError struct {
	Where          string
	Series, Branch string
	Known          []string // some labels the history holds, to show
	Total          int
}

func (e *NoSeriesError) Error() string {
	var asked []string
	if e.Series != "" {
		asked = append(asked, fmt.Sprintf("--series %q", e.Series))
	}
	if e.Branch != "" {
		asked = append(asked, fmt.Sprintf("--branch %q", e.Branch))
	}
	msg := fmt.Sprintf("no series of %s matches %s", e.Where, strings.Join(asked, " and "))
	if e.Total == 0 {
		return msg + ": the history holds no series yet"
	}
	msg += fmt.Sprintf("; it holds %d, such as: %s", e.Total, strings.Join(e.Known, "; "))
	return msg + " (authzbench history series lists them all)"
}

// Changes finds the change points of every series the options select, each branch on its own:
// changepoint.Find over each figure's per-repetition values, commit by commit, keeping the
// changes whose size reaches MinEffect and whose interval excludes no change.
func (s *sqlStore) Changes(ctx context.Context, o ChangeOptions) ([]Change, error) {
	return FindChanges(ctx, s, o)
}

// FindChanges is Changes for any Store.
func FindChanges(ctx context.Context, st Store, o ChangeOptions) ([]Change, error) {
	o = o.withDefaults()
	all, err := st.Series(ctx)
	if err != nil {
		return nil, err
	}
	var out []Change
	matched := 0
	for _, se := range all {
		if !matches(se, o.Series) {
			continue
		}
		for _, branch := range se.Branches {
			if o.Branch != "" && branch != o.Branch {
				continue
			}
			matched++
			points, err := st.Points(ctx, se.ID, branch)
			if err != nil {
				return nil, err
			}
			for _, f := range Figures {
				out = append(out, changesIn(se, branch, points, f, o)...)
			}
		}
	}
	if matched == 0 && (o.Series != "" || o.Branch != "") {
		e := &NoSeriesError{Where: st.Where(), Series: o.Series, Branch: o.Branch, Total: len(all)}
		for _, se := range all[:min(3, len(all))] {
			e.Known = append(e.Known, se.Label()+" on "+strings.Join(se.Branches, ", "))
		}
		return nil, e
	}
	return out, nil
}

// changesIn finds the changes of one figure along one branch's points.
func changesIn(se Series, branch string, points []Point, f Figure, o ChangeOptions) []Change {
	// Points without a value of the figure (every repetition cut short) take no part.
	var values [][]float64
	var kept []Point
	for _, p := range points {
		var v []float64
		for _, r := range p.Repetitions {
			if x, ok := f.Of(r); ok {
				v = append(v, x)
			}
		}
		if len(v) > 0 {
			values = append(values, v)
			kept = append(kept, p)
		}
	}
	splits := changepoint.Find(values, changepoint.Options{MinPoints: o.MinPoints, Alpha: o.Alpha,
		Permutations: o.Permutations, Seed: o.Seed ^ uint64(se.ID)<<8 ^ uint64(len(f))})
	var out []Change
	bounds := []int{0}
	for _, sp := range splits {
		bounds = append(bounds, sp.Point)
	}
	bounds = append(bounds, len(values))
	for i, sp := range splits {
		before := flatten(values[bounds[i]:bounds[i+1]])
		after := flatten(values[bounds[i+1]:bounds[i+2]])
		c := Change{Series: se.ID, Label: se.Label(), Branch: branch, Figure: f,
			Commit: kept[sp.Point].Commit, Previous: kept[sp.Point-1].Commit, Time: kept[sp.Point].Time,
			Before: changepoint.Mean(before), After: changepoint.Mean(after), NBefore: len(before), NAfter: len(after), P: sp.P}
		rel, ci, ok := changepoint.RelativeChange(before, after, o.Seed+uint64(sp.Point))
		if ok {
			c.Relative, c.CI95 = &rel, &ci
		}
		switch {
		case f == ErrorRate && math.Abs(c.After-c.Before) < DefaultMinErrorRate:
			continue
		case f != ErrorRate && (!ok || math.Abs(rel) < o.MinEffect):
			continue
		case ok && ci[0] <= 0 && ci[1] >= 0:
			// The split stands out of the noise by the permutation test, but the means on
			// either side do not: an outlier or two (a p99 over few responses) made it.
			continue
		}
		up := c.After > c.Before
		c.Regression = up != f.HigherIsBetter()
		c.Environment = EnvironmentChanges(kept[sp.Point-1], kept[sp.Point])
		out = append(out, c)
	}
	return out
}

func flatten(points [][]float64) []float64 {
	var out []float64
	for _, p := range points {
		out = append(out, p...)
	}
	return out
}

// String says a change in one line: "p99 +15.2 % [+12.0, +18.1] at abc123 (regression)".
func (c Change) String() string {
	size := fmt.Sprintf("%.4g → %.4g", c.Before, c.After)
	if c.Relative != nil {
		size = fmt.Sprintf("%+.1f %% [%+.1f, %+.1f]", *c.Relative*100, c.CI95[0]*100, c.CI95[1]*100)
	}
	kind := "improvement"
	if c.Regression {
		kind = "regression"
	}
	return fmt.Sprintf("%s %s at %s (%s)", c.Figure, size, c.Commit, kind)
}
