package source

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"
	"unicode/utf8"
)

// fileStat is what discovery needs to know about one SKILL.md.
type fileStat struct {
	size int64
	mod  time.Time
	id   fileID // zero when the file system does not say
}

// errNoFile marks a folder without a SKILL.md file: nothing by that name,
// a folder by that name, or a parent that is not a folder.
var errNoFile = errors.New("no SKILL.md")

// errSymlink marks a SKILL.md that is a symbolic link (or, for a host
// folder, whose path holds one); discovery follows it only when it stays
// inside the skill folder.
var errSymlink = errors.New("SKILL.md is a symbolic link")

// errTooLarge carries the size of a SKILL.md over the limit.
type errTooLarge struct{ size int64 }

func (e errTooLarge) Error() string { return fmt.Sprintf("%d bytes", e.size) }

// reader reads SKILL.md files of one source. Discovery uses the generic
// io/fs reader for every file system, and a descriptor-relative reader
// for host directories where the platform has one (see newHostReader):
// it makes four system calls per skill where os.Open and friends make ten,
// and, like the file system Dir makes, follows no symbolic link.
type reader interface {
	// read returns the content of name (at most max bytes) and its stat,
	// reusing *buf as scratch space; the result is valid until the next
	// call with the same buf. It returns errNoFile when there is no
	// SKILL.md file and errTooLarge when it is over max.
	read(name string, max int64, buf *[]byte) ([]byte, fileStat, error)
	// stat returns the stat of name, or an error.
	stat(name string) (fileStat, error)
	// readDir lists the folder name, in any order.
	readDir(name string) ([]fs.DirEntry, error)
	close()
}

// fsReader is the reader for any fs.FS.
type fsReader struct{ fsys fs.FS }

func (r fsReader) read(name string, max int64, buf *[]byte) ([]byte, fileStat, error) {
	// A file system that can stat is asked first, so that a FIFO named
	// SKILL.md is refused before an Open that would block on it.
	if _, ok := r.fsys.(fs.ReadLinkFS); ok {
		if info, err := fs.Lstat(r.fsys, name); err == nil && info.Mode()&fs.ModeSymlink != 0 {
			return nil, fileStat{}, errSymlink
		}
	}
	if sfs, ok := r.fsys.(fs.StatFS); ok {
		info, err := sfs.Stat(name)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || isNotDir(err) {
				return nil, fileStat{}, errNoFile
			}
			return nil, fileStat{}, err
		}
		if info.IsDir() {
			return nil, fileStat{}, errNoFile
		}
		if !info.Mode().IsRegular() {
			return nil, fileStat{}, fmt.Errorf("not a regular file (%v)", info.Mode().Type())
		}
	}
	f, err := r.fsys.Open(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || isNotDir(err) {
			return nil, fileStat{}, errNoFile
		}
		return nil, fileStat{}, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fileStat{}, err
	}
	if info.IsDir() {
		return nil, fileStat{}, errNoFile
	}
	if !info.Mode().IsRegular() {
		return nil, fileStat{}, fmt.Errorf("not a regular file (%v)", info.Mode().Type())
	}
	st := fileStat{size: info.Size(), mod: info.ModTime(), id: idOf(info)}
	if st.size > max {
		return nil, st, errTooLarge{st.size}
	}
	b := grow(buf, st.size+1)
	n := 0
	for {
		m, err := f.Read(b[n:])
		n += m
		if errors.Is(err, io.EOF) || (err == nil && m == 0) {
			break
		}
		if err != nil {
			return nil, st, err
		}
		if n == len(b) {
			if int64(n) > max {
				return nil, st, errTooLarge{int64(n)}
			}
			b = grow(buf, int64(2*len(b)))
		}
	}
	return b[:n], st, nil
}

func (r fsReader) stat(name string) (fileStat, error) {
	info, err := fs.Stat(r.fsys, name)
	if err != nil {
		return fileStat{}, err
	}
	return fileStat{size: info.Size(), mod: info.ModTime(), id: idOf(info)}, nil
}

func (r fsReader) readDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(r.fsys, name) }

func (fsReader) close() {}

// grow returns *buf resized to n bytes, keeping its content; it
// reallocates when the buffer is too small.
func grow(buf *[]byte, n int64) []byte {
	if int64(cap(*buf)) < n {
		b := make([]byte, n, max(n, 4096))
		copy(b, *buf)
		*buf = b
	}
	*buf = (*buf)[:n]
	return *buf
}

// headerOnly returns the part of a SKILL.md that discovery parses: up to
// and including the line that closes the front matter. Discovery keeps
// only the header, and strings parsed from the whole file would pin all
// of it in memory for as long as the snapshot lives; parsing the header
// alone also skips copying the body. The cut is made only where it cannot
// change what Parse reports: the file must be valid UTF-8 (Parse rejects
// the whole file otherwise) and free of carriage returns (whose line
// rules Parse owns); otherwise data is returned whole.
func headerOnly(data []byte) []byte {
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 || bytes.IndexByte(data, '\r') >= 0 || !utf8.Valid(data) {
		return data
	}
	for off := nl + 1; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		line := data[off:]
		if end >= 0 {
			line = data[off : off+end]
		}
		if isFenceLine(line) {
			if end < 0 {
				return data
			}
			return data[:off+end+1]
		}
		if end < 0 {
			break
		}
		off += end + 1
	}
	return data
}

// isFenceLine matches Parse's front-matter delimiter: "---" followed only
// by spaces or tabs.
func isFenceLine(line []byte) bool {
	if len(line) < 3 || line[0] != '-' || line[1] != '-' || line[2] != '-' {
		return false
	}
	for _, c := range line[3:] {
		if c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}
