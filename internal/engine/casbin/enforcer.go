package casbin

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	casbinv3 "github.com/casbin/casbin/v3"
	"github.com/casbin/casbin/v3/effector"
	"github.com/casbin/casbin/v3/model"
	"github.com/casbin/casbin/v3/persist"
	"github.com/casbin/casbin/v3/util"
	"github.com/casbin/govaluate"
)

// Files are a Casbin model and its policy, as Casbin reads them: the model's text (a .conf) and
// the policy's (a .csv, one rule a line), each with the name messages give it (the user's path,
// or a built-in's file name).
type Files struct {
	ModelName, Model   string
	PolicyName, Policy string
}

// ReadFiles reads the user's model and policy files; policyPath may be empty for a model whose
// matcher reads no policy.
func ReadFiles(modelPath, policyPath string) (Files, error) {
	f := Files{ModelName: modelPath, PolicyName: policyPath}
	b, err := os.ReadFile(modelPath)
	if err != nil {
		return f, err
	}
	f.Model = string(b)
	if policyPath != "" {
		if b, err = os.ReadFile(policyPath); err != nil {
			return f, err
		}
		f.Policy = string(b)
	}
	return f, nil
}

// ParseModel reads a model as Casbin does (model.NewModelFromString), and refuses, naming the
// file and the line, what Casbin would refuse only at the first Enforce: a matcher its
// expression language cannot parse, an effect its default effector does not know.
func ParseModel(name, text string) (model.Model, error) {
	m, err := model.NewModelFromString(text)
	if err != nil {
		return nil, modelError(name, text, err)
	}
	for key, a := range m["m"] {
		if _, err := govaluate.NewEvaluableExpressionWithFunctions(a.Value, matcherFunctions(m, a.Value)); err != nil {
			return nil, fmt.Errorf("%s:%d: casbin refuses the matcher %s: %w", name, lineOf(text, "matchers", key), key, err)
		}
	}
	for key, a := range m["e"] {
		// The default effector's own check: it knows a fixed set of effects and says so for
		// any other, at every Enforce.
		if _, _, err := effector.NewDefaultEffector().MergeEffects(a.Value, []effector.Effect{effector.Indeterminate}, []float64{0}, 0, 1); err != nil {
			return nil, fmt.Errorf("%s:%d: casbin refuses the effect %s = %s: %w", name, lineOf(text, "policy_effect", key), key, a.Value, err)
		}
	}
	return m, nil
}

// matcherFunctions are the functions a matcher may call, as Casbin's Enforce gives them: its
// built-ins (keyMatch, ipMatch, globMatch, ...), one per role definition (g, g2), and eval
// where the matcher uses it. Only their names matter to the parser.
func matcherFunctions(m model.Model, matcher string) map[string]govaluate.ExpressionFunction {
	fm := model.LoadFunctionMap()
	fns := fm.GetFunctions()
	unused := func(...any) (any, error) { return false, nil }
	for key := range m["g"] {
		fns[key] = unused
	}
	if util.HasEval(matcher) {
		fns["eval"] = unused
	}
	return fns
}

// configLine is how Casbin's configuration parser names the line it refuses.
var configLine = regexp.MustCompile(`line (\d+)`)

// modelError is Casbin's refusal of a model, naming the file and, where Casbin says it, the
// line.
func modelError(name, text string, err error) error {
	if m := configLine.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Errorf("%s:%s: casbin refuses the model: %w", name, m[1], err)
	}
	if strings.HasPrefix(err.Error(), "missing required sections") {
		return fmt.Errorf("%s: casbin refuses the model: %w (a model has [request_definition], [policy_definition], [policy_effect] and [matchers])", name, err)
	}
	return fmt.Errorf("%s: casbin refuses the model: %w", name, err)
}

// lineOf is the line of key's definition in section of a model's text; 0 when not found.
func lineOf(text, section, key string) int {
	in := false
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			in = line == "["+section+"]"
			continue
		}
		if k, _, ok := strings.Cut(line, "="); in && ok && strings.TrimSpace(k) == key {
			return i + 1
		}
	}
	return 0
}

// RequestTokens are the names of a model's request values (r = sub, obj, act: sub, obj, act).
func RequestTokens(m model.Model) []string {
	r := m["r"]["r"]
	if r == nil {
		return nil
	}
	out := make([]string, len(r.Tokens))
	for i, t := range r.Tokens {
		out[i] = strings.TrimPrefix(t, "r_")
	}
	return out
}

