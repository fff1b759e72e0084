package mcpsource

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"
)

// remoteFS is the file system of a Remote's source, or of one folder of
// it (dir, as fs.Sub makes): folders and Stat answer from the current
// listing; opening a file reads and verifies it.
type remoteFS struct {
	r   *Remote
	dir string // "" for the root
}

var (
	_ fs.StatFS     = (*remoteFS)(nil)
	_ fs.ReadDirFS  = (*remoteFS)(nil)
	_ fs.ReadFileFS = (*remoteFS)(nil)
	_ fs.SubFS      = (*remoteFS)(nil)
)

// target is what a path names in a listing.
type target struct {
	root bool
	e    *skillEntry
	rel  string     // in the skill folder; "." for the folder
	f    *fileEntry // nil for a folder
}

// resolve finds name (relative to f.dir) in the current listing.
func (f *remoteFS) resolve(op, name string) (target, error) {
	if !fs.ValidPath(name) {
		return target{}, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	full := name
	if f.dir != "" {
		full = path.Join(f.dir, name)
	}
	if full == "." {
		return target{root: true}, nil
	}
	dir, rel, _ := strings.Cut(full, "/")
	if rel == "" {
		rel = "."
	}
	e := f.r.cat.Load().skills[dir]
	if e == nil {
		return target{}, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	if _, ok := e.tree[rel]; ok {
		return target{e: e, rel: rel}, nil
	}
	if fe, ok := e.files[rel]; ok {
		return target{e: e, rel: rel, f: fe}, nil
	}
	var err error
	if e.dynamic {
		err = f.r.errorf("%q: %w", Scheme+e.path+"/"+rel, ErrDynamic)
	} else {
		err = f.r.errorf("%q is not a file of skill %q; refused without reading it: %w", rel, e.uri, ErrNotListed)
	}
	return target{}, &fs.PathError{Op: op, Path: name, Err: err}
}

// Open opens a folder (no I/O) or reads and verifies a file.
func (f *remoteFS) Open(name string) (fs.File, error) {
	t, err := f.resolve("open", name)
	if err != nil {
		return nil, err
	}
	if t.f == nil {
		return &dirFile{info: f.info(t), entries: f.entries(t), name: name}, nil
	}
	data, err := f.r.read(t.e, t.f)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &memFile{Reader: bytes.NewReader(data), info: &node{name: path.Base(t.rel), e: t.e, f: t.f, size: int64(len(data)), known: true}}, nil
}

// ReadFile reads and verifies a file.
func (f *remoteFS) ReadFile(name string) ([]byte, error) {
	t, err := f.resolve("read", name)
	if err != nil {
		return nil, err
	}
	if t.f == nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errIsDir}
	}
	data, err := f.r.read(t.e, t.f)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	return data, nil
}

// Stat describes name from the listing.
func (f *remoteFS) Stat(name string) (fs.FileInfo, error) {
	t, err := f.resolve("stat", name)
	if err != nil {
		return nil, err
	}
	return f.info(t), nil
}

// ReadDir lists a folder from the listing, sorted by name.
func (f *remoteFS) ReadDir(name string) ([]fs.DirEntry, error) {
	t, err := f.resolve("readdir", name)
	if err != nil {
		return nil, err
	}
	if t.f != nil {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errNotDir}
	}
	return f.entries(t), nil
}

// Sub returns the file system of a folder, answering as this one does
// (fs.Sub would otherwise give one whose Stat opens, and so reads, the
// file).
func (f *remoteFS) Sub(dir string) (fs.FS, error) {
	if !fs.ValidPath(dir) {
		return nil, &fs.PathError{Op: "sub", Path: dir, Err: fs.ErrInvalid}
	}
	if dir == "." {
		return f, nil
	}
	full := dir
	if f.dir != "" {
		full = path.Join(f.dir, dir)
	}
	return &remoteFS{r: f.r, dir: full}, nil
}

// info describes a target.
func (f *remoteFS) info(t target) fs.FileInfo {
	switch {
	case t.root:
		return &node{name: ".", dir: true, mod: f.r.cat.Load().mod}
	case t.f != nil:
		return &node{name: path.Base(t.rel), e: t.e, f: t.f}
	case t.rel == ".":
		return &node{name: t.e.dir, e: t.e, dir: true}
	}
	return &node{name: path.Base(t.rel), e: t.e, dir: true}
}

// entries lists a folder target.
func (f *remoteFS) entries(t target) []fs.DirEntry {
	if t.root {
		cat := f.r.cat.Load()
		out := make([]fs.DirEntry, len(cat.dirs))
		for i, d := range cat.dirs {
			out[i] = &node{name: d, e: cat.skills[d], dir: true}
		}
		return out
	}
	return slices.Clone(t.e.tree[t.rel])
}

var (
	errNotDir = errors.New("not a folder")
	errIsDir  = errors.New("is a folder")
)

// node is a listed file or folder as fs.FileInfo and fs.DirEntry.
type node struct {
	name  string
	e     *skillEntry
	f     *fileEntry // nil for a folder
	dir   bool
	mod   time.Time // the root's; others come from e or f
	size  int64     // when known is set (an opened file)
	known bool
}

func (n *node) Name() string { return n.name }
func (n *node) IsDir() bool  { return n.dir }
func (n *node) Sys() any     { return nil }

// Size is the listed size; a dynamic SKILL.md has none until its first
// read pins one, and says 0 until then.
func (n *node) Size() int64 {
	switch {
	case n.known:
		return n.size
	case n.f == nil:
		return 0
	case n.f.size >= 0:
		return n.f.size
	}
	n.e.pin.Lock()
	defer n.e.pin.Unlock()
	return n.e.pin.size
}

// ModTime is derived from the listing (see Remote.Source).
func (n *node) ModTime() time.Time {
	switch {
	case n.f != nil:
		return n.f.mod
	case n.e != nil:
		return n.e.mod
	}
	return n.mod
}

func (n *node) Mode() fs.FileMode {
	if n.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}

func (n *node) Type() fs.FileMode          { return n.Mode().Type() }
func (n *node) Info() (fs.FileInfo, error) { return n, nil }

// memFile is a verified file, in memory.
type memFile struct {
	*bytes.Reader
	info *node
}

func (m *memFile) Stat() (fs.FileInfo, error) { return m.info, nil }
func (m *memFile) Close() error               { return nil }

// dirFile is an opened folder.
type dirFile struct {
	info    fs.FileInfo
	entries []fs.DirEntry
	name    string
	off     int
}

func (d *dirFile) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *dirFile) Close() error               { return nil }

func (d *dirFile) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.name, Err: errIsDir}
}

// ReadDir returns the folder's next entries as fs.ReadDirFile says.
func (d *dirFile) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.entries[d.off:]
	if n <= 0 {
		d.off = len(d.entries)
		return rest, nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(rest))
	d.off += n
	return rest[:n], nil
}

// String names the node for debugging.
func (n *node) String() string { return fmt.Sprintf("%s (%v)", n.name, n.Mode()) }
