package casbin

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/authzbench/authzbench/internal/workload"
)

// A built-in's Casbin version as Casbin's users keep their files (engine.Exported): the model
// and policy under the names the run writes them for casbin/server (rbac.conf, rbac.csv), and
// the requests with their expected decisions in the form readRequests reads back. So an
// exported workload runs again from its files with --policy rbac.conf --policy rbac.csv
// --inputs casbin-requests.csv, and decides as the built-in does.

// Request file names, apart from Cedar's requests.jsonl, which an export of the same workload
// writes beside them.
const (
	requestsCSV   = "casbin-requests.csv"
	requestsJSONL = "casbin-requests.jsonl"
)

// shownPolicyLines is how much of a policy show prints: a rule-count family's runs to 10,000
// lines, which export writes whole.
const shownPolicyLines = 30

// Show prints w's Casbin version: its model, the start of its policy and its first requests.
func (registered) Show(w *workload.Workload, out io.Writer) {
	if familyOf(w) == nil {
		return
	}
	f, err := builtinFiles(w)
	if err != nil {
		fmt.Fprintf(out, "\n# === Casbin version: %v ===\n", err)
		return
	}
	lines := strings.SplitAfter(strings.TrimRight(f.Policy, "\n"), "\n")
	if f.Policy == "" {
		lines = nil
	}
	fmt.Fprintf(out, "\n# === Casbin version (policy: %d lines) ===\n", len(lines))
	fmt.Fprintf(out, "\n# --- %s ---\n%s", f.ModelName, withNewline(f.Model))
	fmt.Fprintf(out, "\n# --- %s ---\n", f.PolicyName)
	for i, l := range lines {
		if i == shownPolicyLines {
			fmt.Fprintf(out, "# ... %d more lines (workloads export writes them all)\n", len(lines)-i)
			break
		}
		fmt.Fprint(out, withNewline(l))
	}
	fmt.Fprintln(out, "\n# --- first requests (expected decision, then the values of the model's request definition) ---")
	for i, in := range w.Inputs {
		if i == 5 {
			break
		}
		fmt.Fprintf(out, "# %s\n%s\n", in.Expect, Registered.Request(in))
	}
}

func withNewline(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}

// Export writes w's Casbin version under dir: the model (*.conf), its policy (*.csv), and the
// requests with their expected decisions, a CSV line each (casbin-requests.csv) where every
// request is strings a CSV line carries unchanged, else JSON Lines (casbin-requests.jsonl: the
// rule-count families' groups are a list, api's hour a number).
func (registered) Export(w *workload.Workload, dir string) error {
	if familyOf(w) == nil {
		return nil
	}
	f, err := builtinFiles(w)
	if err != nil {
		return fmt.Errorf("export %s: %w", w.Name, err)
	}
	name, reqs, err := requestsFile(w)
	if err != nil {
		return fmt.Errorf("export %s: %w", w.Name, err)
	}
	for _, file := range []struct{ name, text string }{{f.ModelName, f.Model}, {f.PolicyName, f.Policy}, {name, reqs}} {
		if err := os.WriteFile(filepath.Join(dir, file.name), []byte(file.text), 0o644); err != nil {
			return fmt.Errorf("export %s: %w", w.Name, err)
		}
	}
	return nil
}

// requestsFile writes w's requests as a requests file: its name and its text.
func requestsFile(w *workload.Workload) (name, text string, err error) {
	var lines bytes.Buffer
	if rows, ok, err := csvRows(w); err != nil {
		return "", "", err
	} else if ok {
		cw := csv.NewWriter(&lines)
		if err := cw.WriteAll(rows); err != nil {
			return "", "", err
		}
		return requestsCSV, lines.String(), nil
	}
	for _, in := range w.Inputs {
		lines.WriteString(`{"request":`)
		lines.Write(Registered.Request(in))
		if in.Expect != workload.Unverified {
			fmt.Fprintf(&lines, `,"expect":%t`, in.Expect == workload.ExpectAllow)
		}
		lines.WriteString("}\n")
	}
	return requestsJSONL, lines.String(), nil
}

// csvRows are w's requests as CSV lines, each its values and its expected decision; ok is false
// where a line could not say a request as it is: a value that is no string (the CSV reader
// reads every value as one), one the reader would trim or take for a comment, or a request
// without an expected decision (a CSV line must end with one).
func csvRows(w *workload.Workload) (rows [][]string, ok bool, err error) {
	for i, in := range w.Inputs {
		if in.Expect == workload.Unverified {
			return nil, false, nil
		}
		vals, err := ParseRequest(Registered.Request(in))
		if err != nil {
			return nil, false, fmt.Errorf("input %d: %w", i+1, err)
		}
		row := make([]string, 0, len(vals)+1)
		for j, v := range vals {
			s, isString := v.(string)
			if !isString || s != strings.TrimSpace(s) || strings.ContainsAny(s, "\r\n") || j == 0 && (s == "" || strings.HasPrefix(s, "#")) {
				return nil, false, nil
			}
			row = append(row, s)
		}
		rows = append(rows, append(row, fmt.Sprint(in.Expect == workload.ExpectAllow)))
	}
	return rows, true, nil
}
