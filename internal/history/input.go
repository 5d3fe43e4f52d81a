package history

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"time"

	"github.com/authzbench/authzbench/internal/report"
	"github.com/authzbench/authzbench/internal/result"
)

// Input is a result document ready to be added: read and checked whole before anything is
// stored, so a truncated or foreign file is refused without touching the database.
type Input struct {
	Name   string // the file, for messages and the stored record
	Body   []byte // as written
	Doc    *result.Document
	Branch string
	// Testbed is the name its series are filed under: the document's own (env.testbed), else
	// DefaultTestbed's; history add --testbed sets another.
	Testbed string
}

// ReadInput reads a result document (plain JSON, or gzip-compressed JSON) and checks that it
// can be added (CheckAddable).
func ReadInput(path, branch string) (*Input, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read result: %w", err)
	}
	in, err := ParseInput(path, raw, branch)
	if err != nil {
		return nil, err
	}
	if err := CheckAddable(in.Doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return in, nil
}

// ParseInput reads a result document from bytes already read: its schema, and that it holds
// no repetition twice. It reads stored documents back too, so it does not judge whether one
// could be added now (CheckAddable).
func ParseInput(name string, raw []byte, branch string) (*Input, error) {
	body := raw
	if bytes.HasPrefix(raw, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err == nil {
			body, err = io.ReadAll(zr)
		}
		if err != nil {
			return nil, fmt.Errorf("read result %s: gzip: %w", name, err)
		}
	}
	var doc result.Document
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("read result %s: not a whole result document (truncated?): %w", name, err)
	}
	if doc.Schema != result.Schema {
		return nil, fmt.Errorf("read result %s: schema %q, want %q", name, doc.Schema, result.Schema)
	}
	if err := result.Distinct(result.Source{Name: name, Doc: &doc}); err != nil {
		return nil, fmt.Errorf("read result %s: %w", name, err)
	}
	return &Input{Name: name, Body: body, Doc: &doc, Branch: branch, Testbed: TestbedName(doc.Env)}, nil
}

// ErrShard is a shard's document given to be added or gated: see CheckAddable.
var ErrShard = errors.New("a shard's result")

// CheckAddable says whether a document can join the history as it is:
//
//   - not one shard of a sharded run (--shard i/N): a shard measured its share of the load, and
//     filed as a whole run it would read as a slower one; the merge of its shards (authzbench
//     merge) is the whole run, and is what the history takes;
//   - no two of its runs in one series that say they are different workloads (a scenario that
//     named two alike, before scenarios refused it): their repetitions would be mixed into one
//     point. One workload measured twice (a built-in listed twice, the floor before and after
//     a sweep) is one series, both runs' repetitions one point.
func CheckAddable(doc *result.Document) error {
	if doc.Env.Testbed != "" {
		if err := result.CheckTestbed(doc.Env.Testbed); err != nil {
			return fmt.Errorf("env.testbed: %w", err)
		}
	}
	if doc.Shard != nil {
		return fmt.Errorf("%w (shard %s): a shard measured its part of the load only; merge the shards with authzbench merge and give the merge",
			ErrShard, doc.Shard)
	}
	seen := map[string]int{}
	for i := range doc.Runs {
		key := seriesOf(&doc.Runs[i], "").Key
		if j, ok := seen[key]; ok && !reflect.DeepEqual(doc.Runs[i].WorkloadDoc, doc.Runs[j].WorkloadDoc) {
			return fmt.Errorf("runs %d and %d are both %s but describe different workloads: two workloads of one name in one scenario, which would be filed as one series; name them apart and run again",
				j+1, i+1, doc.Runs[i].Name())
		}
		seen[key] = i
	}
	return nil
}

// Branch is the branch to file documents under when none is named: $GITHUB_REF_NAME in GitHub
// Actions, else the checkout's current branch, else "unknown".
func Branch() string {
	if b := os.Getenv("GITHUB_REF_NAME"); b != "" {
		return b
	}
	out, err := exec.Command("git", "rev-parse", "--abbrev-ref", "HEAD").Output()
	if b := strings.TrimSpace(string(out)); err == nil && b != "" && b != "HEAD" {
		return b
	}
	return "unknown"
}

// TestbedName is the name a document's series are filed under when none is given to the
// command: the one the result recorded (run --testbed), else DefaultTestbed's.
func TestbedName(env result.Env) string {
	if env.Testbed != "" {
		return env.Testbed
	}
	return DefaultTestbed(env)
}

