// Package consistencyflag declares the consistency target option (--consistency) for the
// engines whose checks ask one (OpenFGA, SpiceDB). Each of them imports it, so the option exists
// exactly when a kind that takes it is linked: a program or a test binary without them declares
// no option that none of its kinds has, which kinds.Options refuses.
package consistencyflag

import "github.com/authzbench/authzbench/internal/kinds"

func init() {
	kinds.DeclareOption(kinds.Option{Key: "consistency", Flag: "consistency", Selective: true, EveryTarget: true,
		Help: "{kinds}: how fresh each check must be, in the engine's own words (SpiceDB: minimize_latency, at_least_as_fresh " +
			"with the last acknowledged write's token, fully_consistent; OpenFGA: MINIMIZE_LATENCY, HIGHER_CONSISTENCY); " +
			"by default the engine's own, said in the run's notes and recorded in the result"})
}
