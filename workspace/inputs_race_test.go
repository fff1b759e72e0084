//go:build linux

package workspace

import (
	"context"
	"errors"
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
)

// TestCopyInputSwapRace copies an input while one of its entries is
// swapped, with renameat2 RENAME_EXCHANGE in a loop, for a link to a
// secret outside the allowed input root, for a FIFO, or (a folder of the
// input) for a link to a folder outside; and the same for an input that
// is a single file. Each CopyInput copies the real content or fails,
// never copies the secret, and never hangs.
func TestCopyInputSwapRace(t *testing.T) {
	const public, secret = "public data\n", "SECRET shadow line\n"
	scenarios := []struct {
		name   string
		kind   string // what is swapped in: link, fifo, dirlink
		single bool   // the input is the swapped file itself
	}{
		{"file in a folder swapped for a link", "link", false},
		{"file in a folder swapped for a FIFO", "fifo", false},
		{"folder in a folder swapped for a link", "dirlink", false},
		{"input file swapped for a link", "link", true},
		{"input file swapped for a FIFO", "fifo", true},
	}
	const iterations = 150
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			base := t.TempDir()
			writeFile(t, base, "secret", secret)
			writeFile(t, base, "outdir/data.txt", secret)
			allowed := filepath.Join(base, "allowed")
			writeFile(t, allowed, "set/data.txt", public)
			writeFile(t, allowed, "set/sub/data.txt", public)
			dir, a, b := filepath.Join(allowed, "set"), "data.txt", ".swap"
			input := filepath.Join(allowed, "set")
			if sc.single {
				input = filepath.Join(dir, a)
			}
			switch sc.kind {
			case "link":
				mustDo(t, os.Symlink(filepath.Join(base, "secret"), filepath.Join(dir, b)))
			case "fifo":
				if err := syscall.Mkfifo(filepath.Join(dir, b), 0o644); err != nil {
					t.Skipf("mkfifo: %v", err)
				}
			case "dirlink":
				a = "sub"
				mustDo(t, os.Symlink(filepath.Join(base, "outdir"), filepath.Join(dir, b)))
			}
			w := openTest(t, newTestManager(t, &Options{InputRoots: []string{allowed}}), "s")
			stop := swapLoop(t, dir, a, b)
			var copied, refused int
			for i := range iterations {
				done := make(chan error, 1)
				go func() { _, err := w.CopyInput(context.Background(), input, "in"); done <- err }()
				var err error
				select {
				case err = <-done:
				case <-time.After(10 * time.Second):
					t.Fatalf("run %d: CopyInput hung", i)
				}
				if err != nil {
					// A refusal says why: the input changed while it was
					// copied, or the input itself is (now) a link out.
					if !errors.Is(err, ErrInputChanged) && !errors.Is(err, ErrNotAllowed) {
						t.Fatalf("run %d: %v; want ErrInputChanged or ErrNotAllowed", i, err)
					}
					named := strings.Contains(err.Error(), filepath.Join(dir, a)) || strings.Contains(err.Error(), filepath.Join(dir, b))
					if errors.Is(err, ErrInputChanged) && !named {
						t.Fatalf("run %d: %v names neither swapped entry", i, err)
					}
					refused++
					continue
				}
				copied++
				filepath.WalkDir(filepath.Join(w.InputsDir(), "in"), func(p string, d fs.DirEntry, err error) error {
					if err != nil || !d.Type().IsRegular() {
						return err
					}
					data, err := os.ReadFile(p)
					if err != nil {
						t.Fatal(err)
					}
					if strings.Contains(string(data), "SECRET") {
						t.Fatalf("run %d copied the secret into %s", i, p)
					}
					if string(data) != public {
						t.Fatalf("run %d: %s holds %q, want %q", i, p, data, public)
					}
					return nil
				})
			}
			t.Logf("%d copies: %d copied, %d refused; %d swaps", iterations, copied, refused, stop())
		})
	}
}

// swapLoop swaps the names a and b of dir, with renameat2
// RENAME_EXCHANGE, until the returned function is called; that returns
// the number of swaps.
func swapLoop(t *testing.T, dir, a, b string) func() int64 {
	t.Helper()
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	fd := int(d.Fd())
	// Two swaps leave the names as they were; the first proves the call.
	for range 2 {
		if err := unix.Renameat2(fd, a, fd, b, unix.RENAME_EXCHANGE); err != nil {
			d.Close()
			t.Skipf("renameat2 RENAME_EXCHANGE: %v", err)
		}
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

// TestCopyInputReadsListedBytes copies a file that yields more bytes than
// its stat says (a /proc file, listed with size 0): exactly the listed
// bytes are read, one more shows the change, and CopyInput fails with an
// error wrapping ErrInputChanged that names the file.
func TestCopyInputReadsListedBytes(t *testing.T) {
	const root = "/proc/self"
	if info, err := os.Stat(filepath.Join(root, "status")); err != nil || info.Size() != 0 {
		t.Skipf("no /proc/self/status of size 0 to read (%v)", err)
	}
	w := openTest(t, newTestManager(t, &Options{InputRoots: []string{root}}), "s")
	_, err := w.CopyInput(context.Background(), filepath.Join(root, "status"), "")
	want := filepath.Join(root, "status") + " was listed with 0 bytes and 1 were read"
	if !errors.Is(err, ErrInputChanged) || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v; want ErrInputChanged saying %q", err, want)
	}
	if _, err := os.Lstat(filepath.Join(w.InputsDir(), "status")); !os.IsNotExist(err) {
		t.Errorf("a partial copy was left: %v", err)
	}
}
