package cedarengine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/cedar-policy/cedar-go/types"
	"github.com/cedar-policy/cedar-go/x/exp/schema/resolved"

	"github.com/authzbench/authzbench/internal/userwords"
)

// The Cedar CLI reads entities and request contexts in the JSON forms of the Rust
// implementation, and with a schema it accepts shorter forms that only the schema can tell
// apart: an entity reference as {"type": ..., "id": ...} without "__entity", an extension value
// as {"fn": ..., "arg": ...} without "__extn" or as the plain string its constructor takes. cedar-go
// reads values without a schema, where those forms are records and strings, and decisions go
// silently wrong. So with a schema, values are read here, the schema saying what each one is;
// without one, cedar-go reads them, and a value whose shape suggests a form it cannot be read
// as gets a warning.

// valueReader turns JSON values into Cedar values, with the schema when there is one.
type valueReader struct {
	schema *resolved.Schema // nil without a schema
	warn   func(string)
}

// jsonKind names a JSON value's kind for messages.
func jsonKind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "string " + truncated(string(raw))
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number " + string(raw)
}

func truncated(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// typeName is a schema type as the Cedar schema syntax writes it.
func typeName(t resolved.IsType) string {
	switch t := t.(type) {
	case resolved.StringType:
		return "String"
	case resolved.LongType:
		return "Long"
	case resolved.BoolType:
		return "Bool"
	case resolved.ExtensionType:
		return string(t)
	case resolved.EntityType:
		return string(t)
	case resolved.SetType:
		return "Set<" + typeName(t.Element) + ">"
	case resolved.RecordType:
		return "a record"
	}
	return fmt.Sprintf("%T", t)
}

// valueTypeName is a Cedar value's type as a schema would name it.
func valueTypeName(v types.Value) string {
	switch v := v.(type) {
	case types.String:
		return "String"
	case types.Long:
		return "Long"
	case types.Boolean:
		return "Bool"
	case types.EntityUID:
		return string(v.Type)
	case types.Set:
		return "Set"
	case types.Record:
		return "a record"
	case types.IPAddr:
		return "ipaddr"
	case types.Decimal:
		return "decimal"
	case types.Datetime:
		return "datetime"
	case types.Duration:
		return "duration"
	}
	return fmt.Sprintf("%T", v)
}

// extensionConstructors are the functions each extension type's values are made with, by the
// names the JSON "fn" member uses.
var extensionConstructors = map[string]string{"ipaddr": "ip", "decimal": "decimal", "datetime": "datetime", "duration": "duration"}

func parseExtension(fn, arg string) (types.Value, error) {
	switch fn {
	case "ip":
		return types.ParseIPAddr(arg)
	case "decimal":
		return types.ParseDecimal(arg)
	case "datetime":
		return types.ParseDatetime(arg)
	case "duration":
		return types.ParseDuration(arg)
	}
	return nil, fmt.Errorf("unknown extension function %q; known: ip, decimal, datetime, duration", fn)
}

// value reads raw as a value of type want; where names the value in errors ("Document::"d1"
// attribute owner"). A nil want (no schema, or a part the schema leaves open) reads it as
// cedar-go does without a schema.
func (r *valueReader) value(raw json.RawMessage, want resolved.IsType, where string) (types.Value, error) {
	raw = bytes.TrimSpace(raw)
	if want == nil {
		r.warnGuesses(raw, where)
		var v types.Value
		if err := types.UnmarshalJSON(raw, &v); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		return v, nil
	}
	if string(raw) == "null" {
		return nil, fmt.Errorf("%s: expected %s, got null", where, typeName(want))
	}
	mismatch := func() error {
		return fmt.Errorf("%s: expected %s, got %s", where, typeName(want), jsonKind(raw))
	}
	switch want := want.(type) {
	case resolved.StringType:
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, mismatch()
		}
		return types.String(s), nil
	case resolved.LongType:
		var n json.Number
		if raw[0] == '"' || json.Unmarshal(raw, &n) != nil {
			return nil, mismatch()
		}
		i, err := n.Int64()
		if err != nil || string(raw) == "-0" {
			return nil, fmt.Errorf("%s: expected Long, a 64-bit integer, got %s", where, raw)
		}
		return types.Long(i), nil
	case resolved.BoolType:
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return nil, mismatch()
		}
		return types.Boolean(b), nil
	case resolved.EntityType:
		// Only requests and template links take an entity as a string; in a value, as for the
		// Cedar CLI, a string is a string.
		uid, err := readUID(raw)
		if err != nil || raw[0] == '"' {
			return nil, fmt.Errorf(`%s: expected an entity reference to a %s, {"type": "%s", "id": ...} or {"__entity": {...}}, got %s`,
				where, want, want, jsonKind(raw))
		}
		if uid.Type != types.EntityType(want) {
			return nil, fmt.Errorf("%s: expected %s, got %s", where, want, uid.Type)
		}
		return uid, nil
	case resolved.ExtensionType:
		return r.extension(raw, string(want), where)
	case resolved.SetType:
		var items []json.RawMessage
		if raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
			return nil, mismatch()
		}
		vals := make([]types.Value, len(items))
		for i, item := range items {
			v, err := r.value(item, want.Element, fmt.Sprintf("%s[%d]", where, i))
			if err != nil {
				return nil, err
			}
			vals[i] = v
		}
		return types.NewSet(vals...), nil
	case resolved.RecordType:
		var members map[string]json.RawMessage
		if raw[0] != '{' || json.Unmarshal(raw, &members) != nil {
			return nil, mismatch()
		}
		return r.record(members, want, where, true)
	}
	return nil, fmt.Errorf("%s: schema type %T is not supported", where, want)
}

