package result

import (
	"math"
	"path/filepath"
	"reflect"
	"testing"
)

// knownTriples are 1,000 responses of 1 µs to 1 ms of client latency: up to p90 the handler
// saw half of each and evaluation a quarter; from p90 to p99 the handler saw a fifth and
// evaluation a tenth; beyond p99 (the slowest ten) the handler saw a tenth and evaluation a
// twentieth, and half of each was spent before the send went out.
func knownTriples() (*Sample, []int64) {
	s := &Sample{}
	var clients []int64
	for i := int64(1); i <= 1000; i++ {
		c := i * 1000
		t := Triple{ClientNS: c, HandlerNS: c / 2, EvalNS: c / 4}
		switch {
		case i > 990:
			t = Triple{ClientNS: c, HandlerNS: c / 10, EvalNS: c / 20, QueuedNS: c / 2}
		case i > 900:
			t = Triple{ClientNS: c, HandlerNS: c / 5, EvalNS: c / 10}
		}
		s.Add(t)
		clients = append(clients, c)
	}
	return s, clients
}

func TestAttributionSharesByBand(t *testing.T) {
	s, clients := knownTriples()
	a := AttributionOf(s, histogramOf(clients...))
	if a == nil {
		t.Fatal("no attribution of 1,000 triples")
	}
	if a.Sampled != 1000 || a.Timed != 1000 || a.Every != 1 || a.HandlerOverClient != 0 {
		t.Errorf("sampled %d of %d, every %d, clamped %d; want 1000 of 1000, every 1, none clamped", a.Sampled, a.Timed, a.Every, a.HandlerOverClient)
	}
	want := []struct {
		name                  string
		count                 int64
		thin                  bool
		wait, handler, eval   float64
		queued                float64
		meanClientUS, upperUS float64
	}{
		{"p0-p50", 500, false, 0.5, 0.25, 0.25, 0, 250.5, 500},
		{"p50-p90", 400, false, 0.5, 0.25, 0.25, 0, 700.5, 900},
		{"p90-p99", 90, false, 0.8, 0.1, 0.1, 0, 945.5, 990},
		{"p99-max", 10, true, 0.9, 0.05, 0.05, 0.5, 995.5, 1000},
		{"p99.9-max", 1, true, 0.9, 0.05, 0.05, 0.5, 1000, 1000},
	}
	if len(a.Bands) != len(want) {
		t.Fatalf("%d bands %+v, want %d", len(a.Bands), a.Bands, len(want))
	}
	near := func(got, want, tol float64) bool { return math.Abs(got-want) <= tol }
	for i, w := range want {
		b := a.Bands[i]
		t.Run(w.name, func(t *testing.T) {
			if b.Name != w.name || b.Count != w.count || b.Thin != w.thin {
				t.Errorf("band %s: %d responses, thin %v; want %s: %d, thin %v", b.Name, b.Count, b.Thin, w.name, w.count, w.thin)
			}
			// Integer division of the handler and eval times moves the shares a little.
			if !near(b.WaitShare, w.wait, 0.002) || !near(b.HandlerShare, w.handler, 0.002) || !near(b.EvalShare, w.eval, 0.002) {
				t.Errorf("shares wait %.4f handler %.4f eval %.4f, want %.3f %.3f %.3f", b.WaitShare, b.HandlerShare, b.EvalShare, w.wait, w.handler, w.eval)
			}
			if !near(b.QueuedShare, w.queued, 0.002) {
				t.Errorf("queued %.4f, want %.3f", b.QueuedShare, w.queued)
			}
			if sum := b.WaitShare + b.HandlerShare + b.EvalShare; !near(sum, 1, 1e-9) {
				t.Errorf("shares add to %v, want 1", sum)
			}
			if !near(b.MeanClientUS, w.meanClientUS, 1e-9) {
				t.Errorf("mean client %v µs, want %v", b.MeanClientUS, w.meanClientUS)
			}
			// The histogram's edges are its buckets' highest values: within 0.1 %.
			if !near(b.UpperUS, w.upperUS, w.upperUS/1000) {
				t.Errorf("upper edge %v µs, want %v", b.UpperUS, w.upperUS)
			}
		})
	}
}

