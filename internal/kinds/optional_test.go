package kinds

import (
	"context"
	"testing"

	"github.com/authzbench/authzbench/internal/httpload"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// connDecider is a decider with both optional interfaces, as a served target's worker has.
type connDecider struct {
	reconnects int64
	closed     int
}

func (d *connDecider) Decide(context.Context, int) verify.Outcome {
	return verify.Outcome{Kind: verify.NoResult}
}
func (d *connDecider) Close()            { d.closed++ }
func (d *connDecider) Reconnects() int64 { return d.reconnects }

// oneWorker is a target whose only worker is d.
type oneWorker struct {
	noWatch
	d Decider
}

func (oneWorker) Start(context.Context, *workload.Workload) error { return nil }
func (o oneWorker) Worker() Decider                               { return o.d }
func (oneWorker) Info() Info                                      { return Info{} }
func (oneWorker) Stop(context.Context) error                      { return nil }

// Every wrapper around a decider forwards its optional interfaces: the load releases the
// wrapped connection through it and records the wrapped reconnects through it. A wrapper that
// hid them would leave connections open and record no reconnects.
func TestWrappersForwardOptionalInterfaces(t *testing.T) {
	for _, tc := range []struct {
		name string
		// wrap returns the decider the load would be given, and the one it wraps.
		wrap func() (wrapped Decider, reconnects func() int64, closed func() bool)
	}{
		{"undefined as deny", func() (Decider, func() int64, func() bool) {
			inner := &connDecider{reconnects: 7}
			d := WithUndefinedAs(oneWorker{d: inner}, workload.ExpectDeny).Worker()
			return d, func() int64 { return inner.reconnects }, func() bool { return inner.closed == 1 }
		}},
		{"undefined as allow", func() (Decider, func() int64, func() bool) {
			inner := &connDecider{reconnects: 3}
			d := WithUndefinedAs(oneWorker{d: inner}, workload.ExpectAllow).Worker()
			return d, func() int64 { return inner.reconnects }, func() bool { return inner.closed == 1 }
		}},
		{"replica's request count", func() (Decider, func() int64, func() bool) {
			conn := &httpload.Conn{Reconnects: 5}
			d := &countingWorker{httpWorker: &httpWorker{conn: conn}}
			return d, func() int64 { return conn.Reconnects }, func() bool { return true }
		}},
		{"replica's request count, undefined as deny", func() (Decider, func() int64, func() bool) {
			conn := &httpload.Conn{Reconnects: 9}
			d := WithUndefinedAs(oneWorker{d: &countingWorker{httpWorker: &httpWorker{conn: conn}}}, workload.ExpectDeny).Worker()
			return d, func() int64 { return conn.Reconnects }, func() bool { return true }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, reconnects, closed := tc.wrap()
			if _, ok := d.(Reconnector); !ok {
				t.Fatalf("%T hides the wrapped decider's Reconnects", d)
			}
			if _, ok := d.(Closer); !ok {
				t.Fatalf("%T hides the wrapped decider's Close", d)
			}
			if got, want := ReconnectsOf(d), reconnects(); got != want || want == 0 {
				t.Errorf("reconnects through the wrapper %d, want the wrapped decider's %d", got, want)
			}
			CloseDecider(d)
			if !closed() {
				t.Error("closing the wrapper did not close the wrapped decider")
			}
		})
	}
}

// A decider with neither optional interface is neither closed nor counted, and a wrapper around
// it reports no reconnects rather than failing.
func TestDeciderWithoutOptionalInterfaces(t *testing.T) {
	plain := failedDecider{}
	if got := ReconnectsOf(plain); got != 0 {
		t.Errorf("reconnects %d, want 0", got)
	}
	CloseDecider(plain)
	wrapped := WithUndefinedAs(oneWorker{d: plain}, workload.ExpectDeny).Worker()
	if got := ReconnectsOf(wrapped); got != 0 {
		t.Errorf("wrapped: reconnects %d, want 0", got)
	}
	CloseDecider(wrapped)
}
