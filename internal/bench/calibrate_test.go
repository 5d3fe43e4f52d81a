package bench

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/result"
)

func TestCalibrate(t *testing.T) {
	doc := &result.Document{}
	c := Calibration{Workers: 2, Rate: 500, Connections: 8, Duration: time.Second}
	_, err := Calibrate(context.Background(), c, func(addr string) *exec.Cmd {
		return exec.Command(os.Args[0], "trivial-server", addr)
	}, Options{}, doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Runs) != 2 || doc.Runs[0].Load.Model != "closed" || doc.Runs[1].Load.Model != "open" {
		t.Fatalf("runs %+v", doc.Runs)
	}
	for _, r := range doc.Runs {
		if r.Summary.OK == 0 || r.Summary.Errors != 0 || r.Harness == nil || r.Harness.CPUPerRequestUS <= 0 {
			t.Errorf("%s: ok %d errors %d harness %+v", r.Load.Model, r.Summary.OK, r.Summary.Errors, r.Harness)
		}
	}
	if o := doc.Runs[1].Summary.Open; o == nil || o.Intended != 500 {
		t.Errorf("open loop: %+v", o)
	}
}
