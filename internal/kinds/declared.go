package kinds

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
)

// An Option is a target option as a user gives it: by its key among a scenario's per-target
// options, and by its flag on the command line. Each is declared once (DeclareOption), from the
// file that holds the settings field it sets; its type is that field's, and the kinds that take
// it are those whose settings have the key. So a new option is a field and a declaration beside
// the kind's settings, wherever those live, and the command line cannot drift from what a
// scenario file decodes.
type Option struct {
	Key  string // the settings field's yaml key: "grpc_connections"
	Flag string // the command line's flag, without its dashes: "grpc-connections"
	// Help is the flag's help. {kinds} in it stands for the kinds offered to users that take the
	// option named by HelpKinds (by default this one), "opa/server, cedar/server and http";
	// {kinds,} for the same kinds joined by commas alone.
	Help      string
	HelpKinds string
	// Default is the value the flag's help shows as its default ("POST"); nil for the zero
	// value. A flag not given sets nothing: the scenario's option, or the kind's own default,
	// stands.
	Default any
	// Selective marks an option only some kinds take: its flag, given with none of them
	// selected, would be ignored without a word, so the command line refuses it.
	Selective bool
	// EveryTarget marks a Selective option whose flag every selected kind must take: a
	// datastore given to a run that also measures an engine without one would be ignored for
	// that engine without a word, so the command line refuses it, naming the flag and target.
	EveryTarget bool
	// Launches marks an option that configures a server authzbench starts (its arguments, the
	// binary it runs): beside a url, a server authzbench does not start, the command line
	// refuses it rather than ignore it.
	Launches bool
	// File marks an option that names a file the run reads (a certificate, a binary): no
	// output of the run may replace it.
	File bool
	// Secret marks an option whose value is a secret (a server's key): the command line a
	// result records shows it as REDACTED (RedactSecrets).
	Secret bool
	// Check finds what is wrong with a value on its face, before anything is built or started,
	// saying it of name, the option as the user gave it (its flag, "--url"); nil takes any
	// value. A zero value, the kind's default, is never checked.
	Check func(name string, value any) error
}

var declared = map[string]Option{}

// DeclareOption adds a target option; called from the init function of the file whose
// settings hold its field.
func DeclareOption(o Option) {
	switch {
	case o.Key == "" || o.Flag == "" || o.Help == "":
		panic(fmt.Sprintf("kinds: option %q declared without its key, flag or help", o.Key))
	case declared[o.Key].Key != "":
		panic("kinds: option " + o.Key + " declared twice")
	}
	declared[o.Key] = o
}

// Options lists the declared target options, by flag. It panics on a declaration that no
// kind's settings have, or on a key two kinds give different types: both are programming errors
// any test that builds the command line meets.
func Options() []Option {
	var out []Option
	for _, o := range declared {
		if _, err := optionType(o.Key); err != nil {
			panic(err)
		}
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Flag < out[j].Flag })
	return out
}

// CheckOption checks value, given for option key as name (a flag), as the option's declaration
// does; nil when it has no check or value is the zero value.
func CheckOption(key, name string, value any) error {
	o, ok := declared[key]
	if !ok || o.Check == nil || value == nil || reflect.ValueOf(value).IsZero() {
		return nil
	}
	return o.Check(name, value)
}

// LookupOption returns the declaration of the option key.
func LookupOption(key string) (Option, bool) {
	o, ok := declared[key]
	return o, ok
}

// Type is the Go type of the option's value: that of the settings field it sets.
func (o Option) Type() reflect.Type {
	t, err := optionType(o.Key)
	if err != nil {
		panic(err)
	}
	return t
}

// Count reports whether the option counts something (replicas, connections): given, it must be
// 1 or more (see CountOption).
func (o Option) Count() bool {
	for _, k := range kinds {
		if isCount(reflect.TypeOf(k.NewConfig()), o.Key) {
			return true
		}
	}
	return false
}

// Usage is the flag's help, with the kinds that take the option written in.
func (o Option) Usage() string {
	of := o.HelpKinds
	if of == "" {
		of = o.Key
	}
	taking := KindsOffered(of)
	if len(taking) == 0 {
		// A switch every kind refuses on its own (spicedb_overwrite wants a url with it) is
		// still offered by the kinds that take it, or the help would name none.
		taking = KindsTaking(of)
	}
	return strings.NewReplacer("{kinds,}", strings.Join(taking, ", "), "{kinds}", joinAnd(taking)).Replace(o.Help)
}

