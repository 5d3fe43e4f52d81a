package report

import "github.com/authzbench/authzbench/internal/result"

// NoRuns is the line that says a document holds no runs, and why when the document says so
// (a run stopped before its first measurement); "" for a document that holds some. Every
// format says it in place of a table with no rows: table, markdown and html among their
// notes, gobench as a line benchstat skips; the formats a program parses (csv, json; Data)
// hold no such line, and the command that renders them writes it on stderr.
func NoRuns(doc *result.Document) string {
	if len(doc.Runs) > 0 {
		return ""
	}
	line := "this result holds no runs: nothing was measured"
	if doc.StopReason != "" && !doc.Interrupted { // else the partial-result note says why
		line += " (the run stopped: " + doc.StopReason + ")"
	}
	return line
}
