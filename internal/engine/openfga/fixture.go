package openfga

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
	"gopkg.in/yaml.v3"
)

// Fixture is what a user's OpenFGA files describe: a model, the tuple sets it is checked
// against, and check assertions with their expected decisions.
type Fixture struct {
	Source string // the file named in errors
	Model  *openfgav1.AuthorizationModel
	// ModelOrigin is where the model was written: its file, or file:line inline.
	ModelOrigin string
	// TupleSets[0] is the store's own tuples; a store file's test with tuples of its own adds a
	// set (the store's tuples and the test's), as `fga model test` runs each such test in a
	// store of its own. Tests with the same own tuples share a set.
	TupleSets  []TupleSet
	Assertions []Assertion
	// NotMeasured counts, per kind ("list_objects", "list_users"), the queries a store file's
	// tests ask that authzbench does not measure, so a report can say so.
	NotMeasured map[string]int
}

// TupleSet is the tuples one store holds.
type TupleSet struct {
	Name   string // "store", or "test <name>"
	Tuples []Tuple
}

// Assertion is one Check and the decision it must get.
type Assertion struct {
	Name                   string // the test it comes from, if any
	Origin                 string // file:line
	User, Relation, Object string
	Context                *structpb.Struct // the request's condition context; nil for none
	ContextualTuples       []Tuple
	TupleSet               int // index into Fixture.TupleSets
	Expect                 bool
}

// LoadStore reads a store file as OpenFGA's CLI reads it for `fga model test` and
// `fga store import` (store.fga.yaml): the model inline (`model`, DSL) or by `model_file` (DSL,
// JSON or a modular model's fga.mod), tuples inline and from `tuple_file` and `tuple_files`
// (merged, as the CLI merges them), and `tests` whose `check` entries become assertions. Files
// named in it are taken from its directory. Keys are decoded strictly, as the CLI does.
func LoadStore(path string) (*Fixture, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read store file: %w", err)
	}
	var doc storeFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		return nil, positioned(path, err)
	}
	dir := filepath.Dir(path)
	f := &Fixture{Source: path, NotMeasured: map[string]int{}}

	switch {
	case doc.Model.Value != "" && doc.ModelFile.Value != "":
		// The CLI would use model and ignore model_file; measuring a model other than the one the
		// user may think of is worse than asking them to keep one.
		return nil, fmt.Errorf("%s:%d: both model and model_file; keep one", path, doc.Model.Line)
	case doc.Model.Value != "":
		// A block scalar's text starts on the line below its key.
		first := doc.Model.Line
		if doc.Model.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
			first++
		}
		f.Model, err = dslModel(path, first, doc.Model.Value)
		f.ModelOrigin = fmt.Sprintf("%s:%d", path, doc.Model.Line)
	case doc.ModelFile.Value != "":
		f.ModelOrigin = filepath.Join(dir, doc.ModelFile.Value)
		f.Model, err = LoadModel(f.ModelOrigin)
		err = doc.ModelFile.named(path, err)
	default:
		err = fmt.Errorf("%s: no model: give model (the DSL inline) or model_file", path)
	}
	if err != nil {
		return nil, err
	}

	store, err := tuplesOf(path, doc.Tuples)
	if err != nil {
		return nil, err
	}
	files := doc.TupleFiles
	if doc.TupleFile.Value != "" {
		files = append([]fileRef{doc.TupleFile}, files...)
	}
	for _, ref := range files {
		more, err := LoadTuples(filepath.Join(dir, ref.Value))
		if err != nil {
			return nil, ref.named(path, err)
		}
		store = append(store, more...)
	}
	f.TupleSets = []TupleSet{{Name: "store", Tuples: store}}

	setOf := map[string]int{} // a test's own tuples, written out → its tuple set
	for _, test := range doc.Tests {
		set := 0
		own, err := tuplesOf(path, test.Tuples)
		if err != nil {
			return nil, err
		}
		if test.TupleFile.Value != "" {
			more, err := LoadTuples(filepath.Join(dir, test.TupleFile.Value))
			if err != nil {
				return nil, test.TupleFile.named(path, err)
			}
			own = append(own, more...)
		}
		if len(own) > 0 {
			key := tupleSetKey(own)
			var seen bool
			if set, seen = setOf[key]; !seen {
				set = len(f.TupleSets)
				setOf[key] = set
				f.TupleSets = append(f.TupleSets, TupleSet{Name: "test " + test.Name, Tuples: append(append([]Tuple{}, store...), own...)})
			}
		}
		for _, c := range test.Check {
			as, err := c.assertions(path, test.Name, set)
			if err != nil {
				return nil, err
			}
			f.Assertions = append(f.Assertions, as...)
		}
		for _, q := range test.ListObjects {
			f.NotMeasured["list_objects"] += q.queries()
		}
		for _, q := range test.ListUsers {
			f.NotMeasured["list_users"] += q.queries()
		}
	}
	if len(f.Assertions) == 0 {
		return nil, fmt.Errorf("%s: no check assertions in its tests to measure (list_objects queries: %d, list_users queries: %d, not measured)",
			path, f.NotMeasured["list_objects"], f.NotMeasured["list_users"])
	}
	return f, nil
}

