package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/authzbench/authzbench/internal/compare"
	"github.com/authzbench/authzbench/internal/fit"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/outputs"
	"github.com/authzbench/authzbench/internal/result"
)

// abSide is one pair of --X-a/--X-b flags: what differs between the two sides, as the run
// flag it becomes.
type abSide struct {
	name    string // "opa-bin": flags --opa-bin-a and --opa-bin-b
	runFlag string // the run flag each side's value becomes
	usage   string
	// oneSided: a side without a value runs run's default (the OPA linked in, for --opa-bin).
	oneSided bool
	// differs says what the sides differ in, so that compare matches their runs across it.
	workload, target bool
	a, b             []string
}

type abFlags struct {
	sides        []*abSide
	repeat       int
	outA, outB   string
	force        bool
	compareFlags compareFlags
}

func newABCommand(stdout, stderr io.Writer) *cobra.Command {
	f := abFlags{sides: []*abSide{
		{name: "opa-bin", runFlag: "--opa-bin", usage: "opa binary for opa/cli and opa/server on side %s (default: the OPA linked in)", oneSided: true},
		{name: "policy", runFlag: "--policy", usage: "Rego policy file or directory of side %s, repeatable", workload: true},
		{name: "workload", runFlag: "--workload", usage: "built-in workload of side %s", workload: true},
		{name: "target", runFlag: "--target", usage: "target of side %s", target: true},
		{name: "file", runFlag: "--file", usage: "scenario file of side %s", workload: true, target: true},
	}}
	cmd := &cobra.Command{
		Use:   "ab [flags] [-- run flags for both sides]",
		Short: "Run two sides alternately (A B A B …) in one session and compare them",
		Long: `ab measures two sides that differ in one thing — two OPA binaries, two policies, two
workloads, two targets or two scenario files — taking turns in one session: A, B, A, B, … for
--repeat turns each, every turn one repetition of 'authzbench run' (its servers started and
stopped each turn). Taking turns spreads the machine's drift over both sides alike, which
measuring one side and then the other does not.

It writes one result file per side (--out-a, --out-b), each with all its side's repetitions
merged, and prints their comparison as 'authzbench compare' does, with the same --format,
--fail-on and --alpha. Everything after -- is passed to every turn's run (--duration, --workers,
--inputs, --url, …); ab sets --repeat, --out and --format of each turn itself. Both sides'
flags and files are checked before the first turn. If the session stops early (Ctrl-C, a turn
that fails), the turns that finished are kept in --out-a and --out-b, and so is what a failed
turn measured (wrong decisions, errors), its table shown; both files are marked with why it
stopped ("interrupted": true for Ctrl-C), and no comparison is made.` + outputRulesHelp + compareExitHelp,
		Example: `  # Two OPA versions, taking turns
  authzbench ab --opa-bin-a /usr/local/bin/opa-1.10 --opa-bin-b /usr/local/bin/opa-1.22 -- --target opa/server --workload rbac
  # A policy change as a CI gate: 6 turns a side, failing on a p99 10 % worse
  authzbench ab --policy-a main/authz.rego --policy-b pr/authz.rego --repeat 6 --fail-on 'p99>+10%' -- \
    --target opa/inproc --inputs inputs.jsonl --duration 5s
  # Two workloads on one target
  authzbench ab --workload-a rbac --workload-b risk -- --target opa/inproc --duration 2s`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAB(cmd, f, args, stdout, stderr)
		},
	}
	fl := cmd.Flags()
	for _, s := range f.sides {
		fl.StringArrayVar(&s.a, s.name+"-a", nil, fmt.Sprintf(s.usage, "A"))
		fl.StringArrayVar(&s.b, s.name+"-b", nil, fmt.Sprintf(s.usage, "B"))
	}
	fl.IntVar(&f.repeat, "repeat", 5, "turns per side; the test needs 4 a side to call a change at p ≤ 0.05")
	fl.StringVar(&f.outA, "out-a", "", "result file of side A (default results/ab-<time>-a.json)")
	fl.StringVar(&f.outB, "out-b", "", "result file of side B (default results/ab-<time>-b.json)")
	addForceFlag(fl, &f.force)
	f.compareFlags.add(cmd)
	markCounts(fl, "repeat")
	return cmd
}

