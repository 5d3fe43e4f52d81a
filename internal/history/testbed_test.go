package history

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/result"
)

// A testbed's default name comes from what defines a machine for performance, never from what
// changes under it: the kernel, Go and the host name leave it as it is.
func TestDefaultTestbed(t *testing.T) {
	base := result.Env{CPUModel: "AMD EPYC", Cores: 2, Kernel: "6.18.44-fc-v595", Go: "go1.26.7", Hostname: "vm",
		Pinning: "none: generator and system under test share all cores"}
	for _, tc := range []struct {
		name string
		edit func(*result.Env)
		want string
	}{
		{"as measured", func(*result.Env) {}, "amd-epyc-2c"},
		{"another kernel build, Go and host", func(e *result.Env) { e.Kernel, e.Go, e.Hostname = "6.18.44-fc-v669", "go1.26.8", "ci-7" }, "amd-epyc-2c"},
		{"trademarks and words dropped", func(e *result.Env) { e.CPUModel = "Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz" }, "intel-xeon-e5-2680-v4-2-40ghz-2c"},
		{"more cores", func(e *result.Env) { e.Cores = 16 }, "amd-epyc-16c"},
		{"pinned by authzbench", func(e *result.Env) {
			e.Pinning = "auto: generator on CPUs 0, servers authzbench starts on CPUs 1; other targets unpinned"
		}, "amd-epyc-2c-pin-auto"},
		{"pinned by hand", func(e *result.Env) { e.Pinning = "generator on CPUs 0, servers on CPUs 1" }, "amd-epyc-2c-pin-"},
		{"no CPU model", func(e *result.Env) { e.CPUModel = "" }, "unknown-cpu-2c"},
		{"named by the user", func(e *result.Env) { e.Testbed = "ci-runner" }, "ci-runner"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := base
			tc.edit(&env)
			got := TestbedName(env)
			if !strings.HasPrefix(got, tc.want) || strings.HasSuffix(tc.want, "-") && len(got) != len(tc.want)+6 {
				t.Errorf("%q, want %q", got, tc.want)
			}
			if err := result.CheckTestbed(got); err != nil {
				t.Errorf("a default name that names no testbed: %v", err)
			}
		})
	}
	long := base
	long.CPUModel, long.Cores, long.Pinning = strings.Repeat("very long model name ", 10), 1024, "generator on CPUs 0-511"
	if err := result.CheckTestbed(TestbedName(long)); err != nil {
		t.Errorf("a long CPU model on many cores, pinned: %v", err)
	}
}

