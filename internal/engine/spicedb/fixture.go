package spicedb

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/authzed/spicedb/pkg/spiceerrors"
	"github.com/authzed/spicedb/pkg/tuple"
	"github.com/authzed/spicedb/pkg/validationfile"
	"github.com/authzed/spicedb/pkg/validationfile/blocks"
)

// Fixture is what a user's SpiceDB files describe: a schema, the relationships it is checked
// against, and checks with their expected answers.
type Fixture struct {
	Source string // the file named in errors
	Schema string
	// SchemaFile is the file the schema is written in and SchemaLine the line of its first
	// line there: a schema inline in a validation file starts below its key.
	SchemaFile    string
	SchemaLine    int
	Relationships []Relationship
	Assertions    []Assertion
	// NotMeasured counts, per block ("validation"), what a validation file asks that
	// authzbench does not measure, so a report can say so.
	NotMeasured map[string]int
}

// Relationship is one relationship and the line that wrote it.
type Relationship struct {
	Rel    tuple.Relationship
	Origin string // file:line
}

// Expect is the answer a check must get.
type Expect int

const (
	ExpectAllowed     Expect = iota // assertTrue
	ExpectDenied                    // assertFalse
	ExpectConditional               // assertCaveated: a caveat lacks context
)

func (e Expect) String() string {
	switch e {
	case ExpectAllowed:
		return "allowed"
	case ExpectDenied:
		return "denied"
	case ExpectConditional:
		return "conditional"
	}
	return fmt.Sprintf("Expect(%d)", int(e))
}

// Assertion is one check and the answer it must get.
type Assertion struct {
	Origin string // file:line
	// Resource is the resource and the permission asked (its Relation); Subject the subject,
	// with "..." as its relation for a plain one.
	Resource, Subject tuple.ObjectAndRelation
	Context           map[string]any // caveat context; nil for none
	Expect            Expect
}

func (a Assertion) String() string {
	return tuple.StringONR(a.Resource) + "@" + tuple.StringONR(a.Subject)
}

// Verify says whether Check's answer is the one a expects: nil when it is. A conditional
// answer holds only for ExpectConditional, and any other error never holds.
func (a Assertion) Verify(allowed bool, err error) error {
	var got Expect
	switch {
	case errors.Is(err, ErrConditional):
		got = ExpectConditional
	case err != nil:
		return fmt.Errorf("%s: %s: %w", a.Origin, a, err)
	case allowed:
		got = ExpectAllowed
	default:
		got = ExpectDenied
	}
	if got != a.Expect {
		return fmt.Errorf("%s: %s: %s, want %s", a.Origin, a, got, a.Expect)
	}
	return nil
}

