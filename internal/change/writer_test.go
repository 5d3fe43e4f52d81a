package change

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/workload"
)

// fakeApplier acknowledges each write after delay, fails the write of version failAt, and
// blocks on the one of version blockAt until its context ends.
type fakeApplier struct {
	delay           time.Duration
	failAt, blockAt int
	got             []int
	inFlight        chan struct{}
}

func (f *fakeApplier) Apply(ctx context.Context, version int, c Change) Ack {
	f.got = append(f.got, version)
	if version == f.blockAt {
		close(f.inFlight)
		<-ctx.Done()
		return Ack{Class: "transport", Err: ctx.Err()}
	}
	time.Sleep(f.delay)
	if version == f.failAt {
		return Ack{Class: "http_409", Err: errors.New("conflict")}
	}
	return Ack{Token: "t" + string(rune('0'+version))}
}

func stream(t *testing.T, n int) *Stream {
	t.Helper()
	changes := make([]Change, n)
	for k := range changes {
		changes[k] = Change{Source: "c.jsonl:" + string(rune('1'+k)), Sets: map[int]bool{0: k%2 == 0}}
	}
	s, err := NewStream([]workload.Expect{workload.ExpectAllow}, changes)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestWriterPacesInOrder(t *testing.T) {
	s := stream(t, 5)
	l := NewLog(5, time.Now())
	f := &fakeApplier{delay: time.Millisecond}
	w := Writer{Stream: s, Log: l, Applier: f, Rate: 50}
	if err := w.Run(context.Background(), 0, time.Minute); err != nil {
		t.Fatal(err)
	}
	if l.Applied() != 5 || len(l.Writes) != 5 {
		t.Fatalf("applied %d, recorded %d, want 5 of each", l.Applied(), len(l.Writes))
	}
	for k, wr := range l.Writes {
		if wr.Version != k+1 || f.got[k] != k+1 || !wr.Acknowledged() || wr.Token == "" {
			t.Errorf("write %d: %+v", k, wr)
		}
		// due every 20 ms: never early (wide margin above, the machine is shared)
		if due := time.Duration(k) * 20 * time.Millisecond; wr.Start < due || wr.Start > due+time.Second {
			t.Errorf("write %d sent at %s, due at %s", k+1, wr.Start, due)
		}
		if wr.Ack < wr.Start+time.Millisecond {
			t.Errorf("write %d acknowledged at %s, sent at %s: before the service answered", k+1, wr.Ack, wr.Start)
		}
	}
}

func TestWriterStopsAtAFailedWrite(t *testing.T) {
	s := stream(t, 5)
	l := NewLog(5, time.Now())
	w := Writer{Stream: s, Log: l, Applier: &fakeApplier{failAt: 3}, Rate: 1000}
	err := w.Run(context.Background(), 0, time.Minute)
	if err == nil || !strings.Contains(err.Error(), "change 3 (c.jsonl:3) not applied (http_409)") {
		t.Fatalf("error %v, want change 3's failure named", err)
	}
	if l.Applied() != 2 || len(l.Writes) != 3 || l.Writes[2].Class != "http_409" {
		t.Errorf("applied %d, writes %+v", l.Applied(), l.Writes)
	}
	// The failed change stays in flight: an answer reflecting it is not wrong, as it may have
	// been applied.
	if got := l.StartedBy(time.Hour); got != 3 {
		t.Errorf("started by the end: %d, want 3", got)
	}
}

func TestWriterInterruptedWriteNotCounted(t *testing.T) {
	s := stream(t, 5)
	l := NewLog(5, time.Now())
	f := &fakeApplier{blockAt: 2, inFlight: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-f.inFlight; cancel() }()
	w := Writer{Stream: s, Log: l, Applier: f, Rate: 1000}
	if err := w.Run(ctx, 0, time.Minute); err != nil {
		t.Fatalf("an interrupted run is no write failure: %v", err)
	}
	if l.Applied() != 1 || len(l.Writes) != 2 || l.Writes[1].Class != Interrupted || l.Writes[1].Acknowledged() {
		t.Errorf("applied %d, writes %+v", l.Applied(), l.Writes)
	}
}

func TestWriterTimeout(t *testing.T) {
	s := stream(t, 2)
	l := NewLog(2, time.Now())
	w := Writer{Stream: s, Log: l, Applier: &fakeApplier{blockAt: 1, inFlight: make(chan struct{})}, Rate: 1000, Timeout: 20 * time.Millisecond}
	err := w.Run(context.Background(), 0, time.Minute)
	if err == nil || l.Applied() != 0 || l.Writes[0].Class != "transport" {
		t.Errorf("error %v, writes %+v: want the write's own class", err, l.Writes)
	}
}

func TestWriterUntil(t *testing.T) {
	s := stream(t, 5)
	l := NewLog(5, time.Now())
	w := Writer{Stream: s, Log: l, Applier: &fakeApplier{}, Rate: 10}
	if err := w.Run(context.Background(), 0, 250*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if l.Applied() != 3 {
		t.Errorf("applied %d changes due in 250ms at 10/s, want 3", l.Applied())
	}
}
