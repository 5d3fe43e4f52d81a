package doctables

import (
	"strings"
	"testing"
)

func TestParseRefusesBrokenMarkers(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
	}{
		{"begin without end", "a\n<!-- authzbench:begin report x.json -->\n| t |\n", "line 2: begin marker with no"},
		{"end without begin", "a\n\n<!-- authzbench:end -->\n", "line 3: an end marker with no begin"},
		{"nested begin", "<!-- authzbench:begin report a.json -->\n<!-- authzbench:begin report b.json -->\n<!-- authzbench:end -->\n", "line 2: a begin marker inside the block opened on line 1"},
		{"no command", "<!-- authzbench:begin  -->\n<!-- authzbench:end -->\n", "names no command"},
		{"a command that measures", "<!-- authzbench:begin run --duration 1s -->\n<!-- authzbench:end -->\n", `runs "run"`},
		{"a flag that writes", "<!-- authzbench:begin report --prometheus x.prom a.json -->\n<!-- authzbench:end -->\n", "uses --prometheus, which writes a file"},
		{"a flag that writes, with =", "<!-- authzbench:begin report --prometheus=x.prom a.json -->\n<!-- authzbench:end -->\n", "uses --prometheus"},
		{"quoted argument", "<!-- authzbench:begin compare --fail-on 'p99>+10%' a.json b.json -->\n<!-- authzbench:end -->\n", "is quoted"},
		{"misspelt marker", "<!-- authzbench:begn report a.json -->\n", "line 1: malformed marker"},
		{"comment not closed on its line", "<!-- authzbench:begin report a.json\n-->\n<!-- authzbench:end -->\n", "line 1: begin marker does not end with"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.text)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse: got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestParseFindsBlocks(t *testing.T) {
	text := "# Page\n\n```markdown\n<!-- authzbench:begin report example.json -->\n```\n<!-- authzbench:begin report a.json --format markdown -->\n| a |\n|---|\n<!-- authzbench:end -->\n\ntext\n<!-- authzbench:begin compare --format markdown a.json b.json -->\n<!-- authzbench:end -->\n"
	blocks, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 2 {
		t.Fatalf("got %d blocks, want 2", len(blocks))
	}
	if b := blocks[0]; b.Line != 6 || b.Command() != "report a.json --format markdown" || b.Body != "| a |\n|---|\n" {
		t.Errorf("first block: line %d, command %q, body %q", b.Line, b.Command(), b.Body)
	}
	if b := blocks[1]; b.Line != 12 || b.Command() != "compare --format markdown a.json b.json" || b.Body != "" {
		t.Errorf("second block: line %d, command %q, body %q", b.Line, b.Command(), b.Body)
	}
}

func TestRewriteReplacesOnlyBodies(t *testing.T) {
	text := "before\n<!-- authzbench:begin report a.json -->\nold table\nold notes\n<!-- authzbench:end -->\nbetween\n<!-- authzbench:begin report b.json -->\n<!-- authzbench:end -->\nafter"
	got, err := Rewrite(text, func(b Block) (string, error) {
		if b.Args[1] == "a.json" {
			return "new A\n", nil
		}
		return "new B", nil // no final newline: the end marker must stay on its own line
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "before\n<!-- authzbench:begin report a.json -->\nnew A\n<!-- authzbench:end -->\nbetween\n<!-- authzbench:begin report b.json -->\nnew B\n<!-- authzbench:end -->\nafter"
	if got != want {
		t.Errorf("Rewrite:\n got %q\nwant %q", got, want)
	}
	// A rewrite of its own output changes nothing.
	again, err := Rewrite(got, func(b Block) (string, error) { return b.Body, nil })
	if err != nil || again != got {
		t.Errorf("identity rewrite changed the text (err %v):\n%q", err, again)
	}
}

func TestUnmarkedFindsPastedHeaders(t *testing.T) {
	text := "| Workload | Target | x |\n<!-- authzbench:begin report a.json -->\n| Workload | Target | x |\n<!-- authzbench:end -->\n| option | meaning |\n| Workload | Target | y |\n"
	got, err := Unmarked(text, "| Workload | Target |")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != 1 || got[1] != 6 {
		t.Errorf("Unmarked: got lines %v, want [1 6]", got)
	}
}

func TestFencedOutputKeepsItsFence(t *testing.T) {
	text := "<!-- authzbench:begin report a.json -->\n```text\nold\n```\n<!-- authzbench:end -->\n"
	blocks, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if b := blocks[0]; b.Output != "old\n" || b.OutputLine() != 3 {
		t.Errorf("fenced block: output %q on line %d, want \"old\\n\" on line 3", b.Output, b.OutputLine())
	}
	got, err := Rewrite(text, func(Block) (string, error) { return "new 1\nnew 2\n", nil })
	if err != nil {
		t.Fatal(err)
	}
	if want := "<!-- authzbench:begin report a.json -->\n```text\nnew 1\nnew 2\n```\n<!-- authzbench:end -->\n"; got != want {
		t.Errorf("Rewrite:\n got %q\nwant %q", got, want)
	}
	// Text around a code block is not a fenced output: all of it is the output.
	loose := "<!-- authzbench:begin report a.json -->\n```\nx\n```\nmore\n<!-- authzbench:end -->\n"
	blocks, err = Parse(loose)
	if err != nil {
		t.Fatal(err)
	}
	if b := blocks[0]; b.Output != b.Body || b.OutputLine() != 2 {
		t.Errorf("block with text after its code block: output %q, want the whole body %q", b.Output, b.Body)
	}
}