// storeFile is the store file's YAML, with the keys OpenFGA's CLI takes (its StoreData).
type storeFile struct {
	Name       string      `yaml:"name"`
	Model      yaml.Node   `yaml:"model"`
	ModelFile  fileRef     `yaml:"model_file"`
	Tuples     []yamlTuple `yaml:"tuples"`
	TupleFile  fileRef     `yaml:"tuple_file"`
	TupleFiles []fileRef   `yaml:"tuple_files"`
	Tests      []storeTest `yaml:"tests"`
}

func (s *storeFile) UnmarshalYAML(n *yaml.Node) error {
	if err := knownKeys(n, "store file", "name", "model", "model_file", "tuples", "tuple_file", "tuple_files", "tests"); err != nil {
		return err
	}
	type plain storeFile
	return n.Decode((*plain)(s))
}

type storeTest struct {
	Name        string        `yaml:"name"`
	Description string        `yaml:"description"`
	Tuples      []yamlTuple   `yaml:"tuples"`
	TupleFile   fileRef       `yaml:"tuple_file"`
	Check       []storeCheck  `yaml:"check"`
	ListObjects []notMeasured `yaml:"list_objects"`
	ListUsers   []notMeasured `yaml:"list_users"`
}

func (t *storeTest) UnmarshalYAML(n *yaml.Node) error {
	if err := knownKeys(n, "test", "name", "description", "tuples", "tuple_file", "check", "list_objects", "list_users"); err != nil {
		return err
	}
	type plain storeTest
	return n.Decode((*plain)(t))
}

// fileRef is a file a store file names, and the line naming it: a file that cannot be read is
// reported at the line that names it.
type fileRef struct {
	Value string
	line  int
}

func (r *fileRef) UnmarshalYAML(n *yaml.Node) error {
	r.line = n.Line
	return n.Decode(&r.Value)
}

// named says which line of the store file names a file that cannot be read. An error inside the
// file names the file's own line already.
func (r fileRef) named(store string, err error) error {
	if pathErr := (*fs.PathError)(nil); errors.As(err, &pathErr) {
		return fmt.Errorf("%s:%d: %s: %w", store, r.line, r.Value, pathErr)
	}
	if errors.Is(err, errTupleFileForm) {
		return fmt.Errorf("%s:%d: %w", store, r.line, err)
	}
	return err
}

// storeCheck is a test's check entry: each user (user, or users) and object (object, or
// objects) against each relation of assertions, as the CLI expands it.
type storeCheck struct {
	line       int
	User       string         `yaml:"user"`
	Users      []string       `yaml:"users"`
	Object     string         `yaml:"object"`
	Objects    []string       `yaml:"objects"`
	Context    map[string]any `yaml:"context"`
	Assertions yaml.Node      `yaml:"assertions"`
}

func (c *storeCheck) UnmarshalYAML(n *yaml.Node) error {
	if err := knownKeys(n, "check", "user", "users", "object", "objects", "context", "assertions"); err != nil {
		return err
	}
	type plain storeCheck
	c.line = n.Line
	return n.Decode((*plain)(c))
}

func (c storeCheck) assertions(path, test string, set int) ([]Assertion, error) {
	at := func(line int, format string, args ...any) error {
		return fmt.Errorf("%s:%d: test %q: check: %s", path, line, test, fmt.Sprintf(format, args...))
	}
	// The CLI's own rules (its StoreData.Validate).
	users, objects := c.Users, c.Objects
	switch {
	case c.User != "" && len(c.Users) > 0:
		return nil, at(c.line, "both user and users")
	case c.User != "":
		users = []string{c.User}
	case len(users) == 0:
		return nil, at(c.line, "no user or users")
	}
	switch {
	case c.Object != "" && len(c.Objects) > 0:
		return nil, at(c.line, "both object and objects")
	case c.Object != "":
		objects = []string{c.Object}
	case len(objects) == 0:
		return nil, at(c.line, "no object or objects")
	}
	if c.Assertions.Kind != yaml.MappingNode || len(c.Assertions.Content) == 0 {
		return nil, at(c.line, "assertions: want a mapping of relation: true or false")
	}
	ctx, err := contextStruct(c.Context)
	if err != nil {
		return nil, at(c.line, "context: %v", err)
	}
	var out []Assertion
	for _, user := range users {
		for _, object := range objects {
			for i := 0; i+1 < len(c.Assertions.Content); i += 2 {
				rel, want := c.Assertions.Content[i], c.Assertions.Content[i+1]
				var expect bool
				if err := want.Decode(&expect); err != nil {
					return nil, at(want.Line, "assertion %s: want true or false, got %q", rel.Value, want.Value)
				}
				out = append(out, Assertion{
					Name: test, Origin: fmt.Sprintf("%s:%d", path, rel.Line),
					User: user, Relation: rel.Value, Object: object,
					Context: ctx, TupleSet: set, Expect: expect,
				})
			}
		}
	}
	return out, nil
}

