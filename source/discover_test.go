package source

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"hash/maphash"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/skillkit/skillkit/skill"
)

//go:embed testdata/embedded
var embedded embed.FS

// skillMD returns a valid SKILL.md for a skill called name.
func skillMD(name string) string {
	return "---\nname: " + name + "\ndescription: Does " + name + " things; use it for " + name + ".\n---\n\n# " + name + "\n\nSteps.\n"
}

// writeTree writes files (slash paths → content) below root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// hideFS wraps a file system so that discovery cannot recognise it as a
// host directory: it exercises the io/fs reader on real files.
type hideFS struct{ fs.FS }

// Stat lets discovery refuse a FIFO before opening it, as it does for
// any fs.StatFS.
func (h hideFS) Stat(name string) (fs.FileInfo, error) { return fs.Stat(h.FS, name) }

// ReadLink and Lstat keep symlinks visible, as os.DirFS shows them.
func (h hideFS) ReadLink(name string) (string, error) { return fs.ReadLink(h.FS, name) }

// Lstat implements fs.ReadLinkFS.
func (h hideFS) Lstat(name string) (fs.FileInfo, error) { return fs.Lstat(h.FS, name) }

// readers runs a test once with each way discovery reads host folders:
// the source's own reader, and the io/fs reader over os.DirFS of the same
// folder (a file system that follows links itself).
var readers = []struct {
	name string
	wrap func(fs.FS) fs.FS
}{
	{"host", func(f fs.FS) fs.FS { return f }},
	{"iofs", func(f fs.FS) fs.FS { return hideFS{os.DirFS(f.(*hostFS).root)} }},
	{"walk", walkFS},
}

// dirSource returns a source for the host folder root, read as mode says.
func dirSource(t *testing.T, root string, wrap func(fs.FS) fs.FS) Source {
	t.Helper()
	src, err := Dir(root, "test", 0)
	if err != nil {
		t.Fatal(err)
	}
	src.FS = wrap(src.FS)
	return src
}

func dirs(res *Result) []string {
	var out []string
	for _, f := range res.Skills {
		out = append(out, f.Dir)
	}
	return out
}

