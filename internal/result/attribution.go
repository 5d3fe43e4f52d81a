package result

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Attribution says, for the responses that reported the server's own timers, where their time
// went, by band of client latency: evaluating, in the server's handler outside evaluation, and
// waiting (everything the handler did not see: the generator's queue in open loop, the network,
// the kernels' socket queues, the client's own reading and writing). docs/attribution.md says
// how to read it.
//
// It is computed from a bounded sample of per-response triples (Sample), stored in every
// repetition, with band edges read from the run's ok-latency histogram. Per-band sums kept
// while recording would be smaller, but a band's edges depend on the whole run, which no
// recorder sees, and sums against one repetition's edges do not add across repetitions. A
// sample stored raw merges exactly (the same rule thins workers, repetitions and documents),
// and the report rebuilds the bands from the file.
type Attribution struct {
	// Sampled is how many timed responses the sample holds, of Timed that reported timers; each
	// kept one stands for Every of them (1 until the sample reached SampleCap).
	Sampled int64 `json:"sampled"`
	Timed   int64 `json:"timed"`
	Every   int64 `json:"every"`
	// HandlerOverClient counts sampled responses whose handler time exceeded the client's
	// latency (the two clocks are different processes' reads of the host's monotonic clock; a
	// few hundred nanoseconds of skew in how each brackets the request): their handler time
	// is counted as the client's and their waiting as 0. EvalOverHandler likewise.
	HandlerOverClient int64  `json:"handler_over_client,omitempty"`
	EvalOverHandler   int64  `json:"eval_over_handler,omitempty"`
	Bands             []Band `json:"bands"`
}

// Band is the sampled responses whose client latency lies in (LowerUS, UpperUS], edges read
// at the run's percentiles; the shares are of the band's summed client latency and add to 1.
type Band struct {
	Name    string  `json:"name"` // p0-p50, p50-p90, p90-p99, p99-max, p99.9-max
	LowerUS float64 `json:"lower_us"`
	UpperUS float64 `json:"upper_us"`
	Count   int64   `json:"count"`
	// Thin: fewer than ThinBand sampled responses, so the shares are anecdotes.
	Thin         bool    `json:"thin,omitempty"`
	EvalShare    float64 `json:"eval_share"`
	HandlerShare float64 `json:"handler_share"` // in the handler, outside evaluation
	WaitShare    float64 `json:"wait_share"`    // client latency the handler did not see
	// QueuedShare is the part of WaitShare spent before the send went out (open loop: the
	// generator's lateness and the wait for a free connection); the rest of the waiting is
	// transport and the client's own work. 0 in closed loop.
	QueuedShare  float64 `json:"queued_share,omitempty"`
	MeanClientUS float64 `json:"mean_client_us"`
	// Means of the clamped times, so that they are the shares' own parts.
	MeanHandlerUS float64 `json:"mean_handler_us"`
	MeanEvalUS    float64 `json:"mean_eval_us"`
}

// ThinBand is how few sampled responses make a band's shares thin.
const ThinBand = 20

// SampleCap bounds a sample: 32,768 triples, some 500 kB in a result file per repetition at
// the most (about 16 bytes a triple), enough for about 30 responses beyond p99.9 when every
// response is timed.
const SampleCap = 1 << 15

// Triple is one timed response: its latency as the client measured it (in open loop from its
// intended send, so the generator's queue is part of it), the server's handler and evaluation
// timers, and in open loop how late the send went out after its intended time (the generator's
// own lateness and the wait for a free connection; 0 in closed loop), in nanoseconds.
type Triple struct{ ClientNS, HandlerNS, EvalNS, QueuedNS int64 }

// Sample keeps a bounded, evenly spread sample of a stream of triples: all of them until it
// holds SampleCap, then every other one of those it held and every second one of the rest,
// and so on, halving each time it fills. It is deterministic (no random reservoir), so a run
// recorded twice alike stores the same sample, and samples merge by the same halving rule.
type Sample struct {
	Every   int64 // each kept triple stands for Every offered ones; 0 reads as 1
	Seen    int64 // triples offered
	Triples []Triple
	// Cap, when positive, bounds this sample below SampleCap: a load worker's share of it, so
	// that many workers' samples do not each grow to the whole run's (merged, they thin to the
	// sparsest rate anyway). Not stored; a merge keeps the receiver's.
	Cap int
}

