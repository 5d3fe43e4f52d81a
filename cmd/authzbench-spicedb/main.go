// Command authzbench-spicedb is SpiceDB's own command line, with every listener on loopback and
// no telemetry by default: `authzbench-spicedb serve ...` is `spicedb serve ...`. It is the
// server authzbench's spicedb/server target starts when no --spicedb-bin is given, found beside
// the authzbench executable or on PATH.
//
// It is a program of its own, not `authzbench spicedb`, because SpiceDB's server links every
// storage engine it supports; linked into authzbench it would nearly double the first build of
// every user, most of whom never start a SpiceDB server.
package main

import (
	"os"

	"github.com/authzbench/authzbench/internal/engine/spicedb/serve"
)

func main() { os.Exit(serve.Main(os.Args[1:])) }
