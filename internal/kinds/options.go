package kinds

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// OptionKeys lists the keys a kind's settings take, sorted: the `yaml` tags of its fields,
// those of inlined structs included.
func OptionKeys(c Config) []string {
	var keys []string
	for k := range optionFields(reflect.ValueOf(c)) {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// HasOption reports whether settings c take the key.
func HasOption(c Config, key string) bool {
	_, ok := optionFields(reflect.ValueOf(c))[key]
	return ok
}

// SetOptions sets the fields of c named by the keys of values, as the command line's flags give
// them (a flag applies to every target that has its option). Keys c does not take are left for
// other kinds and returned in ignored; a value of the wrong type is an error naming the key.
func SetOptions(c Config, values map[string]any) (ignored []string, err error) {
	fields := optionFields(reflect.ValueOf(c))
	for key, v := range values {
		f, ok := fields[key]
		if !ok {
			ignored = append(ignored, key)
			continue
		}
		rv := reflect.ValueOf(v)
		switch {
		case v == nil:
			f.SetZero()
		case rv.Type().AssignableTo(f.Type()):
			f.Set(rv)
		case rv.Type().ConvertibleTo(f.Type()) && rv.Kind() == f.Kind():
			f.Set(rv.Convert(f.Type()))
		default:
			return ignored, fmt.Errorf("option %s: want %s, got %T", key, f.Type(), v)
		}
	}
	sort.Strings(ignored)
	return ignored, nil
}

// CountOption is the value of option key of c when the option counts something (replicas,
// connections), marked so by its field's tag `count:"true"`: given, it must be 1 or more, since
// its zero value means "not given" (the kind's default) and a user's 0 must not be taken so.
func CountOption(c Config, key string) (int64, bool) {
	f, ok := optionFields(reflect.ValueOf(c))[key]
	if !ok || !f.CanInt() || !isCount(reflect.TypeOf(c), key) {
		return 0, false
	}
	return f.Int(), true
}

// isCount reports whether the field of key in the struct t (or t points to) is tagged a count.
func isCount(t reflect.Type, key string) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return false
	}
	for i := range t.NumField() {
		sf := t.Field(i)
		name, opts, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
		switch {
		case strings.Contains(opts, "inline"):
			if isCount(sf.Type, key) {
				return true
			}
		case name == key:
			return sf.Tag.Get("count") == "true"
		}
	}
	return false
}

// optionFields maps each key of the struct v points at to its settable field.
func optionFields(v reflect.Value) map[string]reflect.Value {
	out := map[string]reflect.Value{}
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return out
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return out
	}
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		name, opts, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
		if name == "-" || !sf.IsExported() {
			continue
		}
		if strings.Contains(opts, "inline") {
			for k, f := range optionFields(v.Field(i).Addr()) {
				out[k] = f
			}
			continue
		}
		if name != "" {
			out[name] = v.Field(i)
		}
	}
	return out
}

// OptionError is a target option that cannot be used as given. Its message names each option by
// its key, as a scenario file's options: give it (url, decision_path); a command line, where the
// options are flags, says the same with Named, so neither names what the user did not write.
type OptionError struct {
	// Key is the option at fault.
	Key string
	say func(name func(key string) string) string
}

func (e *OptionError) Error() string { return e.say(func(key string) string { return key }) }

// Named is the message with every option it names called name(key), such as the flag that gave
// it.
func (e *OptionError) Named(name func(key string) string) string { return e.say(name) }

// NewOptionError is an error about option key; say writes the message, naming each option it
// mentions as name(key) does.
func NewOptionError(key string, say func(name func(key string) string) string) error {
	return &OptionError{Key: key, say: say}
}

func optionError(key string, say func(name func(key string) string) string) error {
	return NewOptionError(key, say)
}