// LoadValidationFile reads a validation file as `zed validate` and the SpiceDB playground read
// it, with SpiceDB's own parser (pkg/validationfile): the schema inline (`schema`) or by
// `schemaFile` (taken from the file's directory, and not outside it), `relationships` one a
// line with caveats, expirations, comments and blank lines, and `assertions` whose
// assertTrue, assertFalse and assertCaveated lines (with their caveat context) become the
// assertions. The `validation` block (expected relations) is counted, not measured.
func LoadValidationFile(path string) (*Fixture, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read validation file: %w", err)
	}
	parsed, err := validationfile.DecodeValidationFile(data)
	if err != nil {
		return nil, sourceError(path, data, err)
	}
	f := &Fixture{Source: path, NotMeasured: map[string]int{}}
	switch {
	case len(parsed.NamespaceConfigs) > 0 || len(parsed.ValidationTuples) > 0:
		// As SpiceDB's loader: the legacy blocks are refused, not ignored.
		return nil, fmt.Errorf("%s: namespace_configs and validation_tuples are no longer read; write the schema in `schema` and the relationships in `relationships`", path)
	case parsed.Schema.Schema != "" && parsed.SchemaFile != "":
		return nil, fmt.Errorf("%s:%d: both schema and schemaFile; keep one", path, parsed.Schema.SourcePosition.LineNumber)
	case parsed.SchemaFile != "":
		if !filepath.IsLocal(parsed.SchemaFile) {
			return nil, fmt.Errorf("%s: schemaFile %q is outside the validation file's directory", path, parsed.SchemaFile)
		}
		f.SchemaFile = filepath.Join(filepath.Dir(path), parsed.SchemaFile)
		schema, err := os.ReadFile(f.SchemaFile)
		if err != nil {
			return nil, fmt.Errorf("%s: schemaFile: %w", path, err)
		}
		f.Schema, f.SchemaLine = string(schema), 1
	case parsed.Schema.Schema != "":
		// A block scalar (`schema: |`) starts on the line below its key; yaml.v3 gives the
		// key's line for it.
		f.Schema, f.SchemaFile, f.SchemaLine = parsed.Schema.Schema, path, parsed.Schema.SourcePosition.LineNumber
		if isBlockScalarLine(firstLineAt(data, f.SchemaLine)) {
			f.SchemaLine++
		}
	default:
		return nil, fmt.Errorf("%s: no schema: give schema (inline) or schemaFile", path)
	}

	rels := parsed.Relationships
	for i, rel := range rels.Relationships {
		f.Relationships = append(f.Relationships, Relationship{Rel: rel, Origin: fmt.Sprintf("%s:%d", path, rels.RelationshipPositions[i].LineNumber)})
	}

	for _, block := range []struct {
		lines  []blocks.Assertion
		expect Expect
	}{
		{parsed.Assertions.AssertTrue, ExpectAllowed},
		{parsed.Assertions.AssertFalse, ExpectDenied},
		{parsed.Assertions.AssertCaveated, ExpectConditional},
	} {
		for _, a := range block.lines {
			f.Assertions = append(f.Assertions, Assertion{
				Origin:   fmt.Sprintf("%s:%d", path, a.SourcePosition.LineNumber),
				Resource: a.Relationship.Resource,
				Subject:  a.Relationship.Subject,
				Context:  a.CaveatContext,
				Expect:   block.expect,
			})
		}
	}
	for _, subjects := range parsed.ExpectedRelations.ValidationMap {
		f.NotMeasured["validation"] += max(len(subjects), 1)
	}
	if len(f.Assertions) == 0 {
		return nil, fmt.Errorf("%s: no assertions to measure: give assertTrue, assertFalse or assertCaveated lines under assertions (validation entries: %d, not measured)", path, f.NotMeasured["validation"])
	}
	return f, nil
}

// firstLineAt is line n (1-based) of data.
func firstLineAt(data []byte, n int) string {
	lines := bytes.Split(data, []byte("\n"))
	if n < 1 || n > len(lines) {
		return ""
	}
	return string(lines[n-1])
}

// isBlockScalarLine says whether a line ends in a block scalar's header (`key: |`, `key: >-`).
func isBlockScalarLine(line string) bool {
	_, value, ok := strings.Cut(line, ":")
	value = strings.TrimSpace(value)
	return ok && value != "" && (value[0] == '|' || value[0] == '>')
}

// sourceError writes one of SpiceDB's parse errors as file:line: message. Its blocks' errors
// carry their line; a YAML error of the file's shape carries it in its text ("line 3: ...").
func sourceError(path string, data []byte, err error) error {
	var withSource *spiceerrors.WithSourceError
	if errors.As(err, &withSource) && withSource.LineNumber > 0 {
		return fmt.Errorf("%s:%d: %v", path, sourceLine(data, withSource), withSource.Unwrap())
	}
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Errorf("%s:%s: %s", path, m[1], m[2])
	}
	return fmt.Errorf("%s: %w", path, err)
}

// sourceLine is the line of data that holds e's source text. SpiceDB's relationships block
// places a relationship's error at its block's line + 1 + twice its index, below the line itself
// (its positions for relationships it accepts count one line each); the line holding the text,
// the last one not below the line it gives, is the one to fix.
func sourceLine(data []byte, e *spiceerrors.WithSourceError) int {
	given := int(e.LineNumber)
	if e.SourceCodeString == "" {
		return given
	}
	lines := bytes.Split(data, []byte("\n"))
	for n := min(given, len(lines)); n >= 1; n-- {
		if bytes.Contains(lines[n-1], []byte(e.SourceCodeString)) {
			return n
		}
	}
	return given
}

var yamlLine = regexp.MustCompile(`line ([0-9]+): (.+)`)

