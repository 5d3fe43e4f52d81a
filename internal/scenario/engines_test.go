package scenario

// The scenarios under test (the embedded quickstart, experiments/) name every engine's target
// kinds, as the command does: this test binary links the engines the command links.
import _ "github.com/authzbench/authzbench/internal/engine/all"
