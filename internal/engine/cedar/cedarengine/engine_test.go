package cedarengine

import (
	"strings"
	"testing"
)

const docsSchema = `entity User;
entity DocumentShare;
entity Document = { modifyACL: DocumentShare, meta?: { size: Long }, from?: ipaddr };
action view appliesTo { principal: User, resource: Document, context: { from: ipaddr } };`

const viewPolicy = `permit (principal, action == Action::"view", resource);`

// A mistake in the user's entities, links or requests is reported naming the entity, the
// attribute or the field, with what was expected and the form that is accepted.
func TestErrorsNameTheCulprit(t *testing.T) {
	cases := []struct {
		name     string
		policies string
		schema   string // none when empty
		entities string // none when empty
		links    string // none when empty
		request  string // decided after a successful load, when not empty
		want     []string
	}{
		{name: "entity of the wrong type", schema: docsSchema,
			entities: `[{"uid": {"type": "Document", "id": "d1"}, "attrs": {"modifyACL": {"__entity": {"type": "Document", "id": "d2"}}}, "parents": []}]`,
			want:     []string{`entities.json:1:2:`, `Document::"d1" attribute modifyACL: expected DocumentShare, got Document`}},
		{name: "entity written as a string in a value", schema: docsSchema,
			entities: `[{"uid": {"type": "Document", "id": "d1"}, "attrs": {"modifyACL": "DocumentShare::\"s\""}, "parents": []}]`,
			want:     []string{`Document::"d1" attribute modifyACL: expected an entity reference to a DocumentShare, {"type": "DocumentShare", "id": ...} or {"__entity": {...}}, got string`}},
		{name: "required attribute missing", schema: docsSchema,
			entities: `[{"uid": {"type": "Document", "id": "d1"}, "attrs": {}, "parents": []}]`,
			want:     []string{`Document::"d1" attribute modifyACL: missing; the schema requires it (DocumentShare)`}},
		{name: "attribute the schema does not declare", schema: docsSchema,
			entities: `[{"uid": {"type": "Document", "id": "d1"}, "attrs": {"modifyACL": {"type": "DocumentShare", "id": "s"}, "owner": "alice"}, "parents": []}]`,
			want:     []string{`Document::"d1" attribute owner: not declared by the schema (declared: from, meta, modifyACL)`}},
		{name: "nested attribute", schema: docsSchema,
			entities: `[{"uid": {"type": "Document", "id": "d1"}, "attrs": {"modifyACL": {"type": "DocumentShare", "id": "s"}, "meta": {"size": "big"}}, "parents": []}]`,
			want:     []string{`Document::"d1" attribute meta.size: expected Long, got string "big"`}},
		{name: "extension value that does not parse", schema: docsSchema,
			entities: `[{"uid": {"type": "Document", "id": "d1"}, "attrs": {"modifyACL": {"type": "DocumentShare", "id": "s"}, "from": "not-an-ip"}, "parents": []}]`,
			want:     []string{`Document::"d1" attribute from: expected ipaddr: "not-an-ip"`}},
		{name: "parent type the schema does not allow", schema: `entity Org; entity Group in [Org]; entity User in [Group]; entity Repo;
action read appliesTo { principal: User, resource: Repo };`,
			entities: `[{"uid": {"type": "User", "id": "u"}, "attrs": {}, "parents": [{"type": "Repo", "id": "r"}]}]`,
			want:     []string{`parent Repo::"r": the schema does not let a User be in a Repo (it may be in: Group)`}},
		{name: "request principal not an entity", request: `{"principal": 5, "action": "Action::\"view\"", "resource": "Document::\"d1\""}`,
			want: []string{`"principal": number 5 is not an entity`, `"User::\"alice\""`, `{"type": "User", "id": "alice"}`}},
		{name: "request entity string not in Cedar syntax", request: `{"principal": "alice", "action": "Action::\"view\"", "resource": "Document::\"d1\""}`,
			want: []string{`"principal": string "alice" is not an entity: "alice" is not an entity in Cedar syntax, such as User::"alice"`}},
		{name: "request field missing", request: `{"principal": "User::\"a\"", "action": "Action::\"view\""}`,
			want: []string{`missing "resource"; write it as {"type": "User", "id": "alice"}`}},
		{name: "request context by the schema", schema: docsSchema,
			entities: `[{"uid": {"type": "Document", "id": "d1"}, "attrs": {"modifyACL": {"type": "DocumentShare", "id": "s"}}, "parents": []}]`,
			request:  `{"principal": "User::\"a\"", "action": "Action::\"view\"", "resource": "Document::\"d1\"", "context": {"from": 10}}`,
			want:     []string{`context attribute from: expected ipaddr, as "..." or {"fn": "ip", "arg": "..."}, got number 10`}},
		{name: "request principal of a type the action does not take", schema: docsSchema,
			request: `{"principal": "Document::\"d1\"", "action": "Action::\"view\"", "resource": "Document::\"d1\""}`,
			want:    []string{"principal type `Document` is not valid", `the schema's Action::"view" takes principal User, resource Document`}},
		{name: "request action the schema lacks", schema: docsSchema,
			request: `{"principal": "User::\"a\"", "action": "Action::\"edit\"", "resource": "Document::\"d1\""}`,
			want:    []string{`the schema's actions are Action::"view"`}},
		{name: "link to an unknown template", policies: `@id("t") permit (principal == ?principal, action, resource);` + viewPolicy,
			links: `[{"template_id": "x", "link_id": "l", "args": {"?principal": "User::\"a\""}}]`,
			want:  []string{`links.json:1:2: template link 1: no template "x"; the templates are "t"`}},
		{name: "link without an entity for a slot", policies: `@id("t") permit (principal == ?principal, action, resource in ?resource);`,
			links: `[{"template_id": "t", "link_id": "l", "args": {"?principal": "User::\"a\""}}]`,
			want:  []string{`template t (policies.cedar:1:1) has ?resource, and args gives no entity for it`}},
		{name: "link with an entity for a slot the template lacks", policies: `@id("t") permit (principal == ?principal, action, resource);`,
			links: `[{"template_id": "t", "link_id": "l", "args": {"?principal": "User::\"a\"", "?resource": "Doc::\"d\""}}]`,
			want:  []string{`template t (policies.cedar:1:1) has no ?resource slot, and args gives one`}},
		{name: "link id already a policy id", policies: `@id("t") permit (principal == ?principal, action, resource);` + "\n@id(\"p\")" + viewPolicy,
			links: `[{"template_id": "t", "link_id": "p", "args": {"?principal": "User::\"a\""}}]`,
			want:  []string{`link id "p" is already a policy's id`}},
		{name: "slot argument not an entity", policies: `@id("t") permit (principal == ?principal, action, resource);`,
			links: `[{"template_id": "t", "link_id": "l", "args": {"?principal": "alice"}}]`,
			want:  []string{`args "?principal": "alice" is not an entity in Cedar syntax`}},
		{name: "only templates, none linked", policies: `@id("t") permit (principal == ?principal, action, resource);`,
			want: []string{"the policy files hold only templates, and none is linked"}},
		{name: "a line break inside a string keeps later lines numbered", policies: "@doc(\"two\nlines\")\npermit (principal, action, resource)\nwhen { \"a\nb\" == \"x\" };\nforbid (principal, action, resource) when { ) };",
			want: []string{"policies.cedar:6:47"}}, // the ")" on the sixth line
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			policies := c.policies
			if policies == "" {
				policies = viewPolicy
			}
			var entities, schema *Source
			if c.entities != "" {
				entities = &Source{Name: "entities.json", Text: []byte(c.entities)}
			}
			if c.schema != "" {
				schema = &Source{Name: "app.cedarschema", Text: []byte(c.schema)}
			}
			var opts []Option
			if c.links != "" {
				opts = append(opts, WithTemplateLinks(Source{Name: "links.json", Text: []byte(c.links)}))
			}
			e, err := New([]Source{{Name: "policies.cedar", Text: []byte(policies)}}, entities, schema, opts...)
			if err == nil && c.request != "" {
				_, err = e.ParseRequest([]byte(c.request))
			}
			if err == nil {
				t.Fatalf("no error; want one saying %q", c.want)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not say %q", err, w)
				}
			}
		})
	}
}

