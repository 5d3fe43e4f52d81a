package userwords

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// JSONError is a problem decoding a JSON document, in the user's words, with the line of the
// document it is on (0 where encoding/json did not say).
type JSONError struct {
	Line int
	msg  string
	err  error
}

func (e *JSONError) Error() string { return e.msg }
func (e *JSONError) Unwrap() error { return e.err }

// JSON rewrites an error of encoding/json decoding data: a value of the wrong kind names its
// key path ("key `runs.repetitions.requests`: want a whole number, got a string") and a
// syntax error its line, never a Go type or struct field. whole says what the document as a
// whole must be (`a JSON object {"input": ..., "expect": ...}`), for a problem with the
// document itself; empty, it is named from the type it was decoded into. A nil err is nil.
func JSON(data []byte, err error, whole string) error {
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	var pe *time.ParseError
	switch {
	case errors.As(err, &pe):
		// time.Time decodes itself, so encoding/json says neither key nor place: the value's
		// first place in the document stands for both.
		quoted := strconv.Quote(pe.Value)
		return &JSONError{Line: lineAt(data, int64(bytes.Index(data, []byte(quoted)))+1),
			msg: "want a time such as 2026-11-23T18:00:00Z, got " + quoted, err: err}
	case errors.As(err, &te):
		want := whole
		if want == "" || te.Field != "" {
			want = Want(te.Type.String(), "an object")
		}
		msg := "want " + want + ", got " + jsonGot(te.Value)
		if te.Field != "" {
			msg = "key `" + te.Field + "`: " + msg
		}
		return &JSONError{Line: lineAt(data, te.Offset), msg: msg, err: err}
	case errors.As(err, &se):
		return &JSONError{Line: lineAt(data, se.Offset), msg: "not valid JSON: " + se.Error(), err: err}
	}
	msg := Text(err.Error())
	msg = strings.TrimPrefix(msg, "json: ")
	if key, ok := strings.CutPrefix(msg, "unknown field "); ok {
		msg = "unknown key " + key
	}
	return &JSONError{msg: msg, err: err}
}

// jsonV2Problem is the message of a value of the wrong kind as JSON decoders built on
// encoding/json/v2 write it (cedar-go's, through go-json-experiment), whose typed error is not
// encoding/json's: "json: cannot unmarshal JSON number into Go string within "/id"".
var jsonV2Problem = regexp.MustCompile(`json: (?:cannot|unable to) unmarshal JSON (\w+) into Go (\S+?)(?: within "([^"]*)")?(?:$|: | after)`)

// yamlToJSON is how OPA's loader (through sigs.k8s.io/yaml) introduces a YAML syntax error.
var yamlToJSON = regexp.MustCompile(`error converting YAML to JSON: yaml: (line \d+: )?`)

// Text rewrites, within a message a library wrote (cedar-go's, OPA's loader's), the decoding
// problems it quotes, keeping the library's own words around them: a JSON value of the wrong
// kind, from decoders built on encoding/json/v2, as JSON does for encoding/json's errors (key
// path, kinds of value); a YAML syntax error by its line alone.
func Text(msg string) string {
	msg = yamlToJSON.ReplaceAllString(msg, "$1")
	return jsonV2Problem.ReplaceAllStringFunc(msg, func(m string) string {
		g := jsonV2Problem.FindStringSubmatch(m)
		kind, goType, pointer := g[1], g[2], g[3]
		say := "want " + Want(goType, "an object") + ", got " + jsonGot(strings.TrimSuffix(kind, "ean"))
		if key := strings.ReplaceAll(strings.TrimPrefix(pointer, "/"), "/", "."); key != "" {
			say = "key `" + key + "`: " + say
		}
		return say + trailer(g[0])
	})
}

// Rewritten is err with its message rewritten by Text, still unwrapping to err; err itself
// when Text changes nothing.
func Rewritten(err error) error {
	if err == nil {
		return nil
	}
	if msg := Text(err.Error()); msg != err.Error() {
		return &reworded{msg: msg, err: err}
	}
	return err
}

// trailer is what a jsonV2Problem match took after the problem itself: ": ", " after" or "".
func trailer(m string) string {
	for _, t := range []string{": ", " after"} {
		if strings.HasSuffix(m, t) {
			return t
		}
	}
	return ""
}

// jsonGot says what kind of value encoding/json found ("number", "number 1.5", "array").
func jsonGot(value string) string {
	switch kind, literal, _ := strings.Cut(value, " "); {
	case literal != "":
		return literal
	case kind == "array":
		return "a list"
	case kind == "object":
		return "an object"
	case kind == "bool":
		return "true or false, a boolean"
	case kind == "number", kind == "string":
		return "a " + kind
	}
	return value
}

// lineAt is the 1-based line of byte offset in data; 0 where the offset is unknown.
func lineAt(data []byte, offset int64) int {
	if offset <= 0 || data == nil {
		return 0
	}
	offset = min(offset, int64(len(data)))
	return bytes.Count(data[:offset], []byte("\n")) + 1
}