// LoadFiles reads a schema file, a relationships file (one relationship a line, as a
// validation file's relationships block: caveats and expirations included, `//` comments and
// blank lines skipped) and a JSONL of checks.
func LoadFiles(schemaPath, relationshipsPath, checksPath string) (*Fixture, error) {
	schema, err := readSchema(schemaPath)
	if err != nil {
		return nil, err
	}
	f := &Fixture{Source: checksPath, Schema: schema, SchemaFile: schemaPath, SchemaLine: 1, NotMeasured: map[string]int{}}
	if relationshipsPath != "" {
		if f.Relationships, err = LoadRelationships(relationshipsPath); err != nil {
			return nil, err
		}
	}
	if f.Assertions, err = LoadChecks(checksPath); err != nil {
		return nil, err
	}
	return f, nil
}

func readSchema(path string) (string, error) {
	schema, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read schema: %w", err)
	}
	return string(schema), nil
}

// LoadRelationships reads a relationships file, one relationship a line, parsed by SpiceDB's
// own parser (pkg/tuple), refusing a repeated relationship as a validation file's block does.
func LoadRelationships(path string) ([]Relationship, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read relationships: %w", err)
	}
	var rels []Relationship
	seen := map[string]int{}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "//") {
			continue
		}
		rel, err := tuple.Parse(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		key := tuple.StringWithoutCaveatOrExpiration(rel)
		if first, ok := seen[key]; ok {
			return nil, fmt.Errorf("%s:%d: relationship %s repeats line %d", path, i+1, key, first)
		}
		seen[key] = i + 1
		rels = append(rels, Relationship{Rel: rel, Origin: fmt.Sprintf("%s:%d", path, i+1)})
	}
	return rels, nil
}

// checkLine is one line of a checks file:
//
//	{"check": "document:readme#view@user:alice", "context": {"now": "..."}, "expect": true}
//
// expect is true, false or "conditional".
type checkLine struct {
	Check   string          `json:"check"`
	Context map[string]any  `json:"context"`
	Expect  json.RawMessage `json:"expect"`
}

// LoadChecks reads a JSONL of checks with their expected answers; blank lines are skipped.
func LoadChecks(path string) ([]Assertion, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read checks: %w", err)
	}
	defer file.Close()
	var out []Assertion
	scanner := bufio.NewScanner(file)
	scanner.Buffer(nil, 16<<20)
	for n := 1; scanner.Scan(); n++ {
		line := bytes.TrimSpace(scanner.Bytes())
		if len(line) == 0 {
			continue
		}
		a, err := ParseCheck(fmt.Sprintf("%s:%d", path, n), line)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	if err := scanner.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no checks", path)
	}
	return out, nil
}

// ParseCheck reads one line of a checks file into an assertion from origin (file:line).
func ParseCheck(origin string, line []byte) (Assertion, error) {
	var c checkLine
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Assertion{}, fmt.Errorf("%s: %w", origin, err)
	}
	rel, err := tuple.Parse(c.Check)
	if err != nil {
		return Assertion{}, fmt.Errorf("%s: check %q: %w", origin, c.Check, err)
	}
	a := Assertion{Origin: origin, Resource: rel.Resource, Subject: rel.Subject, Context: c.Context}
	switch strings.TrimSpace(string(c.Expect)) {
	case "true":
		a.Expect = ExpectAllowed
	case "false":
		a.Expect = ExpectDenied
	case `"conditional"`:
		a.Expect = ExpectConditional
	default:
		return Assertion{}, fmt.Errorf("%s: expect is %s; give true, false or \"conditional\"", origin, orNothing(c.Expect))
	}
	return a, nil
}

// CheckLine writes a as a line of a checks file, the form ParseCheck reads.
func CheckLine(a Assertion) ([]byte, error) {
	line := map[string]any{"check": a.String()}
	if a.Context != nil {
		line["context"] = a.Context
	}
	switch a.Expect {
	case ExpectAllowed:
		line["expect"] = true
	case ExpectDenied:
		line["expect"] = false
	default:
		line["expect"] = "conditional"
	}
	return json.Marshal(line)
}

func orNothing(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "missing"
	}
	return string(raw)
}
