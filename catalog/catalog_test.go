package catalog

import (
	"errors"
	"flag"
	"go/build"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/skillkit/skillkit/skill"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name, or rewrites the file with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./catalog -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file.\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// sum is a model-invocable summary.
func sum(name, description string) skill.Summary {
	return skill.Summary{Name: name, Description: description, ModelInvocable: true, UserInvocable: true, Dir: name}
}

func TestGoldenCatalogs(t *testing.T) {
	hidden := sum("user-only", "Only a user may invoke this.")
	hidden.ModelInvocable = false
	tests := []struct {
		name      string
		summaries []skill.Summary
		max       int
	}{
		{"anchor", []skill.Summary{sum("long", strings.Repeat("Long   description ", 5))}, 50},
		{"non-ascii", []skill.Summary{
			sum("cjk", "处理中文文档：提取、总结和翻译。"),
			sum("accented", "Crée un résumé du café « naïve » — très utile."),
			sum("cjk-cut", "一二三四五六七八九十一二三四五六七八九十"),
		}, 12},
		{"astral", []skill.Summary{
			sum("emoji-fits", "abcde😀xyzw"),
			sum("emoji-cut", "abcdef😀xyz"),
			sum("emoji-exact", "abcde😀xyz"),
			sum("emoji-many", "Ship it 🚀🚀🚀 with 𝒻𝒶𝓃𝒸𝓎 letters"),
		}, 10},
		{"escape", []skill.Summary{
			sum("markup", `Use <models> & "quotes" carefully; </available_skills> is text.`),
			sum("entities", "Already escaped &amp; stays double-escaped &lt;"),
		}, 500},
		{"cap-boundary", []skill.Summary{
			sum("at-cap", strings.Repeat("x", 20)),
			sum("past-cap", strings.Repeat("y", 21)),
			sum("below-cap", strings.Repeat("z", 19)),
		}, 20},
		{"whitespace", []skill.Summary{
			sum("js-space", "\ufeff\t a\u00a0b\u1680c\u2000d\u2005e\u200af\u2028g\u2029h\u202fi\u205fj\u3000k\v\f\r\nl \ufeff"),
			sum("nel-kept", "a\u0085b"),
		}, 500},
		{"model-invocation", []skill.Summary{hidden, sum("visible", "The model sees this one.")}, 500},
		{"byte-order", []skill.Summary{
			sum("ab", "letters"), sum("a1", "digit"), sum("a-b", "hyphen"), sum("b", "b"), sum("a", "prefix"), sum("0day", "digit first"), sum("a-1", "hyphen digit"),
		}, 500},
		{"empty-description", []skill.Summary{sum("bare", " \n ")}, 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cat, err := New(tt.summaries, &Options{DescriptionMaxLength: tt.max})
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name+".reminder.golden", cat.Render(Reminder{}))
			golden(t, tt.name+".list.golden", cat.Render(List{}))
		})
	}
}

