package engine_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/workload"
)

// An artefact is built once per workload however many ask for it at once, and its error is
// everyone's; another workload, or no store at all, builds its own.
func TestPreparedIsBuiltOnce(t *testing.T) {
	p := engine.NewPrepared()
	w := &workload.Workload{Name: "w"}
	var builds atomic.Int32
	var wg sync.WaitGroup
	got := make([]any, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], _ = p.Of("opa", w, func() (any, error) { builds.Add(1); return &struct{ n int }{1}, nil })
		}()
	}
	wg.Wait()
	if builds.Load() != 1 {
		t.Errorf("built %d times, want once", builds.Load())
	}
	for i := range got {
		if got[i] != got[0] {
			t.Fatalf("caller %d got another artefact", i)
		}
	}
	boom := errors.New("bad policy")
	for range 2 {
		if _, err := p.Of("cedar", w, func() (any, error) { builds.Add(1); return nil, boom }); !errors.Is(err, boom) {
			t.Errorf("err %v, want the build's", err)
		}
	}
	if builds.Load() != 2 {
		t.Errorf("%d builds, want one per name", builds.Load())
	}
	other := &workload.Workload{Name: "w"} // same name, another workload
	if v, _ := p.Of("opa", other, func() (any, error) { builds.Add(1); return &struct{ n int }{2}, nil }); v == got[0] {
		t.Error("another workload took the first one's artefact")
	}
	var none *engine.Prepared
	for range 2 {
		none.Of("opa", w, func() (any, error) { builds.Add(1); return nil, nil })
	}
	if builds.Load() != 5 {
		t.Errorf("%d builds, want one more for the other workload and one per call without a store", builds.Load())
	}
}
