package workload

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

// An artefact is built once however many ask for it at once, and its error is everyone's.
func TestPreparedIsBuiltOnce(t *testing.T) {
	w := &Workload{Name: "w"}
	var builds atomic.Int32
	var wg sync.WaitGroup
	got := make([]any, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], _ = w.Prepared("opa", func() (any, error) { builds.Add(1); return &struct{ n int }{1}, nil })
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
		if _, err := w.Prepared("cedar", func() (any, error) { builds.Add(1); return nil, boom }); !errors.Is(err, boom) {
			t.Errorf("err %v, want the build's", err)
		}
	}
	if builds.Load() != 2 {
		t.Errorf("%d builds, want one per key", builds.Load())
	}
}
