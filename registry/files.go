package registry

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/skillkit/skillkit/skill"
)

// Files returns the named skill as a file system confined to its
// manifest: the listed files, by their manifest paths, and the folders
// those paths imply ("." and, say, "references"), nothing else. It
// implements fs.ReadDirFS, fs.StatFS and fs.ReadFileFS.
//
// A path that is not a valid fs.FS name fails with fs.ErrInvalid, or with
// fs.ErrNotExist when it is absolute or leads up through ".."; a path the
// manifest does not hold fails with fs.ErrNotExist; both in an
// *fs.PathError. A listed file whose path CleanPath refuses (one with a
// backslash in its name, say) is left out.
//
// Opening a file opens its listed, link-free path beneath the skill
// folder without following links, like ReadFile, and checks on the
// opened file that it is the regular file of the listed size. Reading
// streams the file, whatever Options.MaxReadBytes says (the manifest is
// bounded by the per-skill limits, skill.Limits), hashes it as it goes
// and, at the listed size, checks that the file ends there and that its
// SHA-256 is the digest the snapshot pinned (pinning it on the first full
// read); a mismatch is an error wrapping ErrStale in place of io.EOF.
// Stat and ReadDir report the listing: files have their listed size and
// mode 0444, folders mode 0555, and no modification times.
func (s *Snapshot) Files(ctx context.Context, name string) (fs.FS, error) {
	e, c, err := s.listed(ctx, name)
	if err != nil {
		return nil, err
	}
	c.tree.Do(func() { c.files = buildTree(c.m) })
	return &skillFS{e: e, c: c, t: c.files}, nil
}

// tree is the folder structure a manifest implies.
type tree struct {
	files map[string]skill.File
	dirs  map[string][]fs.DirEntry // each folder's entries, sorted by name
}

func buildTree(m *skill.Manifest) *tree {
	t := &tree{files: make(map[string]skill.File, len(m.Files)), dirs: map[string][]fs.DirEntry{".": nil}}
	for _, f := range m.Files {
		if p, err := CleanPath(f.Path); err != nil || p != f.Path || !fs.ValidPath(p) {
			continue
		}
		t.files[f.Path] = f
		child := fs.DirEntry(&node{name: path.Base(f.Path), size: f.Size})
		for dir := path.Dir(f.Path); ; dir = path.Dir(dir) {
			_, known := t.dirs[dir]
			t.dirs[dir] = append(t.dirs[dir], child)
			if known || dir == "." {
				break
			}
			child = &node{name: path.Base(dir), dir: true}
		}
	}
	for _, entries := range t.dirs {
		slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	}
	return t
}

// skillFS is the file system Files returns.
type skillFS struct {
	e *entry
	c *content
	t *tree
}

// lookup checks name and returns its file or folder node.
func (s *skillFS) lookup(op, name string) (*node, skill.File, error) {
	if !fs.ValidPath(name) {
		err := fs.ErrInvalid
		if _, escapes, _ := cleanPath(name); escapes {
			err = fs.ErrNotExist
		}
		return nil, skill.File{}, &fs.PathError{Op: op, Path: name, Err: err}
	}
	if _, err := CleanPath(name); err != nil {
		return nil, skill.File{}, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	if f, ok := s.t.files[name]; ok {
		return &node{name: path.Base(name), size: f.Size}, f, nil
	}
	if _, ok := s.t.dirs[name]; ok {
		return &node{name: path.Base(name), dir: true}, skill.File{}, nil
	}
	return nil, skill.File{}, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
}

// Open opens a listed file or an implied folder.
func (s *skillFS) Open(name string) (fs.File, error) {
	n, f, err := s.lookup("open", name)
	if err != nil {
		return nil, err
	}
	if n.dir {
		return &dirFile{node: n, path: name, entries: s.t.dirs[name]}, nil
	}
	r, err := s.e.openListed(s.c, f)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &openFile{listedFile: r, node: n}, nil
}

// Stat returns the listing's description of name.
func (s *skillFS) Stat(name string) (fs.FileInfo, error) {
	n, _, err := s.lookup("stat", name)
	if err != nil {
		return nil, err
	}
	return n, nil
}

// ReadDir lists an implied folder, sorted by name.
func (s *skillFS) ReadDir(name string) ([]fs.DirEntry, error) {
	n, _, err := s.lookup("readdir", name)
	if err != nil {
		return nil, err
	}
	if !n.dir {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errNotDir}
	}
	return slices.Clone(s.t.dirs[name]), nil
}

// ReadFile reads a listed file whole, with the checks of Open.
func (s *skillFS) ReadFile(name string) ([]byte, error) {
	n, f, err := s.lookup("read", name)
	if err != nil {
		return nil, err
	}
	if n.dir {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errIsDir}
	}
	r, err := s.e.openListed(s.c, f)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	defer r.Close()
	data, err := readAll(r, make([]byte, 0, f.Size+1))
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	return data, nil
}

var (
	errNotDir = errors.New("not a folder")
	errIsDir  = errors.New("is a folder")
)

// node describes a listed file or an implied folder, as fs.FileInfo and
// fs.DirEntry.
type node struct {
	name string
	size int64
	dir  bool
}

func (n *node) Name() string { return n.name }
func (n *node) Size() int64  { return n.size }
func (n *node) IsDir() bool  { return n.dir }
func (n *node) Sys() any     { return nil }

// ModTime is the zero time: a snapshot's files have no time of their own.
func (n *node) ModTime() time.Time { return time.Time{} }

func (n *node) Mode() fs.FileMode {
	if n.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}

func (n *node) Type() fs.FileMode          { return n.Mode().Type() }
func (n *node) Info() (fs.FileInfo, error) { return n, nil }

// openFile is an opened listed file; its Stat is the listing's.
type openFile struct {
	*listedFile
	node *node
}

func (f *openFile) Stat() (fs.FileInfo, error) { return f.node, nil }

// dirFile is an opened implied folder.
type dirFile struct {
	node    *node
	path    string
	entries []fs.DirEntry
	off     int
}

func (d *dirFile) Stat() (fs.FileInfo, error) { return d.node, nil }

func (d *dirFile) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.path, Err: errIsDir}
}

func (d *dirFile) Close() error { return nil }

// ReadDir returns the folder's next entries as fs.ReadDirFile says.
func (d *dirFile) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.entries[d.off:]
	if n <= 0 {
		d.off = len(d.entries)
		return slices.Clone(rest), nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(rest))
	d.off += n
	return slices.Clone(rest[:n]), nil
}
