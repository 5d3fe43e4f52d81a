package workload

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// A family is a set of workloads generated on demand from their name, such as rules-path-1000:
// a size in the name, any size in a range, so nothing is embedded and nothing is listed ahead.
// Families answer the scaling questions (how latency grows with the number of rules, with the
// size of the data), one workload per point of the curve.

// family resolves the names that start with its prefix.
type family struct {
	// Prefix is the start of every name of the family ("rules-").
	Prefix string
	// Pattern is how a user writes a name of the family, for help and errors.
	Pattern string
	// Description says what the family's workloads are, for help.
	Description string
	// Build generates the workload called name with n inputs from the seed, or says what is
	// wrong with the name.
	Build func(name string, seed int64, n int) (*Workload, error)
}

var families []family

// registerFamily adds a family; called from init functions of the builtin_*.go files.
func registerFamily(f family) {
	for _, g := range families {
		if strings.HasPrefix(f.Prefix, g.Prefix) || strings.HasPrefix(g.Prefix, f.Prefix) {
			panic("workload: family prefixes overlap: " + f.Prefix + ", " + g.Prefix)
		}
	}
	families = append(families, f)
	sort.Slice(families, func(i, j int) bool { return families[i].Prefix < families[j].Prefix })
}

// familyOf returns the family a name belongs to by its prefix, or nil.
func familyOf(name string) *family {
	for i := range families {
		if strings.HasPrefix(name, families[i].Prefix) {
			return &families[i]
		}
	}
	return nil
}

// FamilyPatterns lists how the generated families' names are written, with what they are, for
// help texts: "rules-<kind>-<N>[-indexed]: ...".
func FamilyPatterns() []string {
	out := make([]string, 0, len(families))
	for _, f := range families {
		out = append(out, f.Pattern+": "+f.Description)
	}
	return out
}

// FamilyNamePatterns lists how the generated families' names are written:
// "rules-<kind>-<N>[-indexed]", "rbac-data-<N>".
func FamilyNamePatterns() []string {
	var ps []string
	for _, f := range families {
		ps = append(ps, f.Pattern)
	}
	return ps
}

// Scale is the point of a scaling series a generated workload is: the family, what grows, how
// big it is, and the style each engine's version is written in, so that runs on several
// targets land in series of their own.
type Scale struct {
	Family string // "rules-path", "rbac-data"
	Param  string // what N counts: "rules", "users"
	N      int
	// Styles names, by engine ("opa", "cedar"), how that engine's version is written:
	// "rego-rules", "rego-indexed", "cedar-policies".
	Styles map[string]string
}

// Series names the series an engine's runs of the workload belong to, such as
// "rules-path/rego-rules"; "" when the workload has no version for the engine.
func (s *Scale) Series(engine string) string {
	if s == nil || s.Styles[engine] == "" {
		return ""
	}
	return s.Family + "/" + s.Styles[engine]
}

// sizeOf reads the N of a family's name: digits only, from min to max.
func sizeOf(name, digits, pattern string, min, max int) (int, error) {
	if digits == "" || strings.Trim(digits, "0123456789") != "" || len(digits) > 8 {
		return 0, fmt.Errorf("workload %q: want %s, N a whole number from %d to %d", name, pattern, min, max)
	}
	n, _ := strconv.Atoi(digits)
	if strconv.Itoa(n) != digits {
		return 0, fmt.Errorf("workload %q: write N without leading zeros (%d)", name, n)
	}
	if n < min || n > max {
		return 0, fmt.Errorf("workload %q: N is %d; %s takes N from %d to %d", name, n, pattern, min, max)
	}
	return n, nil
}
