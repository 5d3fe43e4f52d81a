package kinds

import (
	"strings"
	"testing"
)

// The options a command line gives are refused where the selected targets would ignore them or
// cannot honour them together, named by their flags.
func TestCheckGivenRefusesIgnoredAndConflictingFlags(t *testing.T) {
	server := func() Config { return &standInConfig{} }
	inproc := func() Config { return &NoConfig{} }
	http := func(url, path string) Config { return &HTTPConfig{URL: url, DecisionPath: path} }
	for _, tc := range []struct {
		name    string
		targets []Config
		given   map[string]any
		want    string // "" for none
	}{
		{"http without url", []Config{http("", "")}, map[string]any{"decision_path": "/allow"}, "the http target needs --url, the decision endpoint"},
		{"http with its url from a scenario", []Config{http("http://127.0.0.1:1/a", "/allow")}, nil, ""},
		{"http without a decision rule", []Config{http("http://127.0.0.1:1/a", "")}, map[string]any{"url": "http://127.0.0.1:1/a"}, "the http target needs one of --decision-path (/allow) or --decision-status"},
		{"http with both decision rules", []Config{&HTTPConfig{URL: "http://127.0.0.1:1/a", DecisionPath: "/allow", DecisionStatus: "200=allow"}}, map[string]any{"url": "http://127.0.0.1:1/a", "decision_path": "/allow", "decision_status": "200=allow"}, "the http target needs one of"},
		{"port with no server", []Config{inproc()}, map[string]any{"port": 8181}, "--port applies to the " + TakingPhrase("port") + " targets"},
		{"url with no server", []Config{inproc()}, map[string]any{"url": "http://127.0.0.1:1"}, "--url and --port apply to the " + TakingPhrase("port") + " targets"},
		{"url and port", []Config{server()}, map[string]any{"url": "http://127.0.0.1:1", "port": 8181}, "--port sets the port of a server authzbench starts; with --url it starts none"},
		{"url and sut args", []Config{server()}, map[string]any{"url": "http://127.0.0.1:1", "sut_args": []string{"--h2c"}}, "--sut-arg configures servers authzbench starts; with --url it starts none"},
		{"url and no sut args", []Config{server()}, map[string]any{"url": "http://127.0.0.1:1", "sut_args": []string{}}, ""},
		{"port on a server", []Config{server(), inproc()}, map[string]any{"port": 8181, "sut_args": []string{"--h2c"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckGiven(tc.targets, tc.given)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("%v, want none", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("%v, want %q", err, tc.want)
			}
		})
	}
}
