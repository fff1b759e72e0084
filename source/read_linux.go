package source

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
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
	// O_NONBLOCK: a FIFO named SKILL.md must not hang discovery in open.
	fd, err := openBeneath(h.dir, name, readFlags, h.walk)
	if err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
			return nil, fileStat{}, errNoFile
		}
		if errors.Is(err, errSymlinkInPath) {
			return nil, fileStat{}, errSymlink
		}
		return nil, fileStat{}, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := fstat(fd, &st); err != nil {
		return nil, fileStat{}, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	fst := statOf(&st)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return nil, fileStat{}, errNoFile
	case unix.S_IFREG:
	default:
		return nil, fileStat{}, &fs.PathError{Op: "open", Path: name, Err: notRegular(modeOf(&st))}
	}
	if fst.size > max {
		return nil, fst, errTooLarge{fst.size}
	}
	// One byte more than the stat size: a read that does not fill the
	// buffer ends at end of file, so the common case is a single read.
	b := grow(buf, fst.size+1)
	n := 0
	for {
		m, err := retry(func() (int, error) { return unix.Read(fd, b[n:]) })
		if err != nil {
			return nil, fst, &fs.PathError{Op: "read", Path: name, Err: err}
		}
		n += m
		if m == 0 || n < len(b) {
			break
		}
		if int64(n) > max { // the file grew past the limit while we read
			return nil, fst, errTooLarge{int64(n)}
		}
		b = grow(buf, int64(2*len(b)))
	}
	return b[:n], fst, nil
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
	return fileStat{size: st.Size, mod: time.Unix(st.Mtim.Unix()), id: idOfStat(st)}
}
