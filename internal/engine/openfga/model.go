package openfga

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"
	"github.com/openfga/language/pkg/go/transformer"
	"google.golang.org/protobuf/encoding/protojson"
)

// LoadModel reads an authorization model file, telling its form from its name as OpenFGA's CLI
// does: a name ending in "fga.mod" is a modular model's manifest, one ending in "json" is the
// JSON model (as `fga model get --format json` writes it), anything else is the DSL.
func LoadModel(path string) (*openfgav1.AuthorizationModel, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read model: %w", err)
	}
	switch {
	case strings.HasSuffix(path, "fga.mod"):
		return modularModel(path, data)
	case strings.HasSuffix(path, "json"):
		return jsonModel(path, data)
	default:
		return dslModel(path, 1, string(data))
	}
}

// jsonModel reads the JSON form of a model.
func jsonModel(source string, data []byte) (*openfgav1.AuthorizationModel, error) {
	var m openfgav1.AuthorizationModel
	if err := protojson.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: JSON model: %w", source, err)
	}
	return &m, nil
}

// dslModel reads the DSL, starting on line firstLine of source (a model inline in a store file
// starts below its key), so syntax errors name the line in the user's file.
func dslModel(source string, firstLine int, dsl string) (*openfgav1.AuthorizationModel, error) {
	m, err := transformer.TransformDSLToProto(dsl)
	if err == nil {
		return m, nil
	}
	var syntax *transformer.OpenFgaDslSyntaxMultipleError
	if !errors.As(err, &syntax) {
		return nil, fmt.Errorf("%s:%d: model: %w", source, firstLine, err)
	}
	errs := make([]error, len(syntax.Errors))
	for i, e := range syntax.Errors {
		errs[i] = dslError(source, firstLine, e)
	}
	return nil, errors.Join(errs...)
}

// dslSyntaxError matches OpenFGA's DSL syntax error, whose line is counted from 0 (the language
// package stores the parser's line minus one) and whose fields are not exported.
var dslSyntaxError = regexp.MustCompile(`^syntax error at line=(\d+), column=(\d+): (.*)$`)

func dslError(source string, firstLine int, err error) error {
	m := dslSyntaxError.FindStringSubmatch(err.Error())
	if m == nil {
		return fmt.Errorf("%s:%d: model: %w", source, firstLine, err)
	}
	line, _ := strconv.Atoi(m[1])
	column, _ := strconv.Atoi(m[2])
	if firstLine > 1 {
		// Inline in a store file, the YAML's indentation shifts every column: name the line.
		return fmt.Errorf("%s:%d: model syntax error: %s", source, firstLine+line, m[3])
	}
	return fmt.Errorf("%s:%d:%d: model syntax error: %s", source, firstLine+line, column+1, m[3])
}

// modularModel reads a modular model: the fga.mod manifest names its module files, relative to
// its own directory, which OpenFGA's language package joins into one model.
func modularModel(path string, manifest []byte) (*openfgav1.AuthorizationModel, error) {
	mod, err := transformer.TransformModFile(string(manifest))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var modules []transformer.ModuleFile
	for _, name := range mod.Contents.Value {
		contents, err := os.ReadFile(filepath.Join(filepath.Dir(path), filepath.FromSlash(name.Value)))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: module: %w", path, name.Line, err)
		}
		modules = append(modules, transformer.ModuleFile{Name: name.Value, Contents: string(contents)})
	}
	m, err := transformer.TransformModuleFilesToModel(modules, mod.Schema.Value)
	if err == nil {
		return m, nil
	}
	var each *transformer.ModuleValidationMultipleError
	if !errors.As(err, &each) {
		return nil, fmt.Errorf("%s: modules: %w", path, err)
	}
	// Each error knows its module file and line, but its message names neither file nor module.
	errs := make([]error, len(each.Errors))
	for i, e := range each.Errors {
		errs[i] = fmt.Errorf("%s: modules: %w", path, e)
		var one *transformer.ModuleTransformationSingleError
		if errors.As(e, &one) && one.File != "" {
			errs[i] = fmt.Errorf("%s:%d: %s", filepath.Join(filepath.Dir(path), filepath.FromSlash(one.File)), one.Line.Start, one.Msg)
		}
	}
	return nil, errors.Join(errs...)
}
