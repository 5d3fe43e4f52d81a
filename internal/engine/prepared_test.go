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

// A dropped artefact is let go but its check is kept: Checked answers without building again, Of
// builds it anew. A failed build is kept whole, its error everyone's.
func TestDroppedKeepsItsCheck(t *testing.T) {
	p := engine.NewPrepared()
	w := &workload.Workload{Name: "w"}
	var builds atomic.Int32
	build := func() (any, error) { builds.Add(1); return &struct{ n int }{1}, nil }
	if err := p.Checked("opa", w, build); err != nil || builds.Load() != 1 || !p.Holds("opa", w) {
		t.Fatalf("first check: err %v, %d builds, held %v; want one build, held", err, builds.Load(), p.Holds("opa", w))
	}
	first, _ := p.Of("opa", w, build)
	p.Drop("opa", w)
	if p.Holds("opa", w) {
		t.Error("held after Drop")
	}
	if err := p.Checked("opa", w, build); err != nil || builds.Load() != 1 {
		t.Errorf("a check after Drop: err %v, %d builds; want nil from the kept check, no build", err, builds.Load())
	}
	again, err := p.Of("opa", w, build)
	if err != nil || builds.Load() != 2 || again == first || !p.Holds("opa", w) {
		t.Errorf("Of after Drop: err %v, %d builds, the old artefact %v; want it built again", err, builds.Load(), again == first)
	}

	boom := errors.New("bad policy")
	failing := func() (any, error) { builds.Add(1); return nil, boom }
	if err := p.Checked("cedar", w, failing); !errors.Is(err, boom) {
		t.Fatalf("err %v, want the build's", err)
	}
	p.Drop("cedar", w)
	if err := p.Checked("cedar", w, failing); !errors.Is(err, boom) || builds.Load() != 3 {
		t.Errorf("a failed build dropped: err %v, %d builds; want its error kept and no build", err, builds.Load())
	}
	p.Drop("never", w) // nothing built: nothing to drop, and no check to keep
	if err := p.Checked("never", w, failing); !errors.Is(err, boom) {
		t.Errorf("Drop of what was never built made a check up: %v", err)
	}
}
