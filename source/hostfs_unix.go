//go:build unix

package source

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// hostFS is the file system of a host folder that Dir returns. No path
// is opened through a symbolic link: each is opened as the root's
// link-free (canonical) path joined with the path below it, in one openat2
// with RESOLVE_NO_SYMLINKS (the path holds no "..", so it stays beneath
// the root), or, where the kernel lacks openat2, relative to a descriptor
// of the root with one O_NOFOLLOW openat per element. Every open uses
// O_NONBLOCK, so that no FIFO can block it, and Open checks with fstat on
// the descriptor it opened that it got a regular file or a folder;
// anything else is refused before any read. A path whose file was swapped
// for a link, or that passes through a folder that was, fails instead of
// leading elsewhere.
//
// The links in the root's own path, which the operator configured, are
// resolved when the file system is made and again at each discovery (a
// re-pointed root link is then followed, as os.DirFS would follow it); a
// root that is removed and created again is seen anew.
type hostFS struct {
	// root is the absolute host path of the source; canon its link-free
	// form, shared with the file systems derived from this one.
	root  string
	canon *canonRoot
	// link, when set, is the path below root of a linked skill folder the
	// file system is anchored at: the link is followed once per call and
	// must lead to the folder identified by id.
	link string
	id   fileID
	// dir is the link-free path below the anchor (root or link) the file
	// system is rooted at; "." for the anchor itself.
	dir string
	// walk resolves paths one element at a time instead of with openat2
	// (set by tests; calls fall back to it by themselves when the kernel
	// refuses openat2).
	walk bool
}

var (
	_ fs.ReadDirFS   = (*hostFS)(nil)
	_ fs.ReadFileFS  = (*hostFS)(nil)
	_ fs.StatFS      = (*hostFS)(nil)
	_ fs.SubFS       = (*hostFS)(nil)
	_ fs.ReadLinkFS  = (*hostFS)(nil)
	_ fs.ReadDirFile = (*hostDir)(nil)
)

// Open flags: files and folders are opened for reading, never as a
// controlling terminal, and never blocking (a FIFO opened for reading
// without O_NONBLOCK waits for a writer).
const (
	readFlags = unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NONBLOCK | unix.O_NOCTTY
	dirFlags  = readFlags | unix.O_DIRECTORY
)

func newHostFS(root string) *hostFS { return &hostFS{root: root, canon: newCanon(root), dir: "."} }

// canonRoot is the link-free path of a source root.
type canonRoot struct{ p atomic.Pointer[string] }

func newCanon(root string) *canonRoot {
	c := &canonRoot{}
	c.refresh(root)
	return c
}

func (c *canonRoot) get() string { return *c.p.Load() }

// refresh resolves the links of root again (its path as configured).
func (c *canonRoot) refresh(root string) {
	p, err := filepath.EvalSymlinks(root)
	if err != nil {
		p = root // opening it reports the problem
	}
	c.p.Store(&p)
}

// refreshRoot resolves the links in the root's own path again.
func (h *hostFS) refreshRoot() { h.canon.refresh(h.root) }

// abs returns the host path of rel, a path below the root.
func (h *hostFS) abs(rel string) string {
	if rel == "." {
		return h.canon.get()
	}
	return h.canon.get() + "/" + rel
}

// openRoot opens the root folder to resolve paths relative to it.
func (h *hostFS) openRoot() (int, error) {
	return retry(func() (int, error) { return unix.Open(h.canon.get(), dirRef|unix.O_CLOEXEC, 0) })
}

// dirFS is the file system Dir returns.
func dirFS(root string) fs.FS { return newHostFS(root) }

// host returns the host file system of s when it reads a host folder
// through one: the one Dir makes, or os.DirFS of s.Path (which is then
// read the same way, without following links).
func (s Source) host() *hostFS {
	if s.Path == "" {
		return nil
	}
	if h, ok := s.FS.(*hostFS); ok && h.root == s.Path && h.link == "" && h.dir == "." {
		return h
	}
	if s.FS == os.DirFS(s.Path) {
		return newHostFS(s.Path)
	}
	return nil
}

