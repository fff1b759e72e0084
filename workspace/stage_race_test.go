//go:build linux

package workspace_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skillkit/skillkit/source"
	"github.com/skillkit/skillkit/workspace"
)

// TestStageSwapRace stages a skill while one of its files is swapped,
// with renameat2 RENAME_EXCHANGE in a loop, for a link to a secret
// outside the skill, for a FIFO, and while its folder is swapped for a
// link to a folder outside: each Stage (a first copy, under a new name
// each time) copies the real content or fails, never copies the secret,
// and never hangs. The source is read as the tools read it, through the
// file system of source.Dir; with os.DirFS the swap of the file itself is
// still caught (the opened file is not the listed one).
func TestStageSwapRace(t *testing.T) {
	const public, secret = "public script\n", "SECRET shadow line\n"
	scenarios := []struct {
		name       string
		kind       string // what is swapped in: link, fifo, dirlink
		dirFS      bool   // read the source through os.DirFS
		iterations int
	}{
		{"file swapped for a link", "link", false, 150},
		{"file swapped for a FIFO", "fifo", false, 150},
		{"folder swapped for a link", "dirlink", false, 150},
		{"os.DirFS, file swapped for a link", "link", true, 150},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			base := t.TempDir()
			writeFile(t, filepath.Join(base, "secret"), secret)
			writeFile(t, filepath.Join(base, "outdir", "run.sh"), secret)
			root := filepath.Join(base, "skills")
			skillDir := filepath.Join(root, "swap")
			writeFile(t, filepath.Join(skillDir, "SKILL.md"), "---\nname: swap\ndescription: d\n---\n")
			writeFile(t, filepath.Join(skillDir, "scripts", "run.sh"), public)
			dir, a, b := filepath.Join(skillDir, "scripts"), "run.sh", ".swap"
			switch sc.kind {
			case "link":
				mustDo(t, os.Symlink(filepath.Join(base, "secret"), filepath.Join(dir, b)))
			case "fifo":
				if err := syscall.Mkfifo(filepath.Join(dir, b), 0o644); err != nil {
					t.Skipf("mkfifo: %v", err)
				}
			case "dirlink":
				dir, a = skillDir, "scripts"
				mustDo(t, os.Symlink(filepath.Join(base, "outdir"), filepath.Join(dir, b)))
			}
			var fsys fs.FS = os.DirFS(skillDir)
			if !sc.dirFS {
				src, err := source.Dir(root, "", 0)
				if err != nil {
					t.Fatal(err)
				}
				if fsys, err = fs.Sub(src.FS, "swap"); err != nil {
					t.Fatal(err)
				}
			}
			m, err := workspace.New(&workspace.Options{Root: filepath.Join(base, "ws"), InMemoryVolumes: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = m.Close() })
			w, err := m.Open(context.Background(), "s")
			if err != nil {
				t.Fatal(err)
			}
			stop := exchangeLoop(t, dir, a, b)
			var copied, refused int
			for i := range sc.iterations {
				name := fmt.Sprintf("swap-%d", i)
				done := make(chan error, 1)
				go func() { _, err := w.Stage(context.Background(), name, fsys); done <- err }()
				select {
				case err = <-done:
				case <-time.After(10 * time.Second):
					t.Fatal("Stage hung")
				}
				if err != nil {
					refused++
					continue
				}
				copied++
				staged, _ := w.SkillDir(name)
				filepath.WalkDir(staged, func(p string, d fs.DirEntry, err error) error {
					if err != nil || !d.Type().IsRegular() {
						return err
					}
					data, err := os.ReadFile(p)
					if err == nil && strings.Contains(string(data), "SECRET") {
						t.Fatalf("run %d copied the secret into %s", i, p)
					}
					return nil
				})
			}
			t.Logf("%d stages: %d copied, %d refused; %d swaps", sc.iterations, copied, refused, stop())
		})
	}
}

func writeFile(t *testing.T, p, data string) {
	t.Helper()
	mustDo(t, os.MkdirAll(filepath.Dir(p), 0o755))
	mustDo(t, os.WriteFile(p, []byte(data), 0o644))
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// exchangeLoop swaps names a and b of dir until the returned function is
// called, which returns the number of swaps.
func exchangeLoop(t *testing.T, dir, a, b string) func() int64 {
	t.Helper()
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	fd := int(d.Fd())
	if err := unix.Renameat2(fd, a, fd, b, unix.RENAME_EXCHANGE); err != nil {
		d.Close()
		t.Skipf("renameat2 RENAME_EXCHANGE: %v", err)
	}
	var stop atomic.Bool
	var n atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		defer d.Close()
		for !stop.Load() {
			if unix.Renameat2(fd, a, fd, b, unix.RENAME_EXCHANGE) == nil {
				n.Add(1)
			}
		}
	})
	var once sync.Once
	halt := func() int64 {
		once.Do(func() { stop.Store(true); wg.Wait() })
		return n.Load()
	}
	t.Cleanup(func() { halt() })
	return halt
}
