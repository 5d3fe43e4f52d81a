package main

import (
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/workload"
)

// run's reference is written when asked for (a run does not build every workload to learn
// which engines have a version of each), and reaches both ways of asking with the lists built.
func TestRunLongHelpListsEachEnginesWorkloads(t *testing.T) {
	t.Setenv("COLUMNS", "100")
	want := []string{
		"Cedar version (" + strings.Join(workload.NamesWhere(engine.For("cedar").Written), ", ") + ")",
		"OpenFGA (" + strings.Join(workload.NamesWhere(engine.For("openfga").Written), ", ") + " have its version)",
	}
	for _, args := range [][]string{{"run", "--help-all"}, {"help", "run", "--help-all"}} {
		code, out, _ := run(t, args...)
		flat := strings.Join(strings.Fields(out), " ")
		for _, w := range want {
			if code != 0 || !strings.Contains(flat, w) {
				t.Errorf("authzbench %s (exit %d) does not say %q:\n%s", strings.Join(args, " "), code, w, out)
			}
		}
	}
}

// run --help-all tells users of every engine that reads files in its own forms what those forms
// are, from the engine's own words: a new engine's files reach the help without an edit here.
func TestRunHelpSaysEveryEnginesOwnFiles(t *testing.T) {
	t.Setenv("COLUMNS", "100")
	_, out, _ := run(t, "run", "--help-all")
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
			t.Errorf("run --help-all does not say %s's file forms (%q):\n%s", e.Name(), flags, out)
		}
	}
	if hinted == 0 {
		t.Fatal("no registered engine says its file forms: the test checks nothing")
	}
}

// flagEntries are the flags a help describes, each with its text joined from the lines it
// wraps over.
func flagEntries(help string) map[string]string {
	start := regexp.MustCompile(`^  (?:-\w, |    )(--[a-z0-9-]+)`)
	entries := map[string]string{}
	current := ""
	for _, line := range strings.Split(help, "\n") {
		switch m := start.FindStringSubmatch(line); {
		case m != nil:
			current = m[1]
			entries[current] = strings.TrimSpace(line)
		case current != "" && strings.HasPrefix(line, "        "):
			entries[current] += " " + strings.TrimSpace(line)
		default:
			current = ""
		}
	}
	return entries
}

