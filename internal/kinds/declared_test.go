package kinds

import (
	"strings"
	"testing"
)

// Every key a kind's settings take is declared once, with its flag: a scenario file and the
// command line then offer the same options, and no option is reachable from one alone.
func TestEveryOptionIsDeclared(t *testing.T) {
	seen := map[string]bool{}
	for _, name := range sortedKindNames() {
		for _, key := range OptionKeys(kinds[name].NewConfig()) {
			if _, ok := LookupOption(key); !ok && !seen[key] {
				t.Errorf("option %s of %s has no declaration (DeclareOption), so no flag sets it", key, name)
			}
			seen[key] = true
		}
	}
	flags := map[string]string{}
	for _, o := range Options() {
		if !seen[o.Key] {
			t.Errorf("option %s is declared and no kind takes it", o.Key)
		}
		if other, ok := flags[o.Flag]; ok {
			t.Errorf("flag --%s declared for options %s and %s", o.Flag, other, o.Key)
		}
		flags[o.Flag] = o.Key
	}
}

// A flag's help names the kinds that take its option, from the registry. (An engine's own
// option's help, opa_bin's: internal/engine/opa's TestOPABinOption.)
func TestOptionUsageNamesTheKindsTakingIt(t *testing.T) {
	taking := KindsOffered("tls") // server_cert's help names the kinds taking tls
	if len(taking) < 2 {
		t.Fatalf("kinds taking tls %v: want two or more to show how they are joined", taking)
	}
	tls, _ := LookupOption("server_cert")
	if got := tls.Usage(); strings.Contains(got, "{kinds") || !strings.HasPrefix(got, strings.Join(taking, ", ")+": ") {
		t.Errorf("usage %q: want the kinds taking tls (%v), comma-separated", got, taking)
	}
	last := len(taking) - 1
	if got, want := TakingPhrase("tls"), strings.Join(taking[:last], ", ")+" and "+taking[last]; got != want {
		t.Errorf("TakingPhrase(tls) %q, want %q", got, want)
	}
}

// A value given for an option is checked as its declaration says, the option named as the user
// gave it; the zero value, the kind's default, is not checked.
func TestCheckOptionNamesTheOptionAsGiven(t *testing.T) {
	for _, tc := range []struct {
		key, name string
		value     any
		want      string // "" for no error
	}{
		{"port", "--port", 70000, "--port 70000: not a TCP port"},
		{"port", "--port", 0, ""},
		{"url", "url", "127.0.0.1:8181", `url "127.0.0.1:8181": want a scheme and a host`},
		{"url", "--url", "http://127.0.0.1:8181", ""},
		{"decision_status", "--decision-status", "200=maybe", `--decision-status "200=maybe": want STATUS=allow|deny pairs`},
		{"headers", "--header", []string{"X-Ok: 1", "Authorization Bearer x"}, `--header "Authorization Bearer x": want Name: value`},
		{"body", "--body", `{"u": {{input.user}, "a": 1}`, `--body: "{{input.user}, \"a\": 1}" is not a placeholder`},
		{"body", "--body", `{"u": {{input.user}}}`, ""},
		{"replicas", "--replicas", 3, ""}, // no check declared
	} {
		err := CheckOption(tc.key, tc.name, tc.value)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s %v: %v, want no error", tc.name, tc.value, err)
		case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
			t.Errorf("%s %v: %v, want %q", tc.name, tc.value, err, tc.want)
		}
	}
}

// A secret option's value never reaches the command line a result records, in either form of
// the flag; everything else, a flag that only starts like the secret one included, is left as
// given. The options here stand in for the engines' own, such as a running server's key.
func TestRedactSecrets(t *testing.T) {
	saved := declared
	t.Cleanup(func() { declared = saved })
	declared = map[string]Option{
		"secret_key": {Key: "secret_key", Flag: "secret-key", Secret: true, Help: "a server's key"},
		"name":       {Key: "name", Flag: "name", Help: "not secret"},
	}
	args := []string{"run", "--secret-key", "k1", "--name", "n", "--secret-key=k2", "--secret-keys", "k3", "--secret-key"}
	got := strings.Join(RedactSecrets(args), " ")
	want := "run --secret-key REDACTED --name n --secret-key=REDACTED --secret-keys k3 --secret-key"
	if got != want {
		t.Errorf("redacted:\n%s\nwant\n%s", got, want)
	}
	if strings.Join(args, " ") == got {
		t.Error("the arguments given were changed")
	}
}
