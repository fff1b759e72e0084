package registry

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/source"
)

// resizeFS lists its files as they are but opens every a.txt with delta
// more bytes: a file that changes between each listing and each read.
type resizeFS struct {
	m     fstest.MapFS
	delta int
}

func (r resizeFS) Open(name string) (fs.File, error) {
	if strings.HasSuffix(name, "/a.txt") && r.delta != 0 {
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

// ReadDir lists through the map, so the listing keeps the listed sizes.
func (r resizeFS) ReadDir(name string) ([]fs.DirEntry, error) { return r.m.ReadDir(name) }

// Stat stats through the map (the listing's view).
func (r resizeFS) Stat(name string) (fs.FileInfo, error) { return r.m.Stat(name) }

// TestReadFileSizeCheck reads a file whose opened size is the listed
// size, one byte less, one byte more and zero: only the listed size is
// read; any other is ErrStale naming the file.
func TestReadFileSizeCheck(t *testing.T) {
	for _, tc := range []struct {
		name  string
		delta int
	}{{"listed size", 0}, {"one byte less", -1}, {"one byte more", 1}, {"empty", -5}} {
		t.Run(tc.name, func(t *testing.T) {
			m := fstest.MapFS{"s/SKILL.md": {Data: []byte(skillMD("s", "d"))}, "s/a.txt": {Data: []byte("12345")}, "s/doc.md": {Data: []byte("doc")}}
			reg := newReg(t, []source.Source{source.FS(resizeFS{m, tc.delta}, "mem", 0)}, nil)
			data, err := reg.Snapshot().ReadFile(context.Background(), "s", "a.txt")
			if tc.delta == 0 {
				if err != nil || string(data) != "12345" {
					t.Fatalf("ReadFile = %q, %v", data, err)
				}
				return
			}
			if !errors.Is(err, ErrStale) || !errors.Is(err, skill.ErrChanged) || !strings.Contains(err.Error(), `a.txt of skill "s"`) {
				t.Errorf("ReadFile = %q, %v; want ErrStale naming a.txt", data, err)
			}
		})
	}
}

// TestReadFileAfterEdit reads a file that was edited to another size
// after the listing: the snapshot does not list it again, the read fails
// with ErrStale naming the file, the pinned text stays, and a refreshed
// snapshot reads the new content. A file replaced by a link out of the
// skill is refused the same way, and the refreshed listing leaves it out.
func TestReadFileAfterEdit(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"s/SKILL.md": skillMD("s", "d"), "s/a.md": "short"})
	src, err := source.Dir(root, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	reg := newReg(t, []source.Source{src}, nil)
	s := reg.Snapshot()
	ctx := context.Background()
	if got, err := s.DocText(ctx, "s", "a.md"); err != nil || got != "short" {
		t.Fatalf("DocText = %q, %v", got, err)
	}
	writeTree(t, root, map[string]string{"s/a.md": "a longer text"})
	got, err := s.ReadFile(ctx, "s", "a.md")
	if !errors.Is(err, ErrStale) || !strings.Contains(err.Error(), `a.md of skill "s"`) || !strings.Contains(err.Error(), "refresh the registry") {
		t.Errorf("ReadFile after an edit = %q, %v; want ErrStale naming a.md and saying to refresh", got, err)
	}
	if got, err := s.DocText(ctx, "s", "a.md"); err != nil || got != "short" {
		t.Errorf("DocText after an edit = %q, %v; want the pinned text", got, err)
	}
	s2, err := reg.Refresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s2.DocText(ctx, "s", "a.md"); err != nil || got != "a longer text" {
		t.Errorf("DocText after Refresh = %q, %v", got, err)
	}
	// A file replaced by a link out of the skill is no longer the file
	// listed: refused, never followed.
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, "s", "a.md")
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, p); err != nil {
		t.Fatal(err)
	}
	if got, err := s2.ReadFile(ctx, "s", "a.md"); !errors.Is(err, ErrStale) {
		t.Errorf("ReadFile of a file replaced by a link out = %q, %v; want ErrStale", got, err)
	}
	s3, err := reg.Refresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s3.ReadFile(ctx, "s", "a.md"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ReadFile of the link after Refresh = %q, %v; want ErrNotFound", got, err)
	}
}
