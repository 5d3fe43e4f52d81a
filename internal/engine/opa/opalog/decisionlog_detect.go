package opalog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/authzbench/authzbench/internal/workload"
)

// signs says why the file given as inputs reads as an OPA decision log ("" when it reads as
// inputs; workload.UserSpec.DetectDecisionLog asks it), and refuses a file that is both, or that
// is gzip'd and no log. A file that cannot be read is left for the usual checks to name.
//
// An inputs line is {"input": ..., "expect": ...}; a decision-log event has a decision_id
// (every event OPA logs does), whether bare, in the console logger's envelope, or in the
// arrays the log service receives. Lines that are neither (OPA's own log lines, comments) do
// not decide.
func signs(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", nil // CheckFilesExist names it, in the words of the setting that gave it
	}
	defer f.Close()
	// Streamed: an inputs file may be far larger than memory would like to hold twice. A
	// gzip'd file is read whole, as the decision-log reader reads it.
	br := bufio.NewReaderSize(f, 64<<10)
	magic, _ := br.Peek(2)
	gzipped := len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b
	var text io.Reader = br
	if gzipped {
		raw, err := io.ReadAll(br)
		if err != nil {
			return "", fmt.Errorf("read %s: %w", path, err)
		}
		plain, err := gunzipped(path, raw)
		if err != nil {
			return "", err
		}
		text = bytes.NewReader(plain)
	}
	why, err := decisionLogSigns(path, text)
	if err != nil {
		return "", err
	}
	if why == "" {
		if gzipped {
			return "", workload.NewSettingError("inputs", func(n func(string) string) string {
				return fmt.Sprintf("%s %s: gzip'd and not an OPA decision log; an inputs file is read uncompressed (gunzip it), a decision log gzip'd or not", n("inputs"), path)
			})
		}
		return "", nil
	}
	if gzipped {
		why = "gzip'd, " + why
	}
	return why, nil
}

// decisionLogSigns says why text reads as a decision log ("" when it reads as inputs), or
// refuses a file that is both.
func decisionLogSigns(path string, text io.Reader) (string, error) {
	br := bufio.NewReader(text)
	first := 1 // the line the scan below starts on, after the blank ones
	for {
		c, err := br.ReadByte()
		if err != nil {
			return "", nil // empty: the inputs reader says so
		}
		if c == '\n' {
			first++
		}
		if c == ' ' || c == '\t' || c == '\r' || c == '\n' {
			continue
		}
		if c == '[' {
			// No inputs file starts so: each of its lines is an object.
			return "a JSON array, the form OPA's decision-log service receives", nil
		}
		_ = br.UnreadByte()
		break
	}
	var eventLine, inputsLine int
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 64<<10), workload.MaxLineBytes)
	for line := first; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 || b[0] != '{' {
			continue // blank, a comment, or not JSON: whichever reader runs names it
		}
		var keys struct {
			DecisionID *json.RawMessage `json:"decision_id"`
			Input      *json.RawMessage `json:"input"`
			Expect     *json.RawMessage `json:"expect"`
		}
		if json.Unmarshal(b, &keys) != nil {
			continue
		}
		event := keys.DecisionID != nil
		inputs := keys.Expect != nil || (keys.Input != nil && !event)
		if event && inputs {
			return "", ambiguous(path, fmt.Sprintf("%s:%d has both a decision-log event's \"decision_id\" and an inputs line's \"expect\"", path, line))
		}
		if event && eventLine == 0 {
			eventLine = line
		}
		if inputs && inputsLine == 0 {
			inputsLine = line
		}
		if eventLine > 0 && inputsLine > 0 {
			return "", ambiguous(path, fmt.Sprintf("%s:%d is a decision-log event (it has a \"decision_id\") and %s:%d an inputs line ({\"input\": ..., \"expect\": ...})",
				path, eventLine, path, inputsLine))
		}
	}
	if eventLine > 0 {
		return fmt.Sprintf("line %d is a decision-log event, with a \"decision_id\"", eventLine), nil
	}
	return "", nil
}

// ambiguous refuses a file given as inputs that reads both as inputs and as a decision log.
func ambiguous(path, where string) error {
	return workload.NewSettingError("inputs", func(n func(string) string) string {
		return fmt.Sprintf("%s %s: %s; a file is one or the other: give a decision log with %s FILE, and inputs with %s FILE",
			n("inputs"), path, where, n("decision_log"), n("inputs"))
	})
}