// DefaultTestbed names a machine from what defines it for performance: its CPU model, its
// cores and how generator and servers were pinned ("amd-epyc-2c", "intel-xeon-e5-2680-v4-16c-
// pin-3fa9c1"). The kernel, the Go version and the host name are not part of it: they change
// under a machine (a CI runner's image is updated every few weeks) without making it another,
// and a series that started over at each update would never see a change across it. They are
// kept with every document and marked where they changed (Environment).
func DefaultTestbed(env result.Env) string {
	name := slug(env.CPUModel)
	if name == "" {
		name = "unknown-cpu"
	}
	name = fmt.Sprintf("%.40s", name) // room for cores and pinning within CheckTestbed's 64
	name = strings.TrimRight(name, "-") + fmt.Sprintf("-%dc", env.Cores)
	switch p := strings.TrimSpace(env.Pinning); {
	case p == "" || strings.HasPrefix(p, "none"):
	case strings.HasPrefix(p, "auto:"):
		// Pinned by authzbench itself, the same way on every machine of a CPU count.
		name += "-pin-auto"
	default:
		sum := sha256.Sum256([]byte(p))
		name += "-pin-" + hex.EncodeToString(sum[:3])
	}
	return name
}

// slug is a CPU model as a name: lower case, words joined by '-', the trademark signs dropped.
func slug(s string) string {
	s = strings.ToLower(s)
	for _, mark := range []string{"(r)", "(tm)", "(c)"} {
		s = strings.ReplaceAll(s, mark, " ")
	}
	var words []string
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') }) {
		if w != "processor" && w != "cpu" {
			words = append(words, w)
		}
	}
	return strings.Join(words, "-")
}

// commitOf splits the environment's commit into the hash and whether the checkout had changes.
func commitOf(env result.Env) (commit string, dirty bool) {
	commit, dirty = strings.CutSuffix(env.Commit, "-dirty")
	return commit, dirty || env.Modified == "true"
}

// repetitionKeys are the identities a repetition is known by: its id and its parts' (the
// shards it adds up), or, for a file written before ids were kept, its start time with its
// histogram. A repetition with any key already stored is stored already: a merged document
// adds nothing its shards added.
func repetitionKeys(rep *result.Repetition) []string {
	var keys []string
	for _, id := range append([]string{rep.ID}, rep.Parts...) {
		if id != "" {
			keys = append(keys, id)
		}
	}
	if len(keys) == 0 {
		sum := sha256.Sum256([]byte(rep.Started.UTC().Format(time.RFC3339Nano) + "\x00" +
			fmt.Sprint(rep.ElapsedS) + "\x00" + rep.HDR))
		keys = append(keys, "derived-"+hex.EncodeToString(sum[:16]))
	}
	return keys
}

// figuresOf is what a view reads of a repetition.
func figuresOf(rep *result.Repetition) Repetition {
	r := Repetition{
		ID: repetitionKeys(rep)[0], Throughput: rep.ThroughputRPS,
		P50: rep.LatencyUS.P50, P90: rep.LatencyUS.P90, P99: rep.LatencyUS.P99, P999: rep.LatencyUS.P999,
		Requests: rep.Requests, OK: rep.OK, HDR: rep.HDR, ErrorHDR: rep.ErrorHDR,
		Usable: !rep.Partial && rep.ElapsedS > 0 && rep.OK > 0,
	}
	if rep.Requests > 0 {
		r.ErrorRatio = float64(rep.Errors) / float64(rep.Requests)
	}
	return r
}

// seriesOf is the series a run belongs to on a testbed. Runs are one series when compare would
// set them side by side (internal/compare's key): the workload, the target's label (kind, TLS
// mode, HTTP/2, replicas), and the load's whole identity (its schedule's key and, in open loop,
// the connections: "closed 8", "open 2000 64", as the first series were stored; a replay or
// stages each its own).
func seriesOf(r *result.Run, testbed string) Series {
	s := Series{Workload: r.Workload, Target: r.Label(), Load: report.LoadLabel(r.Load), Testbed: Testbed{Name: testbed}}
	s.Key = strings.Join([]string{r.Workload, s.Target, r.Load.Key().String(), testbed}, "|")
	return s
}

// engineOf is the engine a run measured, with its version: "opa 1.22.2", "cedar-go v1.9.0";
// "" when the run recorded no version.
func engineOf(r *result.Run) string {
	v := strings.TrimSpace(r.SUT.Version)
	if v == "" {
		return ""
	}
	if strings.Contains(v, " ") || r.SUT.Engine == "" {
		return v
	}
	return r.SUT.Engine + " " + v
}