func TestDiscoverLayouts(t *testing.T) {
	deep := map[string]string{
		"s1/SKILL.md":               skillMD("s1"),
		"x/s2/SKILL.md":             skillMD("s2"),
		"x/y/s3/SKILL.md":           skillMD("s3"),
		"x/y/z/s4/SKILL.md":         skillMD("s4"),
		"x/y/z/w/s5/SKILL.md":       skillMD("s5"),
		"x/y/z/w/notes/readme.md":   "not a skill",
		"x/y/z/w/v/u/s7/SKILL.md":   skillMD("s7"),
		"x/y/z/w/v/README.markdown": "plain",
	}
	tests := []struct {
		name     string
		files    map[string]string
		maxDepth int
		want     []string
		// warning is the one root warning expected, if any.
		warning string
	}{
		{"nested to the default depth", deep, 0, []string{"s1", "x/s2", "x/y/s3", "x/y/z/s4"},
			"2 skill folders lie below the search depth of 4 levels, not read (the deepest 7 levels down); search 7 levels deep to read them (skillkit: --depth 7), or give their folder as a root"},
		{"MaxDepth 1", deep, 1, []string{"s1"},
			"5 skill folders lie below the search depth of 1 level, not read (the deepest 7 levels down); search 7 levels deep to read them (skillkit: --depth 7), or give their folder as a root"},
		{"MaxDepth 5", deep, 5, []string{"s1", "x/s2", "x/y/s3", "x/y/z/s4", "x/y/z/w/s5"},
			"1 skill folder lies below the search depth of 5 levels, not read (the deepest 7 levels down); search 7 levels deep to read them (skillkit: --depth 7), or give their folder as a root"},
		{"MaxDepth 7", deep, 7, []string{"s1", "x/s2", "x/y/s3", "x/y/z/s4", "x/y/z/w/s5", "x/y/z/w/v/u/s7"}, ""},
		{"skill folder not searched further", map[string]string{
			"outer/SKILL.md":            skillMD("outer"),
			"outer/inner/SKILL.md":      skillMD("inner"),
			"outer/refs/deep/SKILL.md":  skillMD("deep"),
			"other/SKILL.md":            skillMD("other"),
			"group/member/SKILL.md":     skillMD("member"),
			"group/member/sub/SKILL.md": skillMD("sub"),
		}, 0, []string{"group/member", "other", "outer"}, ""},
		{"ignored folders never entered", map[string]string{
			"node_modules/a/SKILL.md":     skillMD("a"),
			".git/b/SKILL.md":             skillMD("b"),
			"x/__pycache__/c/SKILL.md":    skillMD("c"),
			"x/.venv/d/SKILL.md":          skillMD("d"),
			".hg/e/SKILL.md":              skillMD("e"),
			".svn/f/SKILL.md":             skillMD("f"),
			"kept/SKILL.md":               skillMD("kept"),
			".hidden-but-ok/ok/SKILL.md":  skillMD("ok"),
			"SKILL.md.d/notes/readme.txt": "nothing",
		}, 0, []string{".hidden-but-ok/ok", "kept"}, ""},
		{"a folder named SKILL.md is not a skill", map[string]string{
			"odd/SKILL.md/inner/SKILL.md": skillMD("inner"),
			"fine/SKILL.md":               skillMD("fine"),
		}, 0, []string{"fine", "odd/SKILL.md/inner"}, ""},
		{"empty root", map[string]string{"readme.txt": "hi"}, 0, nil,
			"no skills found: no folder down to 4 levels holds a SKILL.md (a skill is a folder with a SKILL.md file)"},
		{"lone lower-case skill.md", map[string]string{"a/skill.md": skillMD("a"), "b/SKILL.md": skillMD("b")}, 0, []string{"b"}, ""},
	}
	for _, rd := range readers {
		for _, tc := range tests {
			t.Run(rd.name+"/"+tc.name, func(t *testing.T) {
				root := t.TempDir()
				writeTree(t, root, tc.files)
				src := dirSource(t, root, rd.wrap)
				src.MaxDepth = tc.maxDepth
				res, err := Discover(context.Background(), src, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if got := dirs(res); !slices.Equal(got, tc.want) {
					t.Errorf("found %q, want %q", got, tc.want)
				}
				var want []string
				if tc.warning != "" {
					want = append(want, root+": warning: "+tc.warning)
				}
				if tc.files["a/skill.md"] != "" {
					want = append(want, filepath.Join(root, "a", "skill.md")+":1: warning: discovery reads only SKILL.md, so this folder is not a skill; rename skill.md to SKILL.md")
				}
				var got []string
				for _, d := range res.Diagnostics {
					got = append(got, d.String())
				}
				if !slices.Equal(got, want) {
					t.Errorf("diagnostics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				for _, f := range res.Skills {
					if want := filepath.Join(root, filepath.FromSlash(f.Dir), "SKILL.md"); f.File != want {
						t.Errorf("File = %q, want %q", f.File, want)
					}
					if f.Front.Name != filepath.Base(f.Dir) || f.Size == 0 || f.ModTime.IsZero() || f.Hash == 0 {
						t.Errorf("skill %s: name %q size %d mod %v hash %x", f.Dir, f.Front.Name, f.Size, f.ModTime, f.Hash)
					}
				}
			})
		}
	}
}

func TestDiscoverRootIsSkill(t *testing.T) {
	for _, rd := range readers {
		t.Run(rd.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "solo")
			// No name field: the folder name of the root stands in.
			writeTree(t, root, map[string]string{
				"SKILL.md":        "---\ndescription: Works alone.\n---\nBody.\n",
				"nested/SKILL.md": skillMD("nested"),
			})
			res, err := Discover(context.Background(), dirSource(t, root, rd.wrap), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := dirs(res); !slices.Equal(got, []string{"."}) {
				t.Fatalf("found %q, want only the root", got)
			}
			if n := res.Skills[0].Front.Name; n != "solo" {
				t.Errorf("name = %q, want the folder name solo", n)
			}
			if len(res.Diagnostics) != 1 || res.Diagnostics[0].Severity != skill.Warning || res.Diagnostics[0].Field != skill.FieldName {
				t.Errorf("diagnostics = %v, want one name warning", res.Diagnostics)
			}
		})
	}
}

func TestDiscoverSymlinks(t *testing.T) {
	for _, rd := range readers {
		t.Run(rd.name, func(t *testing.T) {
			base := t.TempDir()
			root := filepath.Join(base, "root")
			writeTree(t, base, map[string]string{
				"elsewhere/linked/SKILL.md":  skillMD("linked"),
				"elsewhere/group/g/SKILL.md": skillMD("g"),
				"file.txt":                   "x",
				"root/real/SKILL.md":         skillMD("real"),
			})
			for link, target := range map[string]string{
				"linked":   filepath.Join(base, "elsewhere", "linked"),
				"group":    filepath.Join(base, "elsewhere", "group"),
				"file":     filepath.Join(base, "file.txt"),
				"dangling": filepath.Join(base, "missing"),
			} {
				if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
					t.Fatal(err)
				}
			}
			res, err := Discover(context.Background(), dirSource(t, root, rd.wrap), Options{})
			if err != nil {
				t.Fatal(err)
			}
			// A linked skill folder is followed; a linked folder that is not
			// a skill is not searched (it could leave the root or loop).
			if got, want := dirs(res), []string{"linked", "real"}; !slices.Equal(got, want) {
				t.Errorf("found %q, want %q", got, want)
			}
			var warned []string
			for _, d := range res.Diagnostics {
				warned = append(warned, filepath.Base(d.File))
			}
			if !slices.Equal(warned, []string{"dangling", "group"}) {
				t.Errorf("diagnostics %v, want warnings for the dangling link and the linked non-skill folder", res.Diagnostics)
			}
		})
	}
}

