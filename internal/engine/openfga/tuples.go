package openfga

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
	"gopkg.in/yaml.v3"
)

// errTupleFileForm is a tuple file whose name says no form LoadTuples reads.
var errTupleFileForm = errors.New("tuple file of unknown form")

// Tuple is a relationship tuple and where the user wrote it, so that OpenFGA's refusal of it
// names the line to fix.
type Tuple struct {
	Key    *openfgav1.TupleKey
	Origin string // file:line
}

// LoadTuples reads a tuple file in any form OpenFGA's CLI takes (`fga tuple write --file`,
// tuple_file in a store file), told by its extension: .yaml, .yml or .json (a list of
// {user, relation, object, condition: {name, context}}), .jsonl (one such object per line) or
// .csv (the CLI's columns: user_type, user_id, user_relation, relation, object_type, object_id,
// condition_name, condition_context). An empty file is an error, as it is to the CLI.
func LoadTuples(path string) ([]Tuple, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read tuples: %w", err)
	}
	var tuples []Tuple
	switch filepath.Ext(path) {
	case ".yaml", ".yml", ".json":
		// The CLI reads JSON tuple files with its YAML decoder too; so do we, for the lines.
		tuples, err = yamlTuples(path, data)
	case ".jsonl":
		tuples, err = jsonlTuples(path, data)
	case ".csv":
		tuples, err = csvTuples(path, data)
	default:
		return nil, fmt.Errorf("%s: %w %q; want .yaml, .yml, .json, .jsonl or .csv", path, errTupleFileForm, filepath.Ext(path))
	}
	if err == nil && len(tuples) == 0 {
		err = fmt.Errorf("%s: no tuples", path)
	}
	return tuples, err
}

func yamlTuples(path string, data []byte) ([]Tuple, error) {
	var doc []yamlTuple
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, positioned(path, err)
	}
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

func jsonlTuples(path string, data []byte) ([]Tuple, error) {
	var tuples []Tuple
	scanner := bufio.NewScanner(bytes.NewReader(data))
	scanner.Buffer(nil, 1<<20)
	for line := 1; scanner.Scan(); line++ {
		text := bytes.TrimSpace(scanner.Bytes())
		if len(text) == 0 {
			continue
		}
		t, err := jsonTupleKey(text)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		tuples = append(tuples, Tuple{Key: t, Origin: fmt.Sprintf("%s:%d", path, line)})
	}
	if err := scanner.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return tuples, nil
}

// jsonTuple is a tuple as OpenFGA's API and CLI write it in JSON.
type jsonTuple struct {
	User      string `json:"user"`
	Relation  string `json:"relation"`
	Object    string `json:"object"`
	Condition *struct {
		Name    string         `json:"name"`
		Context map[string]any `json:"context"`
	} `json:"condition"`
}

func (t jsonTuple) key() (*openfgav1.TupleKey, error) {
	k := &openfgav1.TupleKey{User: t.User, Relation: t.Relation, Object: t.Object}
	if t.Condition != nil {
		c, err := contextStruct(t.Condition.Context)
		if err != nil {
			return nil, err
		}
		k.Condition = &openfgav1.RelationshipCondition{Name: t.Condition.Name, Context: c}
	}
	return k, nil
}

// jsonTupleKey decodes one tuple, refusing keys it does not know (a misspelt "condtion" would
// otherwise write the tuple without its condition).
func jsonTupleKey(data []byte) (*openfgav1.TupleKey, error) {
	var t jsonTuple
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return nil, fmt.Errorf("tuple: %w", err)
	}
	return t.key()
}

func csvTuples(path string, data []byte) ([]Tuple, error) {
	r := csv.NewReader(bytes.NewReader(data))
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s:1: tuple header: %w", path, err)
	}
	column := map[string]int{}
	known := []string{"user_type", "user_id", "user_relation", "relation", "object_type", "object_id", "condition_name", "condition_context"}
	for i, h := range header {
		h = strings.TrimSpace(h)
		if !slices.Contains(known, h) {
			return nil, fmt.Errorf("%s:1: unknown column %q; known: %s", path, h, strings.Join(known, ", "))
		}
		column[h] = i
	}
	for _, required := range []string{"user_type", "user_id", "relation", "object_type", "object_id"} {
		if _, ok := column[required]; !ok {
			return nil, fmt.Errorf("%s:1: missing column %q", path, required)
		}
	}
	if _, ok := column["condition_context"]; ok {
		if _, ok := column["condition_name"]; !ok {
			return nil, fmt.Errorf("%s:1: column condition_context needs condition_name", path)
		}
	}
	field := func(row []string, name string) string {
		if i, ok := column[name]; ok {
			return row[i]
		}
		return ""
	}
	var tuples []Tuple
	for {
		row, err := r.Read()
		if errors.Is(err, io.EOF) {
			return tuples, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		line, _ := r.FieldPos(0)
		user := field(row, "user_type") + ":" + field(row, "user_id")
		if rel := field(row, "user_relation"); rel != "" {
			user += "#" + rel
		}
		k := &openfgav1.TupleKey{User: user, Relation: field(row, "relation"), Object: field(row, "object_type") + ":" + field(row, "object_id")}
		if name := field(row, "condition_name"); name != "" {
			var ctx map[string]any
			if text := field(row, "condition_context"); text != "" {
				if err := json.Unmarshal([]byte(text), &ctx); err != nil {
					return nil, fmt.Errorf("%s:%d: condition_context: %w", path, line, err)
				}
			}
			c, err := contextStruct(ctx)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: condition_context: %w", path, line, err)
			}
			k.Condition = &openfgav1.RelationshipCondition{Name: name, Context: c}
		}
		tuples = append(tuples, Tuple{Key: k, Origin: fmt.Sprintf("%s:%d", path, line)})
	}
}