// A handler timer above the client's latency (two processes' reads of the clock) is clamped:
// no negative waiting, and counted.
func TestAttributionClampsHandlerAboveClient(t *testing.T) {
	s := &Sample{}
	s.Add(Triple{ClientNS: 100_000, HandlerNS: 100_400, EvalNS: 200_000})
	s.Add(Triple{ClientNS: 100_000, HandlerNS: 50_000, EvalNS: 10_000, QueuedNS: 80_000}) // more than its waiting
	a := AttributionOf(s, histogramOf(100_000, 100_000))
	if a.HandlerOverClient != 1 || a.EvalOverHandler != 1 {
		t.Errorf("clamped %d handler and %d eval times, want 1 and 1", a.HandlerOverClient, a.EvalOverHandler)
	}
	b := a.Bands[0]
	if b.Count != 2 || b.WaitShare != 0.25 || b.HandlerShare != 0.2 || b.EvalShare != 0.55 || b.QueuedShare != 0.25 {
		t.Errorf("band %+v: want 2 responses, waiting 0.25 (all of it queued), handler 0.2, eval 0.55", b)
	}
}

func TestAttributionOfNothing(t *testing.T) {
	if a := AttributionOf(&Sample{}, histogramOf(1000)); a != nil {
		t.Errorf("an empty sample gave %+v, want none", a)
	}
	if a := AttributionOf(nil, nil); a != nil {
		t.Errorf("no sample gave %+v, want none", a)
	}
}

// The sample stays bounded and evenly spread: past the cap it keeps every Every-th triple.
func TestSampleHalvesEvenly(t *testing.T) {
	s := &Sample{}
	n := int64(3*SampleCap + 7)
	for i := range n {
		s.Add(Triple{ClientNS: i})
	}
	if s.Seen != n || s.Every != 4 || len(s.Triples) > SampleCap {
		t.Fatalf("seen %d, every %d, %d kept; want %d, 4, at most %d", s.Seen, s.Every, len(s.Triples), n, SampleCap)
	}
	if want := (n + 3) / 4; int64(len(s.Triples)) != want {
		t.Errorf("%d kept, want %d", len(s.Triples), want)
	}
	for i, tr := range s.Triples {
		if tr.ClientNS != int64(i)*4 {
			t.Fatalf("triple %d is offered triple %d, want %d", i, tr.ClientNS, i*4)
		}
	}
}

// Merging brings both samples to the sparser one's rate, so each kept triple stands for as
// many offered ones, and stays under the cap; the same inputs merge to the same sample.
func TestSampleMerge(t *testing.T) {
	fill := func(n int, from int64) *Sample {
		s := &Sample{}
		for i := range n {
			s.Add(Triple{ClientNS: from + int64(i)})
		}
		return s
	}
	merged := func() *Sample {
		a := fill(1000, 0)             // every 1
		b := fill(SampleCap+10, 1<<40) // every 2
		a.Merge(b)
		return a
	}
	m := merged()
	if m.Every != 2 || m.Seen != 1000+SampleCap+10 {
		t.Errorf("every %d seen %d, want 2 and %d", m.Every, m.Seen, 1000+SampleCap+10)
	}
	if want := 500 + (SampleCap+10+1)/2; len(m.Triples) != want {
		t.Errorf("%d triples, want %d (half of each side)", len(m.Triples), want)
	}
	if m.Triples[0].ClientNS != 0 || m.Triples[500].ClientNS != 1<<40 {
		t.Errorf("order: first %d, 501st %d; want the first sample's triples, then the second's", m.Triples[0].ClientNS, m.Triples[500].ClientNS)
	}
	if !reflect.DeepEqual(m, merged()) {
		t.Error("the same samples merged twice differ")
	}
	big := fill(SampleCap, 0)
	big.Merge(fill(SampleCap, 1<<40))
	if len(big.Triples) > SampleCap || big.Every != 2 || big.Seen != 2*SampleCap {
		t.Errorf("two full samples merged: %d triples every %d of %d seen; want at most %d, every 2", len(big.Triples), big.Every, big.Seen, SampleCap)
	}
}

func TestSampleEncodeRoundTrip(t *testing.T) {
	s, _ := knownTriples()
	text, err := EncodeSample(s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeSample(text)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s) {
		t.Errorf("decoded %+v…, want %+v…", got.Triples[:2], s.Triples[:2])
	}
	for _, bad := range []string{"not base64!", "AAAA", text[:len(text)/2]} {
		if _, err := DecodeSample(bad); err == nil {
			t.Errorf("%q decoded without error", bad)
		}
	}
}