// linked returns the file system of the skill folder top (a path below
// h's root whose last element may be a symbolic link) that must have the
// identity id.
func (h *hostFS) linked(top string, id fileID) *hostFS {
	return &hostFS{root: h.root, canon: h.canon, link: joinRel(h.dir, top), id: id, dir: ".", walk: h.walk}
}

// anchor opens the folder that paths of h are relative to: the root, or
// the linked skill folder after checking its identity.
func (h *hostFS) anchor() (int, error) {
	if h.link == "" {
		return h.openRoot()
	}
	fd, id, err := h.openLink(h.link)
	if err != nil {
		return -1, err
	}
	if id != h.id {
		unix.Close(fd)
		return -1, ErrReplaced
	}
	return fd, nil
}

// openLink opens the folder top, a path below the root whose last
// element may be a symbolic link — the one link followed: a linked skill
// folder, as discovery follows it — and returns it with its identity.
func (h *hostFS) openLink(top string) (int, fileID, error) {
	root, err := h.openRoot()
	if err != nil {
		return -1, fileID{}, err
	}
	parent := root
	if d := path.Dir(top); d != "." {
		parent, err = openBeneath(root, d, dirRef, h.walk)
		unix.Close(root)
		if err != nil {
			return -1, fileID{}, err
		}
	}
	fd, err := retry(func() (int, error) { return unix.Openat(parent, path.Base(top), dirRef|unix.O_CLOEXEC, 0) })
	unix.Close(parent)
	if err != nil {
		return -1, fileID{}, err
	}
	var st unix.Stat_t
	if err := fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, fileID{}, err
	}
	return fd, idOfStat(&st), nil
}

// identify returns the identity of the folder top (see openLink), which
// discovery records for a linked skill folder.
func (h *hostFS) identify(top string) (fileID, error) {
	fd, id, err := h.openLink(joinRel(h.dir, top))
	if err != nil {
		return fileID{}, err
	}
	unix.Close(fd)
	return id, nil
}

// open opens name (a valid path of h) with flags.
func (h *hostFS) open(op, name string, flags int) (int, error) {
	if !fs.ValidPath(name) {
		return -1, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	if h.link == "" && !h.walk {
		fd, err := openAbs(h.abs(joinRel(h.dir, name)), flags)
		if err == nil {
			return fd, nil
		}
		if !errors.Is(err, errNoOpenat2) {
			return -1, &fs.PathError{Op: op, Path: name, Err: err}
		}
	}
	anchor, err := h.anchor()
	if err != nil {
		return -1, &fs.PathError{Op: op, Path: name, Err: err}
	}
	defer unix.Close(anchor)
	fd, err := openBeneath(anchor, joinRel(h.dir, name), flags, h.walk)
	if err != nil {
		return -1, &fs.PathError{Op: op, Path: name, Err: err}
	}
	return fd, nil
}

// Open opens name for reading. It fails for a path holding a symbolic
// link and for anything but a regular file or a folder; the returned
// file's Stat is the fstat of the descriptor that was opened.
func (h *hostFS) Open(name string) (fs.File, error) {
	fd, err := h.open("open", name, readFlags)
	if err != nil {
		return nil, err
	}
	info := &fileInfo{name: path.Base(name)}
	if err := fstat(fd, &info.st); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	switch info.st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		f := &hostFile{fd: fd, name: name, info: info}
		f.cleanup = runtime.AddCleanup(f, closeFD, fd)
		return f, nil
	case unix.S_IFDIR:
		d := &hostDir{fd: fd, name: name, info: info}
		d.cleanup = runtime.AddCleanup(d, closeFD, fd)
		return d, nil
	}
	unix.Close(fd)
	return nil, &fs.PathError{Op: "open", Path: name, Err: notRegular(info.Mode())}
}

// ReadFile reads the regular file name whole, sized by the fstat of the
// descriptor it opened.
func (h *hostFS) ReadFile(name string) ([]byte, error) {
	f, err := h.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	hf, ok := f.(*hostFile)
	if !ok {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("is a directory")}
	}
	b := make([]byte, 0, hf.info.st.Size+1)
	for {
		if len(b) == cap(b) {
			b = slices.Grow(b, 4096)
		}
		n, err := hf.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// Stat returns the stat of name. A symbolic link, at the end of the path
// or on its way, is an error: links are never followed.
func (h *hostFS) Stat(name string) (fs.FileInfo, error) {
	info, err := h.lstat("stat", name)
	if err != nil {
		return nil, err
	}
	if info.st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: errSymlinkInPath}
	}
	return info, nil
}