// KindsTaking lists the kinds offered to users whose settings take the option key, in their
// Order.
func KindsTaking(key string) []string {
	var names []string
	for _, k := range Kinds() {
		if HasOption(k.NewConfig(), key) {
			names = append(names, k.Name)
		}
	}
	return names
}

// KindsOffered lists the kinds that take the option key and do not refuse it, in their Order:
// what help and messages offer a user. A kind can hold an option through settings it shares
// (openfga/server holds tls in ServerConfig) and refuse it in Check, where it has a reason to
// (it starts its server in clear); help that named it would promise what the run refuses. A
// switch (a bool option) is tried on the kind's defaults, so the list follows Check and cannot
// drift from it; other options are listed as KindsTaking lists them.
func KindsOffered(key string) []string {
	var names []string
	for _, k := range Kinds() {
		if HasOption(k.NewConfig(), key) && !refusesSwitch(k, key) {
			names = append(names, k.Name)
		}
	}
	return names
}

// refusesSwitch reports whether kind k's Check refuses the bool option key turned on alone.
func refusesSwitch(k *Kind, key string) bool {
	if t, err := optionType(key); err != nil || t.Kind() != reflect.Bool {
		return false
	}
	c, err := k.Configure(map[string]any{key: true})
	return err == nil && refusedOption(c.Check(), key)
}

// refusedOption reports whether err, or any error joined or wrapped in it, is an OptionError
// about key.
func refusedOption(err error, key string) bool {
	switch e := err.(type) {
	case nil:
		return false
	case *OptionError:
		return e.Key == key
	case interface{ Unwrap() []error }:
		for _, inner := range e.Unwrap() {
			if refusedOption(inner, key) {
				return true
			}
		}
		return false
	}
	return refusedOption(errors.Unwrap(err), key)
}

// TakingPhrase names the kinds offered the option key as a sentence does, "opa/server and
// cedar/server", for messages about the option.
func TakingPhrase(key string) string { return joinAnd(KindsOffered(key)) }

func joinAnd(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// optionType is the type of the field of key in the settings of every kind (internal ones
// included) that has it.
func optionType(key string) (reflect.Type, error) {
	types, conflicts := optionTypes()
	if err := conflicts[key]; err != nil {
		return nil, err
	}
	if t, ok := types[key]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("kinds: option %s declared, and no kind's settings have it", key)
}

// settingsTypes is optionTypes' answer for the kinds registered when it was made: the
// registry only grows, so a count tells a stale answer (an init function asking before every
// engine registered) from a current one.
var settingsTypes struct {
	sync.Mutex
	kinds     int
	types     map[string]reflect.Type
	conflicts map[string]error
}

// optionTypes maps each key in any kind's settings to its field's type, and each key two
// kinds give different types to the error that says so. It reflects over every kind's settings
// once per process: asked key by key, the command's help (each option's kinds, each kind's
// refusals) walked them some ten thousand times, a third of a run's start-up CPU.
func optionTypes() (map[string]reflect.Type, map[string]error) {
	settingsTypes.Lock()
	defer settingsTypes.Unlock()
	if settingsTypes.types != nil && settingsTypes.kinds == len(kinds) {
		return settingsTypes.types, settingsTypes.conflicts
	}
	types, conflicts := map[string]reflect.Type{}, map[string]error{}
	for _, name := range sortedKindNames() {
		for key, f := range optionFields(reflect.ValueOf(kinds[name].NewConfig())) {
			found, ok := types[key]
			switch {
			case !ok:
				types[key] = f.Type()
			case found != f.Type() && conflicts[key] == nil:
				conflicts[key] = fmt.Errorf("kinds: option %s is a %s in one kind's settings and a %s in %s's", key, found, f.Type(), name)
			}
		}
	}
	settingsTypes.kinds, settingsTypes.types, settingsTypes.conflicts = len(kinds), types, conflicts
	return types, conflicts
}

func sortedKindNames() []string {
	var names []string
	for name := range kinds {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// RedactSecrets returns args, a command line, with the value of every Secret option's flag
// (--flag VALUE, --flag=VALUE) written REDACTED, for the command line a result records.
func RedactSecrets(args []string) []string {
	out := append([]string(nil), args...)
	for _, o := range declared {
		if !o.Secret {
			continue
		}
		for _, flag := range []string{"--" + o.Flag} {
			for i := 0; i < len(out); i++ {
				switch {
				case out[i] == flag && i+1 < len(out):
					out[i+1] = "REDACTED"
					i++
				case strings.HasPrefix(out[i], flag+"="):
					out[i] = flag + "=REDACTED"
				}
			}
		}
	}
	return out
}