// record reads an object's members by a record type: each member as its attribute's type, every
// required attribute present, none the type does not declare. An attribute is named
// `where attribute a`, or `where.a` when nested inside another attribute.
func (r *valueReader) record(members map[string]json.RawMessage, want resolved.RecordType, where string, nested bool) (types.Record, error) {
	attrName := func(name string) string {
		if nested {
			return where + "." + name
		}
		return where + " attribute " + name
	}
	out := make(types.RecordMap, len(members))
	for _, name := range slices.Sorted(maps.Keys(members)) {
		attr, ok := want[types.String(name)]
		if !ok {
			declared := make([]string, 0, len(want))
			for k := range want {
				declared = append(declared, string(k))
			}
			sort.Strings(declared)
			return types.Record{}, fmt.Errorf("%s: not declared by the schema (declared: %s)", attrName(name), strings.Join(declared, ", "))
		}
		v, err := r.value(members[name], attr.Type, attrName(name))
		if err != nil {
			return types.Record{}, err
		}
		out[types.String(name)] = v
	}
	for name, attr := range want {
		if _, ok := members[string(name)]; !ok && !attr.Optional {
			return types.Record{}, fmt.Errorf("%s: missing; the schema requires it (%s)", attrName(string(name)), typeName(attr.Type))
		}
	}
	return types.NewRecord(out), nil
}

// extension reads an extension value in any of the forms the Cedar CLI accepts with a schema:
// {"__extn": {"fn": ..., "arg": ...}}, {"fn": ..., "arg": ...}, or the constructor's argument
// as a plain string.
func (r *valueReader) extension(raw json.RawMessage, ext, where string) (types.Value, error) {
	fn := extensionConstructors[ext]
	var arg string
	switch {
	case raw[0] == '"':
		if err := json.Unmarshal(raw, &arg); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
	case raw[0] == '{':
		var call struct {
			Extn *struct {
				Fn  string `json:"fn"`
				Arg string `json:"arg"`
			} `json:"__extn"`
			Fn  string `json:"fn"`
			Arg string `json:"arg"`
		}
		if err := json.Unmarshal(raw, &call); err != nil {
			return nil, fmt.Errorf(`%s: expected %s, {"fn": "%s", "arg": "..."}, got %s`, where, ext, fn, err)
		}
		got, a := call.Fn, call.Arg
		if call.Extn != nil {
			got, a = call.Extn.Fn, call.Extn.Arg
		}
		if got != fn {
			return nil, fmt.Errorf(`%s: expected %s, made with "fn": "%s", got "fn": %q`, where, ext, fn, got)
		}
		arg = a
	default:
		return nil, fmt.Errorf(`%s: expected %s, as "..." or {"fn": "%s", "arg": "..."}, got %s`, where, ext, fn, jsonKind(raw))
	}
	v, err := parseExtension(fn, arg)
	if err != nil {
		return nil, fmt.Errorf("%s: expected %s: %q: %w", where, ext, arg, err)
	}
	return v, nil
}

