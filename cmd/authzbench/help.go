package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/authzbench/authzbench/internal/textwrap"
)

// Every command's help has one shape, by task rather than by alphabet: what the command does in
// a few lines, commented examples, the usage line, then its flags in groups (what to measure,
// your own files, load, outputs ...), each group's shared words said once in its heading, and
// the exit statuses. --help shows each group's main flags and names the rest; --help-all
// describes every flag and adds the rest of the command's reference (the paragraphs of its
// long text after the first). Both are wrapped to the terminal.

// helpAllFlag is the flag that asks for the whole reference.
const helpAllFlag = "help-all"

// defaultHelpWidth is the width help is wrapped to when neither $COLUMNS nor a terminal says.
const defaultHelpWidth = 100

// errHelpShown ends a command whose --help-all has been answered: the command does not run,
// and the process exits 0 without a message.
var errHelpShown = errors.New("help shown")

// flagGroup is a set of a command's flags that serve one task.
type flagGroup struct {
	title string
	// intro is what the group's flags share, said once in its heading rather than in each
	// flag's text; strip are the words each flag's own text begins with that intro says.
	intro string
	strip []string
	// flags are described in --help; more are named there, and described in --help-all.
	flags, more []string
	// fold: the short help names a run of More flags of one family by its prefix (foldedFlags).
	fold bool
}

// helpWidth is the width help is wrapped to: $COLUMNS, else the terminal's w writes to, else
// defaultHelpWidth; never so narrow that a flag's text has no room.
func helpWidth(w io.Writer) int {
	width := 0
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		width = n
	} else if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if n, _, err := term.GetSize(int(f.Fd())); err == nil && n > 0 {
			width = n
		}
	}
	if width == 0 {
		width = defaultHelpWidth
	}
	return max(width, 40)
}

// installHelp gives every command of root the help shape above, and --help-all.
func installHelp(root *cobra.Command) {
	all := root.PersistentFlags().Bool(helpAllFlag, false, "every flag in full, and the rest of the command's reference")
	root.SetHelpFunc(func(c *cobra.Command, _ []string) {
		writeHelp(c.OutOrStdout(), c, *all, helpWidth(c.OutOrStdout()))
	})
	// --help-all is answered before anything a command checks of its arguments or runs.
	var wrapArgs func(*cobra.Command)
	wrapArgs = func(c *cobra.Command) {
		if check := c.Args; check != nil {
			c.Args = func(cmd *cobra.Command, args []string) error {
				if *all {
					return nil
				}
				return check(cmd, args)
			}
		}
		for _, sub := range c.Commands() {
			wrapArgs(sub)
		}
	}
	wrapArgs(root)
	counts := root.PersistentPreRunE
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		// cobra's help command shows the help of the command it names, in full with --help-all.
		if *all && cmd.Name() != "help" {
			cmd.HelpFunc()(cmd, args)
			return errHelpShown
		}
		return counts(cmd, args)
	}
}

// writeHelp writes c's help, every flag in full with all, wrapped to width.
func writeHelp(w io.Writer, c *cobra.Command, all bool, width int) {
	var b strings.Builder
	paras := paragraphs(c.Long)
	if len(paras) == 0 {
		paras = []string{c.Short}
	}
	b.WriteString(reflow(paras[0], width))
	if c.Example != "" {
		b.WriteString("\nExamples:\n" + strings.TrimRight(c.Example, "\n") + "\n")
	}
	b.WriteString("\nUsage:\n")
	if c.Runnable() {
		b.WriteString("  " + c.UseLine() + "\n")
	}
	if c.HasAvailableSubCommands() {
		b.WriteString("  " + c.CommandPath() + " [command]\n")
		b.WriteString("\nCommands:\n")
		subs := c.Commands()
		pad := 0
		for _, s := range subs {
			if s.IsAvailableCommand() {
				pad = max(pad, len(s.Name()))
			}
		}
		for _, s := range subs {
			if s.IsAvailableCommand() {
				b.WriteString(hanging(fmt.Sprintf("  %-*s  ", pad, s.Name()), s.Short, width))
			}
		}
	}
	groups, ungrouped := flagGroupsOf(c)
	if len(ungrouped) > 0 {
		groups = append(groups, flagGroup{title: "Flags", flags: ungrouped})
	}
	column := flagColumn(c, groups, all)
	more := false // whether --help-all says more than this help
	for _, g := range groups {
		heading := g.title
		if g.intro != "" {
			heading += ": " + g.intro
		}
		b.WriteString("\n" + textwrap.Fill(heading, width, "  "))
		shown := g.flags
		if all {
			shown = append(slices.Clone(g.flags), g.more...)
		}
		for _, name := range shown {
			entry, cut := flagEntry(c.LocalFlags().Lookup(name), g.strip, column, width, all)
			b.WriteString(entry)
			more = more || cut
		}
		if !all && len(g.more) > 0 {
			more = true
			names := foldedFlags(g.more, g.fold)
			label := "  More: "
			if len(g.flags) == 0 {
				label = "  " // a group only named here
			}
			b.WriteString(hanging(label, strings.Join(names, ", "), width))
		}
	}
	for _, p := range paras[1:] {
		if all || strings.HasPrefix(p, "Exit status") {
			b.WriteString("\n" + reflow(p, width))
		} else {
			more = true
		}
	}
	b.WriteString("\n")
	if more && !all {
		b.WriteString(textwrap.Fill(c.CommandPath()+" --help-all: every flag in full, and the rest of what "+c.Name()+" does.", width, ""))
	}
	if c.HasAvailableSubCommands() {
		b.WriteString(textwrap.Fill(c.CommandPath()+" [command] --help: a command's own help; --help-all: every flag in full.", width, ""))
	}
	io.WriteString(w, b.String())
}