// What a user may not have meant is loaded, with a warning that names it: a value that only a
// schema could tell is an entity or an extension value, a template nothing links.
func TestWarningsNameWhatIsGuessed(t *testing.T) {
	entities := `[{"uid": {"type": "Doc", "id": "d1"}, "attrs": {"owner": {"type": "User", "id": "alice"}, "tags": [{"fn": "ip", "arg": "10.0.0.1"}]}, "parents": []}]`
	e, err := New([]Source{{Name: "policies.cedar", Text: []byte(viewPolicy + "\n@id(\"t\")\npermit (principal == ?principal, action, resource);")}},
		&Source{Name: "entities.json", Text: []byte(entities)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		// in file order: policies first; each says what to do, in words that fit a flag and a
		// scenario file's key alike
		`policies.cedar:2:1: policy t is a template (it has a ?principal or ?resource slot) and decides nothing without links: ` +
			`give a template links file, in the Cedar CLI's --template-linked format`,
		`Doc::"d1" attribute owner: {"type": ..., "id": ...} is read as a record, not an entity reference: ` +
			`without a schema, write {"__entity": {"type": ..., "id": ...}}, or give a schema`,
		`Doc::"d1" attribute tags[0]: {"fn": ..., "arg": ...} is read as a record, not an extension value: ` +
			`without a schema, write {"__extn": {"fn": ..., "arg": ...}}, or give a schema`,
	}
	got := e.Warnings()
	if len(got) != len(want) {
		t.Fatalf("warnings %q, want %d", got, len(want))
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Errorf("warning %q does not say %q", got[i], w)
		}
	}
	_, ws, err := e.ParseRequestWarning([]byte(`{"principal": "User::\"a\"", "action": "Action::\"view\"", "resource": "Doc::\"d1\"",
		"context": {"by": {"type": "User", "id": "alice"}, "ok": {"__entity": {"type": "User", "id": "bob"}}}}`))
	if err != nil || len(ws) != 1 || !strings.Contains(ws[0], `context.by: {"type": ..., "id": ...} is read as a record`) {
		t.Errorf("request warnings %q (%v), want one naming context.by", ws, err)
	}
}