// abOwned are the run flags ab sets for each turn itself.
var abOwned = []string{"--repeat", "--out", "-o", "--format", "--force", "--check-only"}

// abRefused are run's other outputs: every turn would write them again, each over the last.
var abRefused = []string{"--html", "--prometheus", "--cpuprofile"}

func runAB(cmd *cobra.Command, f abFlags, shared []string, stdout, stderr io.Writer) error {
	format, gate, err := f.compareFlags.parsed(cmd)
	if err != nil {
		return usageError(err)
	}
	if f.repeat < 1 {
		return usageError(fmt.Errorf("--repeat %d: want at least 1 turn per side", f.repeat))
	}
	for _, a := range shared {
		for _, out := range abRefused {
			if a == out || strings.HasPrefix(a, out+"=") {
				return usageError(fmt.Errorf("%s after --: ab writes one result per side (--out-a, --out-b) and no other file; render them with authzbench report", a))
			}
		}
		for _, owned := range abOwned {
			if a == owned || strings.HasPrefix(a, owned+"=") || (owned == "-o" && strings.HasPrefix(a, "-o") && !strings.HasPrefix(a, "--")) {
				return usageError(fmt.Errorf("%s after --: ab sets each turn's %s itself (--repeat for the turns, --out-a/--out-b for the results, --format for the comparison)", a, owned))
			}
		}
	}
	var argsA, argsB []string
	var opts compare.Options
	for _, s := range f.sides {
		if len(s.a) == 0 && len(s.b) == 0 {
			continue
		}
		if !s.oneSided && (len(s.a) == 0 || len(s.b) == 0) {
			return usageError(fmt.Errorf("--%s-a and --%s-b go together: give both sides", s.name, s.name))
		}
		for _, v := range s.a {
			argsA = append(argsA, s.runFlag, v)
		}
		for _, v := range s.b {
			argsB = append(argsB, s.runFlag, v)
		}
		opts.IgnoreWorkload = opts.IgnoreWorkload || s.workload
		opts.IgnoreTarget = opts.IgnoreTarget || s.target
	}
	if len(argsA) == 0 && len(argsB) == 0 {
		return usageError(errors.New("give what differs between the sides: --opa-bin-a/--opa-bin-b, --policy-a/--policy-b, " +
			"--workload-a/--workload-b, --target-a/--target-b or --file-a/--file-b"))
	}
	if strings.Join(argsA, "\x00") == strings.Join(argsB, "\x00") {
		return usageError(errors.New("the two sides are given alike: A and B would measure the same thing"))
	}
	opts.Alpha = f.compareFlags.alpha

	started := time.Now().UTC()
	stamp := started.Format("20060102-150405")
	outA, outB := f.outA, f.outB
	// Names ab chooses itself move aside from a session started in the same second.
	if outA == "" {
		outA = outputs.FreeName(filepath.Join("results", "ab-"+stamp+"-a.json"))
	}
	if outB == "" {
		outB = outputs.FreeName(filepath.Join("results", "ab-"+stamp+"-b.json"))
	}
	plan := outputs.Plan{Force: f.force}
	plan.Output("--out-a", outA)
	plan.Output("--out-b", outB)
	for _, s := range f.sides {
		if s.name == "policy" || s.name == "file" || s.name == "opa-bin" {
			plan.Input("--"+s.name+"-a", s.a...)
			plan.Input("--"+s.name+"-b", s.b...)
		}
	}
	if err := checkOutputs(&plan); err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	self, err := os.Executable()
	if err != nil {
		return &exitError{exitFailed, fmt.Errorf("ab: find authzbench itself to run each turn: %w", err)}
	}
	sides := [2][]string{argsA, argsB}
	outs := [2]string{outA, outB}
	// Both sides' flags and files are checked before the first turn, each by run itself, with
	// its side's result file as -o: a mistake on side B is found before side A has run.
	for i, side := range []string{"A", "B"} {
		args := append(append(append([]string{"run"}, sides[i]...), shared...), "--repeat", "1", "-o", outs[i], "--check-only")
		if f.force {
			args = append(args, "--force")
		}
		if _, err := runTurn(self, args, stderr); err != nil {
			if ctx.Err() != nil {
				return &exitError{exitInterrupted, fmt.Errorf("ab: interrupted while checking side %s", side)}
			}
			return wrapExit("ab side "+side, err)
		}
	}
	turns, err := os.MkdirTemp("", "authzbench-ab-")
	if err != nil {
		return &exitError{exitFailed, fmt.Errorf("ab: %w", err)}
	}
	defer os.RemoveAll(turns)

	// A B A B …: every turn is one repetition of run, so that whatever the machine does over the
	// session falls on both sides alike. Each turn is a process of its own, as a separate
	// 'authzbench run' would be: run pins its own process (--pin auto, --pin-load), which must
	// not carry over into the next turn, whose environment would then differ.
	docs := [2][]*result.Document{}
	var failed *failedTurn // a turn that measured and then failed: kept, with its side's turns
	var stopped error      // why the session ended before its last turn
session:
	for turn := 1; turn <= f.repeat; turn++ {
		for i, side := range []string{"A", "B"} {
			path := filepath.Join(turns, fmt.Sprintf("%s-%d.json", side, turn))
			args := append(append(append([]string{"run"}, sides[i]...), shared...), "--repeat", "1", "-o", path)
			fmt.Fprintf(stderr, "authzbench: ab turn %d/%d, side %s: %s\n", turn, f.repeat, side, strings.Join(args[:len(args)-2], " "))
			where := fmt.Sprintf("ab turn %d, side %s", turn, side)
			table, err := runTurn(self, args, stderr)
			if err == nil {
				// A turn that ran to its end is kept, even when Ctrl-C came as it ended.
				doc, rerr := result.Read(path)
				if rerr == nil && !doc.Interrupted {
					docs[i] = append(docs[i], doc)
				} else if rerr != nil && ctx.Err() == nil {
					stopped = &exitError{exitFailed, fmt.Errorf("%s: %w", where, rerr)}
					break session
				}
			}
			if ctx.Err() != nil {
				stopped = &exitError{exitInterrupted, fmt.Errorf("%s: interrupted", where)}
				break session
			}
			if err != nil {
				stopped = wrapExit(where, err)
				// A turn that measured and failed (wrong decisions, errors) wrote what it
				// measured, as any run does: that is kept in its side's file, and its table,
				// which the turn's messages point at, is shown.
				if doc, rerr := result.Read(path); rerr == nil && measuredSome(doc) {
					failed = &failedTurn{side: i, doc: doc}
					stderr.Write(table)
				}
				break session
			}
		}
	}
	log := &writeLog{stderr: stderr}
	merged, err := mergeSides(docs, failed, stopped)
	if err != nil && failed != nil {
		// Never lost for not merging: the failed turn's measurement is written on its own.
		apart := outputs.FreeName(strings.TrimSuffix(outs[failed.side], ".json") + "-failed.json")
		fmt.Fprintf(stderr, "authzbench: the failed turn's result does not merge with side %s's other turns (%v): written apart\n", "AB"[failed.side:failed.side+1], err)
		failed.doc.StopReason = stopped.Error()
		log.add("--out-"+"ab"[failed.side:failed.side+1], apart, saveResult(apart, "authzbench", failed.doc, false, stderr))
		failed = nil
		merged, err = mergeSides(docs, nil, stopped)
	}
	if err != nil {
		return &exitError{exitFailed, err}
	}
	for i, out := range outs {
		if merged[i] != nil {
			log.add("--out-"+"ab"[i:i+1], out, saveResult(out, "authzbench", merged[i], f.force, stderr))
		}
	}
	if stopped != nil {
		kept := "the finished turns are kept"
		if failed != nil {
			kept = fmt.Sprintf("the finished turns and the failed one's measurement (side %s, its table above) are kept", "AB"[failed.side:failed.side+1])
		}
		fmt.Fprintf(stderr, "authzbench: ab stopped after %d %s of side A and %d of side B; %s, marked with why it stopped\n",
			len(docs[0]), plural(len(docs[0]), "turn", "turns"), len(docs[1]), kept)
		return stopped
	}
	if err := log.err(); err != nil {
		return &exitError{exitFailed, err}
	}
	res := compare.Compare(outA, merged[0], outB, merged[1], opts)
	return writeComparison(stdout, res, format, gate)
}

