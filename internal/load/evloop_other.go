//go:build !linux

package load

import (
	"context"
	"errors"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/workload"
)

// loopsSupported: no event loop here.
const loopsSupported = false

// plainExchanges is nil: the event loop is Linux's; elsewhere the goroutines serve every run.
func plainExchanges([]kinds.Decider) []kinds.HTTPExchange { return nil }

func (c Spec) startLoops(context.Context, []kinds.HTTPExchange, []*Attempts, []*shard, []workload.Expect,
	openWindow) (<-chan struct{}, func() []sendingEnd, error) {
	return nil, nil, errors.New("no event loop on this system")
}
