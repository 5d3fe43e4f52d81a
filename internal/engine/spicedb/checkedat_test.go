package spicedb

import (
	"context"
	"encoding/base64"
	"slices"
	"strconv"
	"testing"
	"time"

	v1 "github.com/authzed/authzed-go/proto/authzed/api/v1"
	implv1 "github.com/authzed/spicedb/pkg/proto/impl/v1"
	"github.com/authzed/spicedb/pkg/zedtoken"

	"github.com/authzbench/authzbench/internal/change"
	"github.com/authzbench/authzbench/internal/datastore"
	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// token is a ZedToken as SpiceDB encodes one (pkg/zedtoken), naming the revision raw.
func token(t testing.TB, raw string) *v1.ZedToken {
	t.Helper()
	tok, err := zedtoken.Encode(&implv1.DecodedZedToken{VersionOneof: &implv1.DecodedZedToken_V1{
		V1: &implv1.DecodedZedToken_V1ZedToken{Revision: raw, DatastoreUniqueIdPrefix: "0a1b2c3d", SchemaHash: []byte("h")}}})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func memdbToken(t testing.TB, nanos int64) *v1.ZedToken {
	return token(t, strconv.FormatInt(nanos, 10))
}

// pgToken is a PostgreSQL revision's token as SpiceDB's PostgresRevision.MarshalBinary writes
// it: xmax and the transactions in progress relative to xmin.
func pgToken(t testing.TB, xmin, xmax, txid uint64, xip ...uint64) *v1.ZedToken {
	t.Helper()
	pr := &implv1.PostgresRevision{Xmin: xmin, RelativeXmax: int64(xmax) - int64(xmin), OptionalTxid: txid}
	for _, x := range xip {
		pr.RelativeXips = append(pr.RelativeXips, int64(x)-int64(xmin))
	}
	b, err := pr.MarshalVT()
	if err != nil {
		t.Fatal(err)
	}
	return token(t, base64.StdEncoding.EncodeToString(b))
}

type placed struct {
	at      *v1.ZedToken
	version int
	ok      bool
}

func checkPlaced(t *testing.T, v *versions, what string, cases []placed) {
	t.Helper()
	for i, c := range cases {
		var cache tokenCache
		version, ok := v.version(&cache, c.at)
		if ok != c.ok || (ok && version != c.version) {
			t.Errorf("%s, check %d: version %d (told %t), want %d (told %t)", what, i, version, ok, c.version, c.ok)
		}
	}
}

// On memory, revisions are commit times: a check is at the newest write at or before its
// revision. An answer past the last acknowledged write while the next is in flight cannot be
// told (it may hold that write), nor can one before the load's write; an answer at the last
// acknowledged write itself can (memdb gives the next commit a later revision).
func TestVersionsMemdb(t *testing.T) {
	v, err := newVersions(memdbRevisions, memdbToken(t, 100))
	if err != nil {
		t.Fatal(err)
	}
	var cache tokenCache
	if _, ok := v.version(&cache, memdbToken(t, 150)); ok {
		t.Fatal("an answer named a version before the writer started")
	}
	v.start()
	v.sending()
	v.written(1, memdbToken(t, 200))
	v.sending()
	v.written(2, memdbToken(t, 300))
	checkPlaced(t, v, "acknowledged", []placed{
		{memdbToken(t, 50), 0, false}, {memdbToken(t, 100), 0, true}, {memdbToken(t, 150), 0, true},
		{memdbToken(t, 200), 1, true}, {memdbToken(t, 299), 1, true}, {memdbToken(t, 300), 2, true}, {memdbToken(t, 9e18), 2, true},
	})
	v.sending()
	checkPlaced(t, v, "change 3 in flight", []placed{
		{memdbToken(t, 250), 1, true}, {memdbToken(t, 300), 2, true}, {memdbToken(t, 301), 0, false},
	})
	v.written(3, memdbToken(t, 400))
	checkPlaced(t, v, "change 3 acknowledged", []placed{{memdbToken(t, 301), 2, true}, {memdbToken(t, 400), 3, true}})
	v.sending()
	v.failed()
	checkPlaced(t, v, "change 4 failed", []placed{{memdbToken(t, 400), 3, true}, {memdbToken(t, 401), 0, false}})
}

// On PostgreSQL, a check sees a write when the write's transaction is visible in the check's
// snapshot: below its xmin, or below its xmax and not in progress. Each write's token is its
// transaction's snapshot with itself marked complete, as SpiceDB returns it.
func TestVersionsPostgres(t *testing.T) {
	// The load, transaction 10, alone: 11:11.
	v, err := newVersions(postgresRevisions, pgToken(t, 11, 11, 10))
	if err != nil {
		t.Fatal(err)
	}
	v.start()
	// Change 1, transaction 12, began while 11 (not ours) ran: 11:12:11, 12 marked complete.
	v.sending()
	v.written(1, pgToken(t, 11, 13, 12, 11))
	// Change 2, transaction 14, after 11 and 13 ended.
	v.sending()
	v.written(2, pgToken(t, 15, 15, 14))
	checkPlaced(t, v, "acknowledged", []placed{
		{pgToken(t, 10, 10, 0), 0, false},        // before the load's commit
		{pgToken(t, 11, 12, 0, 11), 0, true},     // 12 not yet begun
		{pgToken(t, 11, 13, 0, 11, 12), 0, true}, // 12 in progress
		// 11 is over but 12 is not: SpiceDB's snapshot comparison calls this snapshot and
		// change 1's concurrent (each knows a transaction's end the other does not), and it
		// does not see change 1.
		{pgToken(t, 12, 13, 0, 12), 0, true},
		{pgToken(t, 11, 13, 0, 11), 1, true}, // 12 over, 11 still running
		{pgToken(t, 14, 15, 0, 14), 1, true}, // 14 in progress
		{pgToken(t, 15, 15, 14), 2, true},
		{pgToken(t, 16, 20, 0, 16, 18), 2, true},
	})
	// Change 3 in flight: its transaction is 15 or later, seen only by a snapshot whose xmax is
	// past 15.
	v.sending()
	checkPlaced(t, v, "change 3 in flight", []placed{
		{pgToken(t, 15, 15, 0), 2, true},
		{pgToken(t, 15, 16, 0, 15), 0, false},
		{pgToken(t, 16, 16, 0), 0, false},
	})
	// A write token without its transaction cannot be placed: every later answer is in doubt.
	v.written(3, pgToken(t, 16, 16, 0))
	checkPlaced(t, v, "change 3 without a transaction", []placed{{pgToken(t, 15, 15, 0), 2, true}, {pgToken(t, 17, 17, 0), 0, false}})
}

// A token that is not SpiceDB's, or a revision of another datastore, names no version.
func TestVersionsUnreadable(t *testing.T) {
	if _, err := newVersions(memdbRevisions, pgToken(t, 11, 11, 10)); err == nil {
		t.Error("memdb read a PostgreSQL revision")
	}
	if _, err := newVersions(postgresRevisions, memdbToken(t, 100)); err == nil {
		t.Error("postgres read a memdb revision")
	}
	if _, err := newVersions(postgresRevisions, pgToken(t, 11, 11, 0)); err == nil {
		t.Error("a load's write without its transaction was taken")
	}
	v, err := newVersions(memdbRevisions, memdbToken(t, 100))
	if err != nil {
		t.Fatal(err)
	}
	v.start()
	var cache tokenCache
	for _, bad := range []string{"", "not base64!", base64.StdEncoding.EncodeToString([]byte("not a proto"))} {
		if version, ok := v.version(&cache, &v1.ZedToken{Token: bad}); ok {
			t.Errorf("token %q named version %d", bad, version)
		}
	}
	if _, ok := v.version(&cache, nil); ok {
		t.Error("an answer without checked_at named a version")
	}
	var none *versions
	if _, ok := none.version(&cache, memdbToken(t, 100)); ok {
		t.Error("a server without versions named one")
	}
}

// What placing an answer costs on the load path: decoding its checked_at (each answer a new
// token, the worst case) and placing it among 1,000 writes, and the same when the worker's last
// token is the answer's (the common case: SpiceDB answers at a few revisions).
func BenchmarkCheckedAt(b *testing.B) {
	for _, kind := range []struct {
		name string
		kind revisionKind
		tok  func(n int) *v1.ZedToken
	}{
		{"memory", memdbRevisions, func(n int) *v1.ZedToken { return memdbToken(b, 1_700_000_000_000_000_000+int64(n)*1_000_000) }},
		{"postgres", postgresRevisions, func(n int) *v1.ZedToken {
			x := uint64(1000 + 2*n)
			return pgToken(b, x, x+2, x+1, x)
		}},
	} {
		v, err := newVersions(kind.kind, kind.tok(0))
		if err != nil {
			b.Fatal(err)
		}
		v.start()
		for k := 1; k <= 1000; k++ {
			v.sending()
			v.written(k, kind.tok(k))
		}
		checks := make([]*v1.ZedToken, 1024)
		for i := range checks {
			checks[i] = kind.tok(i%1000 + 1)
		}
		b.Run(kind.name+"/decoded", func(b *testing.B) {
			var cache tokenCache
			for i := 0; b.Loop(); i++ {
				if _, ok := v.version(&cache, checks[i%len(checks)]); !ok {
					b.Fatal("not placed")
				}
			}
		})
		b.Run(kind.name+"/cached", func(b *testing.B) {
			var cache tokenCache
			for b.Loop() {
				if _, ok := v.version(&cache, checks[7]); !ok {
					b.Fatal("not placed")
				}
			}
		})
	}
}

// Against SpiceDB's server, each answer names the version it was decided at by its checked_at,
// and its decision is that version's, exactly: at fully_consistent and at_least_as_fresh the
// version acknowledged last (no write is in flight when it is asked), at minimize_latency the
// version of SpiceDB's quantized snapshot (quantized every 200 ms here, so that the stream's
// changes, 50 ms apart, are answered from snapshots of several of them). On PostgreSQL too,
// where PostgreSQL is installed.
func TestCheckedAtNamesTheVersion(t *testing.T) {
	w, err := workload.Builtin("gdrive-50")
	if err != nil {
		t.Fatal(err)
	}
	w.Inputs = w.Inputs[:200]
	cs, err := workload.BuiltinChanges(w, 24)
	if err != nil {
		t.Fatal(err)
	}
	// allowed[k][i]: input i's decision at version k.
	allowed := make([][]bool, len(cs)+1)
	allowed[0] = make([]bool, len(w.Inputs))
	for i, in := range w.Inputs {
		allowed[0][i] = in.Expect == workload.ExpectAllow
	}
	for k, c := range cs {
		allowed[k+1] = slices.Clone(allowed[k])
		for i, a := range c.Sets {
			allowed[k+1][i] = a
		}
	}
	quantized := []string{"--datastore-revision-quantization-interval=200ms"}
	for _, mode := range []struct {
		name, consistency string
		postgres          bool
	}{
		{"memory/fully_consistent", fullyConsistent, false},
		{"memory/at_least_as_fresh", atLeastAsFresh, false},
		{"memory/minimize_latency", minimizeLatency, false},
		{"postgres/fully_consistent", fullyConsistent, true},
		{"postgres/minimize_latency", minimizeLatency, true},
	} {
		t.Run(mode.name, func(t *testing.T) {
			ctx := context.Background()
			cfg := &SpiceDBServerConfig{ConsistencySetting: ConsistencySetting{mode.consistency}}
			cfg.Args = quantized
			if mode.postgres {
				cfg.Settings = datastore.Settings{URI: postgresDB(t)} // skips without PostgreSQL
			}
			tg, err := kinds.New("spicedb/server", kinds.Common{TempDir: t.TempDir(), Prepared: engine.NewPrepared(), Workers: 1}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := tg.Start(ctx, w); err != nil {
				tg.Stop(ctx)
				t.Fatal(err)
			}
			defer tg.Stop(ctx)
			d := tg.Worker()
			defer kinds.CloseDecider(d)
			if out := d.Decide(ctx, 0); out.Versioned {
				t.Errorf("an answer named version %d before the writer started", out.Version)
			}
			ap, err := kinds.WriterOf(tg)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[int64]int{}
			for k, c := range cs {
				form, err := engine.WriteFor(Name, w, c)
				if err != nil {
					t.Fatal(err)
				}
				if ack := ap.Apply(ctx, k+1, change.Change{Form: form, Sets: c.Sets}); ack.Err != nil {
					t.Fatalf("change %d: %v", k+1, ack.Err)
				}
				for i := range c.Sets {
					out := d.Decide(ctx, i)
					// minimize_latency may answer from a snapshot older than the load's last
					// write (PostgreSQL's quantized one, once in a CI run): no version can be
					// named, and the answer is judged by its decision, which must be some
					// version's.
					if mode.consistency == minimizeLatency && out.Kind == verify.Decided && !out.Versioned {
						if !slices.ContainsFunc(allowed[:k+2], func(v []bool) bool { return v[i] == out.Allow }) {
							t.Errorf("change %d acknowledged, input %d: unplaced answer %t, which no version gives", k+1, i+1, out.Allow)
						}
						seen[-1]++
						continue
					}
					if out.Kind != verify.Decided || !out.Versioned || out.Version < 0 || out.Version > int64(k+1) {
						t.Fatalf("change %d acknowledged, input %d: %+v: want a decision naming a version up to %d", k+1, i+1, out, k+1)
					}
					if out.Allow != allowed[out.Version][i] {
						t.Errorf("change %d acknowledged, input %d: allowed %t at version %d, which says %t", k+1, i+1, out.Allow, out.Version, allowed[out.Version][i])
					}
					if mode.consistency != minimizeLatency && out.Version != int64(k+1) {
						t.Errorf("change %d acknowledged, input %d: decided at version %d under %s", k+1, i+1, out.Version, mode.consistency)
					}
					seen[out.Version]++
				}
				time.Sleep(50 * time.Millisecond)
			}
			if named := len(seen) - min(1, seen[-1]); named < 3 {
				t.Errorf("answers named the versions %v: want several", seen)
			}
			t.Logf("answers by version named: %v", seen)
		})
	}
}