// capacity is the most triples the sample holds.
func (s *Sample) capacity() int {
	if s.Cap > 0 {
		return min(s.Cap, SampleCap)
	}
	return SampleCap
}

// Add offers one triple. It allocates only when the slice grows, a few times per run.
func (s *Sample) Add(t Triple) {
	if s.Every == 0 {
		s.Every = 1
	}
	if s.Seen%s.Every == 0 {
		s.Triples = append(s.Triples, t)
		if len(s.Triples) > s.capacity() {
			s.halve()
		}
	}
	s.Seen++
}

// halve keeps every other triple, the first included, and doubles Every.
func (s *Sample) halve() {
	kept := s.Triples[:0]
	for i := 0; i < len(s.Triples); i += 2 {
		kept = append(kept, s.Triples[i])
	}
	clear(s.Triples[len(kept):])
	s.Triples = kept
	s.Every = max(s.Every, 1) * 2
}

// Merge adds other's triples after s's: the sparser sample's rate first, so that each kept
// triple stands for as many offered ones on both sides, then halving while over the cap.
func (s *Sample) Merge(other *Sample) {
	if other == nil || other.Seen == 0 {
		return
	}
	o := Sample{Every: max(other.Every, 1), Seen: other.Seen, Triples: append([]Triple(nil), other.Triples...)}
	s.Every = max(s.Every, 1)
	for s.Every < o.Every {
		s.halve()
	}
	for o.Every < s.Every {
		o.halve()
	}
	s.Triples = append(s.Triples, o.Triples...)
	s.Seen += o.Seen
	for len(s.Triples) > s.capacity() {
		s.halve()
	}
}

// sampleVersion starts an encoded sample, so that a later layout can be told apart.
const sampleVersion = 1

// EncodeSample writes a sample as the result document stores it: base64 of a deflated stream
// of unsigned varints (version, every, seen, count, then each triple's four times in ns).
func EncodeSample(s *Sample) (string, error) {
	var raw []byte
	for _, v := range []int64{sampleVersion, max(s.Every, 1), s.Seen, int64(len(s.Triples))} {
		raw = binary.AppendUvarint(raw, uint64(v))
	}
	for _, t := range s.Triples {
		raw = binary.AppendUvarint(raw, uint64(max(t.ClientNS, 0)))
		raw = binary.AppendUvarint(raw, uint64(max(t.HandlerNS, 0)))
		raw = binary.AppendUvarint(raw, uint64(max(t.EvalNS, 0)))
		raw = binary.AppendUvarint(raw, uint64(max(t.QueuedNS, 0)))
	}
	var b bytes.Buffer
	w, err := flate.NewWriter(&b, flate.BestSpeed)
	if err != nil {
		return "", fmt.Errorf("encode server sample: %w", err)
	}
	if _, err := w.Write(raw); err != nil {
		return "", fmt.Errorf("encode server sample: %w", err)
	}
	if err := w.Close(); err != nil {
		return "", fmt.Errorf("encode server sample: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes()), nil
}

// DecodeSample reads a sample written by EncodeSample.
func DecodeSample(text string) (*Sample, error) {
	z, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		return nil, fmt.Errorf("decode server sample: not base64: %w", err)
	}
	raw, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(z)), 64<<20))
	if err != nil {
		return nil, fmt.Errorf("decode server sample: %w", err)
	}
	r := bytes.NewReader(raw)
	next := func() (int64, error) {
		v, err := binary.ReadUvarint(r)
		if err != nil || v > 1<<62 {
			return 0, errors.New("decode server sample: truncated or out of range")
		}
		return int64(v), nil
	}
	var head [4]int64
	for i := range head {
		if head[i], err = next(); err != nil {
			return nil, err
		}
	}
	if head[0] != sampleVersion {
		return nil, fmt.Errorf("decode server sample: version %d, want %d", head[0], sampleVersion)
	}
	n := head[3]
	if n > SampleCap || head[1] < 1 {
		return nil, fmt.Errorf("decode server sample: %d triples kept one in %d: want at most %d, one in 1 or more", n, head[1], SampleCap)
	}
	s := &Sample{Every: head[1], Seen: head[2], Triples: make([]Triple, n)}
	for i := range s.Triples {
		t := &s.Triples[i]
		for _, into := range []*int64{&t.ClientNS, &t.HandlerNS, &t.EvalNS, &t.QueuedNS} {
			if *into, err = next(); err != nil {
				return nil, err
			}
		}
	}
	if r.Len() != 0 {
		return nil, errors.New("decode server sample: bytes after the last triple")
	}
	return s, nil
}

