package compare

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/authzbench/authzbench/internal/result"
)

// Clause is one condition of a gate: "p99>+10%" fails on a significant rise of p99 above 10 %,
// "throughput<-5%" on a significant fall of throughput below -5 %.
type Clause struct {
	Figure Figure `json:"figure"`
	// Above: the clause is broken by a change above Percent (">"); else below it ("<").
	Above   bool    `json:"above"`
	Percent float64 `json:"percent"`
}

func (c Clause) String() string {
	op := "<"
	if c.Above {
		op = ">"
	}
	return fmt.Sprintf("%s%s%+g%%", c.Figure, op, c.Percent)
}

// breaks reports whether a change (new over base, minus one) is beyond the clause's threshold.
func (c Clause) breaks(change float64) bool {
	pct := change * 100
	if c.Above {
		return pct > c.Percent
	}
	return pct < c.Percent
}

// Gate is a set of clauses; the gate fails when any is broken by a significant change, and
// whenever it cannot judge: it never passes on nothing.
type Gate []Clause

func (g Gate) String() string {
	parts := make([]string, len(g))
	for i, c := range g {
		parts[i] = c.String()
	}
	return strings.Join(parts, ",")
}

// Figures are the figures the gate names, in the order Figures lists them.
func (g Gate) Figures() []Figure {
	var out []Figure
	for _, f := range Figures {
		for _, c := range g {
			if c.Figure == f {
				out = append(out, f)
				break
			}
		}
	}
	return out
}

// ParseGate reads a gate expression: clauses separated by commas, each a figure (throughput,
// p50, p90, p99, p999, mean), an operator (> or <) and a percentage with an optional sign
// ("p99>+10%,throughput<-5%"). An error names the clause at fault and says what was wanted.
func ParseGate(expr string) (Gate, error) {
	if strings.TrimSpace(expr) == "" {
		return nil, fmt.Errorf("empty expression; want clauses like p99>+10%%,throughput<-5%%")
	}
	var g Gate
	seen := map[string]bool{}
	for _, raw := range strings.Split(expr, ",") {
		clause := strings.TrimSpace(raw)
		c, err := parseClause(clause)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", clause, err)
		}
		if seen[c.String()] {
			return nil, fmt.Errorf("%q: given twice", clause)
		}
		seen[c.String()] = true
		g = append(g, c)
	}
	return g, nil
}

func parseClause(s string) (Clause, error) {
	if s == "" {
		return Clause{}, fmt.Errorf("empty clause (a stray comma?)")
	}
	i := strings.IndexAny(s, "<>=!")
	if i < 0 {
		return Clause{}, fmt.Errorf("no operator; want FIGURE>PERCENT or FIGURE<PERCENT, like p99>+10%%")
	}
	name, rest := strings.TrimSpace(s[:i]), s[i:]
	if name == "" {
		return Clause{}, fmt.Errorf("no figure before %q; known: %s", rest[:1], figureList())
	}
	f, err := ParseFigure(name)
	if err != nil {
		return Clause{}, err
	}
	op := rest[:1]
	if len(rest) > 1 && strings.ContainsRune("<>=!", rune(rest[1])) {
		op = rest[:2]
	}
	if op != ">" && op != "<" {
		return Clause{}, fmt.Errorf("operator %q: want > (a rise beyond) or < (a fall beyond)", op)
	}
	value := strings.TrimSpace(rest[len(op):])
	number, ok := strings.CutSuffix(value, "%")
	if !ok {
		return Clause{}, fmt.Errorf("%q: want a percentage, like +10%% or -5%%", value)
	}
	pct, err := strconv.ParseFloat(strings.TrimSpace(number), 64)
	if err != nil || math.IsNaN(pct) || math.IsInf(pct, 0) {
		return Clause{}, fmt.Errorf("%q: not a number; want a percentage, like +10%% or -5%%", value)
	}
	if pct <= -100 {
		return Clause{}, fmt.Errorf("%q: a figure cannot fall by 100%% or more", value)
	}
	return Clause{Figure: f, Above: op == ">", Percent: pct}, nil
}

func figureList() string {
	names := make([]string, len(Figures))
	for i, f := range Figures {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

// Failure is one reason the gate failed.
type Failure struct {
	Row    string `json:"row,omitempty"`
	Figure Figure `json:"figure,omitempty"`
	Reason string `json:"reason"`
}

func (f Failure) String() string {
	s := f.Reason
	if f.Figure != "" {
		s = string(f.Figure) + ": " + s
	}
	if f.Row != "" {
		s = f.Row + ": " + s
	}
	return s
}

// Verdict is the gate's judgement of a comparison.
type Verdict struct {
	Expression string    `json:"expression"`
	Passed     bool      `json:"passed"`
	Failures   []Failure `json:"failures,omitempty"`
	Rows       int       `json:"rows"` // rows judged
}

// Check judges every row: it fails on a significant change beyond a clause, on a row one side
// lacks, on a row without samples, on a figure the repetitions are too few to test, on wrong
// decisions on the new side, and on a comparison with no rows at all.
func (g Gate) Check(r *Result) Verdict {
	v := Verdict{Expression: g.String(), Rows: len(r.Rows)}
	fail := func(row string, f Figure, reason string) {
		v.Failures = append(v.Failures, Failure{Row: row, Figure: f, Reason: reason})
	}
	if len(r.Rows) == 0 {
		fail("", "", "no runs on either side: nothing to judge, and a gate never passes on nothing")
	}
	for _, row := range r.Rows {
		if row.Problem != "" {
			fail(row.Name(), "", row.Problem)
			continue
		}
		if row.WrongDecisions > 0 {
			fail(row.Name(), "", fmt.Sprintf("%d wrong decisions on the new side", row.WrongDecisions))
		}
		if b, n := errorShare(row.base), errorShare(row.new); n > b {
			// Latency and throughput are figures over the ok responses: fewer of them, faster,
			// is no pass.
			fail(row.Name(), "", fmt.Sprintf("errors rose from %.2f%% to %.2f%% of responses", 100*b, 100*n))
		}
		for _, c := range g {
			cell := row.Cell(c.Figure)
			switch {
			case cell == nil:
				fail(row.Name(), c.Figure, "no figure")
			case cell.Untestable != "":
				fail(row.Name(), c.Figure, cell.Untestable)
			case cell.Significant && c.breaks(cell.Change):
				fail(row.Name(), c.Figure, fmt.Sprintf("%s → %s, %+.1f%% (p=%.3f), beyond %s",
					formatFigure(c.Figure, cell.Base), formatFigure(c.Figure, cell.New), cell.Change*100, cell.P, c))
			}
		}
	}
	v.Passed = len(v.Failures) == 0
	return v
}

// errorShare is the share of a run's responses that were not served decisions.
func errorShare(r *result.Run) float64 {
	if r == nil || r.Summary.Requests == 0 {
		return 0
	}
	return float64(r.Summary.Errors) / float64(r.Summary.Requests)
}
