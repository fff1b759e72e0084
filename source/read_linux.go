package source

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skillkit/skillkit/skill"
)

// hostReader reads files relative to a descriptor of the source's host
// root: openat2, fstat, one read and close per SKILL.md. os.Open adds four
// fcntl calls and an epoll registration to every file, which more than
// doubles the cost of discovery. Like the source's file system (see Dir),
// it follows no symbolic link: a SKILL.md that is a link, or whose path
// holds one, is reported as errSymlink so that discovery can check where
// it leads; linked skill folders are read through hostFS.linked.
type hostReader struct {
	dir  int
	path string
	walk bool
}

// newHostReader returns a hostReader when src reads a host directory (as
// Dir makes it); other file systems get nil and are read through io/fs.
func newHostReader(src Source) reader {
	h := src.host()
	if h == nil {
		return nil
	}
	fd, err := h.openRoot()
	if err != nil {
		return nil // the io/fs reader reports the problem
	}
	return &hostReader{dir: fd, path: src.Path, walk: h.walk}
}

func (h *hostReader) read(name string, max int64, buf *[]byte) ([]byte, fileStat, error) {
	data, st, err := readBeneath(h.dir, name, "", max, buf, h.walk)
	return data, statOf(st), err
}

// readBeneath reads the SKILL.md at rel beneath the folder dirfd as
// hostReader.read does, and returns its content and the fstat of the
// descriptor it read. Errors name dir/rel (rel when dir is empty).
func readBeneath(dirfd int, rel, dir string, max int64, buf *[]byte, walk bool) ([]byte, *unix.Stat_t, error) {
	st := new(unix.Stat_t)
	pathErr := func(op string, err error) error {
		name := rel
		if dir != "" {
			name = joinRel(dir, rel)
		}
		return &fs.PathError{Op: op, Path: name, Err: err}
	}
	// O_NONBLOCK: a FIFO named SKILL.md must not hang discovery in open.
	fd, err := openBeneath(dirfd, rel, readFlags, walk)
	if err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
			return nil, st, errNoFile
		}
		if errors.Is(err, errSymlinkInPath) {
			return nil, st, errSymlink
		}
		return nil, st, pathErr("open", err)
	}
	defer unix.Close(fd)
	if err := fstat(fd, st); err != nil {
		return nil, st, pathErr("stat", err)
	}
	fst := statOf(st)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return nil, st, errNoFile
	case unix.S_IFREG:
	default:
		return nil, st, pathErr("open", notRegular(modeOf(st)))
	}
	if fst.size > max {
		return nil, st, errTooLarge{fst.size}
	}
	// One byte more than the stat size: a read that does not fill the
	// buffer ends at end of file, so the common case is a single read.
	b := grow(buf, fst.size+1)
	n := 0
	for {
		m, err := retry(func() (int, error) { return unix.Read(fd, b[n:]) })
		if err != nil {
			return nil, st, pathErr("read", err)
		}
		n += m
		if m == 0 || n < len(b) {
			break
		}
		if int64(n) > max { // the file grew past the limit while we read
			return nil, st, errTooLarge{int64(n)}
		}
		b = grow(buf, int64(2*len(b)))
	}
	return b[:n], st, nil
}

// readFolder reads the SKILL.md of the folder dir, as read does, and
// lists the folder (see Folder): the folder is opened once, beneath the
// root and without following links, fstat'ed, listed, each entry lstat'ed
// relative to its descriptor, and its SKILL.md opened relative to that
// same descriptor (whose fstat is the SKILL.md entry's stat). A folder
// without a SKILL.md is errNoFile, a SKILL.md that is a link errSymlink,
// with no listing; a folder of more than maxEntries entries is not
// listed, only its SKILL.md read (the skill's own listing bounds it).
func (h *hostReader) readFolder(dir string, max int64, maxEntries int, buf *[]byte) ([]byte, fileStat, *Folder, error) {
	listed := time.Now()
	fd, err := openBeneath(h.dir, dir, dirFlags, h.walk)
	if err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
			return nil, fileStat{}, nil, errNoFile
		}
		return nil, fileStat{}, nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(fd)
	info := &fileInfo{name: filepath.Base(dir)}
	if err := fstat(fd, &info.st); err != nil {
		return nil, fileStat{}, nil, &fs.PathError{Op: "stat", Path: dir, Err: err}
	}
	names, err := listNames(fd)
	if err != nil {
		return nil, fileStat{}, nil, &fs.PathError{Op: "readdir", Path: dir, Err: err}
	}
	if !slices.Contains(names, skill.FileName) {
		return nil, fileStat{}, nil, errNoFile
	}
	data, st, err := readBeneath(fd, skill.FileName, dir, max, buf, h.walk)
	if err != nil || len(names) > maxEntries {
		return data, statOf(st), nil, err
	}
	entries, err := statNames(fd, names, skill.FileName, st)
	if err != nil {
		return nil, fileStat{}, nil, &fs.PathError{Op: "readdir", Path: dir, Err: err}
	}
	return data, statOf(st), &Folder{Stat: info, Entries: entries, Listed: listed}, nil
}

// stat follows links: it only tells a refresh whether a SKILL.md changed
// (size, time and identity); content is read by read alone.
func (h *hostReader) stat(name string) (fileStat, error) {
	var st unix.Stat_t
	if _, err := retry(func() (int, error) { return 0, unix.Fstatat(h.dir, name, &st, 0) }); err != nil {
		return fileStat{}, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	return statOf(&st), nil
}

// readDir lists a folder without sorting it (discovery sorts what it
// finds once, at the end). Entry types come from the listing; a folder
// reached through a link is opened as discovery's link rules say.
func (h *hostReader) readDir(name string) ([]fs.DirEntry, error) {
	fd, err := openBeneath(h.dir, name, unix.O_RDONLY|unix.O_DIRECTORY, h.walk)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	f := os.NewFile(uintptr(fd), filepath.Join(h.path, filepath.FromSlash(name)))
	defer f.Close()
	return f.ReadDir(-1)
}

func (h *hostReader) close() { unix.Close(h.dir) }

func statOf(st *unix.Stat_t) fileStat {
	if st == nil {
		return fileStat{}
	}
	return fileStat{size: st.Size, mod: time.Unix(st.Mtim.Unix()), id: idOfStat(st)}
}
