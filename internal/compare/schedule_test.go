package compare

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/result"
)

// Compare keys and labels a replay by its schedule: the same replay is one row, in every format
// labelled as the replay it is; the log replayed at another speed is another load, so the two
// are not set side by side.
func TestCompareKeysAReplayBySchedule(t *testing.T) {
	read := func(speed float64) *result.Document {
		doc, err := result.Read(filepath.Join("..", "..", "docs", "results", "replay-pacing-2026-11-26", "1-1.result.json"))
		if err != nil {
			t.Fatal(err)
		}
		doc.Runs[0].Load.Replay.Speed = speed
		rep := &doc.Runs[0].Repetitions[0]
		rep.ID, rep.Started = "", rep.Started.Add(time.Duration(speed)*time.Hour)
		return doc
	}
	same := Compare("base", read(1), "new", read(1), Options{})
	if len(same.Rows) != 1 || same.Rows[0].Missing != "" {
		t.Fatalf("one replay against itself: %+v", same.Rows)
	}
	const label = "replay 10000 events/9.999s at 1× x64"
	for _, f := range Formats {
		var b bytes.Buffer
		if err := NewReport(same, Gate{}, nil).Write(&b, f); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), label) {
			t.Errorf("%s does not label the row %q:\n%s", f, label, b.String())
		}
	}
	other := Compare("base", read(1), "new", read(2), Options{})
	if len(other.Rows) != 2 || other.Rows[0].Missing != "new" || other.Rows[1].Missing != "base" ||
		other.Rows[1].Load != "replay 10000 events/9.999s at 2× x64" {
		t.Errorf("replays at 1× and 2× matched: %+v", other.Rows)
	}
}