// bandEdges are the percentiles of client latency that bound the bands; the last band
// overlaps the one before it (the slowest 0.1 % are among the slowest 1 %).
var bandEdges = []struct {
	name       string
	from, upTo float64 // percentiles; upTo 100 for the run's maximum
}{
	{"p0-p50", 0, 50}, {"p50-p90", 50, 90}, {"p90-p99", 90, 99}, {"p99-max", 99, 100}, {"p99.9-max", 99.9, 100},
}

// AttributionOf computes the bands of a sample, edges read from ok, the histogram of every ok
// response's client latency (in open loop from its intended send, as the triples' client
// times are). Nil when the sample is empty.
func AttributionOf(s *Sample, ok *hdrhistogram.Histogram) *Attribution {
	if s == nil || len(s.Triples) == 0 || ok == nil || ok.TotalCount() == 0 {
		return nil
	}
	a := &Attribution{Sampled: int64(len(s.Triples)), Timed: s.Seen, Every: max(s.Every, 1)}
	edge := func(q float64) int64 {
		if q <= 0 {
			return 0
		}
		if q >= 100 {
			return ok.Max()
		}
		return ok.ValueAtQuantile(q)
	}
	type sums struct{ client, handler, eval, queued float64 }
	acc := make([]sums, len(bandEdges))
	counts := make([]int64, len(bandEdges))
	for _, t := range s.Triples {
		client, handler, eval, queued := t.ClientNS, t.HandlerNS, t.EvalNS, t.QueuedNS
		if handler > client {
			handler = client
			a.HandlerOverClient++
		}
		if eval > handler {
			eval = handler
			a.EvalOverHandler++
		}
		// The send's delay is measured by the same process as the client time, and inside it;
		// the clamp only keeps the handler's clock skew from making waiting negative.
		queued = min(queued, client-handler)
		for i, b := range bandEdges {
			// The last bands are open above: a sample beyond the histogram's maximum (none
			// should be) still lands in them.
			above := b.from == 0 || client > edge(b.from)
			below := b.upTo == 100 || client <= edge(b.upTo)
			if above && below {
				counts[i]++
				acc[i].client += float64(client)
				acc[i].handler += float64(handler)
				acc[i].eval += float64(eval)
				acc[i].queued += float64(queued)
			}
		}
	}
	for i, b := range bandEdges {
		band := Band{Name: b.name, LowerUS: float64(edge(b.from)) / 1e3, UpperUS: float64(edge(b.upTo)) / 1e3,
			Count: counts[i], Thin: counts[i] < ThinBand}
		if b.from > 99 && counts[i] == 0 {
			continue // no sampled response beyond p99.9: nothing to say, and the p99 band says it
		}
		if c := acc[i]; counts[i] > 0 && c.client > 0 {
			n := float64(counts[i])
			band.EvalShare = c.eval / c.client
			band.HandlerShare = (c.handler - c.eval) / c.client
			band.WaitShare = (c.client - c.handler) / c.client
			band.QueuedShare = c.queued / c.client
			band.MeanClientUS, band.MeanHandlerUS, band.MeanEvalUS = c.client/n/1e3, c.handler/n/1e3, c.eval/n/1e3
		}
		a.Bands = append(a.Bands, band)
	}
	return a
}

// AttributionOfRepetitions merges the samples of a run's repetitions, in their order, and
// computes the bands against ok, the run's ok latencies (all repetitions'): what a run's
// summary holds, and what Merge recomputes. Nil when no repetition stored a sample.
func AttributionOfRepetitions(reps []Repetition, ok *hdrhistogram.Histogram) (*Attribution, error) {
	var all *Sample
	for i, rep := range reps {
		if rep.ServerSample == "" {
			continue
		}
		s, err := DecodeSample(rep.ServerSample)
		if err != nil {
			return nil, fmt.Errorf("repetition %d: server_sample: %w", i+1, err)
		}
		if all == nil {
			all = &Sample{}
		}
		all.Merge(s)
	}
	return AttributionOf(all, ok), nil
}
