// Package changetest is a service of authzbench's own whose writes become visible a known lag
// after they are acknowledged, and which logs which version each answer used: the ground truth
// that the judging of runs with changes is tested against. It is for tests only.
package changetest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/authzbench/authzbench/internal/change"
)

// Service answers decisions of a stream's world: change k, once acknowledged, becomes visible
// Lag later. Answers asked within Hold of the last acknowledgement wait until it is visible, so
// that no answer the service logs as stale can have been sent before the writer heard of the
// acknowledgement (the writer hears of it a moment after the service sends it: a race no
// observer outside the service can settle).
type Service struct {
	Stream    *change.Stream
	Lag, Hold time.Duration
	// WrongEvery, when positive, makes every WrongEvery-th answer name a version the world never
	// has (beyond the stream's last), logged as wrong.
	WrongEvery int
	// Pace is how long the served answer takes after the decision, unless it was held: a
	// service's time, so that clients asking back to back arrive spread out, some past the hold
	// (Pace must exceed Hold for any to be), and a held answer comes back as its change becomes
	// visible.
	Pace time.Duration
	// Stall is how long each write holds every decision back before it is acknowledged, as a
	// store that takes its lock exclusively to commit does.
	Stall time.Duration

	mu   sync.Mutex
	acks []time.Time
	log  Log
}

// Log is what the service says it answered.
type Log struct {
	Answers int
	// Stale counts answers from a version older than the last acknowledged when they arrived;
	// StaleDiffering those among them whose decision differs from that version's.
	Stale, StaleDiffering int
	// Wrong counts answers naming a version the world never had.
	Wrong int
}

// Apply acknowledges the write of version k (changes come in order).
func (s *Service) Apply(k int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k != len(s.acks)+1 {
		return fmt.Errorf("change %d after %d: out of order", k, len(s.acks))
	}
	time.Sleep(s.Stall) // holding the lock every decision takes
	s.acks = append(s.acks, time.Now())
	return nil
}

// Decide answers input i: its decision and the version it was decided at; held says the
// answer waited for a change to become visible.
func (s *Service) Decide(i int) (allow bool, version int, held bool) {
	s.mu.Lock()
	arrived := time.Now()
	acked := len(s.acks)
	var wait time.Duration
	if acked > 0 && arrived.Sub(s.acks[acked-1]) < s.Hold {
		wait = s.acks[acked-1].Add(s.Lag).Sub(arrived)
	}
	s.mu.Unlock()
	if wait > 0 {
		time.Sleep(wait)
		held = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	visible := len(s.acks)
	for visible > 0 && now.Sub(s.acks[visible-1]) < s.Lag {
		visible--
	}
	s.log.Answers++
	if s.WrongEvery > 0 && s.log.Answers%s.WrongEvery == 0 {
		s.log.Wrong++
		return s.Stream.Allowed(i, visible), s.Stream.Len() + 1 + s.log.Answers, held
	}
	allow = s.Stream.Allowed(i, visible)
	if visible < acked {
		s.log.Stale++
		if allow != s.Stream.Allowed(i, acked) {
			s.log.StaleDiffering++
		}
	}
	return allow, visible, held
}

// Logged is what the service logged so far.
func (s *Service) Logged() Log {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log
}

// Handler serves the service over HTTP: POST /check with {"input": N} (0-based) answers
// {"allow": bool, "version": N}; POST /write with {"version": K} acknowledges change K.
func (s *Service) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /check", func(w http.ResponseWriter, r *http.Request) {
		var q struct{ Input int }
		if err := json.NewDecoder(r.Body).Decode(&q); err != nil || q.Input < 0 || q.Input >= s.Stream.Inputs() {
			http.Error(w, "want {\"input\": N}", http.StatusBadRequest)
			return
		}
		allow, version, held := s.Decide(q.Input)
		if !held {
			time.Sleep(s.Pace)
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"allow":%t,"version":%s}`, allow, strconv.Itoa(version))
	})
	mux.HandleFunc("POST /write", func(w http.ResponseWriter, r *http.Request) {
		var q struct{ Version int }
		if err := json.NewDecoder(r.Body).Decode(&q); err != nil {
			http.Error(w, "want {\"version\": K}", http.StatusBadRequest)
			return
		}
		if err := s.Apply(q.Version); err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	return mux
}

// Acked is how many writes the service acknowledged so far.
func (s *Service) Acked() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.acks)
}
