package archive

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"unicode/utf8"
)

// checkName checks an entry's name and returns the path it unpacks to,
// slash-separated and relative ("." for the archive's root folder). It
// refuses what could leave the folder the archive is unpacked into, or
// name a file otherwise than as written: absolute paths, drive letters,
// backslashes, ".." elements, empty elements, control characters (NUL
// included) and names that are not UTF-8 (io/fs paths are UTF-8). "./" prefixes
// and a trailing "/" (a folder) are allowed.
func checkName(name string) (string, error) {
	switch {
	case name == "":
		return "", fmt.Errorf("%w: the name is empty", ErrUnsafePath)
	case len(name) > 4096:
		return "", fmt.Errorf("%w: the name is longer than 4096 bytes", ErrUnsafePath)
	case !utf8.ValidString(name):
		return "", fmt.Errorf("%w: the name is not valid UTF-8", ErrUnsafePath)
	case strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "", fmt.Errorf("%w: the name holds a control character", ErrUnsafePath)
	case strings.IndexByte(name, '\\') >= 0:
		return "", fmt.Errorf("%w: the name holds a backslash", ErrUnsafePath)
	case name[0] == '/':
		return "", fmt.Errorf("%w: the path is absolute", ErrUnsafePath)
	case len(name) >= 2 && name[1] == ':' && (name[0]|0x20 >= 'a' && name[0]|0x20 <= 'z'):
		return "", fmt.Errorf("%w: the path starts with a drive letter", ErrUnsafePath)
	}
	rel := strings.TrimSuffix(name, "/")
	for strings.HasPrefix(rel, "./") {
		rel = rel[2:]
	}
	if rel == "" || rel == "." {
		return ".", nil
	}
	for _, elem := range strings.Split(rel, "/") {
		switch {
		case elem == "..":
			return "", fmt.Errorf("%w: the path has a \"..\" element", ErrUnsafePath)
		case elem == "" || elem == ".":
			return "", fmt.Errorf("%w: the path has an empty or \".\" element", ErrUnsafePath)
		case len(elem) > 255:
			return "", fmt.Errorf("%w: a path element is longer than 255 bytes", ErrUnsafePath)
		}
	}
	return rel, nil
}

// unpacker writes the entries of one archive beneath a folder, checking
// each and counting what it wrote.
type unpacker struct {
	ctx   context.Context
	label string
	root  *os.Root
	o     Options
	// entries and bytes count what was unpacked so far.
	entries int
	bytes   int64
	// seen maps each path unpacked (and each folder made for one) to
	// whether it is a folder.
	seen map[string]bool
}

// entryErr is the error of the entry name.
func (u *unpacker) entryErr(name string, err error) error {
	return &EntryError{Archive: u.label, Entry: name, Err: err}
}

