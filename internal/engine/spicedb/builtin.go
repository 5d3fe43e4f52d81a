package spicedb

import (
	"embed"
	"fmt"
	"slices"
	"strings"

	"github.com/authzbench/authzbench/internal/workload"
)

// The built-in workloads in SpiceDB's terms: a schema written for each relationship family
// (builtin/*.zed), the relationships of the world the family's reference model holds
// (workload.Workload.Relationships), and one assertion per input from its relationship check.
// OpenFGA's versions are written from the same world: the two engines decide over one graph.
func init() {
	workload.RegisterBuiltinVersion(workload.BuiltinVersion{Engine: Name, Add: addBuiltin})
}

//go:embed builtin/*.zed
var builtinSchemas embed.FS

// builtinFamily is one family of built-in workloads in SpiceDB.
type builtinFamily struct {
	schema string // its schema's file under builtin/
	// handed says what SpiceDB is handed ready-made that the Rego and Cedar versions compute,
	// for the ‡ rows of reports; "" when it does the same work.
	handed string
}

// builtinFamilies are the relationship families by name (workload.RelationshipWorld.Family).
var builtinFamilies = map[string]builtinFamily{
	"nop":      {schema: "nop.zed"},
	"rbac":     {schema: "rbac.zed"},
	"docshare": {schema: "docshare.zed"},
	"gdrive":   {schema: "gdrive.zed"},
	"github":   {schema: "github.zed"},
	"tinytodo": {schema: "tinytodo.zed",
		handed: "SpiceDB, as OpenFGA, is handed who is an intern (job level below 2) as application#intern relationships, " +
			"since its relationships carry no attributes; Rego and Cedar compare each user's job level at each decision"},
}

// builtin is SpiceDB's version of a built-in workload (workload.Version.Own): its family. The
// fixture is written from the workload's relationships when a run asks for it (BuiltinFixture),
// not each time a workload is built.
type builtin struct{ family builtinFamily }

// addBuiltin adds SpiceDB's version to the built-in w, where its family has one.
func addBuiltin(w *workload.Workload) error {
	if w.Relationships == nil {
		return nil
	}
	fam, ok := builtinFamilies[w.Relationships.Family]
	if !ok {
		return nil
	}
	if w.Versions == nil {
		w.Versions = map[string]*workload.Version{}
	}
	w.Versions[Name] = &workload.Version{Own: &builtin{family: fam}}
	return nil
}

// builtinFamilyOf returns the family of a built-in workload with a SpiceDB version. A user's
// workload never has one, whatever its name: its files are its version.
func builtinFamilyOf(w *workload.Workload) (builtinFamily, bool) {
	if w == nil {
		return builtinFamily{}, false
	}
	if v := w.Versions[Name]; v != nil {
		if b, ok := v.Own.(*builtin); ok {
			return b.family, true
		}
	}
	return builtinFamily{}, false
}

// HasBuiltin reports whether the built-in workload w has a SpiceDB version: every relationship
// family does.
func HasBuiltin(w *workload.Workload) bool {
	_, ok := builtinFamilyOf(w)
	return ok
}

// BuiltinFixture is the SpiceDB version of the built-in workload w: its family's schema, the
// relationships of its world, and Assertions[i] the check of w.Inputs[i], expecting its
// decision. It is nil, with no error, for a workload with no SpiceDB version (WhyNot says why).
//
// SpiceDB takes no relationships with a check (spicedb issue 1398): what a request carries
// (docshare) is stored with the rest, before the clock. A request whose decision the
// relationships of another could change gets objects of its own; Differences says what that
// changes.
func BuiltinFixture(w *workload.Workload) (*Fixture, error) {
	fam, ok := builtinFamilyOf(w)
	if !ok {
		return nil, nil
	}
	f, _, err := builtinWorld(w, fam)
	return f, err
}

