//go:build linux

package skill_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/source"
)

// TestReadManifestSwapRace lists and hashes a skill of a host folder
// (source.Dir) while one of its files is swapped, with renameat2
// RENAME_EXCHANGE in a loop, for a link to a secret outside the skill and
// for a FIFO: no manifest ever holds the secret's digest, and no call
// hangs.
func TestReadManifestSwapRace(t *testing.T) {
	const public, secret = "public\n", "SECRET shadow line\n"
	for _, kind := range []string{"link", "fifo"} {
		t.Run(kind, func(t *testing.T) {
			base := t.TempDir()
			root := filepath.Join(base, "skills", "s")
			write(t, filepath.Join(base, "secret"), secret)
			write(t, filepath.Join(root, "SKILL.md"), "---\nname: s\ndescription: d\n---\n")
			write(t, filepath.Join(root, "a.md"), public)
			swap := filepath.Join(root, ".swap")
			if kind == "link" {
				if err := os.Symlink(filepath.Join(base, "secret"), swap); err != nil {
					t.Fatal(err)
				}
			} else if err := syscall.Mkfifo(swap, 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			src, err := source.Dir(filepath.Join(base, "skills"), "", 0)
			if err != nil {
				t.Fatal(err)
			}
			stop := exchangeLoop(t, root, "a.md", ".swap")
			secretSum := sha256.Sum256([]byte(secret))
			var ok, failed int
			for range 1000 {
				done := make(chan struct{})
				var m *skill.Manifest
				go func() {
					defer close(done)
					m, _, err = skill.ReadManifest(context.Background(), src.FS, "s", skill.ManifestOptions{Hash: true})
				}()
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					t.Fatal("ReadManifest hung")
				}
				if err != nil {
					failed++
					continue
				}
				ok++
				for _, f := range m.Files {
					if f.SHA256 == hex.EncodeToString(secretSum[:]) {
						t.Fatalf("manifest holds the secret's digest as %s", f.Path)
					}
				}
			}
			swaps := stop()
			t.Logf("1000 listings: %d complete, %d refused; %d swaps", ok, failed, swaps)
		})
	}
}

func write(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
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
