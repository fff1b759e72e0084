package workspace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

func collect(t *testing.T, w *Workspace, globs []string, lim *CollectLimits) *Collection {
	t.Helper()
	c, err := w.Collect(context.Background(), globs, lim)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func paths(c *Collection) []string {
	var out []string
	for _, f := range c.Files {
		out = append(out, f.Path)
	}
	return out
}

func TestCollectRejectsGlobs(t *testing.T) {
	w := openTest(t, newTestManager(t, nil), "s")
	tests := []struct {
		glob, why string
	}{
		{"", "empty"},
		{"../x", "'..'"},
		{"out/../../etc/passwd", "'..'"},
		{"out/**/..", "'..'"},
		{"/etc/passwd", "absolute"},
		{`\etc`, "absolute"},
		{"C:/x", "absolute"},
		{"out//x", "empty"},
		{"out/./x", "'.'"},
		{"out/[", "not a valid pattern"},
	}
	for _, tt := range tests {
		_, err := w.Collect(context.Background(), []string{"out/*", tt.glob}, nil)
		if !errors.Is(err, ErrInvalidGlob) || !strings.Contains(err.Error(), tt.why) || !strings.Contains(err.Error(), "globs[1]") {
			t.Errorf("Collect(%q) err = %v, want ErrInvalidGlob naming globs[1] (%s)", tt.glob, err, tt.why)
		}
	}
	if _, err := w.Collect(context.Background(), nil, nil); !errors.Is(err, ErrInvalidGlob) {
		t.Errorf("no globs: err = %v", err)
	}
	if c, err := w.Collect(context.Background(), []string{"./out/**"}, nil); err != nil || len(c.Files) != 0 {
		t.Errorf("leading ./ : %v %v", c, err)
	}
	for _, lim := range []CollectLimits{{MaxFiles: -1}, {MaxFileInlineBytes: -1}, {MaxInlineBytes: -1}} {
		if _, err := w.Collect(context.Background(), []string{"out/**"}, &lim); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("limits %+v: err = %v, want ErrInvalidOption", lim, err)
		}
	}
}