// runWithSample is syntheticRun with a repetition's sample of triples stored and its summary's
// attribution computed, as bench writes them.
func runWithSample(t *testing.T, turn int, s *Sample, clients []int64) Run {
	t.Helper()
	evals := make([]int64, len(s.Triples))
	for i, tr := range s.Triples {
		evals[i] = tr.EvalNS
	}
	r := syntheticRun(t, turn, clients, nil, []int64{80e3}, evals)
	var err error
	if r.Repetitions[0].ServerSample, err = EncodeSample(s); err != nil {
		t.Fatal(err)
	}
	if r.Summary.Attribution, err = AttributionOfRepetitions(r.Repetitions, histogramOf(clients...)); err != nil {
		t.Fatal(err)
	}
	return r
}

// A document written and read back, merged alone, rebuilds its attribution; two documents
// merged give the attribution of their samples concatenated against the union's edges.
func TestAttributionSurvivesWriteReadAndMerge(t *testing.T) {
	s, clients := knownTriples()
	doc := docOf(runWithSample(t, 1, s, clients))
	path := filepath.Join(t.TempDir(), "r.json")
	if err := Write(path, doc); err != nil {
		t.Fatal(err)
	}
	read, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Merge(read)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := again.Runs[0].Summary.Attribution, doc.Runs[0].Summary.Attribution; !reflect.DeepEqual(got, want) {
		t.Errorf("rebuilt from the file:\n%+v\nwant\n%+v", got, want)
	}

	// A second document whose responses all waited 90 %.
	slow := &Sample{}
	var slowClients []int64
	for i := int64(1); i <= 1000; i++ {
		c := 2_000_000 + i*1000
		slow.Add(Triple{ClientNS: c, HandlerNS: c / 10, EvalNS: c / 20})
		slowClients = append(slowClients, c)
	}
	merged, err := Merge(doc, docOf(runWithSample(t, 1, slow, slowClients)))
	if err != nil {
		t.Fatal(err)
	}
	both := &Sample{}
	both.Merge(s)
	both.Merge(slow)
	want := AttributionOf(both, histogramOf(append(append([]int64{}, clients...), slowClients...)...))
	got := merged.Runs[0].Summary.Attribution
	if !reflect.DeepEqual(got, want) {
		t.Errorf("merged:\n%+v\nwant\n%+v", got, want)
	}
	// The union's p50 is the first document's slowest: its whole sample lies at or below.
	if got == nil || got.Timed != 2000 || got.Bands[0].Count != 1000 || math.Abs(got.Bands[3].WaitShare-0.9) > 0.002 {
		t.Errorf("merged bands %+v: want 2000 timed, 1000 at or below p50, 90 %% waiting beyond p99", got)
	}
}

// Two documents whose samples are full merge into one sample under the cap, every other triple
// of each kept, the same whichever time it is merged.
func TestMergeOfFullSamplesStaysUnderTheCap(t *testing.T) {
	full := func(from int64) (*Sample, []int64) {
		s := &Sample{}
		var clients []int64
		for i := range int64(SampleCap) {
			c := from + i*100
			s.Add(Triple{ClientNS: c, HandlerNS: c / 2, EvalNS: c / 4})
			clients = append(clients, c)
		}
		return s, clients
	}
	a, ca := full(100_000)
	b, cb := full(200_000)
	docA, docB := docOf(runWithSample(t, 1, a, ca)), docOf(runWithSample(t, 1, b, cb))
	first, err := Merge(docA, docB)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Merge(docA, docB)
	if err != nil {
		t.Fatal(err)
	}
	got := first.Runs[0].Summary.Attribution
	if got == nil || got.Sampled != SampleCap || got.Timed != 2*SampleCap || got.Every != 2 {
		t.Fatalf("attribution %+v: want %d sampled of %d timed, one in 2", got, SampleCap, 2*SampleCap)
	}
	if !reflect.DeepEqual(got, again.Runs[0].Summary.Attribution) {
		t.Error("the same documents merged twice give different attributions")
	}
	for _, band := range got.Bands {
		if math.Abs(band.WaitShare-0.5) > 1e-3 || math.Abs(band.EvalShare-0.25) > 1e-3 {
			t.Errorf("band %s: waiting %.4f, evaluating %.4f; want 0.5 and 0.25", band.Name, band.WaitShare, band.EvalShare)
		}
	}
}
