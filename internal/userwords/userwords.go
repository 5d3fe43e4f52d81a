// Package userwords puts what the program learns about bad input into the user's words: the
// decoding errors of JSON files (which speak of Go types and struct fields) become the key the
// user wrote and the kind of value it wants (a whole number, a duration such as 2s, a list, an
// object), and Want names those kinds for the scenario's YAML messages and for flags alike; a
// file that cannot be read says why without the system call's name; and a count the user gave
// must be one or more, in the same words for 0 as for a negative.
//
// It is not for messages the program writes itself: those are in the user's words already. It
// imports only the standard library, so that result, a leaf, can use it.
package userwords

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// Want names the kind of value a Go type (as reflect.Type's String writes it, and as yaml.v3
// and encoding/json name it in their errors) or a flag's type (as pflag's Value.Type names it)
// holds, in the words a user reading a file or a --help knows. object is what a structure is
// called where the user wrote it: "an object" in JSON, "a mapping" in YAML.
func Want(goType, object string) string {
	t := strings.TrimLeft(goType, "*")
	switch t {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "a whole number"
	case "float32", "float64":
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "time.Duration", "duration":
		return "a duration such as 2s"
	case "intSlice", "int64Slice", "uintSlice", "int32Slice":
		return "whole numbers separated by commas, such as 1,2,4"
	case "float64Slice", "float32Slice":
		return "numbers separated by commas, such as 100,1000"
	case "durationSlice":
		return "durations separated by commas, such as 1s,5s"
	case "boolSlice":
		return "true or false, separated by commas"
	case "stringSlice", "stringArray":
		return "text"
	case "ip":
		return "an IP address"
	case "count":
		return "a whole number"
	}
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case t == "interface {}" || t == "any":
		return "a value"
	}
	return object // a struct or a map: what the user calls an object or a mapping
}

// AtLeastOne refuses a count the user gave that is not one or more (workers, replicas,
// rounds, connections): 0 is refused with the same words as a negative, never taken as 1.
// name is what the user wrote: the flag (--replicas) or the file's key (replicas).
func AtLeastOne(name string, v int64) error {
	if v >= 1 {
		return nil
	}
	return fmt.Errorf("%s %d: want 1 or more", name, v)
}

// Unreadable says why the file the user named at path cannot be read, without the system
// call's name ("open x.json: no such file or directory" reads "x.json: no such file").
func Unreadable(path string, err error) error {
	why := err.Error()
	var pe *fs.PathError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		why = "no such file"
	case errors.Is(err, fs.ErrPermission):
		why = "not allowed to read it"
	case errors.As(err, &pe):
		why = pe.Err.Error()
	}
	return &reworded{msg: path + ": " + why, err: err}
}

type reworded struct {
	msg string
	err error
}

func (e *reworded) Error() string { return e.msg }
func (e *reworded) Unwrap() error { return e.err }
