//go:build linux

package source

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skillkit/skillkit/skill"
)

// hostModes runs a test with openat2 and with the element-by-element
// fallback.
var hostModes = []struct {
	name string
	fs   func(t *testing.T, root string) fs.FS
}{
	{"openat2", func(t *testing.T, root string) fs.FS { return dirFSOf(t, root) }},
	{"walk", func(t *testing.T, root string) fs.FS { return walkFS(dirFSOf(t, root)) }},
}

func dirFSOf(t *testing.T, root string) fs.FS {
	t.Helper()
	src, err := Dir(root, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	return src.FS
}

// TestHostFSConformance runs testing/fstest over a tree without links.
func TestHostFSConformance(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"SKILL.md": skillMD("root"), "a/b/c.txt": "c", "a/d.md": "d", "empty.txt": "",
	})
	if err := os.Mkdir(filepath.Join(root, "e"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, m := range hostModes {
		t.Run(m.name, func(t *testing.T) {
			if err := fstest.TestFS(m.fs(t, root), "SKILL.md", "a/b/c.txt", "a/d.md", "empty.txt", "e"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestHostFSReadDirStat checks ReadDirStat, which a skill's listing uses:
// the entries ReadDir gives and the folder's own stat, from one open
// folder, without following a link at the end of the path or on its
// way, and only for folders.
func TestHostFSReadDirStat(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"s/SKILL.md": skillMD("s"), "s/b.md": "b", "s/a/x.md": "x", "f.txt": "f"})
	if err := os.Symlink("s", filepath.Join(root, "link")); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	want, err := os.Stat(filepath.Join(root, "s"))
	if err != nil {
		t.Fatal(err)
	}
	type dirStat interface {
		ReadDirStat(string) (fs.FileInfo, []fs.DirEntry, error)
	}
	for _, m := range hostModes {
		t.Run(m.name, func(t *testing.T) {
			fsys := m.fs(t, root)
			info, entries, err := fsys.(dirStat).ReadDirStat("s")
			if err != nil {
				t.Fatal(err)
			}
			if !info.IsDir() || !info.ModTime().Equal(want.ModTime()) || info.Name() != "s" {
				t.Errorf("stat = %v %v %q; want the folder's", info.Mode(), info.ModTime(), info.Name())
			}
			listed, err := fs.ReadDir(fsys, "s")
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != len(listed) {
				t.Fatalf("ReadDirStat lists %v, ReadDir %v", entries, listed)
			}
			for i := range entries {
				a, _ := entries[i].Info()
				b, _ := listed[i].Info()
				if entries[i].Name() != listed[i].Name() || a.Size() != b.Size() || a.Mode() != b.Mode() {
					t.Errorf("entry %d: %v, ReadDir has %v", i, entries[i], listed[i])
				}
			}
			for _, bad := range []string{"link", "link/a", "f.txt", "missing", "../s"} {
				if _, _, err := fsys.(dirStat).ReadDirStat(bad); err == nil {
					t.Errorf("ReadDirStat(%q) succeeded; want an error", bad)
				}
			}
		})
	}
}

// TestHostFSNoFollow checks every method on links at the end of a path
// and on its way, on special files, and on paths that are not valid.
func TestHostFSNoFollow(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	writeTree(t, base, map[string]string{
		"secret.txt":     "secret",
		"outdir/x.txt":   "secret",
		"root/file.txt":  "file",
		"root/sub/in.md": "in",
	})
	for link, target := range map[string]string{
		"root/inlink.txt": "file.txt",
		"root/outlink":    filepath.Join(base, "secret.txt"),
		"root/dirlink":    "sub",
		"root/outdirlink": filepath.Join(base, "outdir"),
	} {
		if err := os.Symlink(target, filepath.Join(base, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, m := range hostModes {
		t.Run(m.name, func(t *testing.T) {
			fsys := m.fs(t, root)
			read := func(name string) (string, error) {
				b, err := fs.ReadFile(fsys, name)
				return string(b), err
			}
			if got, err := read("file.txt"); err != nil || got != "file" {
				t.Errorf("file.txt = %q, %v", got, err)
			}
			if got, err := read("sub/in.md"); err != nil || got != "in" {
				t.Errorf("sub/in.md = %q, %v", got, err)
			}
			for _, name := range []string{"inlink.txt", "outlink", "dirlink/in.md", "outdirlink/x.txt"} {
				if got, err := read(name); !errors.Is(err, errSymlinkInPath) {
					t.Errorf("ReadFile(%s) = %q, %v; want the link refused", name, got, err)
				}
				if _, err := fs.Stat(fsys, name); !errors.Is(err, errSymlinkInPath) {
					t.Errorf("Stat(%s) = %v; want the link refused", name, err)
				}
			}
			done := make(chan error, 1)
			go func() { _, err := fsys.Open("fifo"); done <- err }()
			select {
			case err := <-done:
				if !errors.Is(err, errNotRegular) || !strings.Contains(err.Error(), "FIFO") {
					t.Errorf("Open(fifo) = %v, want a refusal naming the FIFO", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Open of a FIFO blocked")
			}
			for _, name := range []string{"../secret.txt", "/etc/passwd", "sub/../file.txt", ""} {
				if _, err := fsys.Open(name); !errors.Is(err, fs.ErrInvalid) {
					t.Errorf("Open(%q) = %v, want fs.ErrInvalid", name, err)
				}
			}
			// Lstat and ReadLink see links without following them.
			if info, err := fs.Lstat(fsys, "outlink"); err != nil || info.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("Lstat(outlink) = %v, %v", info, err)
			}
			if target, err := fs.ReadLink(fsys, "dirlink"); err != nil || target != "sub" {
				t.Errorf("ReadLink(dirlink) = %q, %v", target, err)
			}
			if _, err := fs.Lstat(fsys, "dirlink/in.md"); !errors.Is(err, errSymlinkInPath) {
				t.Errorf("Lstat through a link = %v; want the link refused", err)
			}
			// Listing reports links as links, with their own stat.
			entries, err := fs.ReadDir(fsys, ".")
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				info, _ := e.Info()
				if e.Name() == "outdirlink" && (e.Type()&fs.ModeSymlink == 0 || info.Mode()&fs.ModeSymlink == 0) {
					t.Errorf("outdirlink listed as %v / %v", e.Type(), info.Mode())
				}
			}
			// Sub stays link-free, fs.Sub uses it.
			sub, err := fs.Sub(fsys, "sub")
			if err != nil {
				t.Fatal(err)
			}
			if got, err := fs.ReadFile(sub, "in.md"); err != nil || string(got) != "in" {
				t.Errorf("Sub(sub)/in.md = %q, %v", got, err)
			}
			if _, err := fs.Sub(fsys, "dirlink"); err != nil {
				t.Fatal(err)
			}
			viaLink, _ := fs.Sub(fsys, "dirlink")
			if _, err := fs.ReadFile(viaLink, "in.md"); !errors.Is(err, errSymlinkInPath) {
				t.Errorf("Sub through a link: %v; want the link refused", err)
			}
		})
	}
}

// TestHostFSUnclosedFile checks that a file dropped without Close gives
// its descriptor back once collected.
func TestHostFSUnclosedFile(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.txt": "a"})
	fsys := dirFSOf(t, root)
	f, err := fsys.Open("a.txt")
	if err != nil {
		t.Fatal(err)
	}
	fd := f.(*hostFile).fd
	f = nil
	for range 20 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); errors.Is(err, unix.EBADF) {
			return
		}
	}
	t.Errorf("descriptor %d of an unclosed file still open after GC", fd)
}

// swapper exchanges two names in one folder with renameat2
// RENAME_EXCHANGE until stopped, as a hostile process racing the reader
// would.
type swapper struct {
	stop  atomic.Bool
	swaps atomic.Int64
	wg    sync.WaitGroup
}

func startSwapper(t *testing.T, dir, a, b string) *swapper {
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
	s := &swapper{}
	s.wg.Go(func() {
		defer d.Close()
		for !s.stop.Load() {
			if unix.Renameat2(fd, a, fd, b, unix.RENAME_EXCHANGE) == nil {
				s.swaps.Add(1)
			}
		}
	})
	t.Cleanup(s.halt)
	return s
}

func (s *swapper) halt() { s.stop.Store(true); s.wg.Wait() }

// raceIterations bounds each race test: enough reads that every
// interleaving of two CPUs occurs many times.
const raceIterations = 3000

// readWithin reads name whole and fails the test if that takes longer
// than a hang would allow.
func readWithin(t *testing.T, fsys fs.FS, name string) (string, error) {
	t.Helper()
	type result struct {
		data string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		f, err := fsys.Open(name)
		if err != nil {
			done <- result{"", err}
			return
		}
		defer f.Close()
		b, err := io.ReadAll(f)
		done <- result{string(b), err}
	}()
	select {
	case r := <-done:
		return r.data, r.err
	case <-time.After(10 * time.Second):
		t.Fatalf("reading %s hung", name)
		return "", nil
	}
}

// TestHostFSSwapRace swaps a skill file for a link to a secret outside
// the root (and a folder for a link to a folder outside, and a file for a
// FIFO) while reading it: every read returns the real content or an
// error, never the secret, and none hangs.
func TestHostFSSwapRace(t *testing.T) {
	const public, secret = "public content\n", "SECRET shadow\n"
	scenarios := []struct {
		name  string
		setup func(t *testing.T, base, root string) (dir, a, b, read string)
	}{
		{"file swapped for a link", func(t *testing.T, base, root string) (string, string, string, string) {
			writeTree(t, root, map[string]string{"a.md": public})
			if err := os.Symlink(filepath.Join(base, "secret"), filepath.Join(root, "swap")); err != nil {
				t.Fatal(err)
			}
			return root, "a.md", "swap", "a.md"
		}},
		{"folder swapped for a link", func(t *testing.T, base, root string) (string, string, string, string) {
			writeTree(t, root, map[string]string{"refs/secret": public})
			if err := os.Symlink(base, filepath.Join(root, "swap")); err != nil {
				t.Fatal(err)
			}
			return root, "refs", "swap", "refs/secret"
		}},
		{"file swapped for a FIFO", func(t *testing.T, base, root string) (string, string, string, string) {
			writeTree(t, root, map[string]string{"a.md": public})
			if err := syscall.Mkfifo(filepath.Join(root, "swap"), 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			return root, "a.md", "swap", "a.md"
		}},
	}
	for _, m := range hostModes {
		for _, sc := range scenarios {
			t.Run(m.name+"/"+sc.name, func(t *testing.T) {
				base := t.TempDir()
				root := filepath.Join(base, "root")
				writeTree(t, base, map[string]string{"secret": secret})
				dir, a, b, name := sc.setup(t, base, root)
				fsys := m.fs(t, root)
				sw := startSwapper(t, dir, a, b)
				var ok, refused int
				for range raceIterations {
					got, err := readWithin(t, fsys, name)
					switch {
					case err != nil:
						refused++
					case got == public:
						ok++
					default:
						t.Fatalf("read %s returned %q", name, got)
					}
				}
				sw.halt()
				t.Logf("%d reads: %d real content, %d refused; %d swaps", raceIterations, ok, refused, sw.swaps.Load())
				if sw.swaps.Load() == 0 {
					t.Fatal("the swapper never ran")
				}
			})
		}
	}
}

// TestDiscoverSwapRace discovers a source while its SKILL.md is swapped
// for a link to a SKILL.md outside the root: the outside skill is never
// found.
func TestDiscoverSwapRace(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	writeTree(t, base, map[string]string{
		"evil/SKILL.md":   skillMD("evil"),
		"root/a/SKILL.md": skillMD("a"),
	})
	if err := os.Symlink(filepath.Join(base, "evil", "SKILL.md"), filepath.Join(root, "a", "swap")); err != nil {
		t.Fatal(err)
	}
	src, err := Dir(root, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	sw := startSwapper(t, filepath.Join(root, "a"), "SKILL.md", "swap")
	for i := range raceIterations / 10 {
		// Every other discovery lists the folder too (ListFolders): the
		// SKILL.md it reads and the entry it lists are both of what is
		// opened beneath the folder's descriptor, never the link's target.
		res, err := Discover(context.Background(), src, Options{ListFolders: i%2 == 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range res.Skills {
			if f.Front.Name != "a" {
				t.Fatalf("discovered %q through a swapped link", f.Front.Name)
			}
			if f.Folder == nil {
				continue
			}
			for _, e := range f.Folder.Entries {
				if info, _ := e.Info(); e.Name() == skill.FileName && (!info.Mode().IsRegular() || info.Size() != f.Size) {
					t.Fatalf("listed SKILL.md as %v, %d bytes; read %d bytes", info.Mode(), info.Size(), f.Size)
				}
			}
		}
	}
	sw.halt()
}

// TestSkillFSLinkedFolder follows a linked skill folder and refuses it
// once the link leads to another folder.
func TestSkillFSLinkedFolder(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	writeTree(t, base, map[string]string{
		"elsewhere/linked/SKILL.md": skillMD("linked"),
		"elsewhere/linked/ref.md":   "ref",
		"other/SKILL.md":            skillMD("linked"),
		"other/ref.md":              "other",
		"root/.keep":                "",
	})
	link := filepath.Join(root, "linked")
	if err := os.Symlink(filepath.Join(base, "elsewhere", "linked"), link); err != nil {
		t.Fatal(err)
	}
	for _, rd := range readers {
		t.Run(rd.name, func(t *testing.T) {
			src := dirSource(t, root, rd.wrap)
			res, err := Discover(context.Background(), src, Options{})
			if err != nil || len(res.Skills) != 1 {
				t.Fatalf("Discover = %v, %v", res, err)
			}
			f := res.Skills[0]
			sfs, err := src.SkillFS(f)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := fs.ReadFile(sfs, "ref.md"); err != nil || string(got) != "ref" {
				t.Fatalf("ref.md = %q, %v", got, err)
			}
			if err := os.Remove(link); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(base, "other"), link); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				os.Remove(link)
				os.Symlink(filepath.Join(base, "elsewhere", "linked"), link)
			})
			got, err := fs.ReadFile(sfs, "ref.md")
			if rd.name == "iofs" {
				return // os.DirFS follows wherever the link leads
			}
			if !errors.Is(err, ErrReplaced) {
				t.Errorf("after the link was re-pointed: %q, %v; want ErrReplaced", got, err)
			}
			// A refresh sees the new folder.
			again, err := Discover(context.Background(), src, Options{Previous: map[string]*Found{f.Dir: f}})
			if err != nil || len(again.Skills) != 1 || again.Reused != 0 {
				t.Fatalf("refresh = %+v, %v; want the skill read again", again, err)
			}
			sfs, _ = src.SkillFS(again.Skills[0])
			if got, err := fs.ReadFile(sfs, "ref.md"); err != nil || string(got) != "other" {
				t.Errorf("after refresh: %q, %v", got, err)
			}
		})
	}
}
