package opalog

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/authzbench/authzbench/internal/userwords"
	"github.com/authzbench/authzbench/internal/workload"
)

// DefaultDecisionField is the member of an object result compared with the new decision when
// the user names none: ext_authz's {"allowed": ..., "headers": ...}.
const DefaultDecisionField = "allowed"

// DecisionLog is an OPA decision log read as workloads: the events that can be replayed, one
// workload per decision path, and the events left out, counted by why.
type DecisionLog struct {
	// File is the log as the user named it.
	File string
	// Field is the member of an object result compared (allowed by default).
	Field string
	// Events are the replayable events, by path, each in timestamp order.
	Events map[string][]DecisionEvent
	// Skipped counts the events left out by why ("input erased or masked", "error", "no
	// result", ...), and SkippedFirst names the first of each kind by file:line.
	Skipped      map[string]int
	SkippedFirst map[string]string
	// OutOfOrder is how many events came earlier than one before them in the file: the replay
	// sorts them by timestamp.
	OutOfOrder int
	// Repeated counts the replayable events whose decision_id an earlier one had (a log
	// uploaded twice, say), RepeatedFirst naming the first by file:line; each is replayed.
	Repeated      int
	RepeatedFirst string
	// objects marks the paths whose logged results are objects, compared by Field.
	objects map[string]bool
	ids     map[string]bool // the decision ids seen
}

// DecisionEvent is one logged decision that can be replayed.
type DecisionEvent struct {
	Source     string // file:line
	DecisionID string
	Path       string // as logged: authz/allow
	Input      []byte
	Allow      bool // the logged decision (the Field of an object result)
	Timestamp  time.Time
}

