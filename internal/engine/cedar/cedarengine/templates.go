package cedarengine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/types"

	"github.com/authzbench/authzbench/internal/userwords"
)

// cedar-go has no policy templates, so authzbench links them itself, as the Cedar CLI's
// --template-linked does: a template is found in the policy text by its slots (?principal,
// ?resource), and each link is the template's text with its slots written as the linked
// entities, parsed as a static policy known by the link's id. The template alone decides nothing.

// policyText is one policy's place in its file, from its first annotation to its semicolon.
type policyText struct {
	start, end int
	slots      []slot // empty for a static policy
}

// slot is one ?principal or ?resource in a template's text.
type slot struct {
	at   int    // offset of the '?' in the file
	name string // "?principal" or "?resource"
}

// scanPolicies splits a policy file into its policies, outside string literals and comments: a
// policy ends at a semicolon, which Cedar allows nowhere else. It finds each template's slots.
func scanPolicies(text []byte) (policies []policyText) {
	start := -1
	var slots []slot
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '/' && i+1 < len(text) && text[i+1] == '/':
			for i < len(text) && text[i] != '\n' {
				i++
			}
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			continue
		}
		if start < 0 {
			start = i
		}
		switch c {
		case '"':
			for i++; i < len(text) && text[i] != '"'; i++ {
				if text[i] == '\\' {
					i++
				}
			}
		case '?':
			for _, name := range []string{"?principal", "?resource"} {
				if bytes.HasPrefix(text[i:], []byte(name)) {
					slots = append(slots, slot{at: i, name: name})
				}
			}
		case ';':
			policies = append(policies, policyText{start: start, end: i + 1, slots: slots})
			start, slots = -1, nil
		}
	}
	return policies
}

// escapeLineBreaks writes each line break inside a string literal as its escape, \n or \r, and
// puts the line breaks back after the literal's closing quote, where Cedar takes them as
// whitespace. The Rust implementation reads a string literal that goes on to the next line as
// one holding a newline; cedar-go's parser rejects it ("literal not terminated"). Written this
// way, it means the same to both, and every line keeps its number for error positions.
func escapeLineBreaks(text []byte) []byte {
	if !bytes.ContainsAny(text, "\n\r") {
		return text
	}
	out := make([]byte, 0, len(text))
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '/' && i+1 < len(text) && text[i+1] == '/':
			end := bytes.IndexByte(text[i:], '\n')
			if end < 0 {
				end = len(text) - i
			}
			out = append(out, text[i:i+end]...)
			i += end - 1
		case c == '"':
			out = append(out, c)
			breaks := 0
			for i++; i < len(text) && text[i] != '"'; i++ {
				switch text[i] {
				case '\\':
					out = append(out, text[i])
					if i+1 < len(text) {
						i++
						out = append(out, text[i])
					}
				case '\n':
					out = append(out, '\\', 'n')
					breaks++
				case '\r':
					out = append(out, '\\', 'r')
				default:
					out = append(out, text[i])
				}
			}
			if i < len(text) {
				out = append(out, '"')
			}
			for range breaks {
				out = append(out, '\n')
			}
		default:
			out = append(out, c)
		}
	}
	return out
}

// blankedExcept returns text with every byte not kept that is not a line break turned into a
// space, so that what is parsed from it keeps its line and column in the file.
func blankedExcept(text []byte, keep func(i int) bool) []byte {
	out := bytes.Clone(text)
	for i, c := range out {
		if c != '\n' && !keep(i) {
			out[i] = ' '
		}
	}
	return out
}

// template is a policy with slots, waiting for links.
type template struct {
	id     cedar.PolicyID
	src    Source
	text   policyText
	where  string // file:line:column
	linked int
}

// withSlots returns the template's text, the rest of its file blanked, with each slot written as
// the entity given for it.
func (t *template) withSlots(args map[string]types.EntityUID) []byte {
	var b bytes.Buffer
	b.Write(blankedExcept(t.src.Text[:t.text.start], func(int) bool { return false }))
	last := t.text.start
	for _, s := range t.text.slots {
		b.Write(t.src.Text[last:s.at])
		b.WriteString(cedarEntityLiteral(args[s.name]))
		last = s.at + len(s.name)
	}
	b.Write(t.src.Text[last:t.text.end])
	return b.Bytes()
}

