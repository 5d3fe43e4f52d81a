package change

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// ReadFile reads a changes file: JSON lines, one change each, in the order they are applied.
// Each line holds "expect", the decisions the change sets (input number, from 1 among the
// workload's inputs, to "allow" or "deny"; {} for a change that sets none), and the write in a
// target's form: "request" for the http target (method, path, body, header), or "write", the
// change in the engine's own write form (a JSON Patch of OPA's data, an update of Cedar's
// entities, an OpenFGA Write's body, a SpiceDB WriteRelationships request), which the engine
// checks (engine.WriteChecker) and its applier sends. Blank lines are skipped. Every bad line is
// reported, each by file and line, before anything runs.
func ReadFile(path string, inputs int) ([]Change, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("changes: %w", err)
	}
	return Read(path, data, inputs)
}

// Read is ReadFile over data, named name in messages.
func Read(name string, data []byte, inputs int) ([]Change, error) {
	var out []Change
	var errs []error
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		where := name + ":" + strconv.Itoa(line)
		c, err := readLine(text, inputs)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
			continue
		}
		c.Source = where
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, fmt.Errorf("%s: after line %d: %w", name, line, err))
	}
	if len(errs) == 0 && len(out) == 0 {
		errs = append(errs, fmt.Errorf("%s: no changes in it: want one JSON object a line, such as %s", name, exampleLine))
	}
	return out, errors.Join(errs...)
}

const exampleLine = `{"request": {"method": "POST", "path": "/revoke", "body": {"user": "alice"}}, "expect": {"3": "deny"}}`

func readLine(text []byte, inputs int) (Change, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(text, &raw); err != nil {
		return Change{}, fmt.Errorf("not a JSON object: %v; want one change a line, such as %s", err, exampleLine)
	}
	var c Change
	for key := range raw {
		if key != "expect" && key != "request" && key != "write" {
			return Change{}, fmt.Errorf("unknown key %q: a change holds \"expect\" and the write (\"request\" for the http target, \"write\" in an engine's own form)", key)
		}
	}
	exp, ok := raw["expect"]
	if !ok {
		return Change{}, errors.New(`no "expect": give the decisions the change sets by input number ({"3": "deny"}), or {} for none`)
	}
	sets, err := readExpect(exp, inputs)
	if err != nil {
		return Change{}, err
	}
	c.Sets = sets
	if w, ok := raw["write"]; ok {
		if _, both := raw["request"]; both {
			return Change{}, errors.New(`both "request" and "write": give the http target's request or the engine's write`)
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, w); err != nil || buf.Len() == 0 || buf.String() == "null" {
			return Change{}, errors.New(`"write" is empty: give the change in the engine's write form`)
		}
		c.Form = buf.Bytes()
		return c, nil
	}
	req, ok := raw["request"]
	if !ok {
		return Change{}, errors.New(`no "request": the http target sends each change's request ({"method": "POST", "path": "/grant", "body": {...}}); an engine's target takes "write", the change in its own form`)
	}
	if c.Request, err = readRequest(req); err != nil {
		return Change{}, err
	}
	return c, nil
}

func readExpect(data json.RawMessage, inputs int) (map[int]bool, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, errors.New(`"expect": want an object of input numbers to "allow" or "deny", such as {"3": "deny"}`)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	sets := map[int]bool{}
	for _, k := range keys {
		n, err := strconv.Atoi(k)
		if err != nil || n < 1 || n > inputs {
			return nil, fmt.Errorf(`"expect": %q: want an input number from 1 to %d (the workload's inputs, in order)`, k, inputs)
		}
		var v any
		_ = json.Unmarshal(m[k], &v)
		switch v := v.(type) {
		case bool:
			sets[n-1] = v
		case string:
			switch strings.ToLower(v) {
			case "allow":
				sets[n-1] = true
			case "deny":
				sets[n-1] = false
			default:
				return nil, fmt.Errorf(`"expect": input %s: %q: want "allow" or "deny"`, k, v)
			}
		default:
			return nil, fmt.Errorf(`"expect": input %s: %s: want "allow" or "deny"`, k, m[k])
		}
	}
	return sets, nil
}

func readRequest(data json.RawMessage) (*Request, error) {
	var r Request
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf(`"request": %v; want {"method": "POST", "path": "/grant", "body": {...}, "header": {"Name": "value"}}`, err)
	}
	if r.Method == "" {
		r.Method = "POST"
	}
	for _, c := range r.Method {
		if c < 'A' || c > 'Z' {
			return nil, fmt.Errorf(`"request": method %q: want an HTTP method such as POST, PUT, PATCH or DELETE`, r.Method)
		}
	}
	if !strings.HasPrefix(r.Path, "/") && !strings.HasPrefix(r.Path, "http://") && !strings.HasPrefix(r.Path, "https://") {
		return nil, fmt.Errorf(`"request": path %q: want a path from /, sent to the target's host, or a whole http(s) URL`, r.Path)
	}
	return &r, nil
}
