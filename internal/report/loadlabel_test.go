package report

import (
	"testing"

	"github.com/authzbench/authzbench/internal/result"
)

// Every renderer labels a load from its one description: a constant rate as it always has, and
// stages by their own words.
func TestLoadLabelsFromTheSchedule(t *testing.T) {
	rate := result.Load{Model: result.OpenLoop, Rate: 2000, Connections: 64}
	stages := result.Load{Model: result.OpenLoop, Stages: "30s:0-2000,1m0s:2000,30s:2000-0", Connections: 64}
	closed := result.Load{Model: result.ClosedLoop, Workers: 8}
	for _, c := range []struct{ got, want string }{
		{LoadLabel(rate), "2,000/s x64"},
		{LoadLabel(stages), "stages 0→2000/30s, 2000/1m0s, 2000→0/30s x64"},
		{LoadLabel(closed), "8 workers"},
		{atLoad(rate), "at 2,000 req/s"},
		{atLoad(stages), "under stages 0→2000/30s, 2000/1m0s, 2000→0/30s"},
		{promLoad(rate), "rate=2000,connections=64"},
		{promLoad(stages), "stages=30s:0-2000,1m0s:2000,30s:2000-0,connections=64"},
	} {
		if c.got != c.want {
			t.Errorf("label %q, want %q", c.got, c.want)
		}
	}
	if rate.Key() == stages.Key() {
		t.Error("a constant rate and stages share a key: compare would make them one row")
	}
}