func TestDiscoverBadSkills(t *testing.T) {
	type wantDiag struct {
		file     string // slash path below the root
		line     int
		severity skill.Severity
		contains string
	}
	tests := []struct {
		name  string
		files map[string]string
		setup func(t *testing.T, root string)
		lim   skill.Limits
		found []string
		diags []wantDiag
	}{
		{
			name: "invalid YAML is an error with file and line; the folder is still a skill folder",
			files: map[string]string{
				"bad/SKILL.md":        "---\nname: bad\ndescription: [unclosed\nlicense: MIT\n---\nBody\n",
				"bad/nested/SKILL.md": skillMD("nested"),
				"good/SKILL.md":       skillMD("good"),
			},
			found: []string{"good"},
			diags: []wantDiag{{"bad/SKILL.md", 3, skill.Error, "Invalid YAML"}},
		},
		{
			name:  "missing description",
			files: map[string]string{"nodesc/SKILL.md": "---\nname: nodesc\n---\nBody\n"},
			diags: []wantDiag{{"nodesc/SKILL.md", 2, skill.Error, "description"}},
		},
		{
			name:  "no front matter",
			files: map[string]string{"plain/SKILL.md": "# Just markdown\n"},
			diags: []wantDiag{{"plain/SKILL.md", 1, skill.Error, "frontmatter"}},
		},
		{
			name:  "invalid UTF-8 in the body",
			files: map[string]string{"bin/SKILL.md": "---\nname: bin\ndescription: d\n---\n\xff\xfe\n"},
			diags: []wantDiag{{"bin/SKILL.md", 0, skill.Error, "UTF-8"}},
		},
		{
			name: "lenient warnings surface and the skill loads",
			files: map[string]string{
				"warn/SKILL.md": "---\nname: other-name\ndescription: Works.\ncolour: blue\n---\nBody\n",
			},
			found: []string{"warn"},
			diags: []wantDiag{
				{"warn/SKILL.md", 2, skill.Warning, "does not match the directory name"},
				{"warn/SKILL.md", 4, skill.Warning, "unknown front-matter field"},
			},
		},
		{
			name: "SKILL.md that is a symlink loop cannot be read",
			setup: func(t *testing.T, root string) {
				dir := filepath.Join(root, "loop")
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("SKILL.md", filepath.Join(dir, "SKILL.md")); err != nil {
					t.Fatal(err)
				}
			},
			files: map[string]string{"ok/SKILL.md": skillMD("ok")},
			found: []string{"ok"},
			diags: []wantDiag{{"loop/SKILL.md", 0, skill.Error, "cannot be followed"}},
		},
		{
			name: "SKILL.md that links outside its skill folder is refused",
			setup: func(t *testing.T, root string) {
				dir := filepath.Join(root, "evil")
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				outside := filepath.Join(filepath.Dir(root), "outside.md")
				if err := os.WriteFile(outside, []byte(skillMD("evil")), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("../../outside.md", filepath.Join(dir, "SKILL.md")); err != nil {
					t.Fatal(err)
				}
			},
			files: map[string]string{"ok/SKILL.md": skillMD("ok")},
			found: []string{"ok"},
			diags: []wantDiag{{"evil/SKILL.md", 0, skill.Error, "points outside the skill folder"}},
		},
		{
			name: "SKILL.md that links inside its skill folder loads",
			setup: func(t *testing.T, root string) {
				dir := filepath.Join(root, "inner", "docs")
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "main.md"), []byte(skillMD("inner")), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("docs/main.md", filepath.Join(root, "inner", "SKILL.md")); err != nil {
					t.Fatal(err)
				}
			},
			found: []string{"inner"},
		},
		{
			name: "SKILL.md that is a FIFO is refused without blocking",
			setup: func(t *testing.T, root string) {
				dir := filepath.Join(root, "fifo")
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := syscall.Mkfifo(filepath.Join(dir, "SKILL.md"), 0o644); err != nil {
					t.Skipf("mkfifo: %v", err)
				}
			},
			diags: []wantDiag{{"fifo/SKILL.md", 0, skill.Error, "not a regular file"}},
		},
		{
			name:  "SKILL.md at the size limit loads",
			files: map[string]string{"edge/SKILL.md": padded("edge", 300)},
			lim:   skill.Limits{MaxFileSize: 300},
			found: []string{"edge"},
		},
		{
			name:  "SKILL.md one byte over the size limit is skipped",
			files: map[string]string{"big/SKILL.md": padded("big", 301)},
			lim:   skill.Limits{MaxFileSize: 300},
			diags: []wantDiag{{"big/SKILL.md", 0, skill.Error, "301 bytes, over the 300-byte limit"}},
		},
	}
	for _, rd := range readers {
		for _, tc := range tests {
			t.Run(rd.name+"/"+tc.name, func(t *testing.T) {
				root := t.TempDir()
				writeTree(t, root, tc.files)
				if tc.setup != nil {
					tc.setup(t, root)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				res, err := Discover(ctx, dirSource(t, root, rd.wrap), Options{Limits: tc.lim})
				if err != nil {
					t.Fatal(err)
				}
				if got := dirs(res); !slices.Equal(got, tc.found) {
					t.Errorf("found %q, want %q", got, tc.found)
				}
				if len(res.Diagnostics) != len(tc.diags) {
					t.Fatalf("diagnostics = %v, want %d", res.Diagnostics, len(tc.diags))
				}
				for i, w := range tc.diags {
					d := res.Diagnostics[i]
					file := filepath.Join(root, filepath.FromSlash(w.file))
					if d.File != file || d.Line != w.line || d.Severity != w.severity || !strings.Contains(d.Message, w.contains) {
						t.Errorf("diagnostic %d = %q (line %d, %v), want %s:%d %v containing %q", i, d, d.Line, d.Severity, file, w.line, w.severity, w.contains)
					}
				}
			})
		}
	}
}

// padded returns a valid SKILL.md of exactly size bytes.
func padded(name string, size int) string {
	s := skillMD(name)
	return s + strings.Repeat("x", size-len(s)-1) + "\n"
}

func TestDiscoverUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root: file permissions do not stop reads (the symlink-loop case covers unreadable files)")
	}
	root := t.TempDir()
	writeTree(t, root, map[string]string{"locked/SKILL.md": skillMD("locked")})
	p := filepath.Join(root, "locked", "SKILL.md")
	if err := os.Chmod(p, 0); err != nil {
		t.Fatal(err)
	}
	res, err := Discover(context.Background(), dirSource(t, root, readers[0].wrap), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skills) != 0 || len(res.Diagnostics) != 1 || res.Diagnostics[0].File != p || res.Diagnostics[0].Severity != skill.Error {
		t.Errorf("skills %v, diagnostics %v; want one error for %s", dirs(res), res.Diagnostics, p)
	}
}

