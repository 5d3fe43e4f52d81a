package userwords

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
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
	switch {
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
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if key, ok := strings.CutPrefix(msg, "unknown field "); ok {
		msg = "unknown key " + key
	}
	return &JSONError{msg: msg, err: err}
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
