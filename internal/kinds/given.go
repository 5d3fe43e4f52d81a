package kinds

import (
	"errors"
	"fmt"
	"reflect"
)

// CheckGiven refuses the options a command line gave (given, by key, as the user's flags set
// them) that the selected targets (their settings, the flags' options set on them) would ignore
// without a word or cannot honour together, naming each option by its flag. A scenario file's
// options belong to one target each and are checked with it (Config.Check).
func CheckGiven(targets []Config, given map[string]any) error {
	str := func(key string) string { s, _ := given[key].(string); return s }
	url, decPath, decStatus := str("url"), str("decision_path"), str("decision_status")
	port, _ := given["port"].(int)
	// A served target takes a port; the http target reads its decision from a response.
	hasServer, hasHTTP := false, false
	for _, c := range targets {
		hasServer = hasServer || HasOption(c, "port")
		hasHTTP = hasHTTP || HasOption(c, "decision_path")
	}
	switch {
	case hasHTTP && url == "" && !eachHTTP(targets, func(c Config) bool { r, ok := c.(Remote); return ok && r.RemoteURL() != "" }):
		return fmt.Errorf("the http target needs %s, the decision endpoint (http://127.0.0.1:8080/v1/authorize)", flagOf("url"))
	case hasHTTP && (decPath == "") == (decStatus == "") && !eachHTTP(targets, func(c Config) bool {
		h, ok := c.(*HTTPConfig)
		return !ok || (h.DecisionPath == "") != (h.DecisionStatus == "")
	}):
		return fmt.Errorf("the http target needs one of %s (/allow) or %s (200=allow,403=deny)", flagOf("decision_path"), flagOf("decision_status"))
	case port != 0 && !hasServer:
		return fmt.Errorf("%s applies to the %s targets, and none is selected", flagOf("port"), TakingPhrase("port"))
	case url != "" && !hasServer && !hasHTTP:
		return fmt.Errorf("%s and %s apply to the %s targets, and none is selected", flagOf("url"), flagOf("port"), TakingPhrase("port"))
	case url != "" && port != 0:
		return fmt.Errorf("%s sets the port of a server authzbench starts; with %s it starts none", flagOf("port"), flagOf("url"))
	case url != "":
		if flags := launchFlagsGiven(given); len(flags) > 0 {
			verb := "configures"
			if len(flags) > 1 {
				verb = "configure"
			}
			return errors.New(joinAnd(flags) + " " + verb + " servers authzbench starts; with " + flagOf("url") + " it starts none")
		}
	}
	return nil
}

// launchFlagsGiven are the flags of the options given that configure a server authzbench starts
// (Option.Launches: --sut-arg, an engine's binary), by flag.
func launchFlagsGiven(given map[string]any) []string {
	var flags []string
	for _, o := range Options() {
		if v := reflect.ValueOf(given[o.Key]); o.Launches && v.IsValid() && !v.IsZero() && (v.Kind() != reflect.Slice || v.Len() > 0) {
			flags = append(flags, "--"+o.Flag)
		}
	}
	return flags
}

// eachHTTP reports whether ok holds for every target that reads its decision from a response
// (the http target).
func eachHTTP(targets []Config, ok func(Config) bool) bool {
	for _, c := range targets {
		if HasOption(c, "decision_path") && !ok(c) {
			return false
		}
	}
	return true
}

// flagOf is the command line's flag for option key, "--url".
func flagOf(key string) string {
	o, ok := declared[key]
	if !ok {
		panic("kinds: no option " + key + " declared")
	}
	return "--" + o.Flag
}
