package main

import (
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/workload"
)

// run's long help is written when asked for (a run does not build every workload to learn
// which engines have a version of each), and reaches both ways of asking with the lists built.
func TestRunLongHelpListsEachEnginesWorkloads(t *testing.T) {
	want := []string{
		"Cedar version (" + strings.Join(workload.NamesWhere(engine.For("cedar").Written), ", ") + ")",
		"OpenFGA (" + strings.Join(workload.NamesWhere((*workload.Workload).HasOpenFGA), ", ") + " have its version)",
	}
	for _, args := range [][]string{{"run", "--help"}, {"help", "run"}} {
		_, out, _ := run(t, args...)
		flat := strings.Join(strings.Fields(out), " ")
		for _, w := range want {
			if !strings.Contains(flat, w) {
				t.Errorf("authzbench %s does not say %q:\n%s", strings.Join(args, " "), w, out)
			}
		}
	}
}

// run --help tells users of every engine that reads files in its own forms what those forms
// are, from the engine's own words: a new engine's files reach the help without an edit here.
func TestRunHelpSaysEveryEnginesOwnFiles(t *testing.T) {
	_, out, _ := run(t, "run", "--help")
	flat := strings.Join(strings.Fields(out), " ")
	hinted := 0
	for _, e := range engine.All() {
		h, ok := e.(engine.FilesHinted)
		if !ok {
			continue
		}
		hinted++
		flags, _ := h.FilesHint()
		if !strings.Contains(flat, strings.Join(strings.Fields(flags), " ")) {
			t.Errorf("run --help does not say %s's file forms (%q):\n%s", e.Name(), flags, out)
		}
	}
	if hinted == 0 {
		t.Fatal("no registered engine says its file forms: the test checks nothing")
	}
}

// The help of --tls, --mtls and --server-cert offers them to the kinds that serve over TLS and
// to no kind that refuses them: openfga/server and spicedb/server hold the settings (they share
// the served kinds') but start their servers in clear. Each refusal names the flag given.
func TestRunHelpOffersTLSOnlyWhereItIsServed(t *testing.T) {
	_, out, _ := run(t, "run", "--help")
	usage := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) > 1 && strings.HasPrefix(fields[0], "--") {
			usage[fields[0]] = line
		}
	}
	for _, flag := range []string{"--tls", "--mtls", "--server-cert"} {
		line, ok := usage[flag]
		if !ok {
			t.Fatalf("run --help has no %s", flag)
		}
		for _, offered := range []string{"opa/server,", "cedar/server,", "opa/extauthz,"} {
			if !strings.Contains(line, offered) {
				t.Errorf("%s help does not offer %s:\n%s", flag, strings.TrimSuffix(offered, ","), line)
			}
		}
		for _, refused := range []string{"openfga/server", "spicedb/server"} {
			if strings.Contains(line, refused) {
				t.Errorf("%s help offers %s, which refuses it:\n%s", flag, refused, line)
			}
		}
	}
	// mtls_authz is OPA's authorization policy in front of its REST API: the one kind whose
	// server has one is offered it.
	if line := usage["--mtls-authz"]; !strings.Contains(line, " opa/server only (") {
		t.Errorf("--mtls-authz help does not offer it to opa/server alone:\n%s", line)
	}
	for _, tc := range []struct{ target, flag string }{
		{"openfga/server", "--tls"}, {"openfga/server", "--mtls"}, {"spicedb/server", "--mtls"},
	} {
		code, _, stderr := run(t, "run", "--target", tc.target, tc.flag, "--requests", "1")
		if code != 2 || !strings.Contains(stderr, tc.flag+": ") {
			t.Errorf("run --target %s %s: exit %d, stderr %q; want 2, the refusal naming %s", tc.target, tc.flag, code, stderr, tc.flag)
		}
	}
}

// A switch that applies only with --url (every kind refuses it alone) is still offered by the
// kinds that take it: the help of --keep-written and --spicedb-overwrite named no kind, and read
// ": with --url, ...".
func TestRunHelpOffersURLSwitchesToTheirKinds(t *testing.T) {
	_, out, _ := run(t, "run", "--help")
	for flag, kinds := range map[string]string{"--keep-written": "openfga/server and spicedb/server: with --url", "--spicedb-overwrite": "spicedb/server: with --url"} {
		i := strings.Index(out, "  "+flag+" ")
		if i < 0 {
			t.Fatalf("run --help has no %s", flag)
		}
		line, _, _ := strings.Cut(out[i:], "\n")
		if !strings.Contains(line, kinds) {
			t.Errorf("%s help does not offer it to %q:\n%s", flag, kinds, line)
		}
	}
}
