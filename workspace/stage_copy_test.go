//go:build unix

package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"
)

// copyTree describes every entry under dir the way a staged copy is
// compared with its source: type, executable bit, content or link
// target; names Stage never copies are described as "kept".
func copyTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if skipSource(d.Name()) {
			out[rel] = "kept"
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch m := info.Mode(); {
		case m.IsDir():
			out[rel] = fmt.Sprintf("dir %v", m.Perm())
		case m&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "link " + target
		case m.IsRegular():
			out[rel] = fmt.Sprintf("file %v %q", m, readFile(t, p))
		default:
			out[rel] = "special " + m.String()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestStageRestoresCopy changes the staged copy of an unchanged skill
// between two Stage calls, as a command could, and checks that the next
// Stage puts back exactly what was staged: changed, replaced and missing
// files and folders restored, added ones removed, links repaired, the
// skill's own caches kept, and nothing outside the workspace touched.
func TestStageRestoresCopy(t *testing.T) {
	scenarios := []struct {
		name     string
		tamper   func(t *testing.T, dir, outside string)
		restored []string
	}{
		{"content changed, same size", func(t *testing.T, dir, _ string) {
			writeFile(t, dir, "scripts/run.py", "print('HI')\n")
		}, []string{"scripts/run.py"}},
		{"content changed, mtime put back", func(t *testing.T, dir, _ string) {
			p := filepath.Join(dir, "scripts/run.py")
			info, _ := os.Stat(p)
			writeFile(t, dir, "scripts/run.py", "print('HI')\n")
			os.Chmod(p, 0o755)
			os.Chtimes(p, info.ModTime(), info.ModTime())
		}, []string{"scripts/run.py"}},
		{"content changed, other size", func(t *testing.T, dir, _ string) {
			writeFile(t, dir, "SKILL.md", "poisoned instructions\n")
		}, []string{"SKILL.md"}},
		{"executable bit dropped", func(t *testing.T, dir, _ string) {
			os.Chmod(filepath.Join(dir, "scripts/run.py"), 0o644)
		}, []string{"scripts/run.py"}},
		{"setuid added", func(t *testing.T, dir, _ string) {
			os.Chmod(filepath.Join(dir, "ref/doc.md"), 0o4755)
		}, []string{"ref/doc.md"}},
		{"folder mode changed", func(t *testing.T, dir, _ string) {
			os.Chmod(filepath.Join(dir, "ref"), 0o777)
		}, []string{"ref"}},
		{"folder made unreadable", func(t *testing.T, dir, _ string) {
			writeFile(t, dir, "ref/added.md", "x")
			os.Chmod(filepath.Join(dir, "ref"), 0)
		}, []string{"ref", "ref/added.md"}},
		{"files and a folder added", func(t *testing.T, dir, _ string) {
			writeFile(t, dir, "evil.py", "import os\n")
			writeFile(t, dir, "ref/extra.md", "extra\n")
			writeFile(t, dir, "plugins/a/b.py", "b\n")
		}, []string{"evil.py", "plugins", "ref/extra.md"}},
		{"file and folder removed", func(t *testing.T, dir, _ string) {
			os.Remove(filepath.Join(dir, "SKILL.md"))
			os.RemoveAll(filepath.Join(dir, "ref"))
		}, []string{"SKILL.md", "ref"}},
		{"file replaced by a link out", func(t *testing.T, dir, outside string) {
			os.Remove(filepath.Join(dir, "scripts/run.py"))
			os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "scripts/run.py"))
		}, []string{"scripts/run.py"}},
		{"folder replaced by a link out", func(t *testing.T, dir, outside string) {
			os.RemoveAll(filepath.Join(dir, "ref"))
			os.Symlink(outside, filepath.Join(dir, "ref"))
		}, []string{"ref"}},
		{"file replaced by a folder", func(t *testing.T, dir, _ string) {
			os.Remove(filepath.Join(dir, "SKILL.md"))
			writeFile(t, dir, "SKILL.md/inner", "x")
		}, []string{"SKILL.md"}},
		{"file replaced by a FIFO", func(t *testing.T, dir, _ string) {
			os.Remove(filepath.Join(dir, "ref/doc.md"))
			if err := syscall.Mkfifo(filepath.Join(dir, "ref/doc.md"), 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
		}, []string{"ref/doc.md"}},
		{"FIFO added", func(t *testing.T, dir, _ string) {
			if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
		}, []string{"pipe"}},
		{"skill link retargeted", func(t *testing.T, dir, outside string) {
			os.Remove(filepath.Join(dir, "ref/alias.md"))
			os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "ref/alias.md"))
		}, []string{"ref/alias.md"}},
		{"workspace links replaced", func(t *testing.T, dir, outside string) {
			os.Remove(filepath.Join(dir, "out"))
			os.Symlink(outside, filepath.Join(dir, "out"))
			os.Remove(filepath.Join(dir, "work"))
			writeFile(t, dir, "work/planted", "x")
			os.Remove(filepath.Join(dir, "inputs"))
		}, []string{"inputs", "out", "work"}},
		{"caches and venvs kept", func(t *testing.T, dir, _ string) {
			writeFile(t, dir, ".venv/bin/python", "venv")
			writeFile(t, dir, "scripts/__pycache__/run.pyc", "pyc")
			writeFile(t, dir, "node_modules/x/index.js", "js")
			writeFile(t, dir, "ref/.git", "gitfile")
		}, nil},
		{"nothing changed", func(*testing.T, string, string) {}, nil},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			base := t.TempDir()
			outside := filepath.Join(base, "outside")
			writeFile(t, outside, "secret", "SECRET")
			src := filepath.Join(base, "src")
			writeFile(t, src, "SKILL.md", "---\nname: demo\n---\n")
			writeFile(t, src, "scripts/run.py", "print('hi')\n")
			writeFile(t, src, "ref/doc.md", "doc\n")
			os.Chmod(filepath.Join(src, "scripts/run.py"), 0o755)
			os.Symlink("doc.md", filepath.Join(src, "ref/alias.md"))
			ageTree(t, src)
			w := openTest(t, newTestManager(t, &Options{Root: filepath.Join(base, "ws")}), "s")
			dir, _ := w.SkillDir("demo")
			stage(t, w, "demo", os.DirFS(src))
			want := copyTree(t, dir)
			before := snapshot(t, outside)

			sc.tamper(t, dir, outside)
			res := stage(t, w, "demo", os.DirFS(src))
			if res.Copied || !slices.Equal(res.Restored, sc.restored) {
				t.Errorf("Stage = Copied %v, Restored %q; want %q restored in place", res.Copied, res.Restored, sc.restored)
			}
			got := copyTree(t, dir)
			for p, v := range got {
				if v == "kept" {
					delete(got, p)
				}
			}
			if !equalMaps(got, want) {
				t.Errorf("copy after Stage:\n%v\nwant\n%v", got, want)
			}
			if after := snapshot(t, outside); !equalMaps(after, before) {
				t.Errorf("outside changed: %v", after)
			}
			if sc.name == "caches and venvs kept" {
				for _, p := range []string{".venv/bin/python", "scripts/__pycache__/run.pyc", "node_modules/x/index.js", "ref/.git"} {
					if _, err := os.Lstat(filepath.Join(dir, p)); err != nil {
						t.Errorf("%s removed: %v", p, err)
					}
				}
			}
			// A second Stage finds nothing more to put back, also from a
			// Manager that reads the records from disk.
			if res := stage(t, w, "demo", os.DirFS(src)); res.Copied || len(res.Restored) != 0 {
				t.Errorf("second Stage = Copied %v, Restored %q", res.Copied, res.Restored)
			}
			m2 := newTestManager(t, &Options{Root: w.m.Root()})
			if res := stage(t, openTest(t, m2, "s"), "demo", os.DirFS(src)); res.Copied || len(res.Restored) != 0 {
				t.Errorf("Stage from a new Manager = Copied %v, Restored %q", res.Copied, res.Restored)
			}
		})
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestStageRestoresAfterTrust checks a copy whose records are trusted
// (checked long ago, as after the racy window): a change still shows in
// the stat and is put back.
func TestStageRestoresAfterTrust(t *testing.T) {
	src := fstest.MapFS{"SKILL.md": {Data: []byte("v1"), ModTime: time.Unix(1e9, 0)}, "a/b.txt": {Data: []byte("bbbb"), ModTime: time.Unix(1e9, 0)}}
	w := openTest(t, newTestManager(t, nil), "s")
	stage(t, w, "x", src)
	m := w.st.manifests["x"]
	for p, rec := range m.Copy {
		if rec.Verified != 0 {
			rec.Verified = rec.CTime + 1 // trusted
			m.Copy[p] = rec
		}
	}
	dir, _ := w.SkillDir("x")
	if res := stage(t, w, "x", src); len(res.Restored) != 0 {
		t.Fatalf("trusted copy: Restored %q", res.Restored)
	}
	writeFile(t, dir, "a/b.txt", "BBBB")
	if res := stage(t, w, "x", src); !slices.Equal(res.Restored, []string{"a/b.txt"}) {
		t.Errorf("Restored = %q, want a/b.txt", res.Restored)
	}
	if got := readFile(t, filepath.Join(dir, "a/b.txt")); got != "bbbb" {
		t.Errorf("a/b.txt = %q", got)
	}
}