// The Cedar CLI puts the schema's actions in the entity store, so action groups work; it
// numbers templates among the policies; and a link is known by its link id.
func TestSchemaActionsAndLinkedPolicies(t *testing.T) {
	schema := `entity User; entity Doc;
action Any; action read in [Any] appliesTo { principal: User, resource: Doc };`
	policies := `@id("t") permit (principal == ?principal, action in Action::"Any", resource);
forbid (principal == User::"mallory", action, resource);`
	links := `[{"template_id": "t", "link_id": "alice-any", "args": {"?principal": "User::\"al\\\"ice\""}}]`
	e, err := New([]Source{{Name: "policies.cedar", Text: []byte(policies)}}, nil,
		&Source{Name: "app.cedarschema", Text: []byte(schema)}, WithTemplateLinks(Source{Name: "links.json", Text: []byte(links)}))
	if err != nil {
		t.Fatal(err)
	}
	if e.policies.Get("policy1") == nil || e.policies.Get("alice-any") == nil || e.Policies() != 2 {
		t.Fatalf("want policy1 (the forbid, numbered after the template) and alice-any, got %d policies", e.Policies())
	}
	for _, c := range []struct {
		principal string
		allow     bool
	}{{`User::\"al\\\"ice\"`, true}, {`User::\"bob\"`, false}} {
		r, err := e.ParseRequest([]byte(`{"principal": "` + c.principal + `", "action": "Action::\"read\"", "resource": "Doc::\"d\""}`))
		if err != nil {
			t.Fatal(err)
		}
		dec, diag := e.Decide(&r)
		if bool(dec) != c.allow {
			t.Errorf("%s read: allow=%v, want %v (%+v)", c.principal, bool(dec), c.allow, diag)
		}
		if c.allow && (len(diag.Reasons) != 1 || diag.Reasons[0].PolicyID != "alice-any") {
			t.Errorf("reasons %+v, want alice-any", diag.Reasons)
		}
	}
}

// The server reads a request in canonical JSON in one pass and re-reads by the schema only what
// differs; the check before a run always reads by the schema. Both must yield the same request,
// whichever form it is written in.
func TestRequestReadAlikeServedAndChecked(t *testing.T) {
	schema := `entity User; entity Doc = { owner: User, from?: ipaddr };
action view appliesTo { principal: User, resource: Doc, context: { from: ipaddr, by?: User, n: Long } };`
	e, err := New([]Source{{Name: "policies.cedar", Text: []byte(viewPolicy)}}, nil, &Source{Name: "app.cedarschema", Text: []byte(schema)})
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{
		`{"principal": "User::\"a\"", "action": "Action::\"view\"", "resource": "Doc::\"d\"", "context": {"from": {"__extn": {"fn": "ip", "arg": "10.0.0.1"}}, "by": {"__entity": {"type": "User", "id": "b"}}, "n": 1},
		  "entities": [{"uid": {"type": "Doc", "id": "d"}, "attrs": {"owner": {"__entity": {"type": "User", "id": "a"}}}, "parents": []}]}`,
		`{"principal": "User::\"a\"", "action": "Action::\"view\"", "resource": "Doc::\"d\"", "context": {"from": "10.0.0.1", "by": {"type": "User", "id": "b"}, "n": 1},
		  "entities": [{"uid": {"type": "Doc", "id": "d"}, "attrs": {"owner": {"type": "User", "id": "a"}, "from": {"fn": "ip", "arg": "10.0.0.0/8"}}, "parents": []}]}`,
	} {
		served, err := e.ParseRequest([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		checked, _, err := e.ParseRequestWarning([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if !served.Context.Equal(checked.Context) {
			t.Errorf("context served %v, checked %v", served.Context, checked.Context)
		}
		for _, r := range []Request{served, checked} {
			doc, ok := r.entities.Get(served.Resource)
			owner, _ := doc.Attributes.Get("owner")
			if !ok || owner == nil || !owner.Equal(served.Principal) {
				t.Errorf("%s: Doc::\"d\" owner %v, want the principal", body[:40], owner)
			}
		}
		if by, _ := served.Context.Get("by"); by == nil || by.String() != `User::"b"` {
			t.Errorf("context by %v, want User::\"b\"", by)
		}
	}
}
