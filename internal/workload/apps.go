package workload

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// The applications of the Cedar paper's kind, each written for OPA, Cedar and OpenFGA: gdrive
// (documents in nested folders shared with users and nested groups), github (repositories of
// organisations, teams with repository roles) and tinytodo (task lists shared with readers and
// editors). Each is a family, <app>-<N>, whose world grows with N, the number of documents,
// repositories or lists: how an engine's decisions grow with the relationships it holds is the
// question these apps answer, and docshare-<N> already asks how they grow with what a request
// carries.
//
// The world lives with the engine, as these services deploy it: data in Rego, the entity store
// in Cedar, tuples in OpenFGA. A request names only who does what to which object. Every
// decision comes from the app's Go reference model over the world itself.

// MinAppSize and MaxAppSize bound the N of the app families.
const (
	MinAppSize = 10
	MaxAppSize = 100_000
)

// app is one application family: its name prefix and how it builds a world of size n.
type app struct {
	name        string // "gdrive"
	param       string // what N counts: "documents"
	description string
	build       func(name string, n int, seed int64, inputs int) *Workload
}

var apps = map[string]app{}

func registerApp(a app) {
	apps[a.name] = a
	pattern := a.name + "-<N>"
	registerFamily(family{
		Prefix:      a.name + "-",
		Pattern:     pattern,
		Description: fmt.Sprintf("%s; N %s (%d to %d), the world as data in Rego, entities in Cedar, tuples in OpenFGA", a.description, a.param, MinAppSize, MaxAppSize),
		Build:       buildApp,
	})
}

// buildApp resolves an app family's name and generates it.
func buildApp(name string, seed int64, inputs int) (*Workload, error) {
	prefix, digits, _ := strings.Cut(name, "-")
	a, ok := apps[prefix]
	if !ok {
		return nil, fmt.Errorf("workload %q is no application family", name)
	}
	n, err := sizeOf(name, digits, a.name+"-<N>", MinAppSize, MaxAppSize)
	if err != nil {
		return nil, err
	}
	w := a.build(name, n, seed, inputs)
	w.Scale = &Scale{Family: a.name, Param: a.param, N: n}
	return w, nil
}

// AppRequest is one request of an app (gdrive-N, github-N, tinytodo-N) as its reference model
// reads it: who does what to which object, with the model's answer.
type AppRequest struct {
	User     string `json:"user"`
	Action   string `json:"action"`
	Resource string `json:"resource"`
	allow    bool
	reason   string
}

// appInputs draws inputs requests with draw, aiming at an even mix of allows and denies: for
// each input it draws until the decision is the one wanted, up to a bound, so the mix holds at
// every N while the reasons stay as varied as draw makes them.
func appInputs(inputs int, draw func() AppRequest) []AppRequest {
	out := make([]AppRequest, 0, inputs)
	for i := range inputs {
		want := i%2 == 0
		q := draw()
		for try := 0; try < 20 && q.allow != want; try++ {
			q = draw()
		}
		out = append(out, q)
	}
	return out
}

// appWorkload fills a workload's inputs and its relationship world from the requests: the Rego
// input is the request itself, the check is check's.
func appWorkload(w *Workload, rw *RelationshipWorld, qs []AppRequest, check func(AppRequest) RelationshipCheck) *Workload {
	for _, q := range qs {
		w.Inputs = append(w.Inputs, Input{
			JSON:   mustJSON(q),
			Expect: expectOf(q.allow),
			Reason: q.reason,
			Model:  q,
		})
		rw.Checks = append(rw.Checks, check(q))
	}
	w.Relationships = rw
	return w
}

// pick returns k distinct values below n, in the order drawn; fewer when n < k.
func pick(r *rand.Rand, k, n int) []int {
	k = min(k, n)
	out := make([]int, 0, k)
	for len(out) < k {
		if v := r.IntN(n); !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// reach returns the nodes reachable from start through next, start included, each once.
func reach(start []int, next func(int) []int) []int {
	var out []int
	queue := slices.Clone(start)
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		if slices.Contains(out, x) {
			continue
		}
		out = append(out, x)
		queue = append(queue, next(x)...)
	}
	return out
}
