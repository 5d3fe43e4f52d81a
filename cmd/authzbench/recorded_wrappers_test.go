package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// What is recorded is what was done, whatever wraps the target: a served target's reconnects
// are recorded with and without --undefined-as (whose wrapper once hid them), closed and open
// loop; and a Cedar entity graph with a parent cycle, which the Cedar CLI refuses, is refused by
// every command and Cedar mode before anything starts (exit 2, no request, no result file),
// whether the entities file holds it or a request's own entities close it.
func TestRecordedThroughWrappersAndCedarGraphs(t *testing.T) {
	// A policy without a default, all of whose inputs the fake server (which allows everything)
	// decides right.
	regoApp := func(e *faultEnv, t *testing.T) []string {
		return []string{"--policy", e.write(t, "app.rego", "package app\n\nallow if input.user == \"alice\"\n"),
			"--inputs", e.write(t, "inputs.jsonl", `{"input": {"user": "alice"}, "expect": true}`+"\n")}
	}
	reconnects := func(t *testing.T, e *faultEnv, _, _ string) {
		doc := readResult(t, e.out)
		s := doc.Runs[0].Summary
		if s.Errors != 0 || s.OK != 400 {
			t.Errorf("ok %d, errors %d (%v): want 400 decisions", s.OK, s.Errors, s.ErrorClasses)
		}
		// Two connections, each closed by the server after every 5th answer on the server's
		// count: about one request in five is resent on a new connection.
		if c := s.Connections; c == nil || c.Reconnects < 40 {
			t.Errorf("connections %+v: want the ~80 connections the server closed counted as reconnects", c)
		}
	}
	cedarApp := func(e *faultEnv, t *testing.T, kind string, entities ...string) []string {
		dir := writeCedarApp(t)
		return []string{"--target", kind, "--cedar-policies", filepath.Join(dir, "app.cedar"),
			"--entities", e.write(t, "entities.json", entitiesFile(entities...)),
			"--cedar-requests", filepath.Join(dir, "requests.jsonl")}
	}
	const (
		alice = `{"uid": {"type": "User", "id": "alice"}, "attrs": {}, "parents": [{"type": "Group", "id": "g"}]}`
		g     = `{"uid": {"type": "Group", "id": "g"}, "attrs": {}, "parents": [{"type": "User", "id": "alice"}]}`
		self  = `{"uid": {"type": "User", "id": "alice"}, "attrs": {}, "parents": [{"type": "User", "id": "alice"}]}`
		photo = `{"uid": {"type": "Photo", "id": "p1"}, "attrs": {"owner": {"__entity": {"type": "User", "id": "alice"}}}, "parents": [{"type": "Album", "id": "a"}]}`
		album = `{"uid": {"type": "Album", "id": "a"}, "attrs": {}, "parents": [{"type": "Folder", "id": "f"}]}`
		// folder closes the cycle photo -> album -> folder -> photo.
		folder = `{"uid": {"type": "Folder", "id": "f"}, "attrs": {}, "parents": [{"type": "Photo", "id": "p1"}]}`
	)
	twoCycle := `entities.json:2:2: parent cycle: User::"alice" -> Group::"g" -> User::"alice"`
	for _, tc := range []struct {
		name  string
		args  func(t *testing.T, e *faultEnv) []string
		code  int
		want  []string // in stderr
		check func(t *testing.T, e *faultEnv, stdout, stderr string)
	}{
		{name: "reconnects recorded", code: exitOK, check: reconnects,
			args: func(t *testing.T, e *faultEnv) []string {
				e.closeEvery = 5
				return args("run", "--target", "opa/server", "--url", e.url, regoApp(e, t), "--requests", "400",
					"--warmup", "0s", "--workers", "2", "--no-progress", "-o", e.out)
			}},
		{name: "reconnects recorded with --undefined-as deny", code: exitOK, check: reconnects,
			args: func(t *testing.T, e *faultEnv) []string {
				e.closeEvery = 5
				return args("run", "--target", "opa/server", "--url", e.url, regoApp(e, t), "--undefined-as", "deny",
					"--requests", "400", "--warmup", "0s", "--workers", "2", "--no-progress", "-o", e.out)
			}},
		{name: "reconnects recorded with --undefined-as allow, open loop", code: exitOK,
			args: func(t *testing.T, e *faultEnv) []string {
				e.closeEvery = 5
				return args("run", "--target", "opa/server", "--url", e.url, regoApp(e, t), "--undefined-as", "allow",
					"--rate", "500", "--connections", "2", "--duration", "1s", "--warmup", "0s", "--no-progress", "-o", e.out)
			},
			check: func(t *testing.T, e *faultEnv, _, _ string) {
				s := readResult(t, e.out).Runs[0].Summary
				if c := s.Connections; s.OK < 400 || c == nil || c.Reconnects < s.OK/10 {
					t.Errorf("ok %d, connections %+v: want about one reconnect in five requests", s.OK, c)
				}
			}},

		{name: "cedar/inproc: two-entity cycle", code: exitUsage, want: []string{twoCycle},
			args: func(t *testing.T, e *faultEnv) []string {
				return args("run", cedarApp(e, t, "cedar/inproc", alice, g, photo), fast, "-o", e.out)
			}},
		{name: "cedar/server: two-entity cycle, refused before the server starts", code: exitUsage,
			want: []string{`entities.json:3:2: parent cycle: User::"alice" -> Group::"g" -> User::"alice"`},
			args: func(t *testing.T, e *faultEnv) []string {
				return args("run", cedarApp(e, t, "cedar/server", photo, alice, g), fast, "-o", e.out)
			},
			check: func(t *testing.T, e *faultEnv, _, stderr string) {
				if strings.Contains(stderr, "start cedar/server") {
					t.Errorf("want the file refused before any server starts:\n%s", stderr)
				}
			}},
		{name: "self-parent", code: exitUsage, want: []string{`entities.json:2:2: parent cycle: User::"alice" -> User::"alice"`},
			args: func(t *testing.T, e *faultEnv) []string {
				return args("run", cedarApp(e, t, "cedar/inproc,cedar/server", self, photo), fast, "-o", e.out)
			}},
		{name: "three-entity cycle", code: exitUsage,
			want: []string{`entities.json:3:2: parent cycle: Photo::"p1" -> Album::"a" -> Folder::"f" -> Photo::"p1"`},
			args: func(t *testing.T, e *faultEnv) []string {
				return args("run", cedarApp(e, t, "cedar/inproc", `{"uid": {"type": "User", "id": "alice"}, "attrs": {}, "parents": []}`, photo, album, folder), fast, "-o", e.out)
			}},
		{name: "a request bringing a cycle through the file's entities", code: exitUsage,
			want: []string{`requests.jsonl:2: "entities": parent cycle: Group::"g" -> User::"alice" -> Group::"g"`},
			args: func(t *testing.T, e *faultEnv) []string {
				a := cedarApp(e, t, "cedar/inproc,cedar/server", alice, photo)
				a[len(a)-1] = e.write(t, "requests.jsonl", "# alice, in a group that is in her\n"+
					`{"principal": "User::\"alice\"", "action": "Action::\"view\"", "resource": "Photo::\"p1\"", "expect": true, `+
					`"entities": [{"uid": {"type": "Group", "id": "g"}, "attrs": {}, "parents": [{"type": "User", "id": "alice"}]}]}`+"\n")
				return args("run", a, fast, "-o", e.out)
			}},
		{name: "workloads verify", code: exitUsage, want: []string{twoCycle},
			args: func(t *testing.T, e *faultEnv) []string {
				return args("workloads", "verify", cedarApp(e, t, "cedar/inproc,cedar/server", alice, g, photo))
			}},
		{name: "the cedar server itself", code: exitUsage, want: []string{twoCycle},
			args: func(t *testing.T, e *faultEnv) []string {
				dir := writeCedarApp(t)
				return args("cedar-server", "--policies", filepath.Join(dir, "app.cedar"),
					"--entities", e.write(t, "entities.json", entitiesFile(alice, g, photo)),
					// A port no server can listen on: a server that loaded the graph exits 1
					// instead of serving for ever.
					"--addr", "127.0.0.1:99999")
			}},
		{name: "a graph without a cycle runs", code: exitOK,
			args: func(t *testing.T, e *faultEnv) []string {
				return args("run", cedarApp(e, t, "cedar/inproc", `{"uid": {"type": "User", "id": "alice"}, "attrs": {}, "parents": [{"type": "Group", "id": "g"}]}`,
					`{"uid": {"type": "Group", "id": "g"}, "attrs": {}, "parents": []}`, photo, album), fast, "-o", e.out)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newFaultEnv(t)
			code, stdout, stderr := run(t, tc.args(t, e)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", code, tc.code, stdout, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if tc.code == exitUsage {
				if _, err := os.Stat(e.out); err == nil {
					t.Errorf("refused, yet a result file %s", e.out)
				}
				if strings.Contains(stdout, "req/s") {
					t.Errorf("refused, yet a table:\n%s", stdout)
				}
			}
			if tc.check != nil {
				tc.check(t, e, stdout, stderr)
			}
		})
	}
}

func entitiesFile(entities ...string) string { return "[\n " + strings.Join(entities, ",\n ") + "\n]" }
