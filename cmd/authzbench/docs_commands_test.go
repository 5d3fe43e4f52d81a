package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/authzbench/authzbench/internal/doctables"
)

// pendingDocCommands are commands the docs show before the code that takes them has landed.
// Each must still fail the check below, so an entry cannot outlive the work it waits for: once
// that work is merged the test names the entry to delete, and the list is empty again.
var pendingDocCommands = []string{}

// argsAfterDashDash names the commands whose arguments after "--" are another command's flags:
// ab passes them to both sides' runs.
var argsAfterDashDash = map[string]string{"ab": "run"}

// TestDocCommandsExist reads every `authzbench ...` command README.md and docs/ show, in code
// blocks and inline code, and checks it against the command tree the binary builds: its
// subcommand exists, and so does each flag it gives, on that subcommand. A flag renamed or
// dropped in the code then fails here, in the commit that does it, as a drifted table fails
// TestDocTables.
func TestDocCommandsExist(t *testing.T) {
	pages := docPages(t)
	checked := 0
	pendingSeen := map[string]bool{}
	for _, page := range pages {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range shownCommands(string(raw)) {
			checked++
			err := checkShownCommand(c.args)
			key := strings.Join(c.args, " ")
			if slices.Contains(pendingDocCommands, key) {
				pendingSeen[key] = true
				if err == nil {
					t.Errorf("%s:%d: authzbench %s now works: delete it from pendingDocCommands", page, c.line, key)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s:%d: authzbench %s: %v", page, c.line, key, err)
			}
		}
	}
	for _, p := range pendingDocCommands {
		if !pendingSeen[p] {
			t.Errorf("pendingDocCommands holds %q, which no page shows: delete it", p)
		}
	}
	// README.md alone shows dozens; a count this low means the commands are no longer found.
	if checked < 50 {
		t.Fatalf("found %d commands in README.md and docs/: the finder is broken", checked)
	}
	t.Logf("checked %d commands on %d pages, %d of them pending", checked, len(pages), len(pendingSeen))
}

// The check catches what it exists to catch: a flag that is not the subcommand's, one that is
// another subcommand's, a subcommand that does not exist, and run's flags after ab's "--".
func TestDocCommandCheckFindsBadFlags(t *testing.T) {
	page := "Run it:\n\n```sh\n" +
		"bin/authzbench run --target opa/server --workers 8 --wrokers 8   # planted\n" +
		"authzbench capacity --workload rbac \\\n  --repeat 3\n" +
		"authzbench report r.json --format markdown | head > out.md\n" +
		"authzbench ab --policy-a a.rego --policy-b b.rego -- --target opa/server --step 1s\n" +
		"```\n\nor `authzbench bench --target opa/server`, or `go run ./cmd/authzbench run -o r.json --fail-on x`.\n" +
		"Not commands: `authzbench`, `authzbench ...`, `cmd/authzbench`, `authzbench-opa eval -d x.rego`, results/authzbench-1.json.\n"
	got := map[string]string{}
	for _, c := range shownCommands(page) {
		err := checkShownCommand(c.args)
		if err == nil {
			got[strings.Join(c.args, " ")] = ""
			continue
		}
		got[strings.Join(c.args, " ")] = err.Error()
	}
	want := map[string]string{
		"run --target opa/server --workers 8 --wrokers 8":                         "unknown flag --wrokers",
		"capacity --workload rbac --repeat 3":                                     "unknown flag --repeat",
		"report r.json --format markdown":                                         "",
		"ab --policy-a a.rego --policy-b b.rego -- --target opa/server --step 1s": "unknown flag --step",
		"bench --target opa/server":                                               `unknown command "bench"`,
		"run -o r.json --fail-on x":                                               "unknown flag --fail-on",
	}
	if len(got) != len(want) {
		t.Errorf("found %d commands, want %d: %q", len(got), len(want), got)
	}
	for cmd, msg := range want {
		g, ok := got[cmd]
		switch {
		case !ok:
			t.Errorf("command %q not found in the page", cmd)
		case msg == "" && g != "":
			t.Errorf("%q: got error %q, want none", cmd, g)
		case msg != "" && !strings.Contains(g, msg):
			t.Errorf("%q: got %q, want an error containing %q", cmd, g, msg)
		}
	}
}

// TestDocExcerpts checks every excerpt of a table (README.md's compact quickstart) against
// what its command prints now: each row must be one of that table's rows, cell for cell.
func TestDocExcerpts(t *testing.T) {
	pages := docPages(t)
	found := 0
	for _, page := range pages {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		excerpts, err := doctables.Excerpts(string(raw))
		if err != nil {
			t.Errorf("%s: %v", page, err)
			continue
		}
		for _, e := range excerpts {
			found++
			out, err := renderDocBlock(doctables.Block{Args: e.Args})
			if err != nil {
				t.Errorf("%s:%d: authzbench %s: %v", page, e.Line, e.Command(), err)
				continue
			}
			for _, err := range e.Check(out) {
				t.Errorf("%s: %v", page, err)
			}
		}
	}
	if found == 0 {
		t.Fatal("no excerpt in README.md or docs/: the README's compact table lost its marker")
	}
}

// docPages are README.md and every page under docs/, named from the repository root.
func docPages(t *testing.T) []string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	pages := []string{filepath.Join(root, "README.md")}
	err = filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			pages = append(pages, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range pages {
		if rel, err := filepath.Rel(root, p); err == nil {
			pages[i] = rel
		}
	}
	// Relative names read better in failures; the test reads them from the repository root.
	t.Chdir(root)
	return pages
}

// shownCommand is one authzbench command a page shows: its arguments after the program's name.
type shownCommand struct {
	line int
	args []string
}

// fenceLine opens or closes a fenced code block.
var fenceLine = regexp.MustCompile("^\\s*(```|~~~)")

// shownCommands finds the authzbench commands in a page: on every line of its code blocks
// (a line ending in a backslash continues on the next), and in its inline code spans.
func shownCommands(text string) []shownCommand {
	var out []shownCommand
	lines := strings.Split(text, "\n")
	inFence := false
	var prose strings.Builder // the text outside code blocks, line breaks kept for numbering
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if fenceLine.MatchString(line) {
			inFence = !inFence
			prose.WriteString("\n")
			continue
		}
		if !inFence {
			prose.WriteString(line + "\n")
			continue
		}
		first := i
		for strings.HasSuffix(strings.TrimRight(line, " "), "\\") && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(strings.TrimRight(line, " "), "\\") + " " + lines[i]
			prose.WriteString("\n")
		}
		prose.WriteString("\n")
		for _, args := range commandsIn(line) {
			out = append(out, shownCommand{line: first + 1, args: args})
		}
	}
	// Inline code: a span between single backticks, within one paragraph.
	text = prose.String()
	for off := 0; ; {
		start := strings.IndexByte(text[off:], '`')
		if start < 0 {
			break
		}
		start += off
		end := strings.IndexByte(text[start+1:], '`')
		if end < 0 {
			break
		}
		end += start + 1
		span := text[start+1 : end]
		if strings.Contains(span, "\n\n") { // an unpaired backtick: resume after it
			off = start + 1
			continue
		}
		line := strings.Count(text[:start], "\n") + 1
		for _, args := range commandsIn(strings.ReplaceAll(span, "\n", " ")) {
			out = append(out, shownCommand{line: line, args: args})
		}
		off = end + 1
	}
	return out
}

