// Package buildinfo says which authzbench this is: its version and the commit it was built from.
package buildinfo

import "runtime/debug"

// Version and Commit are set at link time by release builds:
//
//	go build -ldflags "-X github.com/authzbench/authzbench/internal/buildinfo.Version=v0.1.0 \
//	  -X github.com/authzbench/authzbench/internal/buildinfo.Commit=$(git rev-parse HEAD)"
//
// Otherwise they come from the Go toolchain's build information when it has any.
var (
	Version = ""
	Commit  = ""
)

// Get returns the version and commit, "devel" and "unknown" when nothing recorded them.
func Get() (version, commit string) {
	version, commit = Version, Commit
	if info, ok := debug.ReadBuildInfo(); ok {
		if version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			version = info.Main.Version
		}
		if commit == "" {
			var revision, modified string
			for _, s := range info.Settings {
				switch s.Key {
				case "vcs.revision":
					revision = s.Value
				case "vcs.modified":
					modified = s.Value
				}
			}
			commit = revision
			if revision != "" && modified == "true" {
				commit += "-dirty"
			}
		}
	}
	if version == "" {
		version = "devel"
	}
	if commit == "" {
		commit = "unknown"
	}
	return version, commit
}
