package kinds

import (
	"context"

	"github.com/authzbench/authzbench/internal/change"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// WithUndefinedAs returns t with an undefined decision read as the decision as: for a policy
// without a default, where OPA answers nothing when no rule matches and the caller treats that
// as a deny (or an allow). Every target and mode goes through this one place, so they all read
// undefined alike; with as Unverified, t is returned unchanged and undefined stays an error.
func WithUndefinedAs(t Target, as workload.Expect) Target {
	if as == workload.Unverified {
		return t
	}
	return undefinedAs{Target: t, allow: as == workload.ExpectAllow}
}

type undefinedAs struct {
	Target
	allow bool
}

func (u undefinedAs) Worker() Decider { return undefinedDecider{u.Target.Worker(), u.allow} }

// Writer forwards the wrapped target's writes (Writable).
func (u undefinedAs) Writer() (change.Applier, error) { return WriterOf(u.Target) }

// CacheCounts forwards the wrapped target's cache counters (CacheCounter).
func (u undefinedAs) CacheCounts(ctx context.Context) (map[string]result.CacheCount, error) {
	return CacheCountsOf(ctx, u.Target)
}

type undefinedDecider struct {
	Decider
	allow bool
}

func (d undefinedDecider) Decide(ctx context.Context, i int) verify.Outcome {
	out := d.Decider.Decide(ctx, i)
	if out.Kind == verify.NoResult {
		out.Kind, out.Allow = verify.Decided, d.allow
	}
	return out
}

// Close and Reconnects forward the wrapped decider's optional interfaces: without them, the
// load could neither release its connection nor record its reconnects.
func (d undefinedDecider) Close()            { CloseDecider(d.Decider) }
func (d undefinedDecider) Reconnects() int64 { return ReconnectsOf(d.Decider) }
