package scenario

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/authzbench/authzbench/internal/userwords"
)

// yamlTypeProblem is one entry of a yaml.TypeError: yaml.v3 writes the node's tag, its value
// (cut to 7 characters and "..." past 10) and the Go type it could not go into.
var yamlTypeProblem = regexp.MustCompile("^line (\\d+): cannot unmarshal (!!\\w+)(?: `(.*)`)? into (.+)$")

// yamlWords rewrites the problems of a yaml.v3 decoding error of the file source, whose parsed
// tree is root, as "source:LINE: key `load.timeout`: want a duration such as 2s, got "four"",
// one error per problem. An error that is not yaml.v3's TypeError is returned as it is. A nil
// err is nil.
func yamlWords(source string, root *yaml.Node, err error) error {
	problems, ok := yamlProblems(root, err)
	if !ok {
		return err
	}
	var errs []error
	for _, p := range problems {
		errs = append(errs, fmt.Errorf("%s:%d: %s", source, p.Line, p.Say))
	}
	return errors.Join(errs...)
}

// problem is one problem of a file, on its line, in the user's words.
type problem struct {
	Line int
	Say  string
}

// yamlProblems are the problems of a yaml.v3 TypeError decoding root, in the user's words; ok
// is false when err is not one.
func yamlProblems(root *yaml.Node, err error) (problems []problem, ok bool) {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return nil, false
	}
	for _, msg := range te.Errors {
		problems = append(problems, yamlTypeProblemOf(root, msg))
	}
	return problems, true
}

func yamlTypeProblemOf(root *yaml.Node, msg string) problem {
	m := yamlTypeProblem.FindStringSubmatch(msg)
	if m == nil {
		if line, rest, ok := strings.Cut(strings.TrimPrefix(msg, "line "), ": "); ok && strings.HasPrefix(msg, "line ") {
			n, _ := strconv.Atoi(line)
			return problem{n, rest}
		}
		return problem{0, msg}
	}
	line, _ := strconv.Atoi(m[1])
	tag, value, goType := m[2], m[3], m[4]
	want := userwords.Want(goType, "a mapping")
	got := yamlGot(tag, value)
	where := ""
	if path, n := findYAML(root, line, tag, value); n != nil {
		got = yamlGot(tag, n.Value)
		keys, item, isItem := strings.Cut(path, " item ")
		switch {
		case keys != "" && isItem:
			where = "key `" + keys + "`, item " + item + ": "
		case keys != "":
			where = "key `" + keys + "`: "
		case isItem:
			where = "item " + item + ": "
		}
	}
	return problem{line, fmt.Sprintf("%swant %s, got %s", where, want, got)}
}

// yamlGot says what the user wrote, as they wrote it where that is short.
func yamlGot(tag, value string) string {
	switch tag {
	case "!!seq":
		return "a list"
	case "!!map":
		return "a mapping"
	case "!!null":
		return "nothing"
	case "!!str":
		return strconv.Quote(value)
	}
	return value
}

// findYAML finds the node yaml.v3 complained of, by its line, tag and the start of its value,
// and the keys that lead to it ("targets.load.timeout", with "item N" for a list's element).
func findYAML(root *yaml.Node, line int, tag, value string) (string, *yaml.Node) {
	prefix, cut := strings.CutSuffix(value, "...")
	matches := func(n *yaml.Node) bool {
		if n.Line != line || n.ShortTag() != tag {
			return false
		}
		if n.Kind != yaml.ScalarNode {
			return true
		}
		return n.Value == value || cut && strings.HasPrefix(n.Value, prefix)
	}
	seen := map[*yaml.Node]bool{} // an alias can lead back to its own anchor
	var walk func(n *yaml.Node, path string) (string, *yaml.Node)
	walk = func(n *yaml.Node, path string) (string, *yaml.Node) {
		if n == nil || seen[n] {
			return "", nil
		}
		seen[n] = true
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				if p, found := walk(c, path); found != nil {
					return p, found
				}
			}
		case yaml.MappingNode:
			// A value's own problem before its entry's: [[rbac]] for a list of names is item
			// 1's, though the list and the item start on the same line.
			for i := 0; i+1 < len(n.Content); i += 2 {
				p := n.Content[i].Value
				if path != "" {
					p = path + "." + p
				}
				if p, found := walk(n.Content[i+1], p); found != nil {
					return p, found
				}
				if matches(n.Content[i+1]) {
					return p, n.Content[i+1]
				}
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				if p, found := walk(c, path); found != nil {
					return p, found
				}
				if matches(c) {
					return fmt.Sprintf("%s item %d", path, i+1), c
				}
			}
		case yaml.AliasNode:
			return walk(n.Alias, path)
		}
		return "", nil
	}
	if matches(root) {
		return "", root
	}
	return walk(root, "")
}