// cedarEntityLiteral writes an entity in Cedar syntax, Type::"id", escaping the id as Cedar
// string literals escape.
func cedarEntityLiteral(uid types.EntityUID) string {
	var b strings.Builder
	b.WriteString(string(uid.Type))
	b.WriteString(`::"`)
	for _, r := range string(uid.ID) {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u{%x}`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// templateLink is one element of a --template-links file, as the Cedar CLI's
// --template-linked reads it.
type templateLink struct {
	TemplateID string                     `json:"template_id"`
	LinkID     string                     `json:"link_id"`
	Args       map[string]json.RawMessage `json:"args"`
}

// linkTemplates adds a policy to the set for each link in src. Every problem is reported, each
// with the link's place in the file.
func (e *Engine) linkTemplates(src Source, templates map[cedar.PolicyID]*template) error {
	var links []json.RawMessage
	if err := json.Unmarshal(src.Text, &links); err != nil {
		return fmt.Errorf(`%s: %w`, src.Name, userwords.JSON(src.Text, err, `a JSON array of template links [{"template_id": ..., "link_id": ..., "args": {"?principal": "User::\"alice\"", ...}}]`))
	}
	known := slices.Sorted(maps.Keys(templates))
	var errs []error
	offset := int64(bytes.IndexByte(src.Text, '['))
	for i, raw := range links {
		start := offset + int64(bytes.Index(src.Text[offset:], raw))
		offset = start + int64(len(raw))
		line, col := lineColumn(src.Text, start)
		fail := func(format string, a ...any) {
			errs = append(errs, fmt.Errorf("%s:%d:%d: template link %d: %s", src.Name, line, col, i+1, fmt.Sprintf(format, a...)))
		}
		var l templateLink
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			fail("%v", userwords.JSON(raw, err, `a template link {"template_id": ..., "link_id": ..., "args": {"?principal": "User::\"alice\"", "?resource": ...}}`))
			continue
		}
		t, ok := templates[cedar.PolicyID(l.TemplateID)]
		switch {
		case l.LinkID == "":
			fail(`"link_id" is missing: it names the linked policy in decisions`)
			continue
		case !ok && len(known) == 0:
			fail("template %q: the policies have no templates (a template has ?principal or ?resource in its scope)", l.TemplateID)
			continue
		case !ok:
			fail("no template %q; the templates are %s (named by @id, else policyN as the Cedar CLI numbers them)", l.TemplateID, quoteAll(known))
			continue
		}
		args := map[string]types.EntityUID{}
		bad := false
		for _, name := range slices.Sorted(maps.Keys(l.Args)) {
			if name != "?principal" && name != "?resource" {
				fail(`args: %q is no slot; a template has "?principal" and "?resource"`, name)
				bad = true
				continue
			}
			uid, err := readUID(l.Args[name])
			if err != nil {
				fail(`args %q: %v; write "User::\"alice\"" or {"type": "User", "id": "alice"}`, name, err)
				bad = true
				continue
			}
			args[name] = uid
		}
		used := map[string]bool{}
		for _, s := range t.text.slots {
			used[s.name] = true
		}
		for _, name := range []string{"?principal", "?resource"} {
			_, given := args[name]
			switch {
			case used[name] && !given && !bad:
				fail("template %s (%s) has %s, and args gives no entity for it", t.id, t.where, name)
				bad = true
			case !used[name] && given:
				fail("template %s (%s) has no %s slot, and args gives one", t.id, t.where, name)
				bad = true
			}
		}
		if bad {
			continue
		}
		list, err := cedar.NewPolicyListFromBytes(t.src.Name, t.withSlots(args))
		if err != nil || len(list) != 1 {
			fail("linking template %s: %v", t.id, parseError(err, t.src))
			continue
		}
		id := cedar.PolicyID(l.LinkID)
		if !e.policies.Add(id, list[0]) {
			fail("link id %q is already a policy's id", l.LinkID)
			continue
		}
		e.ids = append(e.ids, id)
		t.linked++
	}
	return errors.Join(errs...)
}

func quoteAll(ids []cedar.PolicyID) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = fmt.Sprintf("%q", id)
	}
	return strings.Join(q, ", ")
}
