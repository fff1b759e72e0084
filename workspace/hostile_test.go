package workspace

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/fstest"
	"time"
)

// snapshot records every entry under dir: type, mode, size, mtime and, for
// files, content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		v := fmt.Sprintf("%v %d %d", info.Mode(), info.Size(), info.ModTime().UnixNano())
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += " " + string(b)
		}
		out[p] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestHostileLinksInWorkspace plants symbolic links to paths outside the
// workspace in place of every file and directory the host touches (and of
// the old in-workspace metadata), the way a sandboxed command could, then
// runs every host operation and checks that nothing outside the workspace
// and metadata roots was created or modified.
func TestHostileLinksInWorkspace(t *testing.T) {
	scenarios := []struct {
		name string
		// links maps a path in the workspace to a target in the outside
		// directory: "dir" (existing directory), "file" (existing file) or
		// "missing" (a path that does not exist).
		links map[string]string
	}{
		{"old metadata", map[string]string{
			".skillkit/used": "missing", ".skillkit/lock": "file",
			".skillkit/staged": "dir", ".skillkit/tmp": "dir",
			".meta": "dir", "sweep.lock": "file",
		}},
		{"metadata folder", map[string]string{".skillkit": "dir"}},
		{"top directories", map[string]string{
			"skills": "dir", "runs": "dir", "out": "dir", "work": "dir",
		}},
		{"inputs", map[string]string{"work/inputs": "dir"}},
		{"input file", map[string]string{"work/inputs/in.txt": "file"}},
		{"skill copies", map[string]string{"skills/demo": "dir", "skills/fresh": "dir"}},
		{"inside a skill copy", map[string]string{
			"skills/demo/out": "dir", "skills/demo/work": "dir", "skills/demo/inputs": "dir",
			"skills/demo/SKILL.md": "file", "skills/demo/scripts": "dir",
		}},
		{"file in a skill copy", map[string]string{"skills/demo/scripts/run.sh": "missing"}},
		{"outputs and runs", map[string]string{
			"out/a.txt": "file", "out/sub": "dir", "runs/r": "dir", "work/x": "missing",
		}},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			ctx := context.Background()
			base := t.TempDir()
			outside := filepath.Join(base, "outside")
			inputs := filepath.Join(base, "inputs")
			writeFile(t, inputs, "in.txt", "input")
			opts := &Options{Root: filepath.Join(base, "ws"), MetaRoot: filepath.Join(base, "meta"),
				TTL: time.Hour, InputRoots: []string{inputs}}
			m := newTestManager(t, opts)
			w := openTest(t, m, "s")
			skill := fstest.MapFS{
				"SKILL.md":       {Data: []byte("v1"), ModTime: time.Unix(1e9, 0)},
				"scripts/run.sh": {Data: []byte("echo"), Mode: 0o755, ModTime: time.Unix(1e9, 0)},
			}
			stage(t, w, "demo", skill)

			// Outside targets, aged so that any touch shows.
			old := time.Now().Add(-48 * time.Hour)
			i := 0
			for p, kind := range sc.links {
				i++
				target := filepath.Join(outside, fmt.Sprintf("%s-%d", kind, i))
				switch kind {
				case "dir":
					if err := os.MkdirAll(target, 0o755); err != nil {
						t.Fatal(err)
					}
				case "file":
					writeFile(t, outside, filepath.Base(target), "outside")
				}
				full := filepath.Join(w.Dir(), p)
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.RemoveAll(full); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(target, full); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.MkdirAll(outside, 0o755); err != nil {
				t.Fatal(err)
			}
			_ = filepath.WalkDir(outside, func(p string, d fs.DirEntry, err error) error {
				return os.Chtimes(p, old, old)
			})
			before := snapshot(t, outside)

			// Every host operation; errors are allowed (a planted link may
			// make one fail), writes outside are not.
			m2 := newTestManager(t, opts) // a second Manager has no in-memory manifests
			logErr := func(op string, err error) {
				if err != nil {
					t.Logf("%s: %v", op, err)
				}
			}
			ops := func(w *Workspace, tag string) {
				_, err := w.Stage(ctx, "demo", skill) // unchanged
				logErr("Stage unchanged", err)
				_, err = w.Stage(ctx, "fresh", skill) // first
				logErr("Stage first", err)
				changed := fstest.MapFS{"SKILL.md": {Data: []byte("v2 " + tag)}}
				_, err = w.Stage(ctx, "demo", changed) // changed
				logErr("Stage changed", err)
				_, err = w.NewRun(ctx, "demo")
				logErr("NewRun", err)
				_, err = w.NewRun(ctx, "")
				logErr("NewRun without skill", err)
				col, err := w.Collect(ctx, []string{"**"}, nil)
				logErr("Collect", err)
				if err == nil {
					for _, f := range col.Files {
						if f.Content == "outside" {
							t.Errorf("Collect returned outside content via %s", f.Path)
						}
					}
				}
				_, err = w.CopyInput(ctx, filepath.Join(inputs, "in.txt"), "")
				logErr("CopyInput", err)
				// Lock last: it repairs the layout.
				if unlock, err := w.Lock(ctx); err == nil {
					unlock()
				} else {
					logErr("Lock", err)
				}
			}
			// First on the open handle, with the links as planted (Stage,
			// NewRun, Collect and CopyInput do not repair the layout), then
			// after Open, by this Manager and by one without in-memory
			// manifests.
			ops(w, "handle")
			for i, mgr := range []*Manager{m, m2} {
				w, err := mgr.Open(ctx, "s")
				if err != nil {
					t.Errorf("Open: %v", err)
					continue
				}
				ops(w, fmt.Sprint(i))
			}
			stale := time.Now().Add(-2 * time.Hour)
			if err := os.Chtimes(filepath.Join(m.MetaRoot(), "s", usedName), stale, stale); err != nil {
				t.Fatal(err)
			}
			removed, err := m.Sweep(ctx)
			if err != nil || !slices.Equal(removed, []string{"s"}) {
				t.Errorf("Sweep = %v, %v; want [s]", removed, err)
			}

			after := snapshot(t, outside)
			for p, v := range after {
				if before[p] != v {
					t.Errorf("outside %s: %q, was %q", p, v, before[p])
				}
			}
			for p := range before {
				if _, ok := after[p]; !ok {
					t.Errorf("outside %s removed", p)
				}
			}
			entries, _ := os.ReadDir(base)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if want := []string{"inputs", "meta", "outside", "ws"}; !slices.Equal(names, want) {
				t.Errorf("entries next to the roots = %v, want %v", names, want)
			}
		})
	}
}
