//go:build linux

package registry

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skillkit/skillkit/source"
)

// TestReadFileSwapRace reads a document of a host skill (ReadFile and
// DocText) while the file is swapped, with renameat2 RENAME_EXCHANGE in a
// loop, for a link to a secret outside the skill, for a FIFO, and while
// its folder is swapped for a link to a folder outside — each swap
// followed by restoring the folder's mtime, so that only the open itself
// can tell: no read returns the secret and none hangs.
func TestReadFileSwapRace(t *testing.T) {
	const public, secret = "public document\n", "SECRET shadow line\n"
	for _, kind := range []string{"link", "fifo", "folder link"} {
		t.Run(kind, func(t *testing.T) {
			base := t.TempDir()
			root := filepath.Join(base, "root")
			writeTree(t, base, map[string]string{
				"secret":                 secret,
				"outdir/guide.md":        secret,
				"root/s/SKILL.md":        skillMD("s", "d"),
				"root/s/refs/guide.md":   public,
				"root/s/other/keep.txt":  "",
				"root/s/refs/.keep.txt":  "",
				"root/s/notes/readme.md": public,
			})
			dir, a, b, doc := filepath.Join(root, "s", "refs"), "guide.md", ".swap", "refs/guide.md"
			switch kind {
			case "link":
				if err := os.Symlink(filepath.Join(base, "secret"), filepath.Join(dir, b)); err != nil {
					t.Fatal(err)
				}
			case "fifo":
				if err := syscall.Mkfifo(filepath.Join(dir, b), 0o644); err != nil {
					t.Skipf("mkfifo: %v", err)
				}
			case "folder link":
				dir, a, b = filepath.Join(root, "s"), "refs", ".swap"
				if err := os.Symlink(filepath.Join(base, "outdir"), filepath.Join(dir, b)); err != nil {
					t.Fatal(err)
				}
			}
			src, err := source.Dir(root, "", 0)
			if err != nil {
				t.Fatal(err)
			}
			s := newReg(t, []source.Source{src}, nil).Snapshot()
			ctx := context.Background()
			if _, _, err := s.Manifest(ctx, "s"); err != nil {
				t.Fatal(err)
			}
			stop := exchangeLoop(t, dir, a, b)
			var ok, refused int
			for i := range 2000 {
				done := make(chan struct{})
				var got string
				go func() {
					defer close(done)
					if i%2 == 0 {
						var data []byte
						data, err = s.ReadFile(ctx, "s", doc)
						got = string(data)
					} else {
						got, err = s.DocText(ctx, "s", doc)
					}
				}()
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					t.Fatal("read hung")
				}
				switch {
				case err != nil:
					refused++
				case got == public:
					ok++
				default:
					t.Fatalf("read returned %q", got)
				}
			}
			t.Logf("2000 reads: %d real content, %d refused; %d swaps", ok, refused, stop())
		})
	}
}

// exchangeLoop swaps names a and b of dir until the returned function is
// called, which returns the number of swaps. After each swap it puts the
// folder's modification time back.
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
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		t.Fatal(err)
	}
	mtime := []unix.Timespec{st.Atim, st.Mtim}
	var stop atomic.Bool
	var n atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		defer d.Close()
		for !stop.Load() {
			if unix.Renameat2(fd, a, fd, b, unix.RENAME_EXCHANGE) == nil {
				n.Add(1)
				_ = unix.UtimesNanoAt(fd, ".", mtime, 0)
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
