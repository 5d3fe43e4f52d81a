package result

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"
)

// A repetition is one measurement, and counts once wherever it travels: every repetition gets a
// random identity when it is measured (Repetition.ID), every merge keeps it, and a merge or a
// comparison that would hold the same repetition twice is refused (Distinct). Without it,
// merging a file with itself, or a merged file with one of its inputs, doubles the repetitions,
// narrows every confidence interval and lets a significance test call noise a change.

// NewRepetitionID draws a repetition's identity: 128 random bits, in hex.
func NewRepetitionID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand's contract since Go 1.24)
	return hex.EncodeToString(b[:])
}

// shardRepetitionID is the identity of a repetition added up from shards' (MergeShards): derived
// from its parts' identities, so that merging the same shards again, in any order, gives the same
// repetition; "" when some part has none (files written before identities were kept).
func shardRepetitionID(parts []Repetition) string {
	ids := make([]string, len(parts))
	for i, p := range parts {
		if p.ID == "" {
			return ""
		}
		ids[i] = p.ID
	}
	slices.Sort(ids)
	sum := sha256.Sum256([]byte("shards:" + strings.Join(ids, ",")))
	return hex.EncodeToString(sum[:16])
}

// identities are what tells a repetition apart from every other: its ID and those of the shard
// repetitions it adds up, and its start time with its ok latencies' histogram. The last is what
// identifies a repetition written before IDs were kept (or one an older version merged, which
// dropped its ID): two measurements do not start in the same nanosecond with the same
// histogram, so two repetitions that do are copies of one. A repetition with neither (written
// before start times were kept) is known by its measured time, to the nanosecond, with its
// histogram, if it served anything.
func identities(rep *Repetition) []string {
	var out []string
	for _, id := range append([]string{rep.ID}, rep.Parts...) {
		if id != "" {
			out = append(out, "id "+id)
		}
	}
	hdr := sha256.Sum256([]byte(rep.HDR))
	switch {
	case !rep.Started.IsZero():
		out = append(out, "started "+rep.Started.UTC().Format(time.RFC3339Nano)+" hdr "+hex.EncodeToString(hdr[:8]))
	case rep.ID == "" && rep.ElapsedS > 0 && rep.OK > 0:
		out = append(out, fmt.Sprintf("elapsed %.9f hdr %x", rep.ElapsedS, hdr[:8]))
	}
	return out
}

// Distinct refuses sources that hold one repetition twice, between them or within one of them
// (a file merged by a version that did not check, or put together by hand), naming both places:
// merged or compared, the repetition would count twice. Its error is a *CountedTwiceError.
func Distinct(srcs ...Source) error {
	type place struct {
		src, run, rep int
	}
	seen := map[string]place{}
	for si, s := range srcs {
		if s.Doc == nil {
			continue
		}
		for ri := range s.Doc.Runs {
			r := &s.Doc.Runs[ri]
			for pi := range r.Repetitions {
				here := place{si, ri, pi}
				for _, key := range identities(&r.Repetitions[pi]) {
					was, dup := seen[key]
					if !dup {
						seen[key] = here
						continue
					}
					if was == here {
						continue
					}
					return &CountedTwiceError{
						First: Held{File: sourceName(srcs, was.src), Document: was.src + 1, Run: srcs[was.src].Doc.Runs[was.run].Name(), Repetition: was.rep + 1},
						Again: Held{File: sourceName(srcs, si), Document: si + 1, Run: r.Name(), Repetition: pi + 1},
						Key:   key,
					}
				}
			}
		}
	}
	return nil
}

// CountedTwiceError is a repetition found twice where each must count once.
type CountedTwiceError struct {
	First, Again Held
	Key          string // the identity they share: "id …", or a start time and histogram
}

// Held is where a repetition was found: its file (or "document N"), the file's place among those
// given (1-based), its run and its place in the run.
type Held struct {
	File       string
	Document   int
	Run        string
	Repetition int
}

func (e *CountedTwiceError) Error() string {
	same := "(id " + strings.TrimPrefix(e.Key, "id ") + ")"
	switch {
	case strings.HasPrefix(e.Key, "started "):
		same = "(the same start time and latency histogram)"
	case strings.HasPrefix(e.Key, "elapsed "):
		same = "(no start times: the same measured time, to the nanosecond, and latency histogram)"
	}
	a, b := e.First, e.Again
	switch {
	case a.Document == b.Document:
		return fmt.Sprintf("%s holds one repetition twice %s: repetition %d of %s and repetition %d of %s; it would count twice",
			a.File, same, a.Repetition, a.Run, b.Repetition, b.Run)
	case a.File == b.File:
		return fmt.Sprintf("%s is given twice (documents %d and %d): its repetition %d of %s %s would count twice",
			a.File, a.Document, b.Document, a.Repetition, a.Run, same)
	}
	return fmt.Sprintf("%s and %s hold the same repetition %s: repetition %d of %s in %s, repetition %d of %s in %s; it would count twice",
		a.File, b.File, same, a.Repetition, a.Run, a.File, b.Repetition, b.Run, b.File)
}

func sourceName(srcs []Source, i int) string {
	if n := srcs[i].Name; n != "" {
		return n
	}
	return fmt.Sprintf("document %d", i+1)
}

// Name says which run this is in the user's words: its workload, target and load ("rbac on
// opa/server, 4 workers"; "rbac on opa/server, 500 req/s open loop"; "rbac on opa/server,
// replay 200 events/1.5s at 2× open loop").
func (r *Run) Name() string {
	s := r.Load.Schedule()
	load := s.Label(exact)
	if rate, ok := s.Rate(); ok {
		load = fmt.Sprintf("%g req/s", rate)
	}
	if r.Load.Open() {
		load += " open loop"
	}
	return fmt.Sprintf("%s on %s, %s", r.Workload, r.Label(), load)
}