func TestCollectSymlinksOutside(t *testing.T) {
	outside := t.TempDir()
	writeFile(t, outside, "secret.txt", "secret")
	writeFile(t, outside, "dir/inner.txt", "secret too")
	w := openTest(t, newTestManager(t, nil), "s")
	writeFile(t, w.OutputDir(), "ok.txt", "fine")
	writeFile(t, w.WorkDir(), "inside.txt", "inside")
	for name, target := range map[string]string{
		"leak.txt":   filepath.Join(outside, "secret.txt"),
		"rel.txt":    "../../" + filepath.Base(filepath.Dir(w.Dir())) + "/../secret.txt",
		"leakdir":    filepath.Join(outside, "dir"),
		"inward.txt": "../work/inside.txt",
	} {
		if err := os.Symlink(target, filepath.Join(w.OutputDir(), name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, globs := range [][]string{{"out/**"}, {"out/*"}, {"out/leak.txt", "out/leakdir/*", "out/leakdir/**"}} {
		c := collect(t, w, globs, nil)
		for _, f := range c.Files {
			if strings.Contains(f.Content, "secret") || strings.HasPrefix(f.Path, "out/leak") || f.Path == "out/rel.txt" {
				t.Errorf("globs %v collected %s (%q) from outside the workspace", globs, f.Path, f.Content)
			}
		}
	}
	c := collect(t, w, []string{"out/**"}, nil)
	got := strings.Join(paths(c), ",")
	if got != "out/inward.txt,out/ok.txt" {
		t.Errorf("files = %s, want out/inward.txt,out/ok.txt", got)
	}
	if c.Files[0].Content != "inside" {
		t.Errorf("link inside the workspace not followed: %+v", c.Files[0])
	}
	var skipped []string
	for _, s := range c.Skipped {
		skipped = append(skipped, s.Path)
	}
	if strings.Join(skipped, ",") != "out/leak.txt,out/leakdir,out/rel.txt" {
		t.Errorf("skipped = %v", c.Skipped)
	}
}

func TestCollectMIME(t *testing.T) {
	w := openTest(t, newTestManager(t, nil), "s")
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00")
	files := map[string][]byte{
		"out/a.txt":   []byte("hello\n"),
		"out/b.json":  []byte(`{"k": [1, 2]}`),
		"out/c.png":   png,
		"out/d.bin":   {0, 1, 2, 3, 0xff},
		"out/e.pdf":   []byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"),
		"out/f.noext": []byte("<html><body>x</body></html>"),
	}
	for p, b := range files {
		os.WriteFile(filepath.Join(w.Dir(), p), b, 0o644)
	}
	want := map[string]struct {
		mime   string
		inline bool
	}{
		"out/a.txt":   {"text/plain; charset=utf-8", true},
		"out/b.json":  {"application/json", true},
		"out/c.png":   {"image/png", false},
		"out/d.bin":   {"application/octet-stream", false},
		"out/e.pdf":   {"application/pdf", false},
		"out/f.noext": {"text/html; charset=utf-8", true},
	}
	c := collect(t, w, []string{"out/**"}, nil)
	if len(c.Files) != len(want) {
		t.Fatalf("files = %v", paths(c))
	}
	for _, f := range c.Files {
		wf := want[f.Path]
		if f.MIME != wf.mime || (f.Content != "") != wf.inline || f.Size != int64(len(files[f.Path])) {
			t.Errorf("%s: mime %q inline %v size %d, want %q %v %d", f.Path, f.MIME, f.Content != "", f.Size, wf.mime, wf.inline, len(files[f.Path]))
		}
		if wf.inline && f.Content != string(files[f.Path]) {
			t.Errorf("%s content = %q", f.Path, f.Content)
		}
	}
}

func TestCollectInlineLimits(t *testing.T) {
	const limit = 8
	tests := []struct {
		name      string
		content   string
		lim       CollectLimits
		want      string
		truncated bool
	}{
		{"below", "1234567", CollectLimits{MaxFileInlineBytes: limit}, "1234567", false},
		{"at file limit", "12345678", CollectLimits{MaxFileInlineBytes: limit}, "12345678", false},
		{"one past file limit", "123456789", CollectLimits{MaxFileInlineBytes: limit}, "12345678", true},
		{"rune cut by limit", "1234567é", CollectLimits{MaxFileInlineBytes: limit}, "1234567", true},
		{"at total limit", "12345678", CollectLimits{MaxInlineBytes: limit}, "12345678", false},
		{"one past total limit", "123456789", CollectLimits{MaxInlineBytes: limit}, "12345678", true},
		{"empty file", "", CollectLimits{MaxFileInlineBytes: limit}, "", false},
		{"invalid utf-8", "12\xff", CollectLimits{}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := openTest(t, newTestManager(t, nil), "s")
			writeFile(t, w.OutputDir(), "f.txt", tt.content)
			c := collect(t, w, []string{"out/f.txt"}, &tt.lim)
			f := c.Files[0]
			if f.Content != tt.want || f.Truncated != tt.truncated || f.Size != int64(len(tt.content)) || c.InlineBytes != int64(len(tt.want)) {
				t.Errorf("got %+v (inline %d), want content %q truncated %v", f, c.InlineBytes, tt.want, tt.truncated)
			}
		})
	}
}

func TestCollectTotals(t *testing.T) {
	w := openTest(t, newTestManager(t, nil), "s")
	for _, n := range []string{"a", "b", "c", "d"} {
		writeFile(t, w.OutputDir(), n+".txt", "12345")
	}
	// Inline total 12: a gets 5, b 5, c the remaining 2 (truncated), d none.
	c := collect(t, w, []string{"out/*.txt", "out/a.txt"}, &CollectLimits{MaxInlineBytes: 12})
	var got []string
	for _, f := range c.Files {
		got = append(got, f.Content)
	}
	if strings.Join(got, "|") != "12345|12345|12|" || !c.Files[2].Truncated || !c.Files[3].Truncated || c.InlineBytes != 12 || c.Truncated {
		t.Errorf("contents %q, collection %+v", got, c)
	}
	// MaxFiles at the limit and one short of the matches.
	if c := collect(t, w, []string{"out/**"}, &CollectLimits{MaxFiles: 4}); len(c.Files) != 4 || c.Truncated {
		t.Errorf("MaxFiles=4: %v truncated=%v", paths(c), c.Truncated)
	}
	if c := collect(t, w, []string{"out/**"}, &CollectLimits{MaxFiles: 3}); strings.Join(paths(c), ",") != "out/a.txt,out/b.txt,out/c.txt" || !c.Truncated {
		t.Errorf("MaxFiles=3: %v truncated=%v", paths(c), c.Truncated)
	}
}

func TestCollectGolden(t *testing.T) {
	w := openTest(t, newTestManager(t, nil), "s")
	writeFile(t, w.OutputDir(), "report.md", "# Report\n\nAll good.\n")
	writeFile(t, w.OutputDir(), "data/rows.csv", "a,b\n1,2\n")
	os.WriteFile(filepath.Join(w.OutputDir(), "data", "blob.bin"), []byte{0, 0, 0, 1}, 0o644)
	writeFile(t, w.WorkDir(), "notes.txt", strings.Repeat("n", 40))
	os.Symlink("/etc/passwd", filepath.Join(w.OutputDir(), "passwd"))
	c := collect(t, w, []string{"out/**", "work/*.txt"}, &CollectLimits{MaxFileInlineBytes: 32})
	got, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	golden := filepath.Join("testdata", "collect.golden.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./workspace -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("collection JSON differs from %s:\n%s", golden, got)
	}
}

// FuzzCollectGlob checks that no accepted glob returns a path outside the
// workspace or content from outside it.
func FuzzCollectGlob(f *testing.F) {
	for _, s := range []string{"out/**", "**", "../x", "/etc/*", "out/{a,../b}", "**/..", "skills/*/out/*", "out/[a-", "./**/*.txt", "*/../*"} {
		f.Add(s)
	}
	outside := f.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("SECRET"), 0o644)
	m := newTestManager(f, nil)
	w, err := m.Open(context.Background(), "s")
	if err != nil {
		f.Fatal(err)
	}
	os.WriteFile(filepath.Join(w.OutputDir(), "a.txt"), []byte("ok"), 0o644)
	os.Symlink(outside, filepath.Join(w.OutputDir(), "up"))
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(w.WorkDir(), "s"))
	f.Fuzz(func(t *testing.T, glob string) {
		c, err := w.Collect(context.Background(), []string{glob}, nil)
		if err != nil {
			if !errors.Is(err, ErrInvalidGlob) {
				t.Fatalf("Collect(%q) = %v, want nil or ErrInvalidGlob", glob, err)
			}
			return
		}
		for _, f := range c.Files {
			if !filepath.IsLocal(f.Path) || strings.Contains(f.Content, "SECRET") {
				t.Fatalf("Collect(%q) returned %+v", glob, f)
			}
		}
	})
}