func TestDiscoverFS(t *testing.T) {
	sub, err := fs.Sub(embedded, "testdata/embedded")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		src   Source
		want  []string
		files []string
	}{
		{"embed.FS", FS(sub, "bundled", 3), []string{"hello", "tools/lint"}, []string{"bundled/hello/SKILL.md", "bundled/tools/lint/SKILL.md"}},
		{"fstest.MapFS", FS(fstest.MapFS{
			"a/SKILL.md":            {Data: []byte(skillMD("a")), ModTime: time.Unix(100, 0)},
			"deep/er/b/SKILL.md":    {Data: []byte(skillMD("b"))},
			"node_modules/SKILL.md": {Data: []byte(skillMD("node-modules"))},
		}, "mem/", 0), []string{"a", "deep/er/b"}, []string{"mem/a/SKILL.md", "mem/deep/er/b/SKILL.md"}},
		{"fstest.MapFS single skill", FS(fstest.MapFS{
			"SKILL.md": {Data: []byte(skillMD("one"))},
		}, "one", 0), []string{"."}, []string{"one/SKILL.md"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Discover(context.Background(), tc.src, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := dirs(res); !slices.Equal(got, tc.want) {
				t.Errorf("found %q, want %q", got, tc.want)
			}
			var files []string
			for _, f := range res.Skills {
				files = append(files, f.File)
			}
			if !slices.Equal(files, tc.files) {
				t.Errorf("files %q, want %q", files, tc.files)
			}
			if len(res.Diagnostics) != 0 {
				t.Errorf("diagnostics: %v", res.Diagnostics)
			}
		})
	}
}

// countFS counts Open, Stat and ReadDir calls by path and can cancel a
// context on the nth Open.
type countFS struct {
	fs.FS
	opens, stats atomic.Int64
	cancelAt     int64
	cancel       context.CancelFunc
}

func (c *countFS) Open(name string) (fs.File, error) {
	if n := c.opens.Add(1); c.cancel != nil && n == c.cancelAt {
		c.cancel()
	}
	return c.FS.Open(name)
}

func (c *countFS) Stat(name string) (fs.FileInfo, error) {
	c.stats.Add(1)
	return fs.Stat(c.FS, name)
}