func TestReplacementAndTombstone(t *testing.T) {
	cat, err := New([]skill.Summary{sum("pdf", "Fill PDF forms."), sum("docx", "Edit Word files.")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "replacement.golden", cat.Render(Replacement{}))
	first := cat.Render(Reminder{})
	replacement := cat.Render(Replacement{})
	// The replacement differs from the first publication only in its intro.
	if got := strings.Replace(replacement, replacementIntro, reminderIntro, 1); got != first {
		t.Errorf("replacement is not the reminder with a new intro:\n%s", replacement)
	}

	empty, err := New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := empty.Render(Replacement{}); got != Tombstone {
		t.Errorf("empty replacement = %q, want the tombstone", got)
	}
	golden(t, "tombstone.golden", Tombstone)
}

func TestEmptyCatalogRendersNothing(t *testing.T) {
	hidden := sum("secret", "hidden")
	hidden.ModelInvocable = false
	for _, summaries := range [][]skill.Summary{nil, {}, {hidden}} {
		cat, err := New(summaries, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !cat.Empty() || cat.Len() != 0 {
			t.Errorf("New(%v) has %d entries, want 0", summaries, cat.Len())
		}
		for _, r := range []Renderer{nil, Reminder{}, List{}} {
			if got := cat.Render(r); got != "" {
				t.Errorf("%T rendered %q for an empty catalog, want nothing", r, got)
			}
		}
	}
}

func TestSeedTemplateLines(t *testing.T) {
	// The dsh skill tool's template with its placeholder entry, line by line.
	want := "<system-reminder>\n" +
		"A skill is a reusable set of task-specific instructions. The following skills are available in this session:\n" +
		"\n" +
		"<available_skills>\n" +
		"- `name`: description\n" +
		"</available_skills>\n" +
		"\n" +
		"If the user names a skill, or the task clearly matches a skill's description, call the `skill` tool with the exact skill name before taking task actions. Load all applicable skills, then follow their full instructions. This catalog contains summaries only; do not infer or follow a skill's instructions until it has been loaded.\n" +
		"</system-reminder>"
	cat, err := New([]skill.Summary{sum("name", "description")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := cat.Render(nil); got != want {
		t.Errorf("reminder =\n%s\nwant\n%s", got, want)
	}
}

func TestNewErrors(t *testing.T) {
	bad := sum("Bad Name", "x")
	bad.Path = "/skills/Bad Name"
	hiddenBad := sum("also bad", "x")
	hiddenBad.ModelInvocable = false
	dupA, dupB := sum("dup", "a"), sum("dup", "b")
	dupA.Path, dupB.Path = "/project/.agents/skills/dup", "/home/u/.agents/skills/dup"
	tests := []struct {
		name      string
		summaries []skill.Summary
		opts      *Options
		want      error
		mention   string
	}{
		{"cap 2", nil, &Options{DescriptionMaxLength: 2}, ErrInvalidMaxLength, "Options.DescriptionMaxLength is 2"},
		{"cap negative", nil, &Options{DescriptionMaxLength: -5}, ErrInvalidMaxLength, "-5"},
		{"invalid name", []skill.Summary{bad}, nil, ErrInvalidName, "/skills/Bad Name"},
		{"duplicate", []skill.Summary{dupA, dupB}, nil, ErrDuplicateName, "/home/u/.agents/skills/dup"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.summaries, tt.opts)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("error %q does not mention %q", err, tt.mention)
			}
		})
	}
	// A skill hidden from the model is not the catalog's business.
	if _, err := New([]skill.Summary{hiddenBad}, nil); err != nil {
		t.Errorf("hidden skill with an invalid name: %v", err)
	}
	// The minimum cap is valid.
	if _, err := New(nil, &Options{DescriptionMaxLength: 3}); err != nil {
		t.Errorf("cap 3: %v", err)
	}
}

func TestDefaultCap(t *testing.T) {
	cat, err := New([]skill.Summary{sum("a", strings.Repeat("d", 600))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cat.DescriptionMaxLength() != DefaultDescriptionMaxLength {
		t.Errorf("cap = %d, want %d", cat.DescriptionMaxLength(), DefaultDescriptionMaxLength)
	}
	if got := cat.Entries()[0].Description; got != strings.Repeat("d", 497)+"..." {
		t.Errorf("description has %d units, want 500 ending in ...", UTF16Len(got))
	}
}

func TestDigest(t *testing.T) {
	summaries := make([]skill.Summary, 50)
	for i := range summaries {
		summaries[i] = sum("skill-"+strconv.Itoa(i), "Description number "+strconv.Itoa(i))
	}
	base, err := New(summaries, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := base.Digest()
	if !strings.HasPrefix(d, "sha256:") || len(d) != len("sha256:")+64 {
		t.Fatalf("digest %q is not sha256:<64 hex>", d)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5 {
		shuffled := slices.Clone(summaries)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		cat, err := New(shuffled, nil)
		if err != nil {
			t.Fatal(err)
		}
		if cat.Digest() != d {
			t.Errorf("digest changed with input order: %s vs %s", cat.Digest(), d)
		}
		if cat.Render(nil) != base.Render(nil) {
			t.Error("rendering changed with input order")
		}
	}

	// Whitespace that normalizes away, or fields the catalog does not show,
	// leave the digest alone; any visible change moves it.
	same := slices.Clone(summaries)
	same[3].Description = "  Description \n number 3 "
	same[4].Source, same[4].Rank, same[4].Path = "user", 7, "/elsewhere"
	changed := slices.Clone(summaries)
	changed[3].Description = "Description number three"
	hidden := slices.Clone(summaries)
	hidden[3].ModelInvocable = false
	shorter, err := New(summaries, &Options{DescriptionMaxLength: 10})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		summaries []skill.Summary
		equal     bool
	}{
		{"normalized whitespace", same, true},
		{"description text", changed, false},
		{"skill hidden from the model", hidden, false},
	}
	for _, tt := range tests {
		cat, err := New(tt.summaries, nil)
		if err != nil {
			t.Fatal(err)
		}
		if (cat.Digest() == d) != tt.equal {
			t.Errorf("%s: digest equal = %v, want %v", tt.name, cat.Digest() == d, tt.equal)
		}
	}
	if shorter.Digest() == d {
		t.Error("a lower cap changes the text but not the digest")
	}
	// Framing: moving bytes between name and description changes the digest.
	if Digest([]Entry{{Name: "ab", Description: "c"}}) == Digest([]Entry{{Name: "a", Description: "bc"}}) {
		t.Error("digest framing is ambiguous")
	}
	empty, _ := New(nil, nil)
	if empty.Digest() != Digest(nil) {
		t.Error("empty catalog digest differs from Digest(nil)")
	}
}

func TestRendererFunc(t *testing.T) {
	cat, err := New([]skill.Summary{sum("b", "second"), sum("a", "first & best")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	custom := RendererFunc(func(req Request) string {
		var b strings.Builder
		b.WriteString("Only call skill_load when a listed skill is directly relevant.")
		for _, e := range req.Entries {
			b.WriteString("\n* " + e.Name + " — " + e.Description + " [" + e.Summary.Dir + "]")
		}
		return b.String()
	})
	want := "Only call skill_load when a listed skill is directly relevant.\n* a — first &amp; best [a]\n* b — second [b]"
	if got := cat.Render(custom); got != want {
		t.Errorf("custom render =\n%s\nwant\n%s", got, want)
	}
}

// TestNoFileSystemAccess keeps the package free of file-system calls: it
// renders in-memory summaries only.
func TestNoFileSystemAccess(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	forbidden := []string{"os", "io/fs", "io/ioutil", "path/filepath", "os/exec", "syscall", "golang.org/x/sys/unix"}
	for _, path := range pkg.Imports {
		if slices.Contains(forbidden, path) {
			t.Errorf("the package imports %s; the catalog must not touch the file system", path)
		}
	}
	if len(pkg.Imports) == 0 {
		t.Error("no imports found; the check is not looking at the package")
	}
}
