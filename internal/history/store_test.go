package history

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/result"
)

// The store suite runs against both databases: SQLite in a temporary file, and a Postgres
// database of its own on the throwaway server (postgres_test.go).

type opener func(t *testing.T) (where string)

func backends() map[string]opener {
	return map[string]opener{
		"sqlite":   func(t *testing.T) string { return filepath.Join(t.TempDir(), "history.db") },
		"postgres": postgresURL,
	}
}

func openT(t *testing.T, where string) Store {
	t.Helper()
	s, err := Open(context.Background(), where, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestStore(t *testing.T) {
	for name, where := range backends() {
		t.Run(name, func(t *testing.T) {
			t.Run("AddReadBack", func(t *testing.T) { testAddReadBack(t, where(t)) })
			t.Run("SameRepetitionsTwice", func(t *testing.T) { testSameTwice(t, where(t)) })
			t.Run("ConcurrentWriters", func(t *testing.T) { testConcurrent(t, where(t)) })
			t.Run("NewerSchema", func(t *testing.T) { testNewerSchema(t, where(t)) })
			t.Run("Reopen", func(t *testing.T) { testReopen(t, where(t)) })
			t.Run("ChangesStep", func(t *testing.T) { testChangesStep(t, where(t)) })
			t.Run("ChangesAA", func(t *testing.T) { testChangesAA(t, where(t)) })
		})
	}
}

func testAddReadBack(t *testing.T, where string) {
	ctx := context.Background()
	s := openT(t, where)
	ins := stepSeries(t, 1000, 1, 1)[:5]
	for _, in := range ins {
		a, err := s.Add(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if a.Nothing() || a.Repetitions != 3 || a.Known != 0 {
			t.Fatalf("add %s: %+v, want a document with 3 new repetitions", in.Name, a)
		}
	}
	series, err := s.Series(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(series) != 1 || series[0].Commits != 5 || series[0].Workload != "rbac" || series[0].Target != "opa/server" ||
		series[0].Load != "4 workers" || series[0].Testbed.CPUModel != "Test CPU" || len(series[0].Branches) != 1 {
		t.Fatalf("series %+v, want one of rbac on opa/server, 4 workers, 5 commits on main", series)
	}
	points, err := s.Points(ctx, series[0].ID, "main")
	if err != nil {
		t.Fatal(err)
	}
	if len(points) != 5 {
		t.Fatalf("%d points, want 5", len(points))
	}
	for i, p := range points {
		want := ins[i].Doc
		if p.Commit != want.Env.Commit || len(p.Repetitions) != 3 || !p.Time.Equal(want.Created) {
			t.Fatalf("point %d: %s at %v with %d repetitions, want %s at %v with 3", i, p.Commit, p.Time, len(p.Repetitions), want.Env.Commit, want.Created)
		}
		for j, r := range p.Repetitions {
			w := want.Runs[0].Repetitions[j]
			if r.ID != w.ID || r.Throughput != w.ThroughputRPS || r.P99 != w.LatencyUS.P99 || r.HDR != w.HDR || !r.Usable {
				t.Fatalf("point %d repetition %d: %+v, want %+v", i, j, r, w)
			}
		}
		doc, err := s.Document(ctx, p.Documents[0])
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(doc.Body, ins[i].Body) || doc.Branch != "main" || doc.Name != ins[i].Name {
			t.Fatalf("document %d does not read back as written", p.Documents[0])
		}
	}
	if other, err := s.Points(ctx, series[0].ID, "feature"); err != nil || len(other) != 0 {
		t.Fatalf("points on another branch: %d, %v; want none", len(other), err)
	}
}

func testSameTwice(t *testing.T, where string) {
	ctx := context.Background()
	s := openT(t, where)
	in := stepSeries(t, 1000, 1, 2)[0]
	if a, err := s.Add(ctx, in); err != nil || a.Repetitions != 3 {
		t.Fatalf("first add: %+v, %v", a, err)
	}
	a, err := s.Add(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Nothing() || a.Known != 3 {
		t.Fatalf("second add: %+v, want nothing added, 3 known", a)
	}
	// The same repetitions in another document (a merge of this one with a new run) add only
	// the new run's.
	fresh := docOf("c-new", in.Doc.Created.Add(time.Hour), 1000)
	merged := *in.Doc
	merged.Created = fresh.Created
	merged.Runs = []result.Run{in.Doc.Runs[0]}
	merged.Runs[0].Repetitions = append(slices.Clone(in.Doc.Runs[0].Repetitions), fresh.Runs[0].Repetitions...)
	a, err = s.Add(ctx, inputOf(t, "merged.json", "main", &merged))
	if err != nil {
		t.Fatal(err)
	}
	if a.Nothing() || a.Repetitions != 1 || a.Known != 3 {
		t.Fatalf("merged add: %+v, want 1 added and 3 known", a)
	}
	series, _ := s.Series(ctx)
	points, _ := s.Points(ctx, series[0].ID, "")
	n := 0
	for _, p := range points {
		n += len(p.Repetitions)
	}
	if n != 4 {
		t.Fatalf("%d repetitions stored, want 4: none twice", n)
	}
	// A document that only repeats stored repetitions of a run is no point of its series.
	copyOf := *in.Doc
	copyOf.Created = fresh.Created.Add(time.Hour)
	copyOf.Env.Commit = "c-copy"
	copyOf.Runs = []result.Run{in.Doc.Runs[0], fresh.Runs[0]}
	copyOf.Runs[1].Workload = "api"
	copyOf.Runs[1].Repetitions = docOf("c-copy", copyOf.Created, 1000).Runs[0].Repetitions
	if a, err := s.Add(ctx, inputOf(t, "copy.json", "main", &copyOf)); err != nil || a.Repetitions != 1 || a.Known != 3 {
		t.Fatalf("copy add: %+v, %v; want 1 added (api), 3 known (rbac)", a, err)
	}
	series, _ = s.Series(ctx)
	for _, se := range series {
		points, _ := s.Points(ctx, se.ID, "")
		if se.Commits != len(points) {
			t.Errorf("series %s: %d commits listed, %d points", se.Label(), se.Commits, len(points))
		}
	}
	if len(series) != 2 || series[1].Workload != "rbac" || series[1].Commits != 1 {
		t.Fatalf("series %+v; want api, and rbac at its 1 commit (not c-copy)", series)
	}
}

func testConcurrent(t *testing.T, where string) {
	ctx := context.Background()
	openT(t, where) // created and migrated; the writers below also race to open it
	ins := stepSeries(t, 1000, 1, 3)[:16]
	const writers = 4
	var wg sync.WaitGroup
	errs := make(chan error, writers*len(ins))
	for w := range writers {
		wg.Go(func() {
			// Each writer has a database handle of its own, as parallel CI jobs do.
			s, err := Open(ctx, where, Options{})
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			// Every writer adds every document, each starting elsewhere: most adds race
			// another writer's add of the same repetitions.
			for k := range ins {
				if _, err := s.Add(ctx, ins[(k+w*len(ins)/writers)%len(ins)]); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s := openT(t, where)
	series, err := s.Series(ctx)
	if err != nil || len(series) != 1 {
		t.Fatalf("series %+v, %v", series, err)
	}
	points, _ := s.Points(ctx, series[0].ID, "main")
	n := 0
	for _, p := range points {
		n += len(p.Repetitions)
	}
	if len(points) != len(ins) || n != 3*len(ins) {
		t.Fatalf("%d points, %d repetitions after %d concurrent adds; want %d and %d: nothing lost", len(points), n, len(ins), len(ins), 3*len(ins))
	}
}

func testNewerSchema(t *testing.T, where string) {
	ctx := context.Background()
	s := openT(t, where)
	if _, err := s.Add(ctx, stepSeries(t, 1000, 1, 4)[0]); err != nil {
		t.Fatal(err)
	}
	db := s.(*sqlStore)
	if _, err := db.db.Exec(db.d.bind(`INSERT INTO schema_version (version) VALUES (?)`), SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	_, err := Open(ctx, where, Options{})
	var newer *NewerSchemaError
	if !errors.As(err, &newer) || newer.Version != SchemaVersion+1 {
		t.Fatalf("open a newer schema: %v, want a NewerSchemaError", err)
	}
	t.Log(err)
}

func testReopen(t *testing.T, where string) {
	ctx := context.Background()
	s := openT(t, where)
	if _, err := s.Add(ctx, stepSeries(t, 1000, 1, 5)[0]); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openT(t, where) // a second open migrates nothing and keeps everything
	series, err := s.Series(ctx)
	if err != nil || len(series) != 1 || series[0].Commits != 1 {
		t.Fatalf("after reopening: %+v, %v", series, err)
	}
}

func TestSQLiteBadDatabases(t *testing.T) {
	ctx := context.Background()
	t.Run("Corrupted", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "history.db")
		garbage := bytes.Repeat([]byte("not a database "), 500)
		os.WriteFile(path, garbage, 0o644)
		_, err := Open(ctx, path, Options{})
		if err == nil {
			t.Fatal("a corrupted file opened")
		}
		t.Log(err)
		if got, _ := os.ReadFile(path); !bytes.Equal(got, garbage) {
			t.Fatal("opening a corrupted file changed it")
		}
	})
	t.Run("MustExist", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "none.db")
		if _, err := Open(ctx, path, Options{MustExist: true}); !errors.Is(err, ErrNoHistory) {
			t.Fatalf("%v, want ErrNoHistory", err)
		}
		if _, err := os.Stat(path); err == nil {
			t.Fatal("a read-only open created the file")
		}
	})
	t.Run("Locked", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "history.db")
		s, err := Open(ctx, path, Options{BusyTimeout: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ins := stepSeries(t, 1000, 1, 6)
		if _, err := s.Add(ctx, ins[0]); err != nil {
			t.Fatal(err)
		}
		// Another connection holds the write lock beyond every wait and retry.
		holder, err := Open(ctx, path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer holder.Close()
		conn, err := holder.(*sqlStore).db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
			t.Fatal(err)
		}
		_, err = s.Add(ctx, ins[1])
		var locked *LockedError
		if !errors.As(err, &locked) {
			t.Fatalf("add under a held lock: %v, want a LockedError", err)
		}
		t.Log(err)
		conn.ExecContext(ctx, "ROLLBACK")
		conn.Close()
		series, err := s.Series(ctx)
		if err != nil || len(series) != 1 || series[0].Commits != 1 {
			t.Fatalf("after the lock: %+v, %v; want the one document added before", series, err)
		}
		if a, err := s.Add(ctx, ins[1]); err != nil || a.Repetitions != 3 {
			t.Fatalf("add once the lock is gone: %+v, %v", a, err)
		}
	})
}

func TestPostgresNotAnswering(t *testing.T) {
	// A loopback port nothing listens on: connection refused at once.
	where := fmt.Sprintf("postgres://bench:secret@127.0.0.1:%d/x?sslmode=disable&connect_timeout=2", closedPort(t))
	_, err := Open(context.Background(), where, Options{})
	if err == nil {
		t.Fatal("opened a server that does not answer")
	}
	if bytes.Contains([]byte(err.Error()), []byte("secret")) {
		t.Fatalf("the error shows the password: %v", err)
	}
	t.Log(err)
}

// closedPort is a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// A repetition added up from shards (merge) is known by its parts: the merged document adds
// nothing when its shards were added, and a shard adds nothing once the merge was.
func TestShardPartsAreKnown(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	shard1, shard2 := docOf("c1", start, 1000), docOf("c1", start.Add(time.Second), 1000)
	merged := docOf("c1", start.Add(time.Minute), 1000)
	rep := &merged.Runs[0].Repetitions[0]
	rep.ID = "merged-id"
	rep.Parts = []string{shard1.Runs[0].Repetitions[0].ID, shard2.Runs[0].Repetitions[0].ID}

	s := openT(t, backends()["sqlite"](t))
	if a, err := s.Add(ctx, inputOf(t, "s1.json", "main", shard1)); err != nil || a.Repetitions != 1 {
		t.Fatalf("shard 1: %+v %v", a, err)
	}
	if a, err := s.Add(ctx, inputOf(t, "merged.json", "main", merged)); err != nil || !a.Nothing() {
		t.Fatalf("merged after its shard: %+v %v; want nothing added", a, err)
	}

	s = openT(t, backends()["sqlite"](t))
	if a, err := s.Add(ctx, inputOf(t, "merged.json", "main", merged)); err != nil || a.Repetitions != 1 {
		t.Fatalf("merged: %+v %v", a, err)
	}
	if a, err := s.Add(ctx, inputOf(t, "s2.json", "main", shard2)); err != nil || !a.Nothing() {
		t.Fatalf("shard after the merge: %+v %v; want nothing added", a, err)
	}
}