// inParent opens the folder holding name and calls fn with its
// descriptor and the last element of name; for name "." fn gets the
// folder itself and "".
func (h *hostFS) inParent(op, name string, fn func(dir int, base string) error) error {
	parent, base := path.Dir(name), path.Base(name)
	if name == "." {
		base = ""
	}
	if !fs.ValidPath(name) {
		return &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	fd, err := h.open(op, parent, dirRef)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			pe.Path = name
		}
		return err
	}
	defer unix.Close(fd)
	if err := fn(fd, base); err != nil {
		return &fs.PathError{Op: op, Path: name, Err: err}
	}
	return nil
}

// Lstat returns the stat of name without following it; a link on the way
// to it is an error.
func (h *hostFS) Lstat(name string) (fs.FileInfo, error) { return h.lstat("lstat", name) }

func (h *hostFS) lstat(op, name string) (*fileInfo, error) {
	info := &fileInfo{name: path.Base(name)}
	if lstatFlags != 0 && h.link == "" && !h.walk && fs.ValidPath(name) {
		// One open of the path itself, not of its folder: the link at the
		// end, if any, is opened as a link.
		fd, err := openAbs(h.abs(joinRel(h.dir, name)), lstatFlags)
		if err == nil {
			err = fstat(fd, &info.st)
			unix.Close(fd)
			if err != nil {
				return nil, &fs.PathError{Op: op, Path: name, Err: err}
			}
			return info, nil
		}
		if !errors.Is(err, errNoOpenat2) {
			return nil, &fs.PathError{Op: op, Path: name, Err: err}
		}
	}
	err := h.inParent(op, name, func(dir int, base string) error {
		if base == "" {
			return fstat(dir, &info.st)
		}
		return fstatat(dir, base, &info.st)
	})
	if err != nil {
		return nil, err
	}
	return info, nil
}

// ReadLink returns the target of the symbolic link name.
func (h *hostFS) ReadLink(name string) (string, error) {
	var target string
	err := h.inParent("readlink", name, func(dir int, base string) error {
		if base == "" {
			return unix.EINVAL
		}
		for size := 256; ; size *= 2 {
			b := make([]byte, size)
			n, err := retry(func() (int, error) { return unix.Readlinkat(dir, base, b) })
			if err != nil {
				return err
			}
			if n < size {
				target = string(b[:n])
				return nil
			}
		}
	})
	return target, err
}

// ReadDir lists the folder name, sorted by name; each entry's Info is
// the lstat taken, relative to the folder's descriptor, while listing.
func (h *hostFS) ReadDir(name string) ([]fs.DirEntry, error) {
	fd, err := h.open("readdir", name, dirFlags)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	entries, err := readDirFD(fd)
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: err}
	}
	return entries, nil
}

// ReadDirStat lists the folder name, sorted by name, and returns its stat:
// one descriptor is opened, fstat'ed before it is listed, listed and
// closed, so the stat and the listing are of the same folder. A skill's
// listing (registry) stamps each folder with that stat.
func (h *hostFS) ReadDirStat(name string) (fs.FileInfo, []fs.DirEntry, error) {
	fd, err := h.open("readdir", name, dirFlags)
	if err != nil {
		return nil, nil, err
	}
	defer unix.Close(fd)
	info := &fileInfo{name: path.Base(name)}
	if err := fstat(fd, &info.st); err != nil {
		return nil, nil, &fs.PathError{Op: "readdir", Path: name, Err: err}
	}
	entries, err := readDirFD(fd)
	if err != nil {
		return nil, nil, &fs.PathError{Op: "readdir", Path: name, Err: err}
	}
	return info, entries, nil
}

