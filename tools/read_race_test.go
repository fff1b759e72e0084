//go:build linux

package tools

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/source"
)

// TestReadSwapRace calls skill_read while the file it reads is swapped,
// with renameat2 RENAME_EXCHANGE in a loop and the folder's mtime put
// back after each swap, for a link to a secret outside the skill and for
// a FIFO: every call returns the real content or an error, never the
// secret, and none hangs.
func TestReadSwapRace(t *testing.T) {
	const public, secret = "# Guide\npublic\n", "root:$6$SECRET-shadow-line:19000:0:99999:7:::\n"
	for _, kind := range []string{"link", "fifo"} {
		t.Run(kind, func(t *testing.T) {
			base := t.TempDir()
			root := filepath.Join(base, "skills")
			writeFile(t, filepath.Join(base, "shadow"), []byte(secret))
			writeFile(t, filepath.Join(root, "s", "SKILL.md"), skillMD("s", "", "Read references/guide.md.\n"))
			refs := filepath.Join(root, "s", "references")
			writeFile(t, filepath.Join(refs, "guide.md"), []byte(public))
			swap := filepath.Join(refs, ".swap")
			if kind == "link" {
				if err := os.Symlink(filepath.Join(base, "shadow"), swap); err != nil {
					t.Fatal(err)
				}
			} else if err := syscall.Mkfifo(swap, 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			src, err := source.Dir(root, "project", 0)
			if err != nil {
				t.Fatal(err)
			}
			reg, err := registry.New(t.Context(), []source.Source{src}, nil)
			if err != nil {
				t.Fatal(err)
			}
			c := Call{Args: []byte(`{"skill":"s","path":"references/guide.md"}`), Skills: reg.Snapshot(), State: state{"s": nil}}
			if r := run(t, Read(), c); r.IsError || r.Text != public {
				t.Fatalf("before the race: %+v", r)
			}
			stop := swapLoop(t, refs, "guide.md", ".swap")
			var ok, refused int
			for range 2000 {
				done := make(chan Result, 1)
				go func() { done <- run(t, Read(), c) }()
				var r Result
				select {
				case r = <-done:
				case <-time.After(10 * time.Second):
					t.Fatal("skill_read hung")
				}
				switch {
				case strings.Contains(r.Text, "SECRET"):
					t.Fatalf("skill_read returned the secret: %q", r.Text)
				case r.IsError:
					refused++
				case r.Text == public:
					ok++
				default:
					t.Fatalf("skill_read returned %q", r.Text)
				}
			}
			t.Logf("2000 calls: %d real content, %d refused; %d swaps", ok, refused, stop())
		})
	}
}

// swapLoop swaps names a and b of dir until the returned function is
// called, which returns the number of swaps; after each swap it puts the
// folder's modification time back.
func swapLoop(t *testing.T, dir, a, b string) func() int64 {
	t.Helper()
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	fd := int(d.Fd())
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		t.Fatal(err)
	}
	if err := unix.Renameat2(fd, a, fd, b, unix.RENAME_EXCHANGE); err != nil {
		d.Close()
		t.Skipf("renameat2 RENAME_EXCHANGE: %v", err)
	}
	times := []unix.Timespec{st.Atim, st.Mtim}
	var stop atomic.Bool
	var n atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		defer d.Close()
		for !stop.Load() {
			if unix.Renameat2(fd, a, fd, b, unix.RENAME_EXCHANGE) == nil {
				n.Add(1)
				_ = unix.UtimesNanoAt(fd, ".", times, 0)
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