// warnGuesses warns, without a schema, about objects that the Cedar CLI would read as an entity
// reference or an extension value only where a schema says so, and cedar-go reads as records.
func (r *valueReader) warnGuesses(raw json.RawMessage, where string) {
	if r.warn == nil || len(raw) == 0 {
		return
	}
	switch raw[0] {
	case '[':
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) == nil {
			for i, item := range items {
				r.warnGuesses(bytes.TrimSpace(item), fmt.Sprintf("%s[%d]", where, i))
			}
		}
	case '{':
		var members map[string]json.RawMessage
		if json.Unmarshal(raw, &members) != nil {
			return
		}
		_, hasType := members["type"]
		_, hasID := members["id"]
		_, hasFn := members["fn"]
		_, hasArg := members["arg"]
		switch {
		case len(members) == 2 && hasType && hasID:
			r.warn(fmt.Sprintf(`%s: {"type": ..., "id": ...} is read as a record, not an entity reference: without a schema, write {"__entity": {"type": ..., "id": ...}}, or give a schema`, where))
			return
		case len(members) == 2 && hasFn && hasArg:
			r.warn(fmt.Sprintf(`%s: {"fn": ..., "arg": ...} is read as a record, not an extension value: without a schema, write {"__extn": {"fn": ..., "arg": ...}}, or give a schema`, where))
			return
		case len(members) == 1:
			if _, ok := members["__entity"]; ok {
				return
			}
			if _, ok := members["__extn"]; ok {
				return
			}
		}
		for _, name := range slices.Sorted(maps.Keys(members)) {
			r.warnGuesses(bytes.TrimSpace(members[name]), where+"."+name)
		}
	}
}

// readUID reads an entity reference in any form the Cedar CLI takes: {"type": ..., "id": ...},
// {"__entity": {...}}, or a string in Cedar syntax, "User::\"alice\"".
func readUID(raw json.RawMessage) (types.EntityUID, error) {
	raw = bytes.TrimSpace(raw)
	var uid types.EntityUID
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return uid, err
		}
		if err := uid.UnmarshalCedar([]byte(s)); err != nil {
			return uid, fmt.Errorf("%q is not an entity in Cedar syntax, such as User::\"alice\"", s)
		}
		return uid, nil
	}
	if err := uid.UnmarshalJSON(raw); err != nil {
		return uid, err
	}
	return uid, nil
}

// entityJSON is one element of an entities document.
type entityJSON struct {
	UID     json.RawMessage            `json:"uid"`
	Attrs   map[string]json.RawMessage `json:"attrs"`
	Parents []json.RawMessage          `json:"parents"`
	Tags    map[string]json.RawMessage `json:"tags"`
}