func TestDiscoverPrevious(t *testing.T) {
	for _, rd := range readers {
		t.Run(rd.name, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, map[string]string{
				"a/SKILL.md": skillMD("a"), "b/SKILL.md": skillMD("b"),
				"c/SKILL.md": "---\nname: c\ndescription: Does c things.\nextra: kept\n---\nBody\n",
			})
			src := dirSource(t, root, rd.wrap)
			opts := Options{Seed: maphash.MakeSeed()}
			first, err := Discover(context.Background(), src, opts)
			if err != nil {
				t.Fatal(err)
			}
			opts.Previous = map[string]*Found{}
			for _, f := range first.Skills {
				opts.Previous[f.Dir] = f
			}
			same, err := Discover(context.Background(), src, opts)
			if err != nil {
				t.Fatal(err)
			}
			if same.Reused != 3 {
				t.Errorf("Reused = %d, want 3", same.Reused)
			}
			if !reflect.DeepEqual(same.Diagnostics, first.Diagnostics) || len(first.Diagnostics) != 1 {
				t.Errorf("diagnostics of reused skills %v, want the first run's %v (one warning)", same.Diagnostics, first.Diagnostics)
			}
			for i := range same.Skills {
				if same.Skills[i] != first.Skills[i] {
					t.Errorf("%s: unchanged skill not reused", same.Skills[i].Dir)
				}
			}
			// Change b (new content, new time) and touch c's time only.
			bp := filepath.Join(root, "b", "SKILL.md")
			if err := os.WriteFile(bp, []byte(strings.Replace(skillMD("b"), "Does b", "Now does b", 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			later := time.Now().Add(time.Hour)
			for _, p := range []string{bp, filepath.Join(root, "c", "SKILL.md")} {
				if err := os.Chtimes(p, later, later); err != nil {
					t.Fatal(err)
				}
			}
			again, err := Discover(context.Background(), src, opts)
			if err != nil {
				t.Fatal(err)
			}
			if again.Reused != 1 || again.Skills[0] != first.Skills[0] {
				t.Errorf("Reused = %d (a reused: %v), want only a", again.Reused, again.Skills[0] == first.Skills[0])
			}
			if d := again.Skills[1].Front.Description; !strings.HasPrefix(d, "Now does b") {
				t.Errorf("b not re-read: description %q", d)
			}
			if again.Skills[1].Hash == first.Skills[1].Hash {
				t.Error("b's hash did not change with its content")
			}
			if again.Skills[2].Hash != first.Skills[2].Hash {
				t.Error("c's hash changed although its content did not (same seed)")
			}
		})
	}
}

func TestDiscoverPreviousDoesNotReopen(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a/SKILL.md": skillMD("a"), "b/SKILL.md": skillMD("b")})
	src, err := Dir(root, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	cfs := &countFS{FS: src.FS}
	src.FS = cfs
	first, err := Discover(context.Background(), src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	prev := map[string]*Found{}
	for _, f := range first.Skills {
		prev[f.Dir] = f
	}
	cfs.opens.Store(0)
	cfs.stats.Store(0)
	res, err := Discover(context.Background(), src, Options{Previous: prev})
	if err != nil {
		t.Fatal(err)
	}
	// Only the root listing opens anything; the SKILL.md files are stat'ed
	// (and the root is probed for a SKILL.md of its own, then for a
	// lower-case skill.md).
	if n := cfs.opens.Load(); n != 1 || res.Reused != 2 || cfs.stats.Load() != 4 {
		t.Errorf("opens %d, stats %d, reused %d; want 1 open (the root listing), 4 stats, 2 reused", n, cfs.stats.Load(), res.Reused)
	}
}

func TestDiscoverContext(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	for i := range 50 {
		name := fmt.Sprintf("s%02d", i)
		files[name+"/SKILL.md"] = skillMD(name)
	}
	writeTree(t, root, files)
	t.Run("cancelled before", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := Discover(ctx, dirSource(t, root, readers[0].wrap), Options{}); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	})
	t.Run("cancelled during", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		src := dirSource(t, root, readers[0].wrap)
		cfs := &countFS{FS: src.FS, cancelAt: 10, cancel: cancel}
		src.FS = cfs
		if _, err := Discover(ctx, src, Options{Workers: 1}); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if n := cfs.opens.Load(); n > 12 {
			t.Errorf("%d files opened after cancellation at 10; work did not stop", n)
		}
	})
}

func TestDiscoverOptionErrors(t *testing.T) {
	good := FS(fstest.MapFS{"a/SKILL.md": {Data: []byte(skillMD("a"))}}, "mem", 0)
	tests := []struct {
		name string
		src  Source
		opts Options
		want string
	}{
		{"no file system", Source{Label: "x"}, Options{}, `source "x" has no file system`},
		{"negative depth", Source{Label: "x", FS: good.FS, MaxDepth: -1}, Options{}, "MaxDepth is -1"},
		{"negative workers", good, Options{Workers: -2}, "Workers is -2"},
		{"negative limit", good, Options{Limits: skill.Limits{MaxFileSize: -1}}, "MaxFileSize is -1"},
		{"unreadable root", FS(fstest.MapFS{}, "empty", 0), Options{}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Discover(context.Background(), tc.src, tc.opts)
			if tc.want == "" {
				if err != nil {
					t.Errorf("err = %v, want none for an empty file system", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
	missing := filepath.Join(t.TempDir(), "gone")
	src := Source{Label: "gone", FS: os.DirFS(missing), Path: missing}
	if _, err := Discover(context.Background(), src, Options{}); err == nil || !strings.Contains(err.Error(), "reading skill root "+missing) {
		t.Errorf("missing root: err = %v", err)
	}
}

func TestDir(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"file.txt": "x"})
	src, err := Dir(root, "", 2)
	if err != nil {
		t.Fatal(err)
	}
	if src.Label != root || src.Path != root || src.Rank != 2 {
		t.Errorf("Dir = %+v", src)
	}
	if got := src.HostPath("a/b"); got != filepath.Join(root, "a", "b") {
		t.Errorf("HostPath = %q", got)
	}
	if got := src.DisplayPath("."); got != root {
		t.Errorf("DisplayPath(.) = %q", got)
	}
	mem := FS(fstest.MapFS{}, "bundled/", 0)
	if got := mem.DisplayPath("x/SKILL.md"); got != "bundled/x/SKILL.md" {
		t.Errorf("DisplayPath = %q", got)
	}
	if got := mem.HostPath("x"); got != "" {
		t.Errorf("HostPath of an embedded source = %q", got)
	}
	for _, bad := range []string{filepath.Join(root, "missing"), filepath.Join(root, "file.txt")} {
		if _, err := Dir(bad, "", 0); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("Dir(%q) err = %v, want one naming the path", bad, err)
		}
	}
}

func TestDefaultRoots(t *testing.T) {
	base := t.TempDir()
	mk := func(rel string) string {
		p := filepath.Join(base, filepath.FromSlash(rel))
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	extra1, extra2 := mk("extra1"), mk("extra2")
	repo := mk("repo")
	mk("repo/.git")
	mk("repo/.agents/skills")
	cwd := mk("repo/src/pkg")
	mk("repo/src/pkg/.agents/skills") // not the project root: ignored
	home := mk("home")
	mk("home/.agents/skills")
	plain := mk("plain/dir")
	mk("plain/dir/.agents/skills")

	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "SKILLKIT_PATH" {
				return v
			}
			return ""
		}
	}
	type root struct{ label, path string }
	tests := []struct {
		name string
		cwd  string
		path string
		home string
		want []root
	}{
		{"all three kinds", cwd, extra1 + ":" + filepath.Join(base, "missing") + "::" + extra2, home, []root{
			{"SKILLKIT_PATH:" + extra1, extra1},
			{"SKILLKIT_PATH:" + extra2, extra2},
			{"project", filepath.Join(repo, ".agents", "skills")},
			{"user", filepath.Join(home, ".agents", "skills")},
		}},
		{"no .git: cwd is the project", plain, "", "", []root{
			{"project", filepath.Join(plain, ".agents", "skills")},
		}},
		{"home without skills", plain, "", base, []root{
			{"project", filepath.Join(plain, ".agents", "skills")},
		}},
		{"nothing exists", mk("empty"), filepath.Join(base, "nope"), filepath.Join(base, "nohome"), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srcs, warnings, err := DefaultRoots(tc.cwd, env(tc.path), tc.home)
			if err != nil {
				t.Fatal(err)
			}
			// Only a configured SKILLKIT_PATH entry that is missing warns.
			wantWarn := strings.Contains(tc.path, filepath.Join(base, "missing")) || strings.Contains(tc.path, filepath.Join(base, "nope"))
			if wantWarn != (len(warnings) == 1) || len(warnings) > 1 {
				t.Errorf("warnings %q", warnings)
			} else if wantWarn && !strings.Contains(warnings[0], "is not a folder") {
				t.Errorf("warning does not name the entry: %q", warnings[0])
			}
			var got []root
			for i, s := range srcs {
				got = append(got, root{s.Label, s.Path})
				if s.Rank != i {
					t.Errorf("%s has rank %d, want %d", s.Label, s.Rank, i)
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("roots = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestProjectRoot(t *testing.T) {
	base := t.TempDir()
	for _, d := range []string{"repo/.git", "repo/a/b", "worktree/x", "none/y"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A worktree's .git is a file.
	writeTree(t, base, map[string]string{"worktree/.git": "gitdir: /elsewhere\n"})
	tests := []struct{ cwd, want string }{
		{"repo/a/b", "repo"},
		{"repo", "repo"},
		{"worktree/x", "worktree"},
		{"none/y", "none/y"},
	}
	for _, tc := range tests {
		if got := ProjectRoot(filepath.Join(base, tc.cwd)); got != filepath.Join(base, tc.want) {
			t.Errorf("ProjectRoot(%s) = %s, want %s", tc.cwd, got, tc.want)
		}
	}
}

// TestDiscoverLinkWarnings checks that a linked folder that is not
// searched is reported for what it is: a loop back to a folder being
// searched, a link that never resolves, a broken link, or a folder.
func TestDiscoverLinkWarnings(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"g/readme.txt": "x", "s/SKILL.md": skillMD("s"), "plain/readme.txt": "x"})
	for link, target := range map[string]string{
		"self": ".", "g/back": "..", "loop": "loop", "broken": "nowhere", "other": "plain",
	} {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(link))); err != nil {
			t.Skipf("cannot make symbolic links here: %v", err)
		}
	}
	src := dirSource(t, root, func(f fs.FS) fs.FS { return f })
	res, err := Discover(context.Background(), src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := dirs(res); !slices.Equal(got, []string{"s"}) {
		t.Errorf("found %q, want the one skill", got)
	}
	p := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
	want := []string{
		p("broken") + ": warning: broken symlink skipped: no such file or directory",
		p("g/back") + ": warning: symlink loop: the link leads back to " + root + ", which is being searched already; not searched again",
		p("loop") + ": warning: symlink loop: the link never reaches a folder (too many levels of symbolic links); skipped (fix or remove the link)",
		p("other") + ": warning: symlinked folder holds no SKILL.md; not searched (link skill folders themselves)",
		p("self") + ": warning: symlink loop: the link leads back to " + root + ", which is being searched already; not searched again",
	}
	var got []string
	for _, d := range res.Diagnostics {
		got = append(got, d.String())
	}
	if !slices.Equal(got, want) {
		t.Errorf("diagnostics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestDiscoverPassedOverIsBounded checks that counting the skills below
// the depth limit stops at its bound and says "at least".
func TestDiscoverPassedOverIsBounded(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	for i := range deeperFolders + 10 {
		files[fmt.Sprintf("a/s%d/SKILL.md", i)] = skillMD(fmt.Sprintf("s%d", i))
	}
	writeTree(t, root, files)
	src := dirSource(t, root, func(f fs.FS) fs.FS { return f })
	src.MaxDepth = 1
	res, err := Discover(context.Background(), src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Diagnostics) != 1 || !strings.Contains(res.Diagnostics[0].Message, fmt.Sprintf("at least %d skill folders lie below the search depth of 1 level", deeperFolders)) {
		t.Errorf("diagnostics %v, want one that counts at least %d passed over", res.Diagnostics, deeperFolders)
	}
}

// TestDiscoverPassedOverBoundWithoutSkill checks the warning when the
// bounded search below the depth finds no skill before its bound: it says
// the search stopped, not that there are no skills.
func TestDiscoverPassedOverBoundWithoutSkill(t *testing.T) {
	root := t.TempDir()
	for i := range deeperFolders + 10 {
		if err := os.MkdirAll(filepath.Join(root, "a", fmt.Sprintf("%05d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeTree(t, root, map[string]string{fmt.Sprintf("a/%05d/s/SKILL.md", deeperFolders+5): skillMD("s")})
	src := dirSource(t, root, func(f fs.FS) fs.FS { return f })
	src.MaxDepth = 1
	res, err := Discover(context.Background(), src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Diagnostics) != 1 || !strings.Contains(res.Diagnostics[0].Message, fmt.Sprintf("searched only until %d folders", deeperFolders)) {
		t.Errorf("diagnostics %v, want one saying the search below the depth stopped", res.Diagnostics)
	}
}

// TestDiscoverListFolders discovers a tree of skills of every kind with
// and without ListFolders: the skills and diagnostics are the same; each
// plain skill folder of the host reader comes with its listing — the
// entries the folder holds, sorted, with their lstat (SKILL.md's the
// stat of the file read) and the folder's own stat — and linked skill
// folders, linked SKILL.md files, the io/fs reader and folders of more
// entries than a listing examines come without one.
func TestDiscoverListFolders(t *testing.T) {
	root, elsewhere := t.TempDir(), t.TempDir()
	writeTree(t, root, map[string]string{
		"plain/SKILL.md": skillMD("plain"), "plain/refs/a.md": "a", "plain/b.txt": "bb",
		"group/inner/SKILL.md": skillMD("inner"),
		"linkedmd/real.md":     skillMD("linkedmd"),
		"lower/skill.md":       skillMD("lower"),
		"bad/SKILL.md":         "---\nname: bad\n---\nno description\n",
		"crowded/SKILL.md":     skillMD("crowded"),
	})
	for i := range 80 {
		writeTree(t, root, map[string]string{fmt.Sprintf("crowded/f%02d.txt", i): "x"})
	}
	writeTree(t, elsewhere, map[string]string{"linked/SKILL.md": skillMD("linked")})
	for link, target := range map[string]string{"linked": filepath.Join(elsewhere, "linked"), "linkedmd/SKILL.md": "real.md"} {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(link))); err != nil {
			t.Skipf("symlinks unavailable: %v", err)
		}
	}
	lim := skill.Limits{MaxFiles: 2} // at most 72 entries listed
	for _, rd := range readers {
		t.Run(rd.name, func(t *testing.T) {
			src, seed := dirSource(t, root, rd.wrap), maphash.MakeSeed()
			plain, err := Discover(context.Background(), src, Options{Limits: lim, Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			listed, err := Discover(context.Background(), src, Options{Limits: lim, Seed: seed, ListFolders: true})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(dirs(plain), dirs(listed)) || !slices.Equal(plain.Diagnostics, listed.Diagnostics) {
				t.Fatalf("with ListFolders: skills %q, diagnostics %v; without: %q, %v", dirs(listed), listed.Diagnostics, dirs(plain), plain.Diagnostics)
			}
			for i, f := range listed.Skills {
				if p := plain.Skills[i]; f.Size != p.Size || f.Hash != p.Hash || f.Front.Name != p.Front.Name {
					t.Errorf("%s: read %d bytes (%s), without ListFolders %d (%s)", f.Dir, f.Size, f.Front.Name, p.Size, p.Front.Name)
				}
				if plain.Skills[i].Folder != nil {
					t.Errorf("%s: a listing without ListFolders", f.Dir)
				}
				wantListing := rd.name != "iofs" && (f.Dir == "plain" || f.Dir == "group/inner")
				if (f.Folder != nil) != wantListing {
					t.Errorf("%s: listing %v, want one: %v", f.Dir, f.Folder != nil, wantListing)
				}
				if f.Folder == nil {
					continue
				}
				dir := filepath.Join(root, filepath.FromSlash(f.Dir))
				want, err := os.ReadDir(dir)
				if err != nil {
					t.Fatal(err)
				}
				if len(f.Folder.Entries) != len(want) {
					t.Fatalf("%s: listing %v, the folder holds %v", f.Dir, f.Folder.Entries, want)
				}
				for j, e := range f.Folder.Entries {
					info, _ := e.Info()
					st, err := os.Lstat(filepath.Join(dir, want[j].Name()))
					if err != nil {
						t.Fatal(err)
					}
					if e.Name() != want[j].Name() || e.Type() != want[j].Type() || info.Size() != st.Size() || !info.ModTime().Equal(st.ModTime()) {
						t.Errorf("%s: entry %v (%d bytes), the folder has %v (%d bytes)", f.Dir, e, info.Size(), want[j], st.Size())
					}
					if e.Name() == skill.FileName && info.Size() != f.Size {
						t.Errorf("%s: SKILL.md listed with %d bytes, %d read", f.Dir, info.Size(), f.Size)
					}
				}
				st, err := os.Stat(dir)
				if err != nil {
					t.Fatal(err)
				}
				if !f.Folder.Stat.IsDir() || !f.Folder.Stat.ModTime().Equal(st.ModTime()) || f.Folder.Listed.IsZero() {
					t.Errorf("%s: folder stat %v %v, listed at %v", f.Dir, f.Folder.Stat.Mode(), f.Folder.Stat.ModTime(), f.Folder.Listed)
				}
			}
		})
	}
}

// TestDiscoverPassedOverAtTheBounds checks the bounds of the count below
// the depth: deeperFolders folders are all examined, and a skill
// deeperLevels levels below the depth is counted while one a level deeper
// is past the bound.
func TestDiscoverPassedOverAtTheBounds(t *testing.T) {
	deepPath := func(levels int) string {
		p := "a" // at the depth limit of 1
		for i := range levels {
			p += fmt.Sprintf("/l%d", i)
		}
		return p + "/SKILL.md"
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"exactly the folder bound", func() map[string]string {
			files := map[string]string{}
			for i := range deeperFolders {
				files[fmt.Sprintf("a/s%d/SKILL.md", i)] = skillMD(fmt.Sprintf("s%d", i))
			}
			return files
		}(), fmt.Sprintf("%d skill folders lie below the search depth of 1 level, not read (the deepest 2 levels down)", deeperFolders)},
		{"at the level bound", map[string]string{deepPath(deeperLevels): skillMD("l7")},
			fmt.Sprintf("1 skill folder lies below the search depth of 1 level, not read (the deepest %d levels down)", 1+deeperLevels)},
		{"past the level bound", map[string]string{deepPath(deeperLevels + 1): skillMD("l8")},
			fmt.Sprintf("no skills found down to 1 level; below that the folders were searched only until %d folders or %d more levels", deeperFolders, deeperLevels)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, tc.files)
			src := dirSource(t, root, func(f fs.FS) fs.FS { return f })
			src.MaxDepth = 1
			res, err := Discover(context.Background(), src, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Diagnostics) != 1 || !strings.HasPrefix(res.Diagnostics[0].Message, tc.want) {
				t.Errorf("diagnostics %v, want one starting %q", res.Diagnostics, tc.want)
			}
		})
	}
}
