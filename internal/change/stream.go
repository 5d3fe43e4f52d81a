// Package change is the world changing during a run: an ordered stream of changes (writes to
// the engine's data, relationships or policy), each making a new version of the world; the
// record of when each was applied; and the judge that says, for every answer, whether it may
// legally reflect the world at the time it was asked.
//
// Version 0 is the world loaded before the clock; change k (counted from 1) makes version k.
// Every input's expected decision at every version is known before the clock starts (per
// input, the sorted versions where its decision flips), so judging an answer is a lookup. This
// package does no I/O of its own: how a change is sent is the target's (an Applier), how it is
// paced is the Writer's, and the load drivers call a Judge for each answer of a run that carries
// changes. It knows nothing of engines.
package change

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/authzbench/authzbench/internal/workload"
)

// Change is one write to the world, in order: applying it makes the next version.
type Change struct {
	// Source names where the change came from, for messages: "changes.jsonl:3"; empty for a
	// built-in family's.
	Source string
	// Sets gives the decisions the change sets, by input number (0-based, among the workload's
	// inputs). An input it names whose decision it does not change is allowed: it says the
	// change leaves that input alone.
	Sets map[int]bool
	// Request is the write as the http target sends it; nil for a change in an engine's form.
	Request *Request
	// Form is the change in the engine's own write form (the line of a changes file, or a
	// built-in family's write), for an engine's Applier to read; nil when Request says it all.
	Form json.RawMessage
}

// Request is a change as the http target sends it: any authorization service's write.
type Request struct {
	Method string            `json:"method"`
	Path   string            `json:"path"` // appended to the target's URL (scheme and host) unless it is a whole URL
	Header map[string]string `json:"header,omitempty"`
	Body   json.RawMessage   `json:"body,omitempty"`
}

// Stream is a workload's changes with every input's expected decision at every version.
type Stream struct {
	Changes []Change
	// initial is each input's expectation at version 0; flips[i] the versions, ascending,
	// whose change flips input i's decision.
	initial []workload.Expect
	flips   [][]int32
}

// NewStream checks the changes against the inputs' expectations at version 0 and computes
// every input's flips. A change may set the decision of an input that carries one; an input
// with no expected decision is not judged, so a change that sets one is a mistake to name.
func NewStream(initial []workload.Expect, changes []Change) (*Stream, error) {
	s := &Stream{Changes: changes, initial: initial, flips: make([][]int32, len(initial))}
	now := make([]bool, len(initial))
	for i, e := range initial {
		now[i] = e == workload.ExpectAllow
	}
	for k, c := range changes {
		version := k + 1
		inputs := make([]int, 0, len(c.Sets))
		for i := range c.Sets {
			inputs = append(inputs, i)
		}
		sort.Ints(inputs)
		for _, i := range inputs {
			where := c.Source
			if where == "" {
				where = fmt.Sprintf("change %d", version)
			}
			if i < 0 || i >= len(initial) {
				return nil, fmt.Errorf("%s: input %d: the workload has %d inputs", where, i+1, len(initial))
			}
			if initial[i] == workload.Unverified {
				return nil, fmt.Errorf("%s: input %d has no expected decision to change: give it one in the inputs", where, i+1)
			}
			if c.Sets[i] != now[i] {
				now[i] = c.Sets[i]
				s.flips[i] = append(s.flips[i], int32(version))
			}
		}
	}
	return s, nil
}

// Len is the number of changes; versions run from 0 to Len.
func (s *Stream) Len() int { return len(s.Changes) }

// Inputs is the number of inputs the stream judges.
func (s *Stream) Inputs() int { return len(s.initial) }

// Verified reports whether input i carries an expected decision to judge its answers by.
func (s *Stream) Verified(i int) bool { return s.initial[i] != workload.Unverified }

// Allowed is input i's expected decision at version v (0 to Len).
func (s *Stream) Allowed(i, v int) bool {
	return (s.initial[i] == workload.ExpectAllow) != (flipsUpTo(s.flips[i], v)%2 == 1)
}

// Flips are the versions, ascending, whose change flips input i's decision; not to be modified.
func (s *Stream) Flips(i int) []int32 { return s.flips[i] }

// Flipped is how many inputs change k (from 1) flips: a change that flips none cannot be seen
// in any answer, so it has no time to visible.
func (s *Stream) Flipped() []int {
	out := make([]int, len(s.Changes)+1)
	for _, fs := range s.flips {
		for _, f := range fs {
			out[f]++
		}
	}
	return out
}

// flipsUpTo counts the flips at or before version v.
func flipsUpTo(fs []int32, v int) int {
	// Most inputs flip a few times at most: a scan beats a binary search there.
	if len(fs) <= 8 {
		n := 0
		for _, f := range fs {
			if int(f) > v {
				break
			}
			n++
		}
		return n
	}
	return sort.Search(len(fs), func(j int) bool { return int(fs[j]) > v })
}
