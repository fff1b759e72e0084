package skill

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
)

// swapFS lists inner but opens other: a file system whose files change
// between the listing and the open, as a racing writer would make them.
type swapFS struct {
	inner, other fs.FS
}

func (s swapFS) Open(name string) (fs.File, error) {
	if name == "." || !strings.Contains(name, ".") {
		return s.inner.Open(name)
	}
	return s.other.Open(name)
}

// TestReadManifestOpenedIsListed checks, at each size, that hashing
// refuses a file whose opened Stat is not the listed regular file of the
// listed size, and a file that yields more bytes than its Stat said.
func TestReadManifestOpenedIsListed(t *testing.T) {
	listed := fstest.MapFS{"SKILL.md": {Data: []byte(skillMD)}, "a.txt": {Data: []byte("12345")}}
	tests := []struct {
		name   string
		opened *fstest.MapFile
		want   string // "" means success
	}{
		{"same size", &fstest.MapFile{Data: []byte("abcde")}, ""},
		{"one byte shorter", &fstest.MapFile{Data: []byte("abcd")}, "5 bytes listed, 4 now"},
		{"one byte longer", &fstest.MapFile{Data: []byte("abcdef")}, "5 bytes listed, 6 now"},
		{"empty", &fstest.MapFile{Data: nil}, "5 bytes listed, 0 now"},
		{"a FIFO now", &fstest.MapFile{Mode: fs.ModeNamedPipe}, "not a regular file any more"},
		{"a folder now", &fstest.MapFile{Mode: fs.ModeDir}, "not a regular file any more"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			other := fstest.MapFS{"SKILL.md": listed["SKILL.md"], "a.txt": tc.opened}
			m, _, err := ReadManifest(context.Background(), swapFS{listed, other}, ".", ManifestOptions{Hash: true, Label: "skills/x"})
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if f, _ := m.Lookup("a.txt"); f.SHA256 != sha("abcde") || f.Size != 5 {
					t.Errorf("a.txt = %+v", f)
				}
				return
			}
			if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "skills/x/a.txt") {
				t.Errorf("err = %v, want ErrChanged naming skills/x/a.txt and %q", err, tc.want)
			}
		})
	}
}

// growFS serves a file whose Stat says one size and whose reads yield
// more, as a file appended to while it is read.
type growFS struct{ fstest.MapFS }

func (g growFS) Open(name string) (fs.File, error) {
	f, err := g.MapFS.Open(name)
	if err != nil || name != "a.txt" {
		return f, err
	}
	return growFile{f}, nil
}

type growFile struct{ fs.File }

func (g growFile) Stat() (fs.FileInfo, error) {
	info, err := g.File.Stat()
	return shrunk{info}, err
}

type shrunk struct{ fs.FileInfo }

func (s shrunk) Size() int64 { return s.FileInfo.Size() - 1 }

func TestReadManifestFileGrowsWhileRead(t *testing.T) {
	fsys := growFS{fstest.MapFS{"a.txt": {Data: []byte("123456")}}}
	listed := fstest.MapFS{"a.txt": {Data: []byte("12345")}}
	_, _, err := ReadManifest(context.Background(), swapFS{listed, fsys}, ".", ManifestOptions{Hash: true})
	if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), "5 bytes listed, 6 read") {
		t.Errorf("err = %v, want ErrChanged: 5 bytes listed, 6 read", err)
	}
}