// NewEnforcer loads f into a SyncedEnforcer: the model parsed as ParseModel does, then every
// policy line through Casbin's own loader (persist.LoadPolicyArray, which refuses a rule whose
// size is not its definition's and a type the model does not define), through Casbin's own
// LoadPolicy, which sorts and builds the role links. Every refusal names its file and line.
//
// A SyncedEnforcer, not an Enforcer: Casbin's documentation (casbin.org/docs/enforcers, and its
// multi-threading page) and its maintainers (casbin#721) say the plain Enforcer is not safe for
// concurrent use and that a program calling Enforce from several goroutines, as every Go HTTP
// service does, uses SyncedEnforcer, whose Enforce holds a read lock. Its cost is measured
// with the rest: it is what an embedding service pays.
func NewEnforcer(f Files) (*casbinv3.SyncedEnforcer, error) {
	m, err := ParseModel(f.ModelName, f.Model)
	if err != nil {
		return nil, err
	}
	e, err := casbinv3.NewSyncedEnforcer(m, &linesAdapter{name: f.PolicyName, text: f.Policy})
	if err != nil {
		var le *lineError
		if errors.As(err, &le) {
			return nil, le
		}
		return nil, fmt.Errorf("%s: casbin refuses the policy: %w", f.PolicyName, err)
	}
	return e, nil
}

// lineError is a policy line Casbin refuses.
type lineError struct {
	where string // file:line
	err   error
}

func (e *lineError) Error() string {
	return e.where + ": casbin refuses the policy line: " + e.err.Error()
}
func (e *lineError) Unwrap() error { return e.err }

// linesAdapter is Casbin's file adapter over text already read, telling which line Casbin
// refused: the file adapter reads the same lines the same way (trimmed, blank lines and # lines
// skipped, each line a CSV record) but says nothing of where.
type linesAdapter struct {
	name, text string
}

func (a *linesAdapter) LoadPolicy(m model.Model) error {
	sc := bufio.NewScanner(strings.NewReader(a.text))
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		where := fmt.Sprintf("%s:%d", a.name, n)
		r := csv.NewReader(strings.NewReader(line))
		r.Comment, r.TrimLeadingSpace = '#', true
		rule, err := r.Read()
		if err != nil {
			return &lineError{where, err}
		}
		// persist.LoadPolicyArray takes the first byte of the type for its section: an empty
		// type would panic there.
		if rule[0] == "" || len(rule) < 2 {
			return &lineError{where, fmt.Errorf("%q: want a policy type (p, g, ...) and its values", line)}
		}
		if sec := rule[0][:1]; sec != "p" && sec != "g" {
			return &lineError{where, fmt.Errorf("policy type %q: a policy line is a p rule or a g role link", rule[0])}
		}
		if err := persist.LoadPolicyArray(rule, m); err != nil {
			return &lineError{where, err}
		}
	}
	return sc.Err()
}

var errReadOnly = errors.New("authzbench's Casbin policies are read-only")

func (a *linesAdapter) SavePolicy(model.Model) error                { return errReadOnly }
func (a *linesAdapter) AddPolicy(string, string, []string) error    { return errReadOnly }
func (a *linesAdapter) RemovePolicy(string, string, []string) error { return errReadOnly }
func (a *linesAdapter) RemoveFilteredPolicy(string, string, int, ...string) error {
	return errReadOnly
}

// ParseRequest reads a request as authzbench's Casbin requests are written (EngineRequest.Body,
// and the body the Casbin server takes): a JSON array of the request's values, in the order of
// the model's request definition. Strings, numbers (as float64, what Casbin's expression
// language compares), booleans, arrays and objects (maps, which a matcher reads as r.sub.Age)
// are given to Enforce as they are.
func ParseRequest(body []byte) ([]any, error) {
	var vals []any
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&vals); err != nil {
		return nil, fmt.Errorf("a Casbin request is a JSON array of the request's values: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("a Casbin request is one JSON array, with nothing after it")
	}
	if vals == nil {
		return nil, errors.New("a Casbin request is a JSON array of the request's values, not null")
	}
	return vals, nil
}

// requestSizeError refuses a request of n values where the model's request definition has
// len(tokens), as Enforce would refuse it at every call.
func requestSizeError(n int, tokens []string) error {
	return fmt.Errorf("%d request values, and the model's request definition has %d (r = %s)", n, len(tokens), strings.Join(tokens, ", "))
}

// quoteCSV writes a value as a field of a Casbin policy line: as it is where Casbin's CSV
// reader reads it back the same, quoted otherwise.
func quoteCSV(v string) string {
	if strings.ContainsAny(v, ",\"\r\n") || strings.TrimSpace(v) != v {
		return `"` + strings.ReplaceAll(v, `"`, `""`) + `"`
	}
	return v
}
