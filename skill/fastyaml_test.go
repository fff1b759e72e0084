package skill

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// FuzzFastFrontmatter checks that whenever the fast header reader accepts
// a text, the full YAML parser accepts it too and yields the same fields.
func FuzzFastFrontmatter(f *testing.F) {
	for _, s := range []string{
		"name: pdf\ndescription: Read PDF files.\n",
		"name: a\ndescription: \"quoted: yes\"\nlicense: 'MIT'\n",
		"# comment\nname: x\n\ndisable-model-invocation: true\n",
		"name: x\ndescription: 2024\n",
		"name: x\ndescription: a: b\n",
		"name: x\nmetadata:\n  a: b\n",
		"name: x\ndescription: yes\n",
		"name: x\ndescription: émoji 😀 text\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		fast, ok := fastFrontmatter(src)
		if !ok {
			return
		}
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
			t.Fatalf("fast path accepted %q but yaml.v3 rejects it: %v", src, err)
		}
		if len(doc.Content) == 0 {
			t.Fatalf("fast path accepted %q but yaml.v3 sees no document", src)
		}
		slow := doc.Content[0]
		type kv struct {
			K, V, Tag string
			Line      int
		}
		flat := func(n *yaml.Node) []kv {
			var out []kv
			for i := 0; i+1 < len(n.Content); i += 2 {
				out = append(out, kv{n.Content[i].Value, n.Content[i+1].Value, n.Content[i+1].Tag, n.Content[i+1].Line})
			}
			return out
		}
		if slow.Kind != yaml.MappingNode {
			t.Fatalf("fast path accepted %q but yaml.v3 gives kind %v", src, slow.Kind)
		}
		if d := cmp.Diff(flat(slow), flat(fast)); d != "" {
			t.Fatalf("fast and full parsers disagree on %q (-yaml +fast):\n%s", src, d)
		}
		// Parse skips the strict checks for what the fast path reads:
		// there must be nothing for them to find.
		if v := strictViolations(src, slow); len(v) > 0 {
			t.Fatalf("fast path accepted %q, which strict YAML rejects: %s", src, v[0].lenientMessage())
		}
	})
}

// nameRE is the skill tool's name rule as a regular expression.
var nameRE = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)

// FuzzValidNameRE checks the hand-written name rule against the regular
// expression it implements.
func FuzzValidNameRE(f *testing.F) {
	for _, s := range []string{"", "a", "a-b", "-a", "a-", "a--b", "A", "a_b", "0", "ab-12-cd"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := ValidName(s), nameRE.MatchString(s); got != want {
			t.Fatalf("ValidName(%q) = %v, regexp says %v", s, got, want)
		}
	})
}

// TestFastPathKeyBound checks that the fast path reads up to fastMaxKeys
// keys and leaves longer headers to the full parser, which reads them the
// same way.
func TestFastPathKeyBound(t *testing.T) {
	for _, n := range []int{fastMaxKeys, fastMaxKeys + 1, 100000} {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "k%d: v\n", i)
		}
		_, ok := fastFrontmatter(b.String())
		if want := n <= fastMaxKeys; ok != want {
			t.Errorf("%d keys: fast path ok = %v, want %v", n, ok, want)
		}
	}
	var b strings.Builder
	b.WriteString("---\nname: many\ndescription: d\n")
	for i := range 100000 {
		fmt.Fprintf(&b, "k%d: v\n", i)
	}
	b.WriteString("---\nbody\n")
	doc, _, err := Parse([]byte(b.String()), ParseOptions{File: "many/SKILL.md", DirName: "many"})
	if err != nil || doc.Frontmatter.Name != "many" {
		t.Fatalf("Parse of 100,000 keys: %v", err)
	}
}