// The help of --tls, --mtls and --server-cert offers them to the kinds that serve over TLS and
// to no kind that refuses them: openfga/server and spicedb/server hold the settings (they share
// the served kinds') but start their servers in clear. Each refusal names the flag given.
func TestRunHelpOffersTLSOnlyWhereItIsServed(t *testing.T) {
	t.Setenv("COLUMNS", "100")
	_, out, _ := run(t, "run", "--help-all")
	usage := flagEntries(out)
	for _, flag := range []string{"--tls", "--mtls", "--server-cert"} {
		line, ok := usage[flag]
		if !ok {
			t.Fatalf("run --help-all has no %s", flag)
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

// helpedCommands are the commands of authzbench whose help is its own: every one but the
// programs engines run inside it (their help is theirs) and cobra's help and completion.
func helpedCommands() []*cobra.Command {
	var out []*cobra.Command
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if c.DisableFlagParsing || c.Name() == "help" || c.Name() == "completion" {
			return
		}
		out = append(out, c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCommand(io.Discard, io.Discard))
	return out
}

// ownFlags are the flags c declares itself and shows, not the help flags every command has.
func ownFlags(c *cobra.Command) []string {
	var names []string
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && f.Name != "help" && f.Name != helpAllFlag {
			names = append(names, f.Name)
		}
	})
	return names
}

// Every flag of every command is in exactly one of its help's groups: a flag added without a
// group, or put in two, fails here (a planted one is found), and a group naming a flag no
// command has (one renamed) fails too.
func TestEveryFlagIsInExactlyOneGroup(t *testing.T) {
	commands := helpedCommands()
	exists := map[string]bool{}
	paths := map[string]bool{}
	for _, c := range commands {
		paths[helpPath(c)] = true
		for _, n := range ownFlags(c) {
			exists[n] = true
		}
	}
	for _, c := range commands {
		groups, ungrouped := flagGroupsOf(c)
		if len(ungrouped) > 0 {
			t.Errorf("authzbench %s: flags in no help group (helpgroups.go): %v", helpPath(c), ungrouped)
		}
		times := map[string]int{}
		for _, g := range groups {
			for _, n := range append(slices.Clone(g.flags), g.more...) {
				times[n]++
			}
		}
		for n, k := range times {
			if k != 1 {
				t.Errorf("authzbench %s: --%s is in %d groups", helpPath(c), n, k)
			}
		}
	}
	for path, of := range helpGroups {
		if !paths[path] {
			t.Errorf("helpGroups has %q, which is no command", path)
		}
		for _, g := range of() {
			for _, n := range append(slices.Clone(g.flags), g.more...) {
				if !exists[n] {
					t.Errorf("helpGroups[%q] group %q names --%s, which no command has", path, g.title, n)
				}
			}
		}
	}
	// A flag added to a command without a group is seen.
	c := newRootCommand(io.Discard, io.Discard)
	target, _, _ := c.Find([]string{"capacity"})
	target.Flags().Bool("planted", false, "a flag nobody grouped")
	if _, ungrouped := flagGroupsOf(target); !slices.Equal(ungrouped, []string{"planted"}) {
		t.Errorf("a planted flag: ungrouped %v, want [planted]", ungrouped)
	}
}

// helpOf is c's help as --help (or --help-all) writes it.
func helpOf(c *cobra.Command, all bool) string {
	var b strings.Builder
	c.SetOut(&b)
	c.Root().PersistentFlags().Set(helpAllFlag, strconv.FormatBool(all))
	c.HelpFunc()(c, nil)
	return b.String()
}

// --help fits a screen or two: under 80 lines at 100 columns for every command (the target for
// run), every line but a command to copy within the width, at 100 columns and at 80. --help-all
// is one flag away on every command, whatever arguments the command wants.
func TestHelpFitsItsLineBudget(t *testing.T) {
	for _, columns := range []int{100, 80} {
		t.Setenv("COLUMNS", strconv.Itoa(columns))
		for _, c := range helpedCommands() {
			out := helpOf(c, false)
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if columns == 100 && len(lines) >= 80 {
				t.Errorf("authzbench %s --help: %d lines at 100 columns, want under 80:\n%s", helpPath(c), len(lines), out)
			}
			// Examples and usage lines are commands to copy, kept whole on their lines.
			inExamples := false
			for _, l := range lines {
				switch l {
				case "Examples:":
					inExamples = true
				case "Usage:":
					inExamples = false
				}
				if !inExamples && !strings.HasPrefix(l, "  authzbench ") && len([]rune(l)) > columns {
					t.Errorf("authzbench %s --help at %d columns: a line of %d: %q", helpPath(c), columns, len([]rune(l)), l)
				}
			}
			if full := helpOf(c, true); len(full) < len(out)*9/10 {
				t.Errorf("authzbench %s --help-all: %d bytes against --help's %d:\n%s", helpPath(c), len(full), len(out), full)
			}
		}
	}
	for _, args := range [][]string{{"compare", "--help-all"}, {"history", "--help-all"}, {"history", "gate", "--help-all"}} {
		if code, out, stderr := run(t, args...); code != 0 || stderr != "" || !strings.Contains(out, "Usage:") {
			t.Errorf("authzbench %s: exit %d, stderr %q, stdout:\n%s", strings.Join(args, " "), code, stderr, out)
		}
	}
}

// run --help groups its flags by task, describes each group's main flags and names the rest;
// --help-all describes every flag of every command in full, the words a group's heading says
// taken from the start of its flags' texts.
func TestHelpGroupsByTaskAndHelpAllSaysEveryFlagInFull(t *testing.T) {
	t.Setenv("COLUMNS", "100")
	_, short, _ := run(t, "run", "--help")
	for _, heading := range []string{"What to measure:", "Your own files:", "Load:", "Servers:", "TLS and HTTP/2:", "The http target:", "Outputs:", "Decision-log replay:"} {
		if !strings.Contains(short, "\n"+heading) {
			t.Errorf("run --help has no group %q:\n%s", heading, short)
		}
	}
	if !strings.Contains(short, "  More: --rates, --load-points, --stages") || !strings.Contains(short, "authzbench run --help-all: every flag in full") {
		t.Errorf("run --help does not name the flags it leaves to --help-all, or --help-all itself:\n%s", short)
	}
	if !strings.Contains(short, "  # Your own policy, data and inputs") {
		t.Errorf("run --help has no commented example of the user's own policy:\n%s", short)
	}
	for _, c := range helpedCommands() {
		entries := flagEntries(helpOf(c, true))
		groups, _ := flagGroupsOf(c)
		for _, g := range groups {
			for _, n := range append(slices.Clone(g.flags), g.more...) {
				f := c.LocalFlags().Lookup(n)
				_, usage := pflag.UnquoteUsage(f)
				for _, s := range g.strip {
					usage = strings.TrimPrefix(usage, s)
				}
				entry, ok := entries["--"+n]
				if !ok || !strings.Contains(entry, strings.Join(strings.Fields(usage), " ")) {
					t.Errorf("authzbench %s --help-all: --%s is not described in full: %q, want %q", helpPath(c), n, entry, usage)
				}
			}
		}
	}
}

// A switch that applies only with --url (every kind refuses it alone) is still offered by the
// kinds that take it: the help of --keep-written and --spicedb-overwrite named no kind, and read
// ": with --url, ...".
func TestRunHelpOffersURLSwitchesToTheirKinds(t *testing.T) {
	t.Setenv("COLUMNS", "100")
	_, out, _ := run(t, "run", "--help-all")
	usage := flagEntries(out)
	for flag, kinds := range map[string]string{"--keep-written": "openfga/server and spicedb/server: with --url", "--spicedb-overwrite": "spicedb/server: with --url"} {
		line, ok := usage[flag]
		if !ok {
			t.Fatalf("run --help-all has no %s", flag)
		}
		if !strings.Contains(line, kinds) {
			t.Errorf("%s help does not offer it to %q:\n%s", flag, kinds, line)
		}
	}
}

// Every target option whose help names the kinds taking it names some, with every engine
// linked: spicedb_overwrite, a switch its one kind refuses without a url, read ": with --url".
func TestEveryOptionsHelpNamesItsKinds(t *testing.T) {
	checked := 0
	for _, o := range kinds.Options() {
		if !strings.Contains(o.Help, "{kinds") {
			continue
		}
		checked++
		if got := o.Usage(); strings.HasPrefix(got, ":") || strings.Contains(got, " : ") || strings.Contains(got, "{kinds") {
			t.Errorf("--%s usage %q names no kind", o.Flag, got)
		}
	}
	if o, _ := kinds.LookupOption("spicedb_overwrite"); !strings.HasPrefix(o.Usage(), "spicedb/server") {
		t.Errorf("--spicedb-overwrite usage %q: want it offered to spicedb/server", o.Usage())
	}
	if checked == 0 {
		t.Fatal("no option names its kinds: the test checks nothing")
	}
}

// A folding group names a family of three or more neighbouring flags once, by their prefix; two
// of a family, or a group that does not fold, keep every name.
func TestFoldedFlagsNameAFamilyOnce(t *testing.T) {
	more := []string{"port", "openfga-bin", "openfga-api", "decision-logs", "decision-log-mask", "decision-log-service",
		"datastore", "datastore-uri", "datastore-overwrite"}
	got := strings.Join(foldedFlags(more, true), ", ")
	if want := "--port, --openfga-bin, --openfga-api, --decision-log*, --datastore*"; got != want {
		t.Errorf("folded: %s, want %s", got, want)
	}
	if got := foldedFlags(more, false); len(got) != len(more) || got[3] != "--decision-logs" {
		t.Errorf("not folding: %v", got)
	}
}