// commandsIn returns the arguments of each authzbench command on a shell line: the words after
// the program's name (authzbench, bin/authzbench, ./authzbench, go run ./cmd/authzbench) up to
// the end of that command (|, &&, ;, a comment), redirections left out. A bare name with no
// subcommand after it is prose, not a command.
func commandsIn(line string) [][]string {
	words := shellWords(line)
	var out [][]string
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w.operator:
			continue
		case w.text == "authzbench" || w.text == "./authzbench" || strings.HasSuffix(w.text, "bin/authzbench"):
			if !commandStart(words, i) {
				continue
			}
		case strings.HasSuffix(w.text, "cmd/authzbench"):
			if i < 2 || words[i-2].text != "go" || words[i-1].text != "run" || !commandStart(words, i-2) {
				continue
			}
		default:
			continue
		}
		var args []string
		j := i + 1
		for ; j < len(words) && !words[j].control(); j++ {
			if words[j].redirect() {
				j++ // the file it names
				continue
			}
			args = append(args, words[j].text)
		}
		i = j
		if len(args) > 0 && !isPlaceholder(args[0]) { // "authzbench ..." names the program, no command
			out = append(out, args)
		}
	}
	return out
}

// commandStart says whether words[i] is where a command begins: first on its line, or after a
// control operator, with only a prompt, variable assignments or a wrapper (time, sudo, a YAML
// step's run:) before it. "the server authzbench started" is prose in a code block, not a
// command.
func commandStart(words []word, i int) bool {
	for j := i - 1; j >= 0; j-- {
		w := words[j]
		switch {
		case w.control():
			return true
		case w.operator:
			return false
		case assignment.MatchString(w.text), slices.Contains(commandWrappers, w.text):
		default:
			return false
		}
	}
	return true
}

var (
	assignment      = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)
	commandWrappers = []string{"$", "time", "sudo", "exec", "nohup", "env", "run:", "-", "command:"}
)

// word is a shell word, or an unquoted operator (operator true).
type word struct {
	text     string
	operator bool
}

func (w word) control() bool {
	return w.operator && (w.text == "|" || w.text == "||" || w.text == "&&" || w.text == ";" || w.text == "&" || w.text == "#")
}

func (w word) redirect() bool { return w.operator && !w.control() }