// Two results of one CPU model, cores and pinning whose kernels differ only in their build
// string are one series, and the kernel's change is where it happened, in the points and in
// the change found there (issue 42: a hosted runner's image update must not start every series
// over). A testbed given by name files its documents under that name, whatever their machine.
func TestTestbedSeries(t *testing.T) {
	ctx := context.Background()
	s := openT(t, filepath.Join(t.TempDir(), "h.db"))
	ins := stepSeries(t, 1000, 1.3, 21)
	for i, in := range ins {
		in.Doc.Env.Kernel = "6.18.44-fc-v595"
		if i >= 20 {
			in.Doc.Env.Kernel = "6.18.44-fc-v669"
		}
	}
	addAll(t, s, ins)
	series, err := s.Series(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(series) != 1 || series[0].Commits != 40 || series[0].Testbed.Name != "test-2c" || series[0].Testbed.Kernel != "6.18.44-fc-v669" {
		t.Fatalf("series %+v; want one of 40 commits on testbed test-2c, its last kernel v669", series)
	}
	points, err := s.Points(ctx, series[0].ID, "main")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(points); i++ {
		got := EnvironmentChanges(points[i-1], points[i])
		if i == 20 {
			if len(got) != 1 || got[0] != (EnvironmentChange{Fact: FactKernel, Before: "6.18.44-fc-v595", After: "6.18.44-fc-v669"}) {
				t.Errorf("at commit 20: %v, want the kernel's change", got)
			}
		} else if len(got) != 0 {
			t.Errorf("at commit %d: %v, want none", i, got)
		}
	}
	changes, err := s.Changes(ctx, ChangeOptions{Seed: 1})
	if err != nil || len(changes) == 0 {
		t.Fatalf("%d changes, %v; want the step at commit 20", len(changes), err)
	}
	for _, c := range changes {
		if c.Commit != points[20].Commit || len(c.Environment) != 1 || c.Environment[0].Fact != FactKernel {
			t.Errorf("%v at %s: environment %v; want the kernel's change with it", c, c.Commit, c.Environment)
		}
	}

	named := inputOf(t, "named.json", "main", docOf("c-named", time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), 1000))
	named.Testbed = "lab-box"
	if _, err := s.Add(ctx, named); err != nil {
		t.Fatal(err)
	}
	series, _ = s.Series(ctx)
	if len(series) != 2 || series[0].Testbed.Name != "lab-box" || series[0].Commits != 1 {
		t.Fatalf("series %+v; want the named testbed's apart", series)
	}
	bad := inputOf(t, "bad.json", "main", docOf("c-bad", time.Now(), 1000))
	bad.Testbed = "a b"
	if _, err := s.Add(ctx, bad); err == nil || !strings.Contains(err.Error(), `"a b"`) {
		t.Fatalf("a testbed named %q added: %v", bad.Testbed, err)
	}
}

// A shard (--shard i/N) is refused, and so is a document holding two runs of one series: both
// would put false figures in a series (H27, H30).
func TestNotAddable(t *testing.T) {
	s := openT(t, filepath.Join(t.TempDir(), "h.db"))
	shard := docOf("c1", time.Now(), 1000)
	shard.Shard = &result.Shard{Index: 1, Count: 2}
	twice := docOf("c2", time.Now(), 1000, 1000)
	twice.Runs = append(twice.Runs, twice.Runs[0])
	twice.Runs[1].Repetitions = []result.Repetition{twice.Runs[0].Repetitions[1]}
	twice.Runs[0].Repetitions = twice.Runs[0].Repetitions[:1]
	same := *twice
	same.Runs = slices.Clone(twice.Runs)
	twice.Runs[1].WorkloadDoc.Description = "rbac with another policy"
	badName := docOf("c3", time.Now(), 1000)
	badName.Env.Testbed = "edited by hand/1"
	for name, doc := range map[string]*result.Document{"shard": shard, "two workloads in one series": twice, "a testbed no URL can hold": badName} {
		t.Run(name, func(t *testing.T) {
			in := inputOf(t, name+".json", "main", doc)
			if err := CheckAddable(in.Doc); err == nil {
				t.Fatal("CheckAddable took it")
			} else {
				t.Log(err)
			}
			if a, err := s.Add(context.Background(), in); err == nil {
				t.Fatalf("added: %+v", a)
			}
		})
	}
	if series, _ := s.Series(context.Background()); len(series) != 0 {
		t.Fatalf("%d series after three refusals", len(series))
	}
	// One workload measured twice (the floor before and after a sweep) is one point.
	if a, err := s.Add(context.Background(), inputOf(t, "same.json", "main", &same)); err != nil || a.Repetitions != 2 {
		t.Fatalf("one workload measured twice: %+v, %v", a, err)
	}
	if series, _ := s.Series(context.Background()); len(series) != 1 || series[0].Commits != 1 {
		t.Fatalf("series %+v, want one of one commit", series)
	}
}