// Sub returns the file system rooted at dir, a folder of h (which must not
// be reached through a link).
func (h *hostFS) Sub(dir string) (fs.FS, error) {
	if !fs.ValidPath(dir) {
		return nil, &fs.PathError{Op: "sub", Path: dir, Err: fs.ErrInvalid}
	}
	if dir == "." {
		return h, nil
	}
	sub := *h
	sub.dir = joinRel(h.dir, dir)
	return &sub, nil
}

// direntBufs holds the buffers readDirFD reads directory entries into: a
// listing of many small folders would otherwise allocate one per folder.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 8192); return &b }}

// readDirFD lists the open folder fd: every name, with an lstat relative
// to fd, sorted by name. Entries removed while listing are left out.
func readDirFD(fd int) ([]fs.DirEntry, error) {
	names, err := listNames(fd)
	if err != nil {
		return nil, err
	}
	return statNames(fd, names, "", nil)
}

// listNames returns the names in the open folder fd, sorted.
func listNames(fd int) ([]string, error) {
	var names []string
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	for {
		n, err := retry(func() (int, error) { return unix.ReadDirent(fd, buf) })
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			break
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
	slices.Sort(names)
	return names, nil
}

// statNames returns the entries of names in the open folder fd, each with
// an lstat relative to fd, but the one named known, which gets the stat
// given; names removed meanwhile are left out.
func statNames(fd int, names []string, known string, st *unix.Stat_t) ([]fs.DirEntry, error) {
	out := make([]fs.DirEntry, 0, len(names))
	for _, n := range names {
		info := &fileInfo{name: n}
		if n == known {
			info.st = *st
		} else if err := fstatat(fd, n, &info.st); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			return nil, err
		}
		out = append(out, dirEntry{info})
	}
	return out, nil
}

// hostFile is an open regular file of a hostFS.
type hostFile struct {
	fd      int
	name    string
	info    *fileInfo
	cleanup runtime.Cleanup
}

// Stat returns the fstat taken when the file was opened.
func (f *hostFile) Stat() (fs.FileInfo, error) { return f.info, nil }

func (f *hostFile) Read(b []byte) (int, error) {
	if f.fd < 0 {
		return 0, &fs.PathError{Op: "read", Path: f.name, Err: fs.ErrClosed}
	}
	if len(b) == 0 {
		return 0, nil
	}
	n, err := retry(func() (int, error) { return unix.Read(f.fd, b) })
	switch {
	case err != nil:
		return 0, &fs.PathError{Op: "read", Path: f.name, Err: err}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (f *hostFile) Close() error {
	if f.fd < 0 {
		return &fs.PathError{Op: "close", Path: f.name, Err: fs.ErrClosed}
	}
	f.cleanup.Stop()
	err := unix.Close(f.fd)
	f.fd = -1
	if err != nil {
		return &fs.PathError{Op: "close", Path: f.name, Err: err}
	}
	return nil
}

// hostDir is an open folder of a hostFS.
type hostDir struct {
	fd      int
	name    string
	info    *fileInfo
	entries []fs.DirEntry
	listed  bool
	cleanup runtime.Cleanup
}

func (d *hostDir) Stat() (fs.FileInfo, error) { return d.info, nil }

func (d *hostDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.name, Err: errors.New("is a directory")}
}

// ReadDir lists the folder as fs.ReadDirFile says: all remaining entries
// for n <= 0, else at most n, with io.EOF at the end.
func (d *hostDir) ReadDir(n int) ([]fs.DirEntry, error) {
	if d.fd < 0 {
		return nil, &fs.PathError{Op: "readdir", Path: d.name, Err: fs.ErrClosed}
	}
	if !d.listed {
		entries, err := readDirFD(d.fd)
		if err != nil {
			return nil, &fs.PathError{Op: "readdir", Path: d.name, Err: err}
		}
		d.entries, d.listed = entries, true
	}
	if n <= 0 {
		out := d.entries
		d.entries = nil
		return out, nil
	}
	if len(d.entries) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(d.entries))
	out := d.entries[:n:n]
	d.entries = d.entries[n:]
	return out, nil
}

func (d *hostDir) Close() error {
	if d.fd < 0 {
		return &fs.PathError{Op: "close", Path: d.name, Err: fs.ErrClosed}
	}
	d.cleanup.Stop()
	err := unix.Close(d.fd)
	d.fd = -1
	return err
}

