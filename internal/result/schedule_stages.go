package result

import "strings"

// Stages: a piecewise-linear rate (k6's ramping-arrival-rate), recorded as --stages writes it.
func init() {
	RegisterSchedule(ScheduleKind{Name: "stages", Of: func(l Load) (Schedule, bool) {
		return stagesSchedule(l.Stages), l.Open() && l.Stages != ""
	}})
}

type stagesSchedule string

func (stagesSchedule) Kind() string { return "stages" }

// Label is "stages 0→2000/30s, 2000/1m0s".
func (s stagesSchedule) Label(func(float64) string) string { return StagesLabel(string(s)) }

// Value is the stages as --stages writes them: "30s:0-2000,1m0s:2000".
func (s stagesSchedule) Value(func(float64) string) string { return string(s) }

func (s stagesSchedule) Key() string { return "open stages " + string(s) }

// Rate: none, the rate changes along the stages.
func (stagesSchedule) Rate() (float64, bool) { return 0, false }

// StagesLabel writes stages ("30s:0-2000,1m0s:2000") as a report shows them: "stages
// 0→2000/30s, 2000/1m0s".
func StagesLabel(stages string) string {
	parts := strings.Split(stages, ",")
	for i, p := range parts {
		over, rates, _ := strings.Cut(p, ":")
		parts[i] = strings.Replace(rates, "-", "→", 1) + "/" + over
	}
	return "stages " + strings.Join(parts, ", ")
}