// A file that is not an authzbench history is refused, and left byte for byte as it was:
// another program's SQLite database by every command, an empty file by those that only read
// (H15). Only a command that adds creates a history, and it says so (Created).
func TestForeignDatabases(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	app := filepath.Join(dir, "app.db")
	raw, err := sql.Open("sqlite", app)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users (name) VALUES ('ada');
		CREATE TABLE schema_version (version INTEGER)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	empty := filepath.Join(dir, "empty.db")
	os.WriteFile(empty, nil, 0o644)
	sums := func() map[string]string {
		out := map[string]string{}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
			sum := sha256.Sum256(b)
			out[e.Name()] = hex.EncodeToString(sum[:])
		}
		return out
	}
	before := sums()
	for _, tc := range []struct {
		name, path string
		mustExist  bool
		tables     bool
	}{
		{"another program's, to read", app, true, true},
		{"another program's, to add", app, false, true},
		{"an empty file, to read", empty, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Open(ctx, tc.path, Options{MustExist: tc.mustExist})
			var nh *NotHistoryError
			if !errors.As(err, &nh) || (len(nh.Tables) > 0) != tc.tables || !strings.Contains(err.Error(), "nothing was changed") {
				t.Fatalf("%v; want a NotHistoryError", err)
			}
			t.Log(err)
		})
	}
	if after := sums(); !maps(before, after) {
		t.Fatalf("files changed: before %v, after %v", before, after)
	}
	// An empty file named to add to becomes a history, and says so; opened again, it is one.
	s, err := Open(ctx, empty, Options{})
	if err != nil || !s.Created() {
		t.Fatalf("add to an empty file: %v, created %v", err, s != nil && s.Created())
	}
	s.Close()
	s, err = Open(ctx, empty, Options{MustExist: true})
	if err != nil || s.Created() {
		t.Fatalf("the history made of the empty file: %v", err)
	}
	s.Close()
}

func maps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// A history written before testbeds were named (schema version 1, written by authzbench at
// e790e51: testdata/v1.db) keeps working. Opened by a command that only reads, it is brought
// up to date once: the two series that differed by a kernel build alone are one, with the
// kernel's change between its two commits, and keep the first's id; two stage schedules that
// were one series are two; the shards' repetitions left every series, so their merge, which
// the old history called stored already, can be added; and every document reads back byte for
// byte as it was added.
func TestMigrateFromVersion1(t *testing.T) {
	b, err := os.ReadFile("testdata/v1.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "v1.db")
		os.WriteFile(path, b, 0o644)
		testMigrateV1(t, path)
	})
	t.Run("postgres", func(t *testing.T) { testMigrateV1(t, postgresV1(t, postgresURL(t))) })
	if b2, _ := os.ReadFile("testdata/v1.db"); !bytes.Equal(b, b2) {
		t.Fatal("the fixture changed")
	}
}

