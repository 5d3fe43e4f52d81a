package scenario

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/authzbench/authzbench/internal/load"
)

// Sweep turns one target's load into several steps: a closed-loop worker sweep, an open-loop
// rate matrix, or load points of (rate, connections). At most one kind per target.
type Sweep struct {
	Workers    []int
	Rates      []float64
	LoadPoints []LoadPoint
}

// LoadPoint is an open-loop rate with its connection bound, written RATExCONNECTIONS.
type LoadPoint struct {
	Rate        float64
	Connections int
}

// ParseLoadPoint reads "500x32".
func ParseLoadPoint(s string) (LoadPoint, error) {
	r, c, ok := strings.Cut(strings.TrimSpace(s), "x")
	rate, err1 := strconv.ParseFloat(r, 64)
	conns, err2 := strconv.Atoi(c)
	if !ok || err1 != nil || err2 != nil || rate <= 0 || conns < 1 {
		return LoadPoint{}, fmt.Errorf("load point %q: want RATExCONNECTIONS, such as 500x32", s)
	}
	return LoadPoint{rate, conns}, nil
}

func (w Sweep) kinds() int {
	n := 0
	for _, l := range []int{len(w.Workers), len(w.Rates), len(w.LoadPoints)} {
		if l > 0 {
			n++
		}
	}
	return n
}

// expand returns one target per step, or the target itself when there is no sweep.
func (w Sweep) expand(t TargetRef) []TargetRef {
	var out []TargetRef
	for _, n := range w.Workers {
		step := t
		step.Load.Workers = n // the closed loop, unless this place named a rate too (OneModel)
		out = append(out, step)
	}
	for _, r := range w.Rates {
		step := t
		step.Load.Rate = r
		out = append(out, step)
	}
	for _, p := range w.LoadPoints {
		step := t
		step.Load.Rate, step.Load.Connections = p.Rate, p.Connections
		out = append(out, step)
	}
	if len(out) == 0 {
		return []TargetRef{t}
	}
	return out
}

// sweepOf reads the sweep of a target, its own load's first, else the scenario's.
func sweepOf(specs ...loadSpec) (Sweep, int, error) {
	for _, l := range specs {
		var w Sweep
		line := 0
		if l.WorkerSweep != nil {
			w.Workers, line = l.WorkerSweep.V, l.WorkerSweep.Line
		}
		if l.Rates != nil {
			w.Rates, line = l.Rates.V, l.Rates.Line
		}
		if l.LoadPoints != nil {
			line = l.LoadPoints.Line
			for _, s := range l.LoadPoints.V {
				p, err := ParseLoadPoint(s)
				if err != nil {
					return Sweep{}, line, err
				}
				w.LoadPoints = append(w.LoadPoints, p)
			}
		}
		switch w.kinds() {
		case 0:
			continue
		case 1:
			return w, line, w.check()
		default:
			return Sweep{}, line, errors.New("one sweep at a time: workers_sweep, rates or load_points")
		}
	}
	return Sweep{}, 0, nil
}

func (w Sweep) check() error {
	for _, n := range w.Workers {
		if n < 1 {
			return fmt.Errorf("workers must be at least 1, got %d", n)
		}
	}
	for _, r := range w.Rates {
		if err := load.CheckRate(r); err != nil {
			return fmt.Errorf("rates: %w", err)
		}
	}
	return nil
}
