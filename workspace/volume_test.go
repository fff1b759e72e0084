//go:build linux

package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/skillkit/skillkit/sandbox"
)

// mounted reports whether dir is a mount point.
func mounted(t *testing.T, dir string) bool {
	t.Helper()
	var a, b unix.Stat_t
	if unix.Stat(dir, &a) != nil || unix.Stat(filepath.Dir(dir), &b) != nil {
		return false
	}
	return a.Dev != b.Dev
}

func TestVolumes(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("volumes need root: an unprivileged Manager makes plain directories")
	}
	ctx := context.Background()
	t.Run("image backed", func(t *testing.T) {
		m, err := New(&Options{Root: filepath.Join(t.TempDir(), "ws"), DiskBytes: 64 << 20, DiskInodes: 2000})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.Close() })
		w := openTest(t, m, "s")
		if !mounted(t, w.Dir()) {
			t.Fatal("the workspace is not a volume")
		}
		var st unix.Statfs_t
		if err := unix.Statfs(w.Dir(), &st); err != nil || int64(st.Blocks)*st.Frsize > 64<<20 || st.Files > 2000 || st.Files == 0 {
			t.Fatalf("volume %d bytes, %d inodes (%v); want at most 64 MiB and 2000", int64(st.Blocks)*st.Frsize, st.Files, err)
		}
		writeFile(t, w.OutputDir(), "kept.txt", "x")
		// Close unmounts; the next Open mounts the same image again.
		if err := m.Close(); err != nil || mounted(t, w.Dir()) {
			t.Fatalf("Close: %v, still mounted %v", err, mounted(t, w.Dir()))
		}
		w = openTest(t, m, "s")
		if b, err := os.ReadFile(filepath.Join(w.OutputDir(), "kept.txt")); err != nil || string(b) != "x" {
			t.Fatalf("after reopening: %q, %v", b, err)
		}
		image := filepath.Join(m.MetaRoot(), "s", volumeImageName)
		if _, err := os.Stat(image); err != nil {
			t.Fatalf("image: %v", err)
		}
		if err := m.Remove(ctx, "s"); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{w.Dir(), image} {
			if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s left after Remove (%v)", p, err)
			}
		}
		if err := m.Remove(ctx, "s"); err != nil {
			t.Errorf("Remove of a removed workspace: %v", err)
		}
	})
	t.Run("in memory", func(t *testing.T) {
		m := newTestManager(t, nil)
		w := openTest(t, m, "s")
		var st unix.Statfs_t
		if err := unix.Statfs(w.Dir(), &st); err != nil || st.Type != unix.TMPFS_MAGIC {
			t.Fatalf("not a tmpfs: %v", err)
		}
		writeFile(t, w.OutputDir(), "gone.txt", "x")
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		w = openTest(t, m, "s")
		if _, err := os.Stat(filepath.Join(w.OutputDir(), "gone.txt")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("an in-memory volume kept its files after Close: %v", err)
		}
	})
	t.Run("plain directories", func(t *testing.T) {
		m := newTestManager(t, &Options{PlainDirs: true})
		w := openTest(t, m, "s")
		if mounted(t, w.Dir()) {
			t.Fatal("PlainDirs made a volume")
		}
		writeFile(t, w.OutputDir(), "f", "x")
		// The same workspace opened by a Manager that makes volumes
		// holds files but no volume: refused, saying what to do.
		m2 := newTestManager(t, &Options{Root: m.Root()})
		_, err := m2.Open(ctx, "s")
		if !errors.Is(err, sandbox.ErrNotEmpty) || !strings.Contains(err.Error(), "PlainDirs") {
			t.Fatalf("err = %v, want ErrNotEmpty naming Options.PlainDirs", err)
		}
	})
}

func TestNewTemp(t *testing.T) {
	ctx := context.Background()
	t.Setenv("TMPDIR", t.TempDir())
	// A root left by a dead process (PID 1's start time is never 1) and
	// one of a live process (this one).
	dead := filepath.Join(os.TempDir(), tempPrefix+"1-1-x")
	if err := os.MkdirAll(filepath.Join(dead, "s"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := NewTemp(ctx, &Options{Root: "/x"}); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("NewTemp with a Root: %v", err)
	}
	m, err := NewTemp(ctx, &Options{InMemoryVolumes: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dead); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the dead process's root was not swept: %v", err)
	}
	other, err := NewTemp(ctx, &Options{InMemoryVolumes: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(m.Root()); err != nil {
		t.Errorf("a live process's root was swept: %v", err)
	}
	w := openTest(t, m, "s")
	writeFile(t, w.OutputDir(), "f", "x")
	if err := m.Discard(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(m.Root()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Discard left %s (%v)", m.Root(), err)
	}
	if err := other.Discard(ctx); err != nil {
		t.Fatal(err)
	}
}
