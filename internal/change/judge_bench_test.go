package change

import (
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/workload"
)

// BenchmarkTallyRecord is what judging costs one decision of a run with changes: 1,000 inputs,
// 1,000 changes applied, each flipping one input, the answer sent after the last.
func BenchmarkTallyRecord(b *testing.B) {
	const n = 1000
	exp := make([]workload.Expect, n)
	changes := make([]Change, n)
	for i := range exp {
		exp[i] = workload.ExpectAllow
		changes[i] = Change{Sets: map[int]bool{(i * 7) % n: i%2 == 1}}
	}
	s, err := NewStream(exp, changes)
	if err != nil {
		b.Fatal(err)
	}
	l := NewLog(n, time.Now())
	for k := 1; k <= n; k++ {
		l.Started(k, time.Duration(k)*time.Millisecond)
		l.Acknowledged(k, time.Duration(k)*time.Millisecond+time.Microsecond)
	}
	j := &Judge{Stream: s, Log: l, Allowed: time.Second}
	t := NewTally(n, 0, 10*time.Second, 0)
	end := time.Duration(n+1) * time.Millisecond
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		in := i % n
		a := Answer{Input: in, Allow: s.Allowed(in, n), Sent: end, Received: end + 100*time.Microsecond}
		t.Record(j, a, 100*time.Microsecond)
		t.Answered(a.Received)
	}
}