// entity reads one entity of an entities document, its attributes and tags by the schema's
// declaration of its type when there is a schema.
func (r *valueReader) entity(raw json.RawMessage) (types.Entity, error) {
	if r.schema == nil && r.warn == nil {
		// Nothing to read by and nothing to warn about: cedar-go's own reading, the fast one a
		// server pays on every request that brings entities.
		// What it refuses, the reading below accepts or explains.
		var ent types.Entity
		if err := json.Unmarshal(raw, &ent); err == nil {
			return ent, nil
		}
	}
	var ej entityJSON
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ej); err != nil {
		return types.Entity{}, userwords.JSON(raw, err, `an entity {"uid": {"type": ..., "id": ...}, "attrs": {...}, "parents": [...], "tags": {...}}`)
	}
	if ej.UID == nil {
		return types.Entity{}, fmt.Errorf(`missing "uid"`)
	}
	uid, err := readUID(ej.UID)
	if err != nil {
		return types.Entity{}, fmt.Errorf(`"uid": %s`, userwords.Text(err.Error()))
	}
	ent := types.Entity{UID: uid}
	var parents []types.EntityUID
	for i, p := range ej.Parents {
		puid, err := readUID(p)
		if err != nil {
			return types.Entity{}, fmt.Errorf(`%s parent %d: %w`, uid, i+1, err)
		}
		parents = append(parents, puid)
	}
	ent.Parents = types.NewEntityUIDSet(parents...)

	var shape resolved.RecordType
	var tags resolved.IsType
	typed := false
	if r.schema != nil {
		if decl, ok := r.schema.Entities[uid.Type]; ok {
			shape, tags, typed = decl.Shape, decl.Tags, true
			if shape == nil {
				shape = resolved.RecordType{}
			}
		}
	}
	where := uid.String()
	if typed {
		rec, err := r.record(ej.Attrs, shape, where, false)
		if err != nil {
			return types.Entity{}, err
		}
		ent.Attributes = rec
	} else {
		attrs := make(types.RecordMap, len(ej.Attrs))
		for _, name := range slices.Sorted(maps.Keys(ej.Attrs)) {
			v, err := r.value(ej.Attrs[name], nil, where+" attribute "+name)
			if err != nil {
				return types.Entity{}, err
			}
			attrs[types.String(name)] = v
		}
		ent.Attributes = types.NewRecord(attrs)
	}
	if len(ej.Tags) > 0 {
		if typed && tags == nil {
			return types.Entity{}, fmt.Errorf("%s has tags, and the schema's %s declares none", where, uid.Type)
		}
		tm := make(types.RecordMap, len(ej.Tags))
		for _, name := range slices.Sorted(maps.Keys(ej.Tags)) {
			v, err := r.value(ej.Tags[name], tags, where+" tag "+name)
			if err != nil {
				return types.Entity{}, err
			}
			tm[types.String(name)] = v
		}
		ent.Tags = types.NewRecord(tm)
	}
	return ent, nil
}

// conforms reports whether v, read without a schema, is already exactly what the schema reads:
// then the request needs no second reading. Any difference (a record where the schema says
// entity, a string where it says ipaddr, a missing or extra attribute, a wrong type) sends it to
// the schema's reading, which converts it or explains what is wrong.
func conforms(v types.Value, want resolved.IsType) bool {
	switch want := want.(type) {
	case resolved.StringType:
		_, ok := v.(types.String)
		return ok
	case resolved.LongType:
		_, ok := v.(types.Long)
		return ok
	case resolved.BoolType:
		_, ok := v.(types.Boolean)
		return ok
	case resolved.EntityType:
		uid, ok := v.(types.EntityUID)
		return ok && uid.Type == types.EntityType(want)
	case resolved.ExtensionType:
		switch v.(type) {
		case types.IPAddr:
			return want == "ipaddr"
		case types.Decimal:
			return want == "decimal"
		case types.Datetime:
			return want == "datetime"
		case types.Duration:
			return want == "duration"
		}
		return false
	case resolved.SetType:
		set, ok := v.(types.Set)
		if !ok {
			return false
		}
		for elem := range set.All() {
			if !conforms(elem, want.Element) {
				return false
			}
		}
		return true
	case resolved.RecordType:
		rec, ok := v.(types.Record)
		return ok && recordConforms(rec, want)
	}
	return false
}

func recordConforms(rec types.Record, want resolved.RecordType) bool {
	present := 0
	for name, attr := range want {
		v, ok := rec.Get(name)
		if !ok {
			if !attr.Optional {
				return false
			}
			continue
		}
		present++
		if !conforms(v, attr.Type) {
			return false
		}
	}
	return present == rec.Len()
}

// entityConforms is conforms for an entity: its attributes and tags as its type declares them.
// An entity whose type the schema does not declare is left to the schema's reading.
func (r *valueReader) entityConforms(ent types.Entity) bool {
	decl, ok := r.schema.Entities[ent.UID.Type]
	if !ok {
		return false
	}
	shape := decl.Shape
	if shape == nil {
		shape = resolved.RecordType{}
	}
	if !recordConforms(ent.Attributes, shape) {
		return false
	}
	if ent.Tags.Len() == 0 {
		return true
	}
	if decl.Tags == nil {
		return false
	}
	for v := range ent.Tags.Values() {
		if !conforms(v, decl.Tags) {
			return false
		}
	}
	return true
}
