package kinds

import (
	"slices"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/engine"
)

// Every kind says what the rest of authzbench needs to know of it, so nothing asks by name.
func TestEveryKindDescribesItself(t *testing.T) {
	if len(kinds) < 3 {
		t.Fatalf("%d kinds registered, want at least this package's own 3 (http, trivial/server, trivial/extauthz)", len(kinds))
	}
	for name, k := range kinds {
		t.Run(strings.ReplaceAll(name, "/", "_"), func(t *testing.T) {
			if k.Name != name || k.Engine == "" || !slices.Contains([]Placement{InProcess, ProcessPerDecision, LaunchedServer, External}, k.Placement) {
				t.Errorf("kind %+v: want its name, an engine and a known placement", k)
			}
			c := k.NewConfig()
			if c == nil || c.Check() != nil {
				t.Fatalf("default settings %#v: want settings that pass their own check (%v)", c, c.Check())
			}
			if k.PlacementFor(c) != k.Placement {
				t.Errorf("default settings placed %s, want the kind's %s", k.PlacementFor(c), k.Placement)
			}
			if tg := k.New(Common{}, c); tg == nil {
				t.Error("New returned no target")
			}
		})
	}
	want := map[string]Placement{"cedar/inproc": InProcess, "cedar/server": LaunchedServer, "http": External,
		"cedar/extauthz": LaunchedServer, "trivial/server": LaunchedServer, "trivial/extauthz": LaunchedServer}
	for name, p := range want {
		if k, err := LookupAny(name); err != nil || k.Placement != p {
			t.Errorf("%s: %v, placement want %s", name, err, p)
		}
	}
}

func TestKindLists(t *testing.T) {
	names := Names()
	if slices.Contains(names, "trivial/server") || !slices.IsSorted(names) || !slices.Contains(names, "http") {
		t.Errorf("names %v: want the user's kinds, sorted, without the internal trivial/server", names)
	}
	// The engine modes follow the registries: every kind that loads a policy into an engine
	// authzbench runs, of a registered engine, in the kinds' order, each registered engine with
	// at least one. (Which comes first, the reference, is the engines' Order: bench's
	// TestVerifyReferenceComesFirst sees them all.)
	modes := EngineModes()
	var want []string
	covered := map[string]bool{}
	for _, k := range Kinds() {
		if k.LoadsPolicy && engine.For(k.Engine) == nil {
			t.Errorf("kind %s loads a policy into engine %q, which is not registered (known: %v)", k.Name, k.Engine, engine.Names())
		}
		if k.LoadsPolicy && k.Placement != External {
			want = append(want, k.Name)
			covered[k.Engine] = true
		}
	}
	if !slices.Equal(modes, want) {
		t.Errorf("engine modes %v, want %v", modes, want)
	}
	for _, e := range engine.Names() {
		if !covered[e] {
			t.Errorf("engine %s is registered but no kind runs it", e)
		}
	}
	_, err := Lookup("opa/grpc")
	if err == nil || err.Error() != `unknown target "opa/grpc"; known: `+strings.Join(names, ", ") {
		t.Errorf("unknown kind: %v, want the known ones listed", err)
	}
	if _, err := Lookup("trivial/server"); err == nil {
		t.Error("the internal trivial/server is offered to users")
	}
	if _, err := LookupAny("trivial/server"); err != nil {
		t.Errorf("calibrate cannot find its kind: %v", err)
	}
}

// A served kind given a URL measures a server someone else runs; the http kind always does.
func TestPlacementFollowsTheSettings(t *testing.T) {
	for _, tc := range []struct {
		kind   string
		values map[string]any
		want   Placement
	}{
		{"cedar/server", nil, LaunchedServer},
		{"cedar/server", map[string]any{"url": "http://127.0.0.1:8181"}, External},
		{"cedar/extauthz", map[string]any{"url": "127.0.0.1:9191"}, External},
		{"cedar/inproc", map[string]any{"url": "http://127.0.0.1:8181"}, InProcess}, // takes no url
		{"http", map[string]any{"url": "http://127.0.0.1:8080/v1/authorize"}, External},
	} {
		k, err := LookupAny(tc.kind)
		if err != nil {
			t.Fatal(err)
		}
		c, err := k.Configure(tc.values)
		if err != nil {
			t.Fatal(err)
		}
		if got := k.PlacementFor(c); got != tc.want {
			t.Errorf("%s with %v: %s, want %s", tc.kind, tc.values, got, tc.want)
		}
	}
}

// Options are set by their keys, inlined structs' keys included; keys a kind does not take are
// left for the others, and a value of the wrong type names its key.
func TestSetOptions(t *testing.T) {
	c := &standInConfig{}
	if got, want := strings.Join(OptionKeys(c), ","), "cacert,cert,http2,http2_connections,insecure,key,mtls,mtls_admit,mtls_authz,port,ready_timeout,replicas,server_cert,server_key,stand_in_bin,sut_args,tls,url"; got != want {
		t.Errorf("keys %s, want %s", got, want)
	}
	ignored, err := SetOptions(c, map[string]any{"url": "http://x:1", "port": 8181, "sut_args": []string{"--h2c"},
		"stand_in_bin": "/usr/bin/engine", "decision_path": "/allow"})
	if err != nil {
		t.Fatal(err)
	}
	if c.URL != "http://x:1" || c.Port != 8181 || len(c.Args) != 1 || c.Bin != "/usr/bin/engine" || !slices.Equal(ignored, []string{"decision_path"}) {
		t.Errorf("set %+v, ignored %v", c, ignored)
	}
	if _, err := SetOptions(c, map[string]any{"port": "8181"}); err == nil || !strings.Contains(err.Error(), "option port") {
		t.Errorf("a string port: %v, want an error naming the option", err)
	}
	if len(OptionKeys(&NoConfig{})) != 0 || HasOption(&NoConfig{}, "url") {
		t.Error("NoConfig takes options")
	}
}

// What a served kind's settings cannot do together is found before anything starts.
func TestServerConfigCheck(t *testing.T) {
	for _, tc := range []struct {
		c    standInConfig
		want string
	}{
		{standInConfig{ServerConfig: ServerConfig{URL: "127.0.0.1:8181"}}, "want a scheme and a host"},
		{standInConfig{ServerConfig: ServerConfig{Port: 70000}}, "port 70000: not a TCP port"},
		{standInConfig{ServerConfig: ServerConfig{URL: "http://x:1", Port: 8181}}, "with url it starts none"},
		{standInConfig{ServerConfig: ServerConfig{URL: "http://x:1"}, Replication: Replication{Replicas: 2}}, "with url it starts none (scale the servers behind it yourself)"},
		{standInConfig{HTTP2Config: HTTP2Config{HTTP2: true}, Replication: Replication{Replicas: 2}}, "give one or the other"},
	} {
		if err := tc.c.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.c, err, tc.want)
		}
	}
	if err := (&HTTPConfig{DecisionStatus: "200=yes"}).Check(); err == nil {
		t.Error("a bad decision status passed")
	}
}