// yamlTuple is a tuple in YAML (a store file's tuples, a .yaml or .json tuple file), with its line.
type yamlTuple struct {
	line      int
	User      string         `yaml:"user"`
	Relation  string         `yaml:"relation"`
	Object    string         `yaml:"object"`
	Condition *yamlCondition `yaml:"condition"`
}

type yamlCondition struct {
	Name    string         `yaml:"name"`
	Context map[string]any `yaml:"context"`
}

func (t *yamlTuple) UnmarshalYAML(n *yaml.Node) error {
	if err := knownKeys(n, "tuple", "user", "relation", "object", "condition"); err != nil {
		return err
	}
	type plain yamlTuple
	t.line = n.Line
	return n.Decode((*plain)(t))
}

func (c *yamlCondition) UnmarshalYAML(n *yaml.Node) error {
	if err := knownKeys(n, "condition", "name", "context"); err != nil {
		return err
	}
	type plain yamlCondition
	return n.Decode((*plain)(c))
}

func (t yamlTuple) key() (*openfgav1.TupleKey, error) {
	k := &openfgav1.TupleKey{User: t.User, Relation: t.Relation, Object: t.Object}
	if t.Condition != nil {
		c, err := contextStruct(t.Condition.Context)
		if err != nil {
			return nil, fmt.Errorf("condition context: %w", err)
		}
		k.Condition = &openfgav1.RelationshipCondition{Name: t.Condition.Name, Context: c}
	}
	return k, nil
}

// lineError is an error at a line of the YAML being decoded; the decoder's caller adds the file.
type lineError struct {
	line int
	msg  string
}

func (e *lineError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

// knownKeys refuses a mapping key that is not one of keys: OpenFGA's CLI decodes its store file
// strictly, and a misspelt key silently ignored would change what is measured.
func knownKeys(n *yaml.Node, what string, keys ...string) error {
	if n.Kind != yaml.MappingNode {
		return nil // the decoder names the wrong shape itself
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; !slices.Contains(keys, k.Value) {
			return &lineError{k.Line, fmt.Sprintf("unknown key %q in %s; known: %s", k.Value, what, strings.Join(keys, ", "))}
		}
	}
	return nil
}

// yamlLine finds the line yaml.v3 names in its own errors ("yaml: line 3: ...").
var yamlLine = regexp.MustCompile(`^(?:yaml: )?(?:unmarshal errors:\n\s*)?line (\d+): `)

// positioned turns a YAML decoding error into one that starts with file:line, as a compiler's.
func positioned(path string, err error) error {
	var le *lineError
	if errors.As(err, &le) {
		return fmt.Errorf("%s:%d: %s", path, le.line, le.msg)
	}
	msg := err.Error()
	if m := yamlLine.FindStringSubmatchIndex(msg); m != nil {
		line, _ := strconv.Atoi(msg[m[2]:m[3]])
		return fmt.Errorf("%s:%d: %s", path, line, msg[m[1]:])
	}
	return fmt.Errorf("%s: %s", path, strings.TrimPrefix(msg, "yaml: "))
}

// contextStruct turns a decoded context (of a condition or a check) into OpenFGA's Struct. It
// goes through JSON, as OpenFGA's CLI sends it: YAML's unquoted timestamps become RFC 3339
// strings, the form OpenFGA's timestamp parameters take.
func contextStruct(ctx map[string]any) (*structpb.Struct, error) {
	if ctx == nil {
		return nil, nil
	}
	data, err := json.Marshal(ctx)
	if err != nil {
		return nil, err
	}
	var s structpb.Struct
	if err := protojson.Unmarshal(data, &s); err != nil {
		return nil, err
	}
	return &s, nil
}