// flagGroupsOf is c's groups (helpGroups), and its flags no group holds, which the help still
// shows (and the help's test refuses).
func flagGroupsOf(c *cobra.Command) (groups []flagGroup, ungrouped []string) {
	grouped := map[string]bool{}
	has := func(name string) bool {
		f := c.LocalFlags().Lookup(name)
		return f != nil && !f.Hidden
	}
	if of := helpGroups[helpPath(c)]; of != nil {
		// A group shared by commands shows, of its flags, those this one has.
		for _, g := range of() {
			g.flags, g.more = slices.DeleteFunc(g.flags, func(n string) bool { return !has(n) }),
				slices.DeleteFunc(g.more, func(n string) bool { return !has(n) })
			for _, n := range append(slices.Clone(g.flags), g.more...) {
				grouped[n] = true
			}
			if len(g.flags)+len(g.more) > 0 {
				groups = append(groups, g)
			}
		}
	}
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && !grouped[f.Name] && f.Name != "help" && f.Name != helpAllFlag {
			ungrouped = append(ungrouped, f.Name)
		}
	})
	return groups, ungrouped
}

// helpPath is c's path below the root ("history gate"); "" for the root.
func helpPath(c *cobra.Command) string {
	return strings.TrimSpace(strings.TrimPrefix(c.CommandPath(), c.Root().Name()))
}

// flagColumn is where the flags' texts begin: after the longest name shown, within reason.
func flagColumn(c *cobra.Command, groups []flagGroup, all bool) int {
	column := 0
	for _, g := range groups {
		names := g.flags
		if all {
			names = append(slices.Clone(g.flags), g.more...)
		}
		for _, n := range names {
			column = max(column, utf8.RuneCountInString(flagName(c.LocalFlags().Lookup(n)))+2)
		}
	}
	return min(column, 32)
}

// flagName is the flag as it is typed, with what it takes: "-o, --out string".
func flagName(f *pflag.Flag) string {
	name := "      --" + f.Name
	if f.Shorthand != "" {
		name = "  -" + f.Shorthand + ", --" + f.Name
	}
	varname, _ := pflag.UnquoteUsage(f)
	switch varname {
	case "stringArray":
		varname = "string" // repeatable, as its text says
	case "float64Slice":
		varname = "floats"
	}
	if varname != "" {
		name += " " + varname
	}
	return name
}

// flagEntry is one flag, its text from column on, wrapped to width; its text starts on a line
// of its own when the name reaches the column. Without all, a text too long for its line is
// cut to its first clause (the rest is --help-all's), and cut says so.
func flagEntry(f *pflag.Flag, strip []string, column, width int, all bool) (entry string, cut bool) {
	_, usage := pflag.UnquoteUsage(f)
	for _, s := range strip {
		usage = strings.TrimPrefix(usage, s)
	}
	def := ""
	if d := defaultOf(f); d != "" {
		def = " (default " + d + ")"
	}
	if !all {
		short := brief(usage, width-column-utf8.RuneCountInString(def))
		usage, cut = short, short != usage
	}
	usage += def
	name := flagName(f)
	if n := utf8.RuneCountInString(name); n+2 > column {
		return name + "\n" + hanging(strings.Repeat(" ", column), usage, width), cut
	}
	return hanging(name+strings.Repeat(" ", column-utf8.RuneCountInString(name)), usage, width), cut
}

