package registry

import (
	"context"
	"io/fs"
	"path"
)

// ListedFS returns the named skill's folder, as FS returns it, narrowed
// to the skill's manifest: the listed files by their manifest paths, the
// folders on those paths and the links they pass through are there, as
// the folder has them (types, modes, sizes, times and link targets, read
// as FS reads them: for a host folder, without following links); any
// other name is absent (fs.ErrNotExist) and left out of folder listings.
// It implements fs.ReadDirFS, fs.StatFS and fs.ReadLinkFS.
//
// A workspace stages this (workspace.Stage), so a staged skill holds the
// files every other reader of the snapshot sees: a skill whose manifest
// was truncated at the per-skill limits (skill.Manifest.Truncated) is
// staged as listed, and folders the listing leaves out — nested skills,
// links that lead out of the skill — are not copied.
func (s *Snapshot) ListedFS(ctx context.Context, name string) (fs.FS, error) {
	e, c, err := s.listed(ctx, name)
	if err != nil {
		return nil, err
	}
	if e.fsErr != nil {
		return nil, e.fsErr
	}
	keep := make(map[string]bool, 2*len(c.m.Files))
	for _, f := range c.m.Files {
		for p := f.Path; p != "." && !keep[p]; p = path.Dir(p) {
			keep[p] = true
		}
	}
	return &listedFS{fsys: e.fsys, keep: keep}, nil
}

// listedFS is the file system ListedFS returns.
type listedFS struct {
	fsys fs.FS
	keep map[string]bool // listed files and the folders and links on their paths
}

// check refuses a name that is not a valid path or not kept.
func (l *listedFS) check(op, name string) error {
	if !fs.ValidPath(name) {
		return &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	if name != "." && !l.keep[name] {
		return &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return nil
}

// filter leaves out of the entries of folder dir those not kept.
func (l *listedFS) filter(dir string, entries []fs.DirEntry) []fs.DirEntry {
	out := entries[:0]
	for _, e := range entries {
		if l.keep[joinRel(dir, e.Name())] {
			out = append(out, e)
		}
	}
	return out
}

// Open opens a kept name; a folder's ReadDir lists its kept entries.
func (l *listedFS) Open(name string) (fs.File, error) {
	if err := l.check("open", name); err != nil {
		return nil, err
	}
	f, err := l.fsys.Open(name)
	if err != nil {
		return nil, err
	}
	if d, ok := f.(fs.ReadDirFile); ok {
		return &listedDir{ReadDirFile: d, l: l, name: name}, nil
	}
	return f, nil
}

// Stat returns the folder's stat of a kept name.
func (l *listedFS) Stat(name string) (fs.FileInfo, error) {
	if err := l.check("stat", name); err != nil {
		return nil, err
	}
	return fs.Stat(l.fsys, name)
}

// ReadDir lists the kept entries of a kept folder, sorted by name.
func (l *listedFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if err := l.check("readdir", name); err != nil {
		return nil, err
	}
	entries, err := fs.ReadDir(l.fsys, name)
	return l.filter(name, entries), err
}

// Lstat returns the folder's lstat of a kept name.
func (l *listedFS) Lstat(name string) (fs.FileInfo, error) {
	if err := l.check("lstat", name); err != nil {
		return nil, err
	}
	return fs.Lstat(l.fsys, name)
}

// ReadLink returns the target of a kept link.
func (l *listedFS) ReadLink(name string) (string, error) {
	if err := l.check("readlink", name); err != nil {
		return "", err
	}
	return fs.ReadLink(l.fsys, name)
}

// listedDir is an opened kept folder of a listedFS.
type listedDir struct {
	fs.ReadDirFile
	l    *listedFS
	name string
}

// ReadDir returns the folder's next kept entries as fs.ReadDirFile says:
// for n > 0 at most n, and io.EOF once none is left.
func (d *listedDir) ReadDir(n int) ([]fs.DirEntry, error) {
	for {
		entries, err := d.ReadDirFile.ReadDir(n)
		entries = d.l.filter(d.name, entries)
		if len(entries) > 0 || err != nil || n <= 0 {
			return entries, err
		}
	}
}

// joinRel joins a folder path ("." for the top) and a name in it.
func joinRel(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}