// postgresV1 copies testdata/v1.db, row for row, into a Postgres database of schema version 1.
func postgresV1(t *testing.T, where string) string {
	t.Helper()
	src, err := sql.Open("sqlite", "file:testdata/v1.db?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := sql.Open("pgx", where)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	d := postgresDialect
	if _, err := dst.Exec(`CREATE TABLE schema_version (version INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range strings.Split(d.ddl(migrations[0].ddl), ";") {
		if _, err := dst.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	for _, table := range []string{"schema_version", "testbeds", "documents", "series", "runs", "repetitions", "repetition_keys"} {
		rows, err := src.Query("SELECT * FROM " + table)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		marks := make([]string, len(cols))
		for i := range marks {
			marks[i] = "?"
		}
		insert := d.bind("INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES (" + strings.Join(marks, ", ") + ")")
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			if _, err := dst.Exec(insert, vals...); err != nil {
				t.Fatalf("%s: %v", table, err)
			}
		}
		rows.Close()
	}
	for _, table := range []string{"documents", "series", "runs"} {
		if _, err := dst.Exec(fmt.Sprintf(`SELECT setval(pg_get_serial_sequence('%s', 'id'), (SELECT MAX(id) FROM %s))`, table, table)); err != nil {
			t.Fatal(err)
		}
	}
	return where
}

func testMigrateV1(t *testing.T, where string) {
	ctx := context.Background()
	s, err := Open(ctx, where, Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Created() {
		t.Error("a migrated history reads as created")
	}
	series, err := s.Series(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, se := range series {
		labels = append(labels, se.Label())
	}
	want := []string{"nop opa/inproc 1 worker @fixture-2c", "nop opa/inproc stages 50/1s x64 @fixture-2c", "nop opa/inproc stages 80/1s x64 @fixture-2c"}
	if !slices.Equal(labels, want) {
		t.Fatalf("series %q, want %q", labels, want)
	}
	joined := series[0]
	if joined.ID != 1 || joined.Commits != 2 || joined.Testbed.Kernel != "6.18.44-fc-v669" {
		t.Fatalf("the joined series: %+v; want id 1, 2 commits, last kernel v669", joined)
	}
	points, err := s.Points(ctx, joined.ID, "main")
	if err != nil || len(points) != 2 {
		t.Fatalf("%d points, %v", len(points), err)
	}
	if got := EnvironmentChanges(points[0], points[1]); len(got) != 1 || got[0].Fact != FactKernel {
		t.Fatalf("environment changes %v, want the kernel's", got)
	}
	if !slices.ContainsFunc(points[0].Environment, func(f Fact) bool { return f.Name == FactEngine && strings.HasPrefix(f.Value, "opa ") }) {
		t.Errorf("no engine among the facts: %v", points[0].Environment)
	}
	db := s.(*sqlStore).db
	rows, err := db.Query(`SELECT id, sha256 FROM documents`)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var id int64
		var sum string
		rows.Scan(&id, &sum)
		d, err := s.Document(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		got := sha256.Sum256(d.Body)
		if hex.EncodeToString(got[:]) != sum {
			t.Errorf("document %d no longer reads back as added", id)
		}
		n++
	}
	rows.Close()
	if n != 6 {
		t.Errorf("%d documents, want the 6 added", n)
	}
	merge, err := ReadInput("testdata/v1-merge.json", "main")
	if err != nil {
		t.Fatal(err)
	}
	if a, err := s.Add(ctx, merge); err != nil || a.Repetitions != 1 {
		t.Fatalf("the merge of the shards: %+v, %v; want its repetition added", a, err)
	}
	if _, err := ReadInput("testdata/v1-shard1.json", "main"); !errors.Is(err, ErrShard) {
		t.Fatalf("a shard: %v, want ErrShard", err)
	}
	series, _ = s.Series(ctx)
	if len(series) != 4 || series[1].Load != "2 workers" || series[1].Commits != 1 {
		t.Fatalf("after the merge: %+v", series)
	}
}

// Postgres: a database holding another program's tables is refused by every command, and an
// empty one by those that only read, with nothing created in either.
func TestPostgresForeign(t *testing.T) {
	ctx := context.Background()
	app := postgresURL(t)
	db, err := sql.Open("pgx", app)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE users (id BIGINT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	empty := postgresURL(t)
	for _, tc := range []struct {
		where     string
		mustExist bool
	}{{app, true}, {app, false}, {empty, true}} {
		_, err := Open(ctx, tc.where, Options{MustExist: tc.mustExist})
		var nh *NotHistoryError
		if !errors.As(err, &nh) {
			t.Errorf("%s (must exist %v): %v, want a NotHistoryError", tc.where, tc.mustExist, err)
		}
	}
	for _, where := range []string{app, empty} {
		check, err := sql.Open("pgx", where)
		if err != nil {
			t.Fatal(err)
		}
		tables, err := listTables(ctx, check, postgresDialect)
		check.Close()
		if err != nil || len(tables) > 1 || len(tables) == 1 && tables[0] != "users" {
			t.Errorf("%s holds %v after the refusals (%v)", where, tables, err)
		}
	}
	s, err := Open(ctx, empty, Options{})
	if err != nil || !s.Created() {
		t.Fatalf("add to an empty database: %v", err)
	}
	s.Close()
}
