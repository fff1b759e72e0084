package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMetaRootOption(t *testing.T) {
	tests := []struct {
		name string
		meta string // relative to a fresh base directory; Root is base/ws
		want string // substring of the error; "" means success
	}{
		{"default", "", ""},
		{"sibling", "meta", ""},
		{"hidden inside root", "ws/.records", ""},
		{"root itself", "ws", "is Options.Root"},
		{"inside a workspace", "ws/s1/meta", "lies inside workspace directory"},
		{"workspace dir", "ws/s1", "lies inside workspace directory"},
		{"contains root", ".", "contains Options.Root"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			root := filepath.Join(base, "ws")
			meta := ""
			if tt.meta != "" {
				meta = filepath.Join(base, tt.meta)
			}
			m, err := New(&Options{Root: root, MetaRoot: meta, PlainDirs: true})
			if tt.want != "" {
				if !errors.Is(err, ErrInvalidOption) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "Options.MetaRoot") {
					t.Fatalf("err = %v, want ErrInvalidOption naming Options.MetaRoot and %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := meta
			if want == "" {
				want = filepath.Join(root, ".meta")
			}
			if m.MetaRoot() != want {
				t.Errorf("MetaRoot() = %s, want %s", m.MetaRoot(), want)
			}
			w := openTest(t, m, "s1")
			if _, err := os.Stat(filepath.Join(want, "s1", usedName)); err != nil {
				t.Errorf("no used marker in the metadata root: %v", err)
			}
			entries, _ := os.ReadDir(w.Dir())
			for _, e := range entries {
				switch e.Name() {
				case "skills", "work", "out", "runs":
				default:
					t.Errorf("unexpected entry %q in the workspace directory", e.Name())
				}
			}
		})
	}
}

func TestOpenRefusesForeignDirectory(t *testing.T) {
	root := t.TempDir()
	m := newTestManager(t, &Options{Root: root, MetaRoot: filepath.Join(t.TempDir(), "meta")})
	ctx := context.Background()
	// A user's folder with content is never adopted.
	writeFile(t, root, "mine/notes.txt", "keep me")
	if _, err := m.Open(ctx, "mine"); !errors.Is(err, ErrNotWorkspace) || !strings.Contains(err.Error(), filepath.Join(root, "mine")) {
		t.Errorf("Open(non-empty foreign dir) err = %v, want ErrNotWorkspace naming the directory", err)
	}
	if known, err := m.Known("mine"); err != nil || known {
		t.Errorf("Known(mine) = %v, %v; want false", known, err)
	}
	if got := readFile(t, filepath.Join(root, "mine", "notes.txt")); got != "keep me" {
		t.Errorf("foreign file changed: %q", got)
	}
	// A file is refused as well.
	writeFile(t, root, "afile", "x")
	if _, err := m.Open(ctx, "afile"); !errors.Is(err, ErrNotWorkspace) {
		t.Errorf("Open(file) err = %v, want ErrNotWorkspace", err)
	}
	// An empty directory is adopted, and from then on it is known.
	if err := os.Mkdir(filepath.Join(root, "empty"), 0o700); err != nil {
		t.Fatal(err)
	}
	w := openTest(t, m, "empty")
	writeFile(t, w.OutputDir(), "result.txt", "r")
	if known, err := m.Known("empty"); err != nil || !known {
		t.Errorf("Known(empty) = %v, %v; want true", known, err)
	}
	openTest(t, m, "empty") // reopening a known, non-empty workspace works
	if _, err := m.Known("../x"); !errors.Is(err, ErrInvalidName) {
		t.Errorf("Known(../x) err = %v, want ErrInvalidName", err)
	}
}

func TestNoSweep(t *testing.T) {
	const ttl = time.Hour
	m := newTestManager(t, &Options{TTL: ttl, NoSweep: true})
	stale := openTest(t, m, "stale")
	old := time.Now().Add(-10 * ttl)
	if err := os.Chtimes(filepath.Join(m.MetaRoot(), stale.ID(), usedName), old, old); err != nil {
		t.Fatal(err)
	}
	// Open never sweeps, and writes no sweep stamp.
	openTest(t, m, "other")
	if _, err := os.Stat(stale.Dir()); err != nil {
		t.Errorf("NoSweep: stale workspace removed by Open: %v", err)
	}
	if _, err := os.Stat(filepath.Join(m.MetaRoot(), sweepStampName)); !os.IsNotExist(err) {
		t.Errorf("NoSweep: sweep stamp written (%v)", err)
	}
	removed, err := m.Sweep(context.Background())
	if !errors.Is(err, ErrSweepDisabled) || !strings.Contains(err.Error(), "NoSweep") || removed != nil {
		t.Errorf("Sweep = %v, %v; want ErrSweepDisabled naming NoSweep", removed, err)
	}
	if _, err := os.Stat(stale.Dir()); err != nil {
		t.Errorf("NoSweep: stale workspace removed: %v", err)
	}
}

func TestSweepRemovesRecord(t *testing.T) {
	const ttl = time.Hour
	m := newTestManager(t, &Options{TTL: ttl})
	w := openTest(t, m, "s")
	old := time.Now().Add(-2 * ttl)
	if err := os.Chtimes(filepath.Join(m.MetaRoot(), "s", usedName), old, old); err != nil {
		t.Fatal(err)
	}
	// A directory whose record is gone is not a workspace any more.
	orphan := openTest(t, m, "orphan")
	writeFile(t, orphan.OutputDir(), "f", "x")
	if err := os.RemoveAll(filepath.Join(m.MetaRoot(), "orphan")); err != nil {
		t.Fatal(err)
	}
	removed, err := m.Sweep(context.Background())
	if err != nil || len(removed) != 1 || removed[0] != "s" {
		t.Fatalf("Sweep = %v, %v; want [s]", removed, err)
	}
	for _, p := range []string{w.Dir(), filepath.Join(m.MetaRoot(), "s")} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s not removed (%v)", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(orphan.OutputDir(), "f")); err != nil {
		t.Errorf("directory without a record was touched: %v", err)
	}
	for _, dir := range []string{m.Root(), m.MetaRoot()} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if isTrash(e.Name()) {
				t.Errorf("trash left in %s: %s", dir, e.Name())
			}
		}
	}
}
