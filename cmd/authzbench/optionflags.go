package main

import (
	"fmt"
	"reflect"

	"github.com/spf13/pflag"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/outputs"
	"github.com/authzbench/authzbench/internal/scenario"
)

// optionFlags are the flags that set target options: one per option the kinds declare
// (kinds.DeclareOption), of its field's type, so that a new option adds no line here.
type optionFlags struct {
	fl *pflag.FlagSet
	// values holds, by option key, a pointer to the flag's value.
	values map[string]any
}

func addOptionFlags(fl *pflag.FlagSet) *optionFlags {
	f := &optionFlags{fl: fl, values: map[string]any{}}
	for _, o := range kinds.Options() {
		usage := o.Usage()
		switch t := o.Type(); {
		case t.Kind() == reflect.String:
			def, _ := o.Default.(string)
			f.values[o.Key] = fl.String(o.Flag, def, usage)
		case t.Kind() == reflect.Int:
			def, _ := o.Default.(int)
			f.values[o.Key] = fl.Int(o.Flag, def, usage)
		case t.Kind() == reflect.Bool:
			def, _ := o.Default.(bool)
			f.values[o.Key] = fl.Bool(o.Flag, def, usage)
		case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
			f.values[o.Key] = fl.StringArray(o.Flag, nil, usage)
		default:
			panic(fmt.Sprintf("option %s: no flag for a %s", o.Key, t))
		}
		if o.Count() {
			markCounts(fl, o.Flag)
		}
	}
	return f
}

// given is the options whose flags the user gave, by key: only those, so that a scenario's
// options stand where no flag overrides them.
func (f *optionFlags) given() map[string]any {
	values := map[string]any{}
	for _, o := range kinds.Options() {
		if f.fl.Changed(o.Flag) {
			values[o.Key] = reflect.ValueOf(f.values[o.Key]).Elem().Interface()
		}
	}
	return values
}

// The value of option key's flag, given or not; key must be a declared option of that type.
func (f *optionFlags) str(key string) string    { return *f.values[key].(*string) }
func (f *optionFlags) num(key string) int       { return *f.values[key].(*int) }
func (f *optionFlags) on(key string) bool       { return *f.values[key].(*bool) }
func (f *optionFlags) list(key string) []string { return *f.values[key].(*[]string) }

// check checks the value of every option flag given, as its declaration says (kinds.CheckOption).
func (f *optionFlags) check() []error {
	var errs []error
	for _, o := range kinds.Options() {
		if f.fl.Changed(o.Flag) {
			value := reflect.ValueOf(f.values[o.Key]).Elem().Interface()
			if err := kinds.CheckOption(o.Key, "--"+o.Flag, value); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errs
}

// named names, by option key, the flags that gave target options, for errors about those
// options to name the flag. Without a scenario file the flags are the user's only words for the
// options, so every option is named by its flag, given or not ("needs --server-key").
func (f *optionFlags) named(fromFile bool) map[string]string {
	names := map[string]string{}
	for _, o := range kinds.Options() {
		if f.fl.Changed(o.Flag) || !fromFile {
			names[o.Key] = "--" + o.Flag
		}
	}
	return names
}

// checkTaken refuses a flag given for an option only some kinds take (Selective) when no
// selected target takes it: it would be ignored without a word.
func (f *optionFlags) checkTaken(s *scenario.Scenario) error {
	for _, o := range kinds.Options() {
		if !o.Selective || !f.fl.Changed(o.Flag) {
			continue
		}
		taken := false
		for _, t := range s.Targets {
			takes := kinds.HasOption(t.Settings(), o.Key)
			if o.EveryTarget && !takes {
				return fmt.Errorf("--%s applies to the %s targets, and %s takes none", o.Flag, kinds.TakingPhrase(o.Key), t.Name)
			}
			taken = taken || takes
		}
		if !taken {
			return fmt.Errorf("--%s applies to the %s targets, and none is selected", o.Flag, kinds.TakingPhrase(o.Key))
		}
	}
	return nil
}

// addInputs adds to p the files the option flags name, which no output may replace.
func (f *optionFlags) addInputs(p *outputs.Plan) {
	for _, o := range kinds.Options() {
		if !o.File {
			continue
		}
		switch v := reflect.ValueOf(f.values[o.Key]).Elem().Interface().(type) {
		case string:
			p.Input("--"+o.Flag, v)
		case []string:
			p.Input("--"+o.Flag, v...)
		}
	}
}

// optionUsage is the help of option key's flag, for commands that declare that flag themselves
// (capacity's --url).
func optionUsage(key string) string {
	o, _ := kinds.LookupOption(key)
	return o.Usage()
}