// notMeasured is a list_objects or list_users entry: counted, not run.
type notMeasured struct {
	Assertions map[string]yaml.Node `yaml:"assertions"`
}

func (q *notMeasured) UnmarshalYAML(n *yaml.Node) error {
	// The keys of the CLI's ModelTestListObjects and ModelTestListUsers together.
	if err := knownKeys(n, "list_objects or list_users entry", "user", "type", "object", "user_filter", "context", "assertions"); err != nil {
		return err
	}
	type plain notMeasured
	return n.Decode((*plain)(q))
}

// queries is how many requests the CLI would send for the entry: one per relation.
func (q notMeasured) queries() int { return len(q.Assertions) }

func tuplesOf(path string, doc []yamlTuple) ([]Tuple, error) {
	tuples := make([]Tuple, len(doc))
	for i, t := range doc {
		k, err := t.key()
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, t.line, err)
		}
		tuples[i] = Tuple{Key: k, Origin: fmt.Sprintf("%s:%d", path, t.line)}
	}
	return tuples, nil
}

// tupleSetKey writes tuples out whole (conditions and their context included), so two tests
// share a store only when their own tuples are the same.
func tupleSetKey(tuples []Tuple) string {
	var b strings.Builder
	for _, t := range tuples {
		data, _ := protojson.Marshal(t.Key)
		b.Write(data)
		b.WriteByte('\n')
	}
	return b.String()
}

// LoadChecks reads a model file (DSL, JSON or fga.mod), a tuple file (any form LoadTuples
// takes; "" for none) and a JSONL file of checks, one per line:
//
//	{"user": "user:anne", "relation": "viewer", "object": "doc:1", "context": {...},
//	 "contextual_tuples": [{"user": ..., "relation": ..., "object": ...}], "expect": true}
func LoadChecks(modelPath, tuplesPath, checksPath string) (*Fixture, error) {
	model, err := LoadModel(modelPath)
	if err != nil {
		return nil, err
	}
	f := &Fixture{Source: checksPath, Model: model, ModelOrigin: modelPath, TupleSets: []TupleSet{{Name: "store"}}, NotMeasured: map[string]int{}}
	if tuplesPath != "" {
		if f.TupleSets[0].Tuples, err = LoadTuples(tuplesPath); err != nil {
			return nil, err
		}
	}
	data, err := os.ReadFile(checksPath)
	if err != nil {
		return nil, fmt.Errorf("read checks: %w", err)
	}
	scanner := bufio.NewScanner(bytes.NewReader(data))
	scanner.Buffer(nil, 16<<20)
	for line := 1; scanner.Scan(); line++ {
		text := bytes.TrimSpace(scanner.Bytes())
		if len(text) == 0 {
			continue
		}
		a, err := jsonCheck(fmt.Sprintf("%s:%d", checksPath, line), text)
		if err != nil {
			return nil, err
		}
		f.Assertions = append(f.Assertions, a)
	}
	if err := scanner.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", checksPath, err)
	}
	if len(f.Assertions) == 0 {
		return nil, fmt.Errorf("%s: no checks", checksPath)
	}
	return f, nil
}

func jsonCheck(origin string, data []byte) (Assertion, error) {
	var c struct {
		User             string            `json:"user"`
		Relation         string            `json:"relation"`
		Object           string            `json:"object"`
		Context          map[string]any    `json:"context"`
		ContextualTuples []json.RawMessage `json:"contextual_tuples"`
		Expect           *bool             `json:"expect"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Assertion{}, fmt.Errorf("%s: check: %w", origin, err)
	}
	var missing []string
	for name, v := range map[string]string{"user": c.User, "relation": c.Relation, "object": c.Object} {
		if v == "" {
			missing = append(missing, name)
		}
	}
	slices.Sort(missing)
	if c.Expect == nil {
		missing = append(missing, "expect")
	}
	if len(missing) > 0 {
		return Assertion{}, fmt.Errorf("%s: check: missing %s", origin, strings.Join(missing, ", "))
	}
	if n := len(c.ContextualTuples); n > MaxContextualTuples {
		return Assertion{}, fmt.Errorf("%s: %d contextual tuples; OpenFGA takes at most %d per Check, so write the rest as tuples", origin, n, MaxContextualTuples)
	}
	ctx, err := contextStruct(c.Context)
	if err != nil {
		return Assertion{}, fmt.Errorf("%s: context: %w", origin, err)
	}
	a := Assertion{Origin: origin, User: c.User, Relation: c.Relation, Object: c.Object, Context: ctx, Expect: *c.Expect}
	for i, raw := range c.ContextualTuples {
		k, err := jsonTupleKey(raw)
		if err != nil {
			return Assertion{}, fmt.Errorf("%s: contextual tuple %d: %w", origin, i+1, err)
		}
		a.ContextualTuples = append(a.ContextualTuples, Tuple{Key: k, Origin: origin})
	}
	return a, nil
}
