package result

import (
	"fmt"
	"strconv"
)

// A decision log's replay: each event sent at its recorded offset from the first, divided by the
// speed (Load.Replay).
func init() {
	RegisterSchedule(ScheduleKind{Name: "replay", Of: func(l Load) (Schedule, bool) {
		return replaySchedule{l.Replay}, l.Open() && l.Replay != nil
	}})
}

// LoadReplay is the schedule a replay followed: Events sent at their recorded offsets, which
// span SpanS seconds, divided by Speed; gaps over MaxGapS (when set) were shortened to it,
// GapsShortened of them. The measured window (Load.DurationS) is the schedule's length.
type LoadReplay struct {
	Events        int     `json:"events"`
	SpanS         float64 `json:"span_s"`
	Speed         float64 `json:"speed"`
	MaxGapS       float64 `json:"max_gap_s,omitempty"`
	GapsShortened int     `json:"gaps_shortened,omitempty"`
}

// Label is "replay 200 events/1.5s at 2×"; empty for no replay.
func (r *LoadReplay) Label() string {
	if r == nil {
		return ""
	}
	return fmt.Sprintf("replay %d events/%s at %s×", r.Events, strconv.FormatFloat(r.SpanS, 'g', 4, 64)+"s", strconv.FormatFloat(r.Speed, 'g', -1, 64))
}

type replaySchedule struct{ r *LoadReplay }

func (replaySchedule) Kind() string { return "replay" }

func (s replaySchedule) Label(func(float64) string) string { return s.r.Label() }

// Value is "200events:1.5s:speed2", and ":maxgap1s" when long gaps were shortened: the log's
// events and span, exactly, and how it was paced.
func (s replaySchedule) Value(func(float64) string) string {
	v := fmt.Sprintf("%devents:%s:speed%s", s.r.Events, seconds(s.r.SpanS), exact(s.r.Speed))
	if s.r.MaxGapS > 0 {
		v += ":maxgap" + seconds(s.r.MaxGapS)
	}
	return v
}

func (s replaySchedule) Key() string { return "open replay " + s.Value(nil) }

// Rate: none, the sends follow the log's own pace.
func (replaySchedule) Rate() (float64, bool) { return 0, false }