// TestCheckGlobHostile tries globs that spell an escape through doublestar
// syntax other than a plain ".." element: brace alternation (nested too),
// character classes and escapes that match only dots, classes that match
// the separator, and absolute or empty alternatives. Each is refused with
// a message naming what to fix.
func TestCheckGlobHostile(t *testing.T) {
	tests := []struct {
		glob, why string
	}{
		{"{out,..}/*", `contains '..' in the alternative "../*"`},
		{"{..}/x", `contains '..' in the alternative "../x"`},
		{"out/{a,{b,..}}/x", `contains '..' in the alternative "out/../x"`},
		{"{out/**,../../etc/*}", `contains '..' in the alternative "../../etc/*"`},
		{".{.,x}/secret", `contains '..' in the alternative "../secret"`},
		{"{.,x}./secret", `contains '..' in the alternative "../secret"`},
		{"out/{a,b/../../..}", `contains '..' in the alternative "out/b/../../.."`},
		{"{,/}etc/passwd", `is absolute in the alternative "/etc/passwd"`},
		{"{/etc,out}/*", `is absolute in the alternative "/etc/*"`},
		{"{a,}/x", `is absolute in the alternative "/x"`},
		{"{C:,out}/x", `is absolute in the alternative "C:/x"`},
		{"out/{a,}", `contains an empty or '.' element in the alternative "out/"`},
		{"out/{a,.}/x", `contains an empty or '.' element in the alternative "out/./x"`},
		{"{./x,y}", `contains an empty or '.' element in the alternative "./x"`},
		{`\.\./x`, "is absolute"},
		{`x/\.\./y`, "backslash that does not escape"},
		{`out/\../x`, "backslash that does not escape"},
		{`out/.\./x`, "backslash that does not escape"},
		{`out/x\`, "not a valid pattern"},
		{`out\/../x`, "backslash that does not escape"},
		{"[.][.]/x", `has the element "[.][.]", which can only match '.' or '..'`},
		{"out/[.]", `has the element "[.]", which can only match '.' or '..'`},
		{"out/.[.]/x", `has the element ".[.]"`},
		{"out/[.-.][.-.]/x", `has the element "[.-.][.-.]"`},
		{"out/{[.][.],a}/x", `has the element "[.][.]", which can only match '.' or '..' in the alternative "out/[.][.]/x"`},
		{"..***/x", `has the element "..***" with three stars in a row`},
		{"[!a]../x", "negated character class"},
		{"out/[^a]", "negated character class"},
		{"a[.-0]../x", `range '.'-'0' in a character class, which includes '/'`},
		{"a[--0]", `range '-'-'0'`},
		{"a[/]b", `has '/' in a character class`},
		{`[\.]/x`, `has '\\' in a character class`},
		{"[{]../x", `has '{' in a character class`},
		{"[a-}]", `has '}' in a character class`},
		{"{a,b}}", "not a valid pattern"},
		{"{a,b", "not a valid pattern"},
	}
	for _, tt := range tests {
		err := CheckGlob(tt.glob)
		if !errors.Is(err, ErrInvalidGlob) || !strings.Contains(err.Error(), tt.why) || !strings.Contains(err.Error(), "use a pattern relative to the workspace") {
			t.Errorf("CheckGlob(%q) = %v, want ErrInvalidGlob saying %s", tt.glob, err, tt.why)
		}
	}
	w := openTest(t, newTestManager(t, nil), "s")
	if _, err := w.Collect(context.Background(), []string{"{out,..}/*"}, nil); !errors.Is(err, ErrInvalidGlob) || !strings.Contains(err.Error(), "globs[0]") {
		t.Errorf("Collect({out,..}/*) err = %v, want ErrInvalidGlob naming globs[0]", err)
	}
}

// TestCheckGlobAccepts pins ordinary globs that must stay usable,
// including wildcards that happen to match ".." (they are matched against
// directory listings) and escaped metacharacters.
func TestCheckGlobAccepts(t *testing.T) {
	for _, g := range []string{
		"out/**", "./out/**", "out/{a,b}/*.{png,jpg}", "out/{a,{b,c}}/x", "{out,work}/**/*.txt",
		"out/*", "out/.*", "out/.?", "out/?", "out/[.a][.a]", "out/..x", "out/x..", "out/...",
		`out/\[1\].txt`, `out/a\,b`, `out/\{x\}`, "out/[a-c]*", "out/[a-]", "out/{a,[,]}", "a,b", "skills/*/out/*",
	} {
		if err := CheckGlob(g); err != nil {
			t.Errorf("CheckGlob(%q) = %v", g, err)
		}
	}
}

// TestCheckGlobLimits tests MaxGlobLen and MaxGlobAlternatives at and past
// the limit.
func TestCheckGlobLimits(t *testing.T) {
	long := "out/" + strings.Repeat("a", MaxGlobLen-4)
	if err := CheckGlob(long); err != nil {
		t.Errorf("%d bytes: %v", len(long), err)
	}
	if err := CheckGlob(long + "a"); !errors.Is(err, ErrInvalidGlob) || !strings.Contains(err.Error(), "longer than 4096") || len(err.Error()) > 200 {
		t.Errorf("%d bytes: %v", len(long)+1, err)
	}
	items := func(n int) string {
		s := make([]string, n)
		for i := range s {
			s[i] = "f" + strconv.Itoa(i)
		}
		return "out/{" + strings.Join(s, ",") + "}"
	}
	for _, tt := range []struct {
		glob string
		ok   bool
	}{
		{items(MaxGlobAlternatives), true},
		{items(MaxGlobAlternatives + 1), false},
		{"out/" + strings.Repeat("{a,b}", 8), true}, // 2^8 = 256
		{"out/" + strings.Repeat("{a,b}", 9), false},
		{"out/" + strings.Repeat("{a,", 100) + "b" + strings.Repeat("}", 100), true},
		{"out/" + strings.Repeat("{a,{b,c}}", 5) + "{d,e}", false}, // 3^5 * 2 = 486
	} {
		err := CheckGlob(tt.glob)
		if tt.ok != (err == nil) || err != nil && !strings.Contains(err.Error(), "more than 256 alternatives") {
			t.Errorf("CheckGlob(%.40q...) = %v, want ok %v", tt.glob, err, tt.ok)
		}
	}
}

// escapingPaths are names outside the workspace (or the workspace itself
// through a dot element) that no accepted glob may target.
var escapingPaths = []string{
	"..", "../x", "../../x", "../../etc/passwd", "x/..", "x/../..", "x/../../y", "out/../../secret",
	"/", "/x", "/etc/passwd", "/..", "/../x", ".", "./x", "x/.", "x/./y", "../.", "./..",
}

// FuzzCheckGlob checks that no glob CheckGlob accepts targets a path
// outside the workspace: whenever doublestar.Match (its own reading of
// braces, classes and escapes) matches an escaping path with the pattern
// Collect walks, it also matches the same path with every ".", ".." or
// empty element replaced by an ordinary name, so the match comes from a
// wildcard, which doublestar matches against directory listings, and
// those never hold "." or "..". Accepted globs are valid doublestar
// patterns within MaxGlobLen.
func FuzzCheckGlob(f *testing.F) {
	for _, s := range []string{"out/**", "{out,..}/*", "out/{a,{b,..}}", ".{.,x}/y", `\.\./x`, "[.][.]/x", "[!a]../x",
		"a[.-0]../x", "*/x", "**", "out/.?", "{,/}etc", "?./x", "[.a][.a]/x", "*", "{a,b}/{c,d}", "./.*", "..***/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, orig string) {
		g, err := cleanGlob(orig) // what Collect walks: orig without a leading "./"
		if (err == nil) != (CheckGlob(orig) == nil) {
			t.Fatalf("CheckGlob and cleanGlob disagree on %q", orig)
		}
		if err != nil {
			return
		}
		if !doublestar.ValidatePattern(g) || len(orig) > MaxGlobLen {
			t.Fatalf("CheckGlob accepted %q", orig)
		}
		for _, p := range escapingPaths {
			if !match(g, p) {
				continue
			}
			if !slices.ContainsFunc(ordinaryTwins(p), func(q string) bool { return match(g, q) }) {
				t.Fatalf("CheckGlob accepted %q, which matches %q and no ordinary name in its place", g, p)
			}
		}
	})
}

// ordinaryTwins returns p with each ".", ".." or empty element replaced by
// an ordinary name (one of dotTwins), in every combination.
func ordinaryTwins(p string) []string {
	out := []string{""}
	for i, e := range strings.Split(p, "/") {
		subs := []string{e}
		if e == "." || e == ".." || e == "" {
			subs = dotTwins()
		}
		var next []string
		for _, o := range out {
			for _, s := range subs {
				if i > 0 {
					s = "/" + s
				}
				next = append(next, o+s)
			}
		}
		out = next
	}
	return out
}

// A command can nest folders as deep as its inodes allow: Collect looks no
// deeper than MaxDepth and stops after MaxEntries entries, saying so.
func TestCollectBounds(t *testing.T) {
	w := openTest(t, newTestManager(t, nil), "s")
	deep := w.OutputDir()
	for i := 0; i < 40; i++ {
		deep = filepath.Join(deep, "d")
	}
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, deep, "deep.txt", "deep")
	// out/ is depth 1; the file at depth 41 lies past the default 32.
	col, err := w.Collect(context.Background(), []string{"out/**"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(col.Files) != 0 || len(col.Skipped) != 1 || !strings.Contains(col.Skipped[0].Reason, "MaxDepth") {
		t.Errorf("files %v skipped %v, want the deep folder skipped once, naming MaxDepth", col.Files, col.Skipped)
	}
	// At the limit: depth 41 folders, MaxDepth 41 reaches the file.
	col, err = w.Collect(context.Background(), []string{"out/**"}, &CollectLimits{MaxDepth: 41})
	if err != nil || len(col.Files) != 1 {
		t.Fatalf("MaxDepth 41: %v %v", col, err)
	}
	col, err = w.Collect(context.Background(), []string{"out/**"}, &CollectLimits{MaxDepth: 41, MaxEntries: 20})
	if err != nil || !col.Truncated || len(col.Skipped) != 1 || !strings.Contains(col.Skipped[0].Reason, "MaxEntries") {
		t.Fatalf("MaxEntries 20: %+v %v, want a truncated walk naming MaxEntries", col, err)
	}
	if _, err := w.Collect(context.Background(), []string{"out/**"}, &CollectLimits{MaxDepth: -1}); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("negative MaxDepth: %v", err)
	}
}
