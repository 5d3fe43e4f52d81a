package engine

import (
	"io"
	"os"
	"sort"
)

// Command is a program an engine's package runs inside authzbench's own executable, started as
// "authzbench <Arg> ...": OPA's command line, OpenFGA's server, the Cedar server. The engine's
// served and per-decision targets start authzbench itself with Arg, so nothing has to be
// installed; the command lists it under its own commands, with the help given here.
type Command struct {
	// Arg is the first argument that turns the process into the program ("opa").
	Arg string
	// Use, Short, Long and Example are its help, as cobra reads them; Use starts with Arg.
	Use, Short, Long, Example string
	// Main runs the program with the arguments after Arg and returns its exit status.
	Main func(args []string, stderr io.Writer) int
}

var commands = map[string]Command{}

// RegisterCommand adds an engine's program; called from the init function of the engine's
// package. One without Arg or Main, or a second with the same Arg, is a programming error: it
// panics.
func RegisterCommand(c Command) {
	mu.Lock()
	defer mu.Unlock()
	if c.Arg == "" || c.Main == nil {
		panic("engine: RegisterCommand without Arg or Main")
	}
	if _, dup := commands[c.Arg]; dup {
		panic("engine: command " + c.Arg + " registered twice")
	}
	commands[c.Arg] = c
}

// Commands lists the registered programs, sorted by Arg.
func Commands() []Command {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]Command, 0, len(commands))
	for _, c := range commands {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Arg < out[j].Arg })
	return out
}

// DispatchIfAsked runs a registered program and exits when the process was started as one
// ("<self> opa ..."). Call it first thing in main, and in the TestMain of packages whose tests
// start engines' processes (the test binary stands in for authzbench).
func DispatchIfAsked() {
	if len(os.Args) < 2 {
		return
	}
	mu.RLock()
	c, ok := commands[os.Args[1]]
	mu.RUnlock()
	if ok {
		os.Exit(c.Main(os.Args[2:], os.Stderr))
	}
}
