package sut

import (
	"strings"
	"testing"
)

func TestCheckOpenFiles(t *testing.T) {
	for _, tc := range []struct {
		name        string
		connections int
		soft, hard  uint64
		want        string // in the error; "" for none
	}{
		{"fits", 900, 1024, 1024, ""},
		{"fits exactly with the margin", 1024 - openFilesMargin, 1024, 1024, ""},
		{"over the hard limit", 5000, 1024, 1024, "the hard limit is 1024"},
		{"over a soft limit that could be raised", 5000, 1024, 1 << 20, "ulimit -n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkOpenFiles("--workers 5000", tc.connections, tc.soft, tc.hard)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--workers 5000") {
				t.Errorf("err %v; want one naming the setting and saying %q", err, tc.want)
			}
		})
	}
}

// After RaiseOpenFiles the limit in force is the hard one, and a load beyond it is refused.
func TestRaiseOpenFiles(t *testing.T) {
	if err := RaiseOpenFiles(); err != nil {
		t.Fatal(err)
	}
	soft, hard, err := OpenFilesLimit()
	if err != nil {
		t.Fatal(err)
	}
	if soft != hard {
		t.Errorf("soft limit %d after raising, want the hard limit %d", soft, hard)
	}
	if hard < 1<<30 {
		if err := CheckOpenFiles("--connections", int(hard)); err == nil {
			t.Errorf("a load of %d connections accepted under a limit of %d open files", hard, hard)
		}
	}
	if err := CheckOpenFiles("--workers", 8); err != nil {
		t.Errorf("8 workers refused: %v", err)
	}
}