// add unpacks one entry: a folder when dir is set, otherwise a file of
// mode perm whose content r gives. declared is the size the archive
// states, used only to refuse early; the limits are enforced on the
// bytes read.
func (u *unpacker) add(name string, dir bool, exec bool, declared int64, r func() (io.ReadCloser, error)) error {
	if err := u.ctx.Err(); err != nil {
		return fmt.Errorf("archive %s: %w", u.label, err)
	}
	rel, err := checkName(name)
	if err != nil {
		return u.entryErr(name, err)
	}
	u.entries++
	if u.entries > u.o.MaxFiles {
		return fmt.Errorf("archive %s: %w: more than %d entries (Options.MaxFiles)", u.label, ErrLimit, u.o.MaxFiles)
	}
	if rel == "." {
		if !dir {
			return u.entryErr(name, fmt.Errorf("%w: a file named as the root folder", ErrUnsafePath))
		}
		return nil
	}
	if isDir, ok := u.seen[rel]; ok && !(isDir && dir) {
		return u.entryErr(name, fmt.Errorf("%w: %q is already in the archive", ErrDuplicate, rel))
	}
	for p := path.Dir(rel); p != "."; p = path.Dir(p) {
		if isDir, ok := u.seen[p]; ok && !isDir {
			return u.entryErr(name, fmt.Errorf("%w: %q is a file in the archive and this entry puts it in a folder", ErrDuplicate, p))
		}
	}
	for p := path.Dir(rel); p != "."; p = path.Dir(p) {
		u.seen[p] = true
	}
	u.seen[rel] = dir
	if dir {
		if err := u.root.MkdirAll(rel, 0o755); err != nil {
			return u.entryErr(name, err)
		}
		return nil
	}
	if declared > u.o.MaxFileBytes {
		return u.entryErr(name, fmt.Errorf("%w: it declares %d bytes, more than %d (Options.MaxFileBytes)", ErrLimit, declared, u.o.MaxFileBytes))
	}
	if d := path.Dir(rel); d != "." {
		if err := u.root.MkdirAll(d, 0o755); err != nil {
			return u.entryErr(name, err)
		}
	}
	perm := fs.FileMode(0o644)
	if exec {
		perm = 0o755
	}
	in, err := r()
	if err != nil {
		return u.entryErr(name, err)
	}
	defer in.Close()
	out, err := u.root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return u.entryErr(name, err)
	}
	limit := min(u.o.MaxFileBytes, u.o.MaxBytes-u.bytes)
	n, err := io.Copy(out, io.LimitReader(in, limit+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	switch {
	case n > u.o.MaxFileBytes:
		return u.entryErr(name, fmt.Errorf("%w: more than %d bytes (Options.MaxFileBytes)", ErrLimit, u.o.MaxFileBytes))
	case n > limit:
		return fmt.Errorf("archive %s: %w: its files hold more than %d bytes (Options.MaxBytes)", u.label, ErrLimit, u.o.MaxBytes)
	case errors.Is(err, ErrLimit):
		return err // the compressed stream's cap, which names the archive
	case errors.Is(err, zip.ErrFormat) || errors.Is(err, zip.ErrChecksum):
		return u.entryErr(name, fmt.Errorf("%w: its data does not match its header (%w)", ErrFormat, err))
	case err != nil:
		return u.entryErr(name, err)
	}
	u.bytes += n
	return nil
}

// unpack checks and unpacks the archive f (size bytes) into the empty
// folder dst.
func unpack(ctx context.Context, label string, f *os.File, size int64, dst string, o Options) error {
	root, err := os.OpenRoot(dst)
	if err != nil {
		return err
	}
	defer root.Close()
	u := &unpacker{ctx: ctx, label: label, root: root, o: o, seen: map[string]bool{}}
	var head [512]byte
	n, err := f.ReadAt(head[:], 0)
	if err != nil && err != io.EOF {
		return fmt.Errorf("archive %s: %w", label, err)
	}
	switch h := head[:n]; {
	case bytes.HasPrefix(h, []byte("PK\x03\x04")) || bytes.HasPrefix(h, []byte("PK\x05\x06")):
		return u.zip(f, size)
	case bytes.HasPrefix(h, []byte{0x1f, 0x8b}):
		zr, err := gzip.NewReader(io.NewSectionReader(f, 0, size))
		if err != nil {
			return fmt.Errorf("archive %s: %w: %v", label, ErrFormat, err)
		}
		defer zr.Close()
		return u.tar(zr)
	case n >= 263 && bytes.Equal(h[257:262], []byte("ustar")):
		return u.tar(io.NewSectionReader(f, 0, size))
	}
	return fmt.Errorf("archive %s: %w (it starts with neither a zip, gzip nor tar header)", label, ErrFormat)
}

// zip unpacks a zip archive.
func (u *unpacker) zip(f *os.File, size int64) error {
	zr, err := zip.NewReader(f, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		// ErrInsecurePath still gives the reader: the entries are
		// checked below, with an error naming the entry.
		return fmt.Errorf("archive %s: %w: %v", u.label, ErrFormat, err)
	}
	if len(zr.File) > u.o.MaxFiles {
		return fmt.Errorf("archive %s: %w: %d entries, more than %d (Options.MaxFiles)", u.label, ErrLimit, len(zr.File), u.o.MaxFiles)
	}
	for _, zf := range zr.File {
		mode := zf.Mode()
		if _, err := checkName(zf.Name); err != nil {
			return u.entryErr(zf.Name, err)
		}
		switch {
		case mode&fs.ModeSymlink != 0:
			return u.entryErr(zf.Name, fmt.Errorf("%w: a symbolic link", ErrLink))
		case mode&(fs.ModeDevice|fs.ModeCharDevice|fs.ModeNamedPipe|fs.ModeSocket|fs.ModeIrregular) != 0:
			return u.entryErr(zf.Name, fmt.Errorf("%w: a %s", ErrSpecial, kindOf(mode)))
		}
		dir := strings.HasSuffix(zf.Name, "/") || mode.IsDir()
		declared := int64(min(zf.UncompressedSize64, 1<<62))
		if err := u.add(zf.Name, dir, mode&0o111 != 0, declared, zf.Open); err != nil {
			return err
		}
	}
	return nil
}

// kindOf names a special file's kind.
func kindOf(mode fs.FileMode) string {
	switch {
	case mode&fs.ModeCharDevice != 0:
		return "character device"
	case mode&fs.ModeDevice != 0:
		return "block device"
	case mode&fs.ModeNamedPipe != 0:
		return "FIFO"
	case mode&fs.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}

// capReader fails once more than n bytes have been read: it bounds what a
// compressed tar stream may expand to, headers and padding included.
type capReader struct {
	r     io.Reader
	n     int64
	label string
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.n < 0 {
		return 0, fmt.Errorf("archive %s: %w: the uncompressed archive is larger than its files allow (Options.MaxBytes and MaxFiles)", c.label, ErrLimit)
	}
	if int64(len(p)) > c.n+1 {
		p = p[:c.n+1]
	}
	n, err := c.r.Read(p)
	c.n -= int64(n)
	if c.n < 0 {
		return n, fmt.Errorf("archive %s: %w: the uncompressed archive is larger than its files allow (Options.MaxBytes and MaxFiles)", c.label, ErrLimit)
	}
	return n, err
}

// tar unpacks a tar stream.
func (u *unpacker) tar(r io.Reader) error {
	// Each entry has a header block and up to a block of padding, and may
	// have PAX or long-name records before it; 4 KiB per entry and 1 MiB
	// covers those.
	budget := u.o.MaxBytes + int64(u.o.MaxFiles+1)*4096 + 1<<20
	tr := tar.NewReader(&capReader{r: r, n: budget, label: u.label})
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil && !(errors.Is(err, tar.ErrInsecurePath) && hdr != nil) {
			if errors.Is(err, ErrLimit) {
				return err
			}
			return fmt.Errorf("archive %s: %w: %v", u.label, ErrFormat, err)
		}
		if _, err := checkName(hdr.Name); err != nil {
			return u.entryErr(hdr.Name, err)
		}
		var dir bool
		switch hdr.Typeflag {
		case tar.TypeReg, 0:
		case tar.TypeDir:
			dir = true
		case tar.TypeSymlink:
			return u.entryErr(hdr.Name, fmt.Errorf("%w: a symbolic link to %q", ErrLink, hdr.Linkname))
		case tar.TypeLink:
			return u.entryErr(hdr.Name, fmt.Errorf("%w: a hard link to %q", ErrLink, hdr.Linkname))
		case tar.TypeChar:
			return u.entryErr(hdr.Name, fmt.Errorf("%w: a character device", ErrSpecial))
		case tar.TypeBlock:
			return u.entryErr(hdr.Name, fmt.Errorf("%w: a block device", ErrSpecial))
		case tar.TypeFifo:
			return u.entryErr(hdr.Name, fmt.Errorf("%w: a FIFO", ErrSpecial))
		case tar.TypeXGlobalHeader:
			// Counted, so that a stream of them ends at MaxFiles.
			if u.entries++; u.entries > u.o.MaxFiles {
				return fmt.Errorf("archive %s: %w: more than %d entries (Options.MaxFiles)", u.label, ErrLimit, u.o.MaxFiles)
			}
			continue
		default:
			return u.entryErr(hdr.Name, fmt.Errorf("%w: tar type %q", ErrSpecial, hdr.Typeflag))
		}
		if dir && hdr.Size != 0 {
			return u.entryErr(hdr.Name, fmt.Errorf("%w: a folder with %d bytes of content", ErrFormat, hdr.Size))
		}
		open := func() (io.ReadCloser, error) { return io.NopCloser(tr), nil }
		if err := u.add(hdr.Name, dir, hdr.Mode&0o111 != 0, hdr.Size, open); err != nil {
			return err
		}
	}
}
