package load_test

// The drivers' tests that run an engine inside authzbench (TestInprocTimeoutIsHonoured) take
// it from the registry of kinds: linking every engine here registers their kinds in this test
// binary, as the authzbench command's one import does.
import _ "github.com/authzbench/authzbench/internal/engine/all"