// TestStageOldManifest stages over a copy recorded by an older version
// (no copy records): files are rewritten once, silently, caches kept.
func TestStageOldManifest(t *testing.T) {
	src := fstest.MapFS{"SKILL.md": {Data: []byte("v1"), ModTime: time.Unix(1e9, 0)}}
	w := openTest(t, newTestManager(t, nil), "s")
	stage(t, w, "x", src)
	w.st.manifests["x"].Copy = nil
	dir, _ := w.SkillDir("x")
	writeFile(t, dir, "SKILL.md", "v2")
	writeFile(t, dir, ".venv/ok", "")
	res := stage(t, w, "x", src)
	if res.Copied || len(res.Restored) != 0 || readFile(t, filepath.Join(dir, "SKILL.md")) != "v1" {
		t.Errorf("Stage = %+v; SKILL.md %q", res, readFile(t, filepath.Join(dir, "SKILL.md")))
	}
	if _, err := os.Stat(filepath.Join(dir, ".venv/ok")); err != nil {
		t.Error(".venv dropped")
	}
}

// resizeFS opens a.txt with delta bytes more than its listing says.
type resizeFS struct {
	m     fstest.MapFS
	delta int
}

func (r resizeFS) Open(name string) (fs.File, error) {
	if name == "a.txt" && r.delta != 0 {
		data := r.m[name].Data
		if r.delta < 0 {
			data = data[:len(data)+r.delta]
		} else {
			data = append(append([]byte(nil), data...), strings.Repeat("+", r.delta)...)
		}
		return fstest.MapFS{"f": {Data: data}}.Open("f")
	}
	return r.m.Open(name)
}

