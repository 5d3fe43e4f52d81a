package scenario

import (
	"errors"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/userwords"
)

// decodeOptions reads a target entry's `options:` into its kind's own settings, strictly: a key
// the kind does not take is an error naming it, its line and the keys the kind does take, and
// the settings must pass the kind's own check.
func decodeOptions(source string, kind *kinds.Kind, n *yaml.Node) (kinds.Config, error) {
	cfg := kind.NewConfig()
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil, nil
	}
	known := kinds.OptionKeys(cfg)
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: target %s: options: want a mapping of %s", source, n.Line, kind.Name, takes(known))
	}
	var errs []error
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if !kinds.HasOption(cfg, k.Value) {
			errs = append(errs, fmt.Errorf("%s:%d: target %s: unknown option %q; %s", source, k.Line, kind.Name, k.Value, takes(known)))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if err := n.Decode(cfg); err != nil {
		if problems, ok := yamlProblems(n, err); ok {
			for _, p := range problems {
				errs = append(errs, fmt.Errorf("%s:%d: target %s: options: %s", source, p.Line, kind.Name, p.Say))
			}
			return nil, errors.Join(errs...)
		}
		return nil, fmt.Errorf("%s:%d: target %s: options: %w", source, n.Line, kind.Name, err)
	}
	// A count given as 0 is refused as a negative is, not taken as "unset": only a key left out
	// means the kind's default.
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if v, ok := kinds.CountOption(cfg, k.Value); ok {
			if err := userwords.AtLeastOne(k.Value, v); err != nil {
				errs = append(errs, fmt.Errorf("%s:%d: target %s: options: %w", source, k.Line, kind.Name, err))
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if err := cfg.Check(); err != nil {
		return nil, atKeys(source, kind.Name, n, err)
	}
	return cfg, nil
}

// atKeys places each of a kind's complaints about its options on the line of the option it
// blames (an OptionError's key), or of the options: mapping for one that names no key written.
func atKeys(source, kind string, n *yaml.Node, err error) error {
	var errs []error
	for _, e := range leaves(err) {
		line := n.Line
		var oe *kinds.OptionError
		if errors.As(e, &oe) {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == oe.Key {
					line = n.Content[i].Line
				}
			}
		}
		// %v, not %w: the words are the file's, and no flag of the command line renames them.
		errs = append(errs, fmt.Errorf("%s:%d: target %s: options: %v", source, line, kind, e))
	}
	return errors.Join(errs...)
}

// leaves are the errors joined in err, however deeply, each on its own.
func leaves(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, leaves(e)...)
		}
		return out
	}
	return []error{err}
}

// takes says which option keys a kind takes.
func takes(known []string) string {
	if len(known) == 0 {
		return "this target takes no options"
	}
	return "known: " + strings.Join(known, ", ")
}

// SetOptions sets target options given on the command line (by key: url, port, opa_bin ...) on
// every target whose kind takes them, over what the scenario says; a key no target takes is
// left alone (the command line says whether that is a mistake). Each target's settings are then
// checked as a scenario's options are (Config.Check: its TLS files read, among the rest), so a
// flag that is wrong, or contradicts a scenario's option, is refused before anything starts;
// the command line names the flags in the errors.
func (s *Scenario) SetOptions(values map[string]any) error {
	if len(values) == 0 {
		return nil
	}
	var errs []error
	seen := map[string]bool{} // the steps of a sweep share their entry's settings, and its errors
	for i := range s.Targets {
		t := &s.Targets[i]
		if t.Kind() == nil {
			continue
		}
		cfg := t.Settings()
		_, err := kinds.SetOptions(cfg, values)
		if err == nil {
			err = cfg.Check()
		}
		if err != nil && !seen[t.Name+err.Error()] {
			seen[t.Name+err.Error()] = true
			errs = append(errs, fmt.Errorf("target %s: %w", t.Name, err))
		}
		t.Config = cfg
	}
	return errors.Join(errs...)
}