// shellWords splits a line as a shell would, enough to find a command's flags: single and
// double quotes, backslash escapes, the control operators and redirections, and a comment from
// an unquoted # to the end. A <word> in angle brackets is a placeholder, not a redirection.
func shellWords(line string) []word {
	var out []word
	var cur strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			out = append(out, word{text: cur.String()})
			cur.Reset()
			inWord = false
		}
	}
	placeholder := regexp.MustCompile(`^<[^<>\s]+>`)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'' || c == '"':
			end := strings.IndexByte(line[i+1:], c)
			if end < 0 {
				end = len(line) - i - 1
			}
			cur.WriteString(line[i+1 : i+1+end])
			inWord = true
			i += end + 1
		case c == '\\' && i+1 < len(line):
			cur.WriteByte(line[i+1])
			inWord = true
			i++
		case c == ' ' || c == '\t':
			flush()
		case c == '#' && !inWord:
			out = append(out, word{text: "#", operator: true})
			return out
		case c == '<' && placeholder.MatchString(line[i:]):
			m := placeholder.FindString(line[i:])
			cur.WriteString(m)
			inWord = true
			i += len(m) - 1
		case c == '|' || c == '&' || c == ';' || c == '<' || c == '>':
			if c == '>' && inWord && (cur.String() == "2" || cur.String() == "1") {
				cur.Reset() // 2> and 1>: the descriptor is the operator's
				inWord = false
			}
			flush()
			op := string(c)
			if i+1 < len(line) && (line[i+1] == c || c == '>' && line[i+1] == '&') {
				op += string(line[i+1])
				i++
			}
			out = append(out, word{text: op, operator: true})
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	flush()
	return out
}

// docCommandTree is the command tree the binary builds, with the help flags and command cobra
// adds when it runs.
// It is built once: building it costs about as much as checking every command of every page.
var docCommandTree = sync.OnceValue(func() *cobra.Command {
	root := newRootCommand(io.Discard, io.Discard)
	root.InitDefaultHelpCmd()
	root.InitDefaultHelpFlag()
	return root
})

// checkShownCommand says what is wrong with an authzbench command a page shows: a subcommand
// that does not exist, or a flag its subcommand does not have. Values are not checked, only
// that each flag exists; a placeholder such as ... stands for the rest.
func checkShownCommand(args []string) error {
	root := docCommandTree()
	cmd := root
	i := 0
	for ; i < len(args) && !strings.HasPrefix(args[i], "-"); i++ {
		next := child(cmd, args[i])
		if next == nil {
			if cmd == root || !cmd.Runnable() {
				return fmt.Errorf("unknown command %q for %q", args[i], cmd.CommandPath())
			}
			break
		}
		cmd = next
	}
	if cmd.DisableFlagParsing { // an engine's own program (authzbench opa ...): its flags are its own
		return nil
	}
	for ; i < len(args); i++ {
		a := strings.Trim(args[i], "[]")
		if a == "--" {
			other, ok := argsAfterDashDash[cmd.Name()]
			if !ok {
				return nil
			}
			return checkShownCommand(append([]string{other}, args[i+1:]...))
		}
		if !strings.HasPrefix(a, "-") || a == "-" || isPlaceholder(a) {
			continue
		}
		f, err := lookupFlag(cmd, a)
		if err != nil {
			return err
		}
		if !strings.Contains(a, "=") && f.NoOptDefVal == "" && len(strings.TrimLeft(a, "-")) > 0 && (strings.HasPrefix(a, "--") || len(a) == 2) {
			i++ // its value
		}
	}
	return nil
}

func isPlaceholder(a string) bool { return strings.Trim(a, ".…") == "" }

// child is cmd's subcommand called name (or one of its aliases), or nil.
func child(cmd *cobra.Command, name string) *cobra.Command {
	for _, c := range cmd.Commands() {
		if c.Name() == name || slices.Contains(c.Aliases, name) {
			return c
		}
	}
	return nil
}

// lookupFlag finds a flag as given on a command line (--name, --name=value, -n) among cmd's
// own and inherited flags.
func lookupFlag(cmd *cobra.Command, given string) (*pflag.Flag, error) {
	cmd.InitDefaultHelpFlag()
	sets := []*pflag.FlagSet{cmd.Flags(), cmd.InheritedFlags(), cmd.PersistentFlags()}
	if name, ok := strings.CutPrefix(given, "--"); ok {
		name, _, _ = strings.Cut(name, "=")
		for _, s := range sets {
			if f := s.Lookup(name); f != nil {
				return f, nil
			}
		}
		return nil, fmt.Errorf("unknown flag --%s for %q%s", name, cmd.CommandPath(), suggest(cmd, name))
	}
	short := given[1:2]
	for _, s := range sets {
		if f := s.ShorthandLookup(short); f != nil {
			return f, nil
		}
	}
	return nil, fmt.Errorf("unknown shorthand flag -%s for %q", short, cmd.CommandPath())
}

// suggest names the subcommand's flags closest to a missing one, for the reader fixing a page.
func suggest(cmd *cobra.Command, name string) string {
	var near []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if strings.Contains(f.Name, name) || strings.Contains(name, f.Name) || levenshtein(f.Name, name) <= len(name)/3 {
			near = append(near, "--"+f.Name)
		}
	})
	if len(near) == 0 {
		return ""
	}
	return " (did you mean " + strings.Join(near, " or ") + "?)"
}

func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
