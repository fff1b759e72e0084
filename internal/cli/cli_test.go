package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

const examples = "../../examples/skills"

func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(context.Background(), args, Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }, Cwd: t.TempDir()})
	return out.String(), errb.String(), code
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/cli -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s mismatch:\n--- got ---\n%s\n--- want ---\n%s", name, got, want)
	}
}

func TestCatalogGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"catalog_reminder.golden", []string{"catalog", examples}},
		{"catalog_list.golden", []string{"catalog", "--format", "list", examples}},
		{"catalog_max20.golden", []string{"catalog", "--max-description", "20", examples}},
		{"catalog_budget.golden", []string{"catalog", "--budget-tokens", "200", examples}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(t, tc.args...)
			if code != 0 {
				t.Fatalf("exit %d, stderr %s", code, errOut)
			}
			golden(t, tc.name, out)
		})
	}
}

func TestCatalogEmptyPrintsNothing(t *testing.T) {
	dir := t.TempDir()
	writeSkill(t, dir, "hidden", "---\nname: hidden\ndescription: Only for users.\ndisable-model-invocation: yes\n---\nBody\n")
	out, _, code := run(t, "catalog", dir)
	if code != 0 || out != "" {
		t.Fatalf("got exit %d and %q; want exit 0 and no output", code, out)
	}
}

func TestCatalogBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"catalog", "--format", "xml", examples}, `--format "xml"`},
		{[]string{"catalog", "--max-description", "2", examples}, "--max-description is 2"},
		{[]string{"catalog", "--budget-tokens", "-1", examples}, "--budget-tokens is -1"},
		{[]string{"catalog", "--budget-tokens", "5", examples}, "--budget-tokens 5 is too small: the catalog with every skill left out and its note takes 147 tokens (o200k_base); pass --budget-tokens 147 or more"},
		{[]string{"list", "--depth", "0", examples}, "--depth is 0; give a positive number of folder levels (the default is 4)"},
		{[]string{"validate", "--depth", "-1", examples}, "--depth is -1"},
		{[]string{"list", filepath.Join(examples, "missing")}, "argument ROOT"},
	} {
		_, errOut, code := run(t, tc.args...)
		if code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want failure mentioning %q", tc.args, code, errOut, tc.want)
		}
	}
}