func (r resizeFS) ReadDir(name string) ([]fs.DirEntry, error) { return r.m.ReadDir(name) }

// typeFS opens a.txt as a FIFO or a folder although it was listed as a
// regular file.
type typeFS struct {
	fstest.MapFS
	mode fs.FileMode
}

func (f typeFS) Open(name string) (fs.File, error) {
	if name == "a.txt" {
		return fstest.MapFS{"f": {Mode: f.mode}}.Open("f")
	}
	return f.MapFS.Open(name)
}

func (f typeFS) ReadDir(name string) ([]fs.DirEntry, error) { return f.MapFS.ReadDir(name) }

// TestStageSourceSizeCheck stages a source whose a.txt opens with the
// listed size, one byte less, one more, empty, or as another type: only
// the listed file is staged; anything else is ErrSourceChanged naming it,
// for a first copy and for the check of an existing one.
func TestStageSourceSizeCheck(t *testing.T) {
	listed := fstest.MapFS{"SKILL.md": {Data: []byte("s")}, "a.txt": {Data: []byte("12345")}}
	tests := []struct {
		name string
		src  fs.FS
		want string // "" means success
	}{
		{"listed size", resizeFS{listed, 0}, ""},
		{"one byte less", resizeFS{listed, -1}, "listed with 5 bytes and has 4"},
		{"one byte more", resizeFS{listed, 1}, "listed with 5 bytes and has 6"},
		{"empty", resizeFS{listed, -5}, "listed with 5 bytes and has 0"},
		{"a FIFO now", typeFS{listed, fs.ModeNamedPipe}, "not a regular file any more"},
		{"a folder now", typeFS{listed, fs.ModeDir}, "not a regular file any more"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := openTest(t, newTestManager(t, nil), "s")
			_, err := w.Stage(t.Context(), "x", tc.src)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrSourceChanged) || !strings.Contains(err.Error(), "a.txt") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("first Stage err = %v, want ErrSourceChanged naming a.txt: %s", err, tc.want)
			}
			if _, err := os.Stat(filepath.Join(w.SkillsDir(), "x")); !os.IsNotExist(err) {
				t.Errorf("a copy was staged: %v", err)
			}
			// The same mismatch when an existing copy must be repaired
			// from the source.
			stage(t, w, "x", listed)
			dir, _ := w.SkillDir("x")
			os.Remove(filepath.Join(dir, "a.txt"))
			w.st.manifests["x"].Entries["a.txt"] = entry{} // re-hash the source
			if _, err := w.Stage(t.Context(), "x", tc.src); !errors.Is(err, ErrSourceChanged) || !strings.Contains(err.Error(), "a.txt") {
				t.Errorf("repairing Stage err = %v, want ErrSourceChanged naming a.txt", err)
			}
		})
	}
}

