package cedar

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/authzbench/authzbench/internal/workload"
)

// Name is Cedar's name in target kinds and results, and the key of its version of a workload
// (workload.Workload.Versions) and of its requests (workload.Input.Requests).
const Name = "cedar"

// Files is a workload's Cedar version, held in its workload.Version's Own: policies, entities
// and schema, and each input's request in Input.Requests[Name]. The two versions must agree on
// every input.
type Files struct {
	// Built-in workloads carry their files in memory ...
	Policies []workload.File
	Schema   *workload.File // Cedar schema in the human-readable form; nil for none
	Entities []byte         // JSON array of entities; nil for none

	// ... users' own point at files on disk.
	PolicyPaths  []string
	SchemaPath   string
	EntitiesPath string
	// TemplateLinksPath links the policies' templates; empty for none.
	TemplateLinksPath string
}

// filesOf is w's Cedar version; nil when it has none.
func filesOf(w *workload.Workload) *Files {
	if v := w.VersionFor(Name); v != nil {
		if f, ok := v.Own.(*Files); ok {
			return f
		}
	}
	return nil
}

// write returns the Cedar policy, entities and schema paths of w's version f, writing in-memory
// files under dir first, so that the in-process and served engines load the same files.
// entities and schema are empty when the workload has none.
func (f *Files) write(w *workload.Workload, dir string) (policies []string, entities, schema string, err error) {
	policies = append(policies, f.PolicyPaths...)
	entities, schema = f.EntitiesPath, f.SchemaPath
	put := func(name string, b []byte) (string, error) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return "", fmt.Errorf("write Cedar files of workload %s: %w", w.Name, err)
		}
		return p, nil
	}
	for _, p := range f.Policies {
		path, err := put(p.Name, p.Content)
		if err != nil {
			return nil, "", "", err
		}
		policies = append(policies, path)
	}
	if len(f.Entities) > 0 {
		if entities, err = put("entities.json", f.Entities); err != nil {
			return nil, "", "", err
		}
	}
	if f.Schema != nil {
		if schema, err = put(f.Schema.Name, f.Schema.Content); err != nil {
			return nil, "", "", err
		}
	}
	return policies, entities, schema, nil
}

// Show prints w's Cedar version: its schema, policies and first requests (engine.Exported).
func (cedar) Show(w *workload.Workload, out io.Writer) {
	f := filesOf(w)
	if f == nil {
		return
	}
	fmt.Fprintf(out, "\n# === Cedar version (entities: %d bytes) ===\n", len(f.Entities))
	if f.Schema != nil {
		fmt.Fprintf(out, "\n# --- %s ---\n%s", f.Schema.Name, f.Schema.Content)
	}
	for _, p := range f.Policies {
		fmt.Fprintf(out, "\n# --- %s ---\n%s", p.Name, p.Content)
	}
	fmt.Fprintln(out, "\n# --- first requests ---")
	for i, in := range w.Inputs {
		if i == 5 {
			break
		}
		fmt.Fprintf(out, "# %s\n%s\n", in.Expect, Engine.Request(in))
	}
}

// Export writes w's Cedar version under dir as users' Cedar files are read: its policies
// (*.cedar), schema (*.cedarschema), entities.json, and requests.jsonl, one request per line
// with its "expect" (engine.Exported).
func (cedar) Export(w *workload.Workload, dir string) error {
	f := filesOf(w)
	if f == nil {
		return nil
	}
	if _, _, _, err := f.write(w, dir); err != nil {
		return err
	}
	var reqs bytes.Buffer
	for i, in := range w.Inputs {
		line, err := requestLine(in)
		if err != nil {
			return fmt.Errorf("export %s: input %d: %w", w.Name, i+1, err)
		}
		reqs.Write(line)
		reqs.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(dir, "requests.jsonl"), reqs.Bytes(), 0o644); err != nil {
		return fmt.Errorf("export %s: %w", w.Name, err)
	}
	return nil
}

// requestLine is an input's Cedar request as a line of a requests file: the request object
// with its expected decision added.
func requestLine(in workload.Input) ([]byte, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(Engine.Request(in), &fields); err != nil {
		return nil, fmt.Errorf("Cedar request is not a JSON object: %w", err)
	}
	if in.Expect != workload.Unverified {
		fields["expect"] = json.RawMessage(strconv.FormatBool(in.Expect == workload.ExpectAllow))
	}
	return json.Marshal(fields)
}
