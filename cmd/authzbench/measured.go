package main

import (
	"fmt"
	"strings"

	"github.com/authzbench/authzbench/internal/result"
)

// servedNothing is how every command that measures ends when a run, or one of its repetitions,
// served no decision (result.Run.NothingServed): exit 1, naming each such run and why, whatever
// --allow-errors says: zero decisions is no measurement, not a measurement with some errors.
// The result is still written, and the table says it under the run.
func servedNothing(doc *result.Document) error {
	var why []string
	for i := range doc.Runs {
		r := &doc.Runs[i]
		if reason := r.NothingServed(); reason != "" {
			why = append(why, r.Name()+": "+reason)
		}
	}
	if len(why) == 0 {
		return nil
	}
	return &exitError{exitFailed, fmt.Errorf("measured nothing: %s", strings.Join(why, "; "))}
}
