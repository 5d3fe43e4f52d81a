package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/load"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/scenario"
)

// scaleOutFlags are run's flags for splitting one scenario across generators (--shard,
// --start-at); --replicas, spreading it over several servers, is a target option (kinds).
type scaleOutFlags struct {
	shard     string
	shardBase int
	startAt   string
}

func addScaleOutFlags(fl *pflag.FlagSet, f *scaleOutFlags) {
	fl.StringVar(&f.shard, "shard", "", "run shard i of N of the scenario (1/4): in closed loop its share of the workers, in open loop every N-th send of the schedule; authzbench merge adds the N results into one")
	fl.IntVar(&f.shardBase, "shard-base", 1, "the number --shard gives the first shard: 1, or 0 to pass a Kubernetes Indexed Job's $(JOB_COMPLETION_INDEX) as is (--shard=$(JOB_COMPLETION_INDEX)/N --shard-base=0); results always number shards from 1")
	fl.StringVar(&f.startAt, "start-at", "", "with --shard: hold the load until this instant (RFC 3339, 2026-11-23T18:00:00Z), so that every shard starts together; at most 24h ahead")
}

// maxStartAhead bounds --start-at: a start a day away is more likely a typo than a plan, and
// the run would sit holding its servers until then.
const maxStartAhead = 24 * time.Hour

// shardOf reads --shard and --start-at; nil when the run is whole.
func (f scaleOutFlags) shardOf(now time.Time) (*result.Shard, *load.Segment, error) {
	if f.shard == "" {
		if f.startAt != "" {
			return nil, nil, errors.New("--start-at starts the shards of a scenario together; give --shard i/N too")
		}
		return nil, nil, nil
	}
	text := f.shard
	switch f.shardBase {
	case 1:
	case 0:
		// 0-based, as an Indexed Job numbers its pods: shard 0/N is the first, 1/N here.
		i, n, ok := strings.Cut(f.shard, "/")
		index, err := strconv.Atoi(i)
		if !ok || err != nil {
			return nil, nil, fmt.Errorf("--shard %q: want i/N, with --shard-base 0 numbered from 0 such as 0/4", f.shard)
		}
		text = fmt.Sprintf("%d/%s", index+1, n)
	default:
		return nil, nil, fmt.Errorf("--shard-base %d: want 1 (shards 1/N to N/N) or 0 (0/N to N-1/N)", f.shardBase)
	}
	seg, err := load.ParseSegment(text)
	if err != nil {
		if text != f.shard {
			return nil, nil, fmt.Errorf("--shard %s with --shard-base 0 (%s from 1): %w", f.shard, text, err)
		}
		return nil, nil, fmt.Errorf("--shard: %w", err)
	}
	shard := &result.Shard{Index: seg.Index, Count: seg.Count}
	if f.startAt != "" {
		at, err := time.Parse(time.RFC3339, f.startAt)
		if err != nil {
			return nil, nil, fmt.Errorf("--start-at %q: want an RFC 3339 time such as 2026-11-23T18:00:00Z", f.startAt)
		}
		switch {
		case !at.After(now):
			return nil, nil, fmt.Errorf("--start-at %s is in the past (now %s)", f.startAt, now.UTC().Format(time.RFC3339))
		case at.Sub(now) > maxStartAhead:
			return nil, nil, fmt.Errorf("--start-at %s is %s ahead, more than %s", f.startAt, at.Sub(now).Round(time.Minute), maxStartAhead)
		}
		shard.StartAt = at.UTC()
	}
	return shard, &seg, nil
}

// startAtOf is the instant the shard's load starts at; zero for at once.
func startAtOf(s *result.Shard) time.Time {
	if s == nil {
		return time.Time{}
	}
	return s.StartAt
}

// checkReplicas checks, before any load, the settings of every target that --replicas
// applies to: replicas that cannot start as asked (with --url, with --port) are bad input, not
// a run that failed.
func checkReplicas(s *scenario.Scenario, given bool) error {
	if !given {
		return nil
	}
	var errs []error
	for _, t := range s.Targets {
		if cfg := t.Settings(); kinds.HasOption(cfg, "replicas") {
			if err := cfg.Check(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