// TestStageRestoresAfterCommand lets a real shell command poison the
// staged copy in every way at once — append to a script, replace a
// document by a link to a host file, plant a FIFO, a folder and a file,
// retarget a workspace link — and checks that the next Stage puts the
// copy back as staged, keeping the .venv the command built.
func TestStageRestoresAfterCommand(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	base := t.TempDir()
	writeFile(t, base, "host/secret", "SECRET")
	src := filepath.Join(base, "src")
	writeFile(t, src, "SKILL.md", "---\nname: demo\n---\n")
	writeFile(t, src, "scripts/run.py", "print('hi')\n")
	writeFile(t, src, "ref/doc.md", "doc\n")
	ageTree(t, src)
	w := openTest(t, newTestManager(t, &Options{Root: filepath.Join(base, "ws")}), "s")
	dir, _ := w.SkillDir("demo")
	stage(t, w, "demo", os.DirFS(src))
	want := copyTree(t, dir)
	cmd := exec.Command(sh, "-c", `set -e
echo "import os; os.system('curl evil')" >> scripts/run.py
rm ref/doc.md && ln -s "$SECRET" ref/doc.md
mkfifo pipe
mkdir -p plugins && echo x > plugins/p.py
rm out && ln -s / out
mkdir -p .venv/bin && echo venv > .venv/bin/python`)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SECRET="+filepath.Join(base, "host/secret"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("command: %v\n%s", err, out)
	}
	done := make(chan *StageResult, 1)
	go func() { done <- stage(t, w, "demo", os.DirFS(src)) }()
	var res *StageResult
	select {
	case res = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Stage hung")
	}
	if want := []string{"out", "pipe", "plugins", "ref/doc.md", "scripts/run.py"}; res.Copied || !slices.Equal(res.Restored, want) {
		t.Errorf("Stage = Copied %v, Restored %q; want %q", res.Copied, res.Restored, want)
	}
	got := copyTree(t, dir)
	if got[".venv"] != "kept" {
		t.Errorf(".venv not kept: %q", got[".venv"])
	}
	delete(got, ".venv")
	if !equalMaps(got, want) {
		t.Errorf("copy after Stage:\n%v\nwant\n%v", got, want)
	}
}