// Paths are the decision paths of the log's replayable events, sorted.
func (l *DecisionLog) Paths() []string {
	paths := make([]string, 0, len(l.Events))
	for p := range l.Events {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths
}

// Offsets are the recorded times of path's events after its first, in timestamp order: when a
// paced replay sends each (divided by its speed).
func (l *DecisionLog) Offsets(path string) []time.Duration {
	evs := l.Events[path]
	out := make([]time.Duration, len(evs))
	for i, e := range evs {
		out[i] = e.Timestamp.Sub(evs[0].Timestamp)
	}
	return out
}

// PacedOffsets are path's Offsets for a replay at the recorded pace, which needs every event's
// time: an event with none (neither "timestamp" nor the console logger's "time") would be
// scheduled at year 1, and events further apart than a Go duration holds (about 292 years: a
// wrong timestamp, never a real log) would be scheduled at a saturated offset. Either is refused,
// naming the lines, where the schedule would otherwise be wrong in silence.
func (l *DecisionLog) PacedOffsets(path string) ([]time.Duration, error) {
	evs := l.Events[path]
	var errs []error
	for _, e := range evs {
		if e.Timestamp.IsZero() {
			errs = append(errs, fmt.Errorf("%s: no timestamp (neither \"timestamp\" nor \"time\"): a paced replay sends each event at its recorded time; give every event one, or replay without a speed", e.Source))
			if len(errs) >= 20 {
				errs = append(errs, errors.New("too many errors; stopping"))
				break
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	first, last := evs[0], evs[len(evs)-1]
	if span := last.Timestamp.Sub(first.Timestamp); !first.Timestamp.Add(span).Equal(last.Timestamp) {
		return nil, fmt.Errorf("%s (%s) and %s (%s) are some %d years apart, more than a paced replay can schedule: a timestamp is wrong; correct it, or replay without a speed",
			first.Source, first.Timestamp.Format(time.RFC3339Nano), last.Source, last.Timestamp.Format(time.RFC3339Nano),
			last.Timestamp.Year()-first.Timestamp.Year())
	}
	return l.Offsets(path), nil
}

// SkippedTotal is how many events the replay leaves out.
func (l *DecisionLog) SkippedTotal() int {
	n := 0
	for _, c := range l.Skipped {
		n += c
	}
	return n
}

// The kinds of events a replay leaves out, as reports name them.
const (
	skipMasked    = "input erased or masked"
	skipError     = "error"
	skipNoResult  = "no result"
	skipNoInput   = "no input"
	skipNoPath    = "ad-hoc query, no path"
	skipNonBool   = "result not a boolean"
	skipNoField   = "object result without the compared field"
	skipNotAnEvnt = "log line that is no decision (no decision_id)"
)

// ReadDecisionLog reads the decision-log events of path in each form OPA writes them: one JSON
// object per line as the console logger prints them (its envelope, level, msg and time, beside
// the event's own members, or the bare event), or the JSON arrays the log service receives;
// gzip'd or not (told by the file's first bytes). field is the member of an object result
// compared ("" for DefaultDecisionField). A line that is not JSON, or a damaged gzip stream, is
// an error naming the file and line; events that cannot be replayed are counted in Skipped.
func ReadDecisionLog(path, field string) (*DecisionLog, error) {
	if field == "" {
		field = DefaultDecisionField
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read decision log %w", userwords.Unreadable(path, err))
	}
	text, err := gunzipped(path, raw)
	if err != nil {
		return nil, err
	}
	l := &DecisionLog{File: path, Field: field, Events: map[string][]DecisionEvent{}, Skipped: map[string]int{}, SkippedFirst: map[string]string{}, objects: map[string]bool{},
		ids: map[string]bool{}}
	var errs []error
	add := func(line int, obj []byte) {
		if err := l.add(fmt.Sprintf("%s:%d", path, line), obj); err != nil {
			err = fmt.Errorf("%s:%d: %w", path, line, err)
			// Events of one line (an array written on it) may fail alike: said once.
			if len(errs) == 0 || errs[len(errs)-1].Error() != err.Error() {
				errs = append(errs, err)
			}
		}
	}
	if first := bytes.TrimLeft(text, " \t\r\n"); len(first) > 0 && first[0] == '[' {
		// The log service's form: arrays of events, one per upload, perhaps several.
		dec := json.NewDecoder(bytes.NewReader(text))
		for {
			var batch []json.RawMessage
			start := dec.InputOffset()
			if err := dec.Decode(&batch); err == io.EOF {
				break
			} else if err != nil {
				at := start
				var syntax *json.SyntaxError
				if errors.As(err, &syntax) {
					at = syntax.Offset // where in the file the JSON broke, not where its array began
				}
				return nil, fmt.Errorf("%s:%d: %w", path, lineOf(text, at), userwords.JSON(text, err, "a JSON array of decision-log events"))
			}
			for _, ev := range batch {
				at := bytes.Index(text[start:], ev)
				add(lineOf(text, start+int64(max(at, 0))), ev)
			}
		}
	} else {
		sc := bufio.NewScanner(bytes.NewReader(text))
		sc.Buffer(make([]byte, 64<<10), workload.MaxLineBytes)
		line := 1
		for ; sc.Scan(); line++ {
			b := bytes.TrimSpace(sc.Bytes())
			if len(b) == 0 {
				continue
			}
			if !json.Valid(b) {
				errs = append(errs, fmt.Errorf("%s:%d: not JSON: %q; a decision log has one JSON object per line (OPA's console logger with --log-format json) or JSON arrays of events", path, line, truncated(b)))
			} else {
				add(line, b)
			}
			if len(errs) >= 20 {
				errs = append(errs, errors.New("too many errors; stopping"))
				break
			}
		}
		switch err := sc.Err(); {
		case errors.Is(err, bufio.ErrTooLong):
			errs = append(errs, fmt.Errorf("%s:%d: line longer than %d MiB, the most one line of a decision log may hold", path, line, workload.MaxLineBytes>>20))
		case err != nil:
			errs = append(errs, fmt.Errorf("%s:%d: %w", path, line, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for p, evs := range l.Events {
		l.OutOfOrder += outOfOrder(evs)
		slices.SortStableFunc(evs, func(a, b DecisionEvent) int { return a.Timestamp.Compare(b.Timestamp) })
		l.Events[p] = evs
	}
	if len(l.Events) == 0 {
		return nil, fmt.Errorf("%s: no decision to replay (%s)", path, l.skippedSummary())
	}
	return l, nil
}

// gunzipped is text itself, or its gzip stream decompressed whole: a stream cut short is an
// error, not a shorter log.
func gunzipped(path string, text []byte) ([]byte, error) {
	if len(text) < 2 || text[0] != 0x1f || text[1] != 0x8b {
		return text, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("%s: gzip: %w", path, err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s:%d: gzip stream damaged or cut short after %d bytes of the log: %w",
			path, lineOf(out, int64(len(out))), len(out), err)
	}
	return out, nil
}

func lineOf(text []byte, offset int64) int {
	return bytes.Count(text[:min(int(offset), len(text))], []byte{'\n'}) + 1
}

func outOfOrder(evs []DecisionEvent) int {
	n := 0
	var latest time.Time
	for _, e := range evs {
		if e.Timestamp.Before(latest) {
			n++
		} else {
			latest = e.Timestamp
		}
	}
	return n
}

// add reads one event (obj is valid JSON) into the log, or counts it as skipped.
func (l *DecisionLog) add(source string, obj []byte) error {
	var ev struct {
		DecisionID *string          `json:"decision_id"`
		Path       string           `json:"path"`
		Input      *json.RawMessage `json:"input"`
		Result     *json.RawMessage `json:"result"`
		Erased     []string         `json:"erased"`
		Masked     []string         `json:"masked"`
		Error      *json.RawMessage `json:"error"`
		Timestamp  time.Time        `json:"timestamp"`
		Time       time.Time        `json:"time"` // the console envelope's own time
	}
	if err := json.Unmarshal(obj, &ev); err != nil {
		return userwords.JSON(obj, err, "a decision-log event, a JSON object")
	}
	skip := func(kind string) error {
		if l.Skipped[kind] == 0 {
			l.SkippedFirst[kind] = source
		}
		l.Skipped[kind]++
		return nil
	}
	switch {
	case ev.DecisionID == nil:
		return skip(skipNotAnEvnt)
	case ev.Error != nil && string(*ev.Error) != "null":
		return skip(skipError)
	case inputErased(ev.Erased) || inputErased(ev.Masked):
		return skip(skipMasked)
	case ev.Input == nil || string(*ev.Input) == "null":
		return skip(skipNoInput)
	case ev.Path == "":
		return skip(skipNoPath)
	case ev.Result == nil || string(*ev.Result) == "null":
		return skip(skipNoResult)
	}
	allow, object, kind := decisionOf(*ev.Result, l.Field)
	if kind != "" {
		return skip(kind)
	}
	if object != l.objects[ev.Path] && len(l.Events[ev.Path]) > 0 {
		// One query per path: data.<path> for booleans, data.<path>.<field> for objects.
		return fmt.Errorf("path %s: a result of another shape than the path's earlier ones (booleans and objects mixed): %s", ev.Path, truncated(*ev.Result))
	}
	l.objects[ev.Path] = object
	ts := ev.Timestamp
	if ts.IsZero() {
		ts = ev.Time
	}
	if l.ids[*ev.DecisionID] {
		if l.Repeated == 0 {
			l.RepeatedFirst = source
		}
		l.Repeated++
	}
	l.ids[*ev.DecisionID] = true
	l.Events[ev.Path] = append(l.Events[ev.Path], DecisionEvent{Source: source, DecisionID: *ev.DecisionID, Path: ev.Path,
		Input: compact(*ev.Input), Allow: allow, Timestamp: ts})
	return nil
}

// inputErased reports whether an erased or masked list touches the input: the logged input
// is then not what the policy decided on.
func inputErased(paths []string) bool {
	for _, p := range paths {
		if p == "/input" || strings.HasPrefix(p, "/input/") {
			return true
		}
	}
	return false
}

// decisionOf is the logged decision: the boolean result, or the boolean field of an object
// result; kind says why there is none.
func decisionOf(result json.RawMessage, field string) (allow, object bool, kind string) {
	var v any
	if err := json.Unmarshal(result, &v); err != nil {
		return false, false, skipNonBool
	}
	switch r := v.(type) {
	case bool:
		return r, false, ""
	case map[string]any:
		b, ok := r[field].(bool)
		if !ok {
			return false, true, skipNoField
		}
		return b, true, ""
	}
	return false, false, skipNonBool
}

// Query is the query that asks path's decision again: data.authz.allow for path authz/allow,
// and data.authz.allow.allowed when its results are objects compared by their allowed field.
func (l *DecisionLog) Query(path string) string {
	q := "data"
	segments := strings.Split(strings.Trim(path, "/"), "/")
	if l.objects[path] {
		segments = append(segments, l.Field)
	}
	for _, seg := range segments {
		if identifier.MatchString(seg) {
			q += "." + seg
		} else {
			q += "[" + strconv.Quote(seg) + "]" // a segment Rego cannot name bare: data.x["a-b"]
		}
	}
	return q
}

// identifier is a name Rego reads bare in a reference.
var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (l *DecisionLog) skippedSummary() string {
	if len(l.Skipped) == 0 {
		return "no events"
	}
	kinds := make([]string, 0, len(l.Skipped))
	for k := range l.Skipped {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	parts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%d skipped: %s, first at %s", l.Skipped[k], k, l.SkippedFirst[k]))
	}
	return strings.Join(parts, "; ")
}

// replayName is the workload name of path's events in a log: the log's file name, and the path
// when the log has several.
func replayName(file, path string, several bool) string {
	base := filepath.Base(file)
	if i := strings.IndexByte(base, '.'); i > 0 {
		base = base[:i]
	}
	if several {
		return base + ":" + path
	}
	return base
}

// workloads builds the workloads of a user's decision log: one per decision path, named after
// the log (and the path, when there are several), each asking its path's query of the user's
// policy. The events of the intended changes (s.ExpectChanges) expect the opposite of their
// logged decision. workload.FromDecisionLog calls it with s checked and the log found.
func workloads(s workload.UserSpec) ([]*workload.Workload, error) {
	l, err := ReadDecisionLog(s.DecisionLog, s.DecisionField)
	if err != nil {
		return nil, err
	}
	intended := map[string]bool{}
	if s.ExpectChanges != "" {
		if intended, err = readExpectChanges(s.ExpectChanges, l); err != nil {
			return nil, err
		}
	}
	undefinedAs, err := workload.ParseUndefinedAs(s.UndefinedAs)
	if err != nil {
		return nil, err
	}
	paths := l.Paths()
	var ws []*workload.Workload
	var errs []error
	for _, p := range paths {
		evs, offsets := l.Events[p], l.Offsets(p)
		if s.Speed > 0 {
			if offsets, err = l.PacedOffsets(p); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		inputs := make([]workload.Input, len(evs))
		for i, e := range evs {
			in := workload.Input{JSON: e.Input, Expect: expectOf(e.Allow), Source: e.Source, DecisionID: e.DecisionID,
				Offset: offsets[i]}
			if intended[e.DecisionID] {
				in.Expect = in.Expect.Opposite()
			}
			inputs[i] = in
		}
		name := s.Name
		if name == "" || len(paths) > 1 {
			name = replayName(s.DecisionLog, p, len(paths) > 1)
			if s.Name != "" {
				name = s.Name + ":" + p
			}
		}
		r := &workload.Replay{Log: s.DecisionLog, Path: p, Skipped: l.Skipped, SkippedFirst: l.SkippedFirst, OutOfOrder: l.OutOfOrder, Intended: intended,
			Repeated: l.Repeated, RepeatedFirst: l.RepeatedFirst,
			Speed: s.Speed, MaxGap: s.MaxGap, FromInputs: s.LogFromInputs}
		if l.objects[p] {
			r.Field = l.Field
		}
		ws = append(ws, &workload.Workload{
			Name:        name,
			Description: fmt.Sprintf("replay of %s, path %s (%d events)", s.DecisionLog, p, len(evs)),
			Query:       l.Query(p),
			PolicyPaths: s.Policies,
			DataPaths:   s.Data,
			Inputs:      inputs,
			UndefinedAs: undefinedAs,
			Replay:      r,
		})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return ws, nil
}

// readExpectChanges reads the reviewed list of intended flips: decision ids one per line (# for
// comments), or a JSON array of them. An id the log has no replayable event for is an error:
// the review was of another log, or the event was skipped.
func readExpectChanges(path string, l *DecisionLog) (map[string]bool, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--expect-changes %w", userwords.Unreadable(path, err))
	}
	known := map[string]bool{}
	for _, evs := range l.Events {
		for _, e := range evs {
			known[e.DecisionID] = true
		}
	}
	type id struct {
		id   string
		line int
	}
	var ids []id
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '[' {
		var list []string
		if err := json.Unmarshal(t, &list); err != nil {
			return nil, fmt.Errorf("%s: %w", path, userwords.JSON(t, err, "a JSON array of decision ids"))
		}
		for _, s := range list {
			ids = append(ids, id{s, 0})
		}
	} else {
		for i, line := range strings.Split(string(raw), "\n") {
			if s := strings.TrimSpace(line); s != "" && !strings.HasPrefix(s, "#") {
				ids = append(ids, id{s, i + 1})
			}
		}
	}
	out := map[string]bool{}
	var errs []error
	for _, d := range ids {
		if !known[d.id] {
			where := path
			if d.line > 0 {
				where = fmt.Sprintf("%s:%d", path, d.line)
			}
			errs = append(errs, fmt.Errorf("%s: decision %q is not a replayed event of %s", where, d.id, l.File))
			continue
		}
		out[d.id] = true
	}
	return out, errors.Join(errs...)
}

// expectOf is the logged decision as an expectation.
func expectOf(allow bool) workload.Expect {
	if allow {
		return workload.ExpectAllow
	}
	return workload.ExpectDeny
}

func truncated(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

func compact(b []byte) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return b
	}
	return buf.Bytes()
}