// closeFD closes the descriptor of a file that was dropped unclosed.
func closeFD(fd int) { unix.Close(fd) }

// fileInfo is a stat of a hostFS file.
type fileInfo struct {
	name string
	st   unix.Stat_t
}

func (fi *fileInfo) Name() string       { return fi.name }
func (fi *fileInfo) Size() int64        { return fi.st.Size }
func (fi *fileInfo) Mode() fs.FileMode  { return modeOf(&fi.st) }
func (fi *fileInfo) ModTime() time.Time { return time.Unix(fi.st.Mtim.Unix()) }
func (fi *fileInfo) IsDir() bool        { return fi.st.Mode&unix.S_IFMT == unix.S_IFDIR }

// Sys returns the *unix.Stat_t.
func (fi *fileInfo) Sys() any { return &fi.st }

// dirEntry is a listed entry of a hostFS folder.
type dirEntry struct{ info *fileInfo }

func (e dirEntry) Name() string               { return e.info.name }
func (e dirEntry) IsDir() bool                { return e.info.IsDir() }
func (e dirEntry) Type() fs.FileMode          { return e.info.Mode().Type() }
func (e dirEntry) Info() (fs.FileInfo, error) { return e.info, nil }
func (e dirEntry) String() string             { return fs.FormatDirEntry(e) }

// modeOf converts a stat mode to an fs.FileMode, as package os does.
func modeOf(st *unix.Stat_t) fs.FileMode {
	m := uint32(st.Mode)
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

// notRegular describes a file that is neither regular nor a folder.
func notRegular(m fs.FileMode) error {
	what := "special file"
	switch {
	case m&fs.ModeNamedPipe != 0:
		what = "FIFO"
	case m&fs.ModeSocket != 0:
		what = "socket"
	case m&fs.ModeDevice != 0:
		what = "device"
	}
	return &kindError{what}
}

// kindError is errNotRegular naming what was found instead.
type kindError struct{ what string }

func (e *kindError) Error() string { return errNotRegular.Error() + " (a " + e.what + ")" }
func (e *kindError) Unwrap() error { return errNotRegular }

// idOf returns the identity in a stat from package os or from a hostFS,
// or the zero fileID.
func idOf(info fs.FileInfo) fileID {
	switch st := info.Sys().(type) {
	case *unix.Stat_t:
		return idOfStat(st)
	case *syscall.Stat_t:
		return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}
	}
	return fileID{}
}

func idOfStat(st *unix.Stat_t) fileID { return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)} }

func fstat(fd int, st *unix.Stat_t) error {
	_, err := retry(func() (int, error) { return 0, unix.Fstat(fd, st) })
	return err
}

func fstatat(dir int, name string, st *unix.Stat_t) error {
	_, err := retry(func() (int, error) { return 0, unix.Fstatat(dir, name, st, unix.AT_SYMLINK_NOFOLLOW) })
	return err
}

// walkBeneath opens name relative to dirfd one element at a time, each
// with O_NOFOLLOW, so that no element may be a symbolic link; ".." never
// occurs in the valid paths it is given.
func walkBeneath(dirfd int, name string, flags int) (int, error) {
	elems := strings.Split(name, "/")
	cur := dirfd
	for i, e := range elems {
		fl := dirRef | unix.O_NOFOLLOW | unix.O_CLOEXEC
		if i == len(elems)-1 {
			fl = flags | unix.O_NOFOLLOW | unix.O_CLOEXEC
		}
		fd, err := retry(func() (int, error) { return unix.Openat(cur, e, fl, 0) })
		if err != nil {
			// Systems differ in the error for a link (ELOOP, EMLINK,
			// ENOTDIR with O_DIRECTORY): ask.
			var st unix.Stat_t
			if fstatat(cur, e, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
				err = errSymlinkInPath
			}
		}
		if cur != dirfd {
			unix.Close(cur)
		}
		if err != nil {
			return -1, err
		}
		cur = fd
	}
	return cur, nil
}

// retry repeats a system call interrupted by a signal.
func retry(call func() (int, error)) (int, error) {
	for {
		n, err := call()
		if !errors.Is(err, unix.EINTR) {
			return n, err
		}
	}
}