// brief is a flag's text made to fit room where it can: its first clause (up to a "; " outside
// brackets), then without its bracketed asides and examples; what still does not fit is
// wrapped whole.
func brief(usage string, room int) string {
	if utf8.RuneCountInString(usage) <= room {
		return usage
	}
	depth := 0
	for i, r := range usage {
		switch r {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		}
		if r == ';' && depth == 0 {
			usage = usage[:i]
			break
		}
	}
	if utf8.RuneCountInString(usage) <= room {
		return usage
	}
	// An aside is a bracket opened after a space; one inside a word ("pNN=DURATION[,errors=N%]")
	// is part of what the flag takes, and a default said in words is worth its room: both stay.
	var b strings.Builder
	depth, prev := 0, ' '
	for i, r := range usage {
		switch {
		case depth == 0 && prev == ' ' && (r == '(' || r == '{' || r == '[') && !strings.HasPrefix(usage[i:], "(default"):
			// The aside goes with the space before it: "file (JSON)," reads "file,".
			trimmed := strings.TrimRight(b.String(), " ")
			b.Reset()
			b.WriteString(trimmed)
			depth++
		case depth > 0 && (r == '(' || r == '{' || r == '['):
			depth++
		case depth > 0 && (r == ')' || r == '}' || r == ']'):
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
		prev = r
	}
	return strings.TrimRight(strings.Join(strings.Fields(b.String()), " "), ":,")
}

// defaultOf is the flag's default as pflag's own usage says it, "" for a zero value.
func defaultOf(f *pflag.Flag) string {
	switch f.DefValue {
	case "", "0", "0s", "false", "[]", "<nil>":
		return ""
	}
	if f.Value.Type() == "string" {
		return strconv.Quote(f.DefValue)
	}
	return f.DefValue
}

// hanging writes text after lead, wrapped to width, its later lines indented to lead's width.
func hanging(lead, text string, width int) string {
	indent := strings.Repeat(" ", utf8.RuneCountInString(lead))
	room := width - len(indent)
	if room < 20 {
		// No room beside the lead: the text goes under it.
		return strings.TrimRight(lead, " ") + "\n" + textwrap.Fill(text, width, "        ")
	}
	lines := strings.Split(strings.TrimRight(textwrap.Fill(text, room, ""), "\n"), "\n")
	var b strings.Builder
	for i, l := range lines {
		if i == 0 {
			b.WriteString(lead + l + "\n")
		} else {
			b.WriteString(indent + l + "\n")
		}
	}
	return b.String()
}

// paragraphs splits a long text at its blank lines.
func paragraphs(text string) []string {
	var out []string
	for _, p := range strings.Split(strings.TrimSpace(text), "\n\n") {
		if p = strings.Trim(p, "\n"); strings.TrimSpace(p) != "" {
			out = append(out, p)
		}
	}
	return out
}

// reflow wraps a paragraph of prose to width; one laid out by hand (a line that starts with
// spaces: a list, a table of examples) is kept as it is.
func reflow(p string, width int) string {
	for _, line := range strings.Split(p, "\n") {
		if strings.HasPrefix(line, " ") {
			return p + "\n"
		}
	}
	return textwrap.Fill(p, width, "")
}

// foldedFlags names a group's More flags for the short help; a group that folds names a run of
// three or more neighbours sharing their first word (--decision-logs, --decision-log-reporting,
// ...; --datastore, --datastore-uri, ...) once, by their common prefix: "--decision-log*". The
// family is what a reader looks for there; --help-all names each in full.
func foldedFlags(more []string, fold bool) []string {
	firstWord := func(s string) string { w, _, _ := strings.Cut(s, "-"); return w }
	var names []string
	for i := 0; i < len(more); {
		j := i + 1
		for fold && j < len(more) && firstWord(more[j]) == firstWord(more[i]) {
			j++
		}
		if j-i < 3 {
			names = append(names, "--"+more[i])
			i++
			continue
		}
		prefix := more[i]
		for _, m := range more[i+1 : j] {
			n := 0
			for n < len(prefix) && n < len(m) && prefix[n] == m[n] {
				n++
			}
			prefix = prefix[:n]
		}
		names = append(names, "--"+strings.TrimRight(prefix, "-")+"*")
		i = j
	}
	return names
}
