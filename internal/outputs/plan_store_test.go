package outputs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A database the command adds to may exist, but is never one of its other outputs or inputs.
func TestPlanStore(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "history.db")
	os.WriteFile(db, []byte("x"), 0o644)
	res := filepath.Join(dir, "r.json")
	for _, tc := range []struct {
		name string
		plan func(p *Plan)
		want string // in the error; "" for none
	}{
		{"existing database", func(p *Plan) { p.Store("--history", db); p.Output("-o", res) }, ""},
		{"database is the result", func(p *Plan) { p.Store("--history", res); p.Output("-o", "./"+filepath.Base(res)) }, "never another output"},
		{"database is an input", func(p *Plan) { p.Store("--history", db); p.Input("FILE", db) }, "never an input"},
		{"database is a directory", func(p *Plan) { p.Store("--history", dir) }, "is a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wd, _ := os.Getwd()
			os.Chdir(dir)
			defer os.Chdir(wd)
			var p Plan
			tc.plan(&p)
			err := p.Check()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}