func writeSkill(t *testing.T, root, dir, content string) string {
	t.Helper()
	p := filepath.Join(root, dir)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p, "SKILL.md"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestValidate(t *testing.T) {
	root := t.TempDir()
	good := writeSkill(t, root, "good", "---\nname: good\ndescription: Fine.\n---\nBody\n")
	bad := writeSkill(t, root, "Bad--Name", "---\nname: Bad--Name\ndescription: x\nfoo: 1\n---\n")
	noFM := writeSkill(t, root, "nofm", "# no front matter\n")
	empty := t.TempDir()

	tests := []struct {
		name       string
		args       []string
		wantOut    string
		wantErr    string
		wantStatus int
	}{
		{"valid folder", []string{good}, "Valid skill: " + good + "\n", "", 0},
		{"SKILL.md file", []string{filepath.Join(good, "SKILL.md")}, "Valid skill: " + good + "\n", "", 0},
		{"invalid", []string{bad}, "", "Validation failed for " + bad + ":\n" +
			"  - Unexpected fields in frontmatter: foo. Only ['allowed-tools', 'compatibility', 'description', 'license', 'metadata', 'name'] are allowed.\n" +
			"  - Skill name 'Bad--Name' must be lowercase\n" +
			"  - Skill name cannot contain consecutive hyphens\n", 1},
		{"no front matter", []string{noFM}, "", "Validation failed for " + noFM + ":\n  - SKILL.md must start with YAML frontmatter (---)\n", 1},
		{"no SKILL.md", []string{empty}, "", "Validation failed for " + empty + ":\n  - Missing required file: SKILL.md\n", 1},
		{"missing path", []string{filepath.Join(root, "nope")}, "", "Validation failed for " + filepath.Join(root, "nope") + ":\n  - Path does not exist: " + filepath.Join(root, "nope") + "\n", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(t, append([]string{"validate"}, tc.args...)...)
			if out != tc.wantOut || errOut != tc.wantErr || code != tc.wantStatus {
				t.Errorf("got (%q, %q, %d)\nwant (%q, %q, %d)", out, errOut, code, tc.wantOut, tc.wantErr, tc.wantStatus)
			}
		})
	}
	// A root holding skills validates each one, and fails if any fails.
	out, errOut, code := run(t, "validate", root)
	if code != 1 || !strings.Contains(out, "Valid skill: "+good) || !strings.Contains(errOut, "Validation failed for "+bad) || !strings.Contains(errOut, "Validation failed for "+noFM) {
		t.Errorf("root: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
}

func TestListJSON(t *testing.T) {
	high := t.TempDir()
	low := t.TempDir()
	writeSkill(t, high, "dup", "---\nname: dup\ndescription: High rank.\n---\nA\n")
	writeSkill(t, low, "dup", "---\nname: dup\ndescription: Low rank.\n---\nB\n")
	writeSkill(t, low, "only-low", "---\nname: only-low\ndescription: Low only.\nuser-invocable: off\n---\nC\n")
	for _, all := range []bool{false, true} {
		args := []string{"list", "--json", high, low}
		if all {
			args = []string{"list", "--json", "--all", high, low}
		}
		out, errOut, code := run(t, args...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var items []map[string]any
		if err := json.Unmarshal([]byte(out), &items); err != nil {
			t.Fatalf("bad JSON %q: %v", out, err)
		}
		want := 2
		if all {
			want = 3
		}
		if len(items) != want {
			t.Fatalf("all=%v: got %d items: %s", all, len(items), out)
		}
		for _, k := range []string{"name", "description", "path", "source", "rank", "model_invocable", "user_invocable", "files", "bytes"} {
			if _, ok := items[0][k]; !ok {
				t.Errorf("item lacks %q: %v", k, items[0])
			}
		}
		if items[0]["name"] != "dup" || items[0]["description"] != "High rank." || items[0]["path"] != filepath.Join(high, "dup") {
			t.Errorf("winner wrong: %v", items[0])
		}
		if items[1]["user_invocable"] != false || items[1]["files"] != float64(1) {
			t.Errorf("only-low wrong: %v", items[1])
		}
		if all && (items[2]["shadowed_by"] != filepath.Join(high, "dup") || items[2]["files"] != float64(1) || items[2]["description"] != "Low rank.") {
			t.Errorf("shadowed entry wrong: %v", items[2])
		}
		if !strings.Contains(errOut, "shadowed") {
			t.Errorf("shadowing not reported on stderr: %q", errOut)
		}
	}
}

func TestShow(t *testing.T) {
	out, _, code := run(t, "show", "api-style-guide", examples)
	abs, _ := filepath.Abs(filepath.Join(examples, "api-style-guide"))
	if code != 0 || !strings.HasPrefix(out, "<skill_content name=\"api-style-guide\">\n<skill_resources>\nBase directory for this skill: "+abs+"\n") {
		t.Errorf("exit %d, output:\n%s", code, out)
	}
	for _, tc := range []struct{ name, want string }{
		{"Nope", `Error: invalid skill name "Nope"` + "\n"},
		{"nope", `Error: skill "nope" is unknown or no longer available` + "\n"},
		{"release-notes", `Error: skill "release-notes" is not available for model invocation` + "\n"},
	} {
		out, _, code := run(t, "show", tc.name, examples)
		if code != 1 || out != tc.want {
			t.Errorf("show %s: exit %d, %q; want exit 1, %q", tc.name, code, out, tc.want)
		}
	}
}

func TestTokensJSON(t *testing.T) {
	out, errOut, code := run(t, "tokens", "--json", examples)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep tokenReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Skills) != 4 || rep.Encoding != "o200k_base" {
		t.Fatalf("report: %+v", rep)
	}
	sum := 0
	for _, s := range rep.Skills {
		sum += s.BodyTokens + s.DocsTokens
		if s.Name == "release-notes" && s.CatalogTokens != 0 {
			t.Errorf("hidden skill has a catalog line: %+v", s)
		}
		if s.Name == "api-style-guide" && (s.Docs != 4 || s.DocsTokens == 0) {
			t.Errorf("docs not counted: %+v", s)
		}
	}
	lines := 0
	for _, s := range rep.Skills {
		lines += s.CatalogTokens
	}
	if sum != rep.Totals.FullInjection || rep.Totals.Catalog <= lines || lines != rep.Totals.CatalogLines {
		t.Errorf("totals: %+v (sum %d)", rep.Totals, sum)
	}
	if got := float64(rep.Totals.FullInjection) / float64(rep.Totals.Catalog); got != rep.Ratio {
		t.Errorf("ratio %v, want %v", rep.Ratio, got)
	}
}

func TestDefaultRootsFromSkillkitPath(t *testing.T) {
	var out, errb bytes.Buffer
	abs, _ := filepath.Abs(examples)
	code := Run(context.Background(), []string{"catalog", "--format", "list"}, Env{Stdout: &out, Stderr: &errb, Cwd: t.TempDir(),
		Getenv: func(k string) string {
			if k == "SKILLKIT_PATH" {
				return "/nonexistent:" + abs
			}
			return ""
		}})
	if code != 0 || !strings.HasPrefix(out.String(), "Available skills:\n- api-style-guide") {
		t.Fatalf("exit %d, out %q, err %q", code, out.String(), errb.String())
	}
}

// TestTokensText checks that every figure of the text report says what it
// counts: the column sums apart from the catalog as sent.
func TestTokensText(t *testing.T) {
	out, errOut, code := run(t, "tokens", examples)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	sum := false
	for _, line := range strings.Split(out, "\n") {
		sum = sum || strings.HasPrefix(strings.TrimSpace(line), "sum ")
	}
	if !sum {
		t.Errorf("no sum row:\n%s", out)
	}
	for _, want := range []string{"tokens (o200k_base)\n", "SKILL  CATALOG LINE  BODY  DOCS",
		"\ncatalog as sent (reminder format, lines and framing): ", "\nfull injection (every body and document up front): "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestNothingFoundIsSaid checks that every command that finds nothing
// says so on stderr, and says how to find more.
func TestNothingFoundIsSaid(t *testing.T) {
	empty := t.TempDir()
	deep := t.TempDir()
	for _, d := range []string{"a/b/c/d/e/s1", "a/b/c/d/e/f/s2"} {
		p := filepath.Join(deep, filepath.FromSlash(d))
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "SKILL.md"), []byte("---\nname: "+filepath.Base(d)+"\ndescription: d\n---\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lower := t.TempDir()
	if err := os.MkdirAll(filepath.Join(lower, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lower, "x", "skill.md"), []byte("---\nname: x\ndescription: d\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	noRoots := "skillkit: warning: no skill roots found: none of $SKILLKIT_PATH (unset or empty), "
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"list"}, noRoots},
		{[]string{"catalog"}, noRoots},
		{[]string{"tokens"}, noRoots},
		{[]string{"show", "foo"}, noRoots},
		{[]string{"list", empty}, empty + ": warning: no skills found: no folder down to 4 levels holds a SKILL.md"},
		{[]string{"catalog", empty}, empty + ": warning: no skills found"},
		{[]string{"list", deep}, deep + ": warning: 2 skill folders lie below the search depth of 4 levels, not read (the deepest 7 levels down); search 7 levels deep to read them (skillkit: --depth 7)"},
		{[]string{"list", "--depth", "6", deep}, deep + ": warning: 1 skill folder lies below the search depth of 6 levels"},
		{[]string{"list", lower}, filepath.Join(lower, "x", "skill.md") + ":1: warning: discovery reads only SKILL.md, so this folder is not a skill; rename skill.md to SKILL.md"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, errOut, _ := run(t, tc.args...)
			if !strings.Contains(errOut, tc.want) {
				t.Errorf("stderr %q, want it to contain %q", errOut, tc.want)
			}
		})
	}
	out, errOut, code := run(t, "list", "--depth", "7", deep)
	if code != 0 || strings.Count(out, "\n") != 3 || errOut != "" {
		t.Errorf("--depth 7: exit %d, stdout %q, stderr %q; want both skills and no warning", code, out, errOut)
	}
}