// Differences says what the SpiceDB version of the built-in workload w does differently from
// the Rego and Cedar versions, for the ‡ rows of reports: what it is handed ready-made, and
// where it stores before the clock what those read from each request. Empty when it does the
// same work, or has no version.
func Differences(w *workload.Workload) string {
	fam, ok := builtinFamilyOf(w)
	if !ok {
		return ""
	}
	var says []string
	if fam.handed != "" {
		says = append(says, fam.handed)
	}
	if !slices.ContainsFunc(w.Relationships.Checks, func(c workload.RelationshipCheck) bool { return len(c.Carried) > 0 }) {
		// Nothing carried with a request: the world is stored as the family wrote it, read once
		// by BuiltinFixture, not a second time here.
		return strings.Join(says, "; ")
	}
	_, stats, err := builtinWorld(w, fam)
	if err != nil {
		// BuiltinFixture reports it, and nothing is measured without it.
		return strings.Join(says, "; ")
	}
	if stats.requests > 0 {
		which := "each request carries"
		if stats.requests < len(w.Inputs) {
			which = fmt.Sprintf("%d of the %d requests carry", stats.requests, len(w.Inputs))
		}
		s := fmt.Sprintf("SpiceDB takes no relationships with a check (spicedb issue 1398): the entities %s are stored before the clock, "+
			"as %d distinct relationships (%d in all), where Rego and Cedar read them from each request and OpenFGA from its contextual tuples: "+
			"what a request carries costs SpiceDB nothing per check beyond a larger store",
			which, stats.carried, stats.total)
		if stats.ownInputs > 0 {
			s += fmt.Sprintf("; %d requests whose decision another request's relationships could change get objects of their own "+
				"(ids prefixed input<N>-), %d relationships more", stats.ownInputs, stats.ownRels)
		} else {
			s += "; no request's decision can read a relationship only another request carries, so each decides as its own entities do"
		}
		says = append(says, s)
	}
	return strings.Join(says, "; ")
}

// WhyNot says why the workload w has no SpiceDB version: what its rules do that SpiceDB's
// relationships and caveats cannot, or where its version comes from instead. Empty when it has
// one.
func WhyNot(w *workload.Workload) string {
	if HasBuiltin(w) {
		return ""
	}
	if why := w.Inexpressible["SpiceDB"]; why != "" {
		return why
	}
	base, _, _ := strings.Cut(w.Name, "-opt")
	switch {
	case w.Replay != nil:
		return "it replays the Rego inputs of a decision log; SpiceDB decides relationships, and no log says which ones"
	case len(w.PolicyPaths) > 0 || usersFiles(w):
		return "its files are the user's own, in another engine's language; SpiceDB runs a validation file of your own " +
			"(or a schema, relationships and a JSONL of checks)"
	case strings.HasSuffix(w.Name, "-opt"):
		return "it is " + base + " rewritten for OPA from its profile, Rego only; SpiceDB runs the workloads themselves"
	case w.Name == "api":
		return "its rules verify a JWT (HS256 signature, audience, expiry), split its scope string and read the clock; SpiceDB's " +
			"relationships hold none of it and its caveats (CEL) have no HMAC and no string splitting, so a version would be handed " +
			"every verdict ready-made and decide nothing of the policy"
	case w.Name == "risk":
		return "its rules sum, count and sort the applicant's debts and scores and compare the results with thresholds; SpiceDB's " +
			"relationships cannot compute over a list, and its caveats (CEL) have no sum and no sort"
	case w.Name == "envoy":
		return "its inputs are Envoy ext_authz requests whose basic-auth header is decoded and whose path is matched by prefix; " +
			"a SpiceDB check names a subject, a permission and a resource, and no version is written (nor for OpenFGA)"
	case strings.HasPrefix(w.Name, "rules-"):
		return "its N rules compare the request's attributes with constants; SpiceDB's relationships hold no request attributes, " +
			"and no version is written (nor for OpenFGA)"
	}
	return "no SpiceDB version is written for it"
}

// usersFiles reports whether w holds another engine's version read from the user's own files.
func usersFiles(w *workload.Workload) bool {
	for name, v := range w.Versions {
		if name != Name && len(v.Files) > 0 {
			return true
		}
	}
	return false
}
