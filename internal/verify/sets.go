package verify

import (
	"fmt"
	"slices"
	"strings"

	"github.com/authzbench/authzbench/internal/workload"
)

// A list query's answer is judged whole: the set the engine gave against the set expected. A
// missing or an extra member is a wrong answer, as a wrong decision is; a set the engine itself
// cut short (its deadline passed, its cap on results reached, its stream ended early) is
// truncated, an outcome of its own, and never a success.

// Set is the expected answer of one list query, indexed before the clock so that judging an
// answer costs one map lookup a member.
type Set struct {
	members []string // sorted
	index   map[string]int
}

// NewSet is the expected set of members (any order; duplicates count once).
func NewSet(members []string) *Set {
	s := &Set{members: slices.Compact(slices.Sorted(slices.Values(members))), index: map[string]int{}}
	for i, m := range s.members {
		s.index[m] = i
	}
	return s
}

// Len is the number of members expected.
func (s *Set) Len() int { return len(s.members) }

// Judge judges sets for one worker: it keeps a mark per expected member, so that a member given
// twice is seen without allocating. Not safe for concurrent use.
type Judge struct {
	marks []uint32
	round uint32
}

// Judge compares got with want. cut says the engine reports, or its limits imply, that it may
// have stopped before the whole answer: a short answer is then Cut, not WrongSet; an answer
// holding a member that is not expected is WrongSet either way.
func (j *Judge) Judge(want *Set, got []string, cut bool) Outcome {
	j.round++
	if j.round == 0 { // wrapped: every old mark must read as unmarked
		clear(j.marks)
		j.round = 1
	}
	if len(j.marks) < len(want.members) {
		j.marks = make([]uint32, len(want.members)*2)
	}
	found := 0
	for _, m := range got {
		i, ok := want.index[m]
		if !ok {
			return Outcome{Kind: WrongSet, Err: setError(want, got)}
		}
		if j.marks[i] != j.round {
			j.marks[i] = j.round
			found++
		}
	}
	switch {
	case found == len(want.members):
		return Outcome{Kind: Listed}
	case cut:
		return Outcome{Kind: Cut, Err: fmt.Errorf("cut short: %d of the %d expected", found, len(want.members))}
	}
	return Outcome{Kind: WrongSet, Err: setError(want, got)}
}

// setError says how got differs from want, naming a few members each way: built only for a
// wrong answer, off the path of a right one.
func setError(want *Set, got []string) error {
	have := map[string]bool{}
	for _, m := range got {
		have[m] = true
	}
	var missing, extra []string
	for _, m := range want.members {
		if !have[m] {
			missing = append(missing, m)
		}
	}
	for m := range have {
		if _, ok := want.index[m]; !ok {
			extra = append(extra, m)
		}
	}
	slices.Sort(extra)
	return fmt.Errorf("expected %d objects, got %d: %d missing%s, %d extra%s", len(want.members), len(have),
		len(missing), some(missing), len(extra), some(extra))
}

// some names up to three members.
func some(ms []string) string {
	if len(ms) == 0 {
		return ""
	}
	if len(ms) > 3 {
		return " (" + strings.Join(ms[:3], ", ") + ", ...)"
	}
	return " (" + strings.Join(ms, ", ") + ")"
}

// A batch of checks (OpenFGA's BatchCheck, SpiceDB's CheckBulkPermissions) is judged whole too:
// every decision as its input expects is ok; one decision otherwise is a wrong answer; a check
// the answer holds no decision for (left out, or an error in its place) makes it a partial
// answer, truncated, never ok.

// BatchItem is what a batch answer says of one check: its decision, or none (Err says why,
// when the answer said).
type BatchItem struct {
	Decided, Allow bool
	Err            error
}

// JudgeBatch judges the answers got[k] to checks expecting expects[k].
func JudgeBatch(expects []workload.Expect, got []BatchItem) Outcome {
	var partial error
	for k, e := range expects {
		g := got[k]
		switch {
		case !g.Decided:
			if partial == nil {
				partial = fmt.Errorf("check %d of %d: no decision", k+1, len(expects))
				if g.Err != nil {
					partial = fmt.Errorf("check %d of %d: no decision: %w", k+1, len(expects), g.Err)
				}
			}
		case e != workload.Unverified && g.Allow != (e == workload.ExpectAllow):
			return Outcome{Kind: WrongSet, Err: fmt.Errorf("check %d of %d: expected %s, decided %s", k+1, len(expects), e, decision(g.Allow))}
		}
	}
	if partial != nil {
		return Outcome{Kind: Cut, Err: partial}
	}
	return Outcome{Kind: Listed}
}

func decision(allow bool) string {
	if allow {
		return "allow"
	}
	return "deny"
}