// failedTurn is the result of a turn that measured and then failed, and the side it was of.
type failedTurn struct {
	side int
	doc  *result.Document
}

// measuredSome says whether a turn's result holds a measured repetition: a turn that failed
// before its load (a server that would not start) has nothing to merge into its side.
func measuredSome(doc *result.Document) bool {
	for _, r := range doc.Runs {
		if len(r.Repetitions) > 0 {
			return true
		}
	}
	return false
}

// mergeSides merges each side's turns into one document, nil for a side with none. A session
// that stopped early keeps its finished turns and the failed turn's measurement (failed, if
// any), marked: interrupted for Ctrl-C, and in every case with the reason it stopped.
func mergeSides(docs [2][]*result.Document, failed *failedTurn, stopped error) ([2]*result.Document, error) {
	var merged [2]*result.Document
	var all []*result.Document
	if failed != nil {
		docs[failed.side] = append(slices.Clone(docs[failed.side]), failed.doc)
	}
	for i := range merged {
		if len(docs[i]) == 0 {
			continue
		}
		doc, err := result.Merge(docs[i]...)
		if err != nil {
			return merged, fmt.Errorf("ab side %s: %w", "AB"[i:i+1], err)
		}
		doc.Command = append([]string{"authzbench"}, kinds.RedactSecrets(os.Args[1:])...)
		fit.Refit(doc)
		if stopped != nil {
			var e *exitError
			doc.Interrupted = errors.As(stopped, &e) && e.code == exitInterrupted
			doc.StopReason = stopped.Error()
		}
		merged[i] = doc
		all = append(all, doc)
	}
	renumberTurns(all)
	return merged, nil
}

