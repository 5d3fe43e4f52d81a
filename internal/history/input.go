package history

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
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
}

// ReadInput reads a result document (plain JSON, or gzip-compressed JSON) and checks it: its
// schema, and that it holds no repetition twice.
func ReadInput(path, branch string) (*Input, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read result: %w", err)
	}
	return ParseInput(path, raw, branch)
}

// ParseInput is ReadInput for bytes already read.
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
	return &Input{Name: name, Body: body, Doc: &doc, Branch: branch}, nil
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

// TestbedOf is the testbed of an environment: what a figure depends on of the machine.
func TestbedOf(env result.Env) Testbed {
	t := Testbed{CPUModel: env.CPUModel, Cores: env.Cores, Kernel: env.Kernel, Pinning: env.Pinning}
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d\x00%s\x00%s", t.CPUModel, t.Cores, t.Kernel, t.Pinning)))
	t.Key = hex.EncodeToString(sum[:6])
	return t
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
// mode, HTTP/2, replicas), and the load (its schedule's key and, in open loop, the connections:
// "closed 8", "open 2000 64", as the first series were stored; "open replay … 64").
func seriesOf(r *result.Run, tb Testbed) Series {
	s := Series{Workload: r.Workload, Target: r.Label(), Load: report.LoadLabel(r.Load), Testbed: tb}
	s.Key = strings.Join([]string{r.Workload, s.Target, r.Load.Key().String(), tb.Key}, "|")
	return s
}
