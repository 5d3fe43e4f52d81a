// Package all links every engine authzbench measures, with their target kinds: each engine's
// package registers itself from its init (engine.Register, kinds.Register), so importing this
// package is what makes them exist. It is authzbench's one list of engines, imported by the
// command and by the tests that must see what the command sees (the scenarios and experiments
// that name every engine's kinds, verification across all of them): a new engine is its own
// package and one line here.
package all

import (
	_ "github.com/authzbench/authzbench/internal/engine/casbin"
	_ "github.com/authzbench/authzbench/internal/engine/cedar"
	_ "github.com/authzbench/authzbench/internal/engine/opa"
	_ "github.com/authzbench/authzbench/internal/engine/openfga"
	_ "github.com/authzbench/authzbench/internal/engine/spicedb"
)