// renumberTurns gives every repetition of both sides its place in the whole session (1, 2, …
// by start time), as a run's turns are numbered: merging a side's turns numbered them as if that
// side had run alone. Left as merged when some repetition has no start time.
func renumberTurns(docs []*result.Document) {
	var reps []*result.Repetition
	for _, d := range docs {
		for i := range d.Runs {
			for j := range d.Runs[i].Repetitions {
				rep := &d.Runs[i].Repetitions[j]
				if rep.Started.IsZero() {
					return
				}
				reps = append(reps, rep)
			}
		}
	}
	slices.SortStableFunc(reps, func(a, b *result.Repetition) int { return a.Started.Compare(b.Started) })
	for k, rep := range reps {
		rep.Turn = k + 1
	}
}

// abChildEnv is added to the environment of each turn's process (tests: what makes the test
// binary act as authzbench).
var abChildEnv []string

// runTurn runs one turn, authzbench run with args, as a process of its own; its stderr (the
// progress and warnings) goes to ours, and its table is returned: ab prints the comparison, and
// a failed turn's table only.
func runTurn(self string, args []string, stderr io.Writer) (table []byte, err error) {
	var out bytes.Buffer
	var last lastLine
	cmd := exec.Command(self, args...)
	cmd.Stdout, cmd.Stderr = &out, io.MultiWriter(stderr, &last)
	cmd.Env = append(os.Environ(), abChildEnv...)
	// Ctrl-C reaches the turn's process too (same process group): it stops its load, stops its
	// servers and exits, and ab then stops.
	err = cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		why := "its messages are above"
		if l := strings.TrimPrefix(last.String(), "authzbench: "); l != "" {
			why = "its last message: " + l // kept in the results with the stop reason
		}
		return out.Bytes(), &exitError{exit.ExitCode(), fmt.Errorf("authzbench run exited with status %d (%s)", exit.ExitCode(), why)}
	}
	if err != nil {
		return nil, &exitError{exitFailed, fmt.Errorf("start authzbench run: %w", err)}
	}
	return out.Bytes(), nil
}

// lastLine keeps the last line written to it that is not blank.
type lastLine struct{ line, partial []byte }

func (l *lastLine) Write(p []byte) (int, error) {
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		if t := bytes.TrimSpace(l.partial[:i]); len(t) > 0 {
			l.line = append(l.line[:0], t...)
		}
		l.partial = l.partial[i+1:]
	}
}

func (l *lastLine) String() string {
	if t := bytes.TrimSpace(l.partial); len(t) > 0 {
		return string(t)
	}
	return string(l.line)
}

// wrapExit says where an error happened and keeps its exit status: a turn's bad input is ab's.
func wrapExit(where string, err error) error {
	var e *exitError
	if errors.As(err, &e) {
		return &exitError{e.code, fmt.Errorf("%s: %w", where, e.err)}
	}
	return &exitError{exitFailed, fmt.Errorf("%s: %w", where, err)}
}
