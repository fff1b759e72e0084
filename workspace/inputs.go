package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skillkit/skillkit/internal/tracing"
	"golang.org/x/sys/unix"
)

// InputResult describes one CopyInput call.
type InputResult struct {
	// Path is the copy's path relative to the workspace, with slashes
	// (work/inputs/<dest>).
	Path string
	// Files and Bytes count the regular files copied and their size.
	Files int
	// Bytes is the summed size of the files copied, in bytes.
	Bytes int64
	// Skipped lists entries not copied: links to directories (not followed,
	// so copies cannot loop), links leaving the allowed root, special files.
	Skipped []Skipped
}

// ErrInputChanged is wrapped by CopyInput's errors when an input file
// opened is not the one listed: replaced by a symbolic link, a FIFO or
// another file, or of another size than listed. Copy the input again.
var ErrInputChanged = errors.New("workspace: input changed while it was copied")

// maxInputLinkHops bounds the symbolic links followed to resolve one
// input path, as kernels bound them, so that a loop of links ends.
const maxInputLinkHops = 40

// Open flags for reading inputs: never through a symbolic link at the
// last element (each element is opened on its own, so none is followed),
// never blocking (a FIFO opened for reading waits for a writer), never as
// a controlling terminal.
const (
	inputFileFlags = unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC
	inputRootFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NONBLOCK | unix.O_CLOEXEC
)

// CopyInput copies the host file or directory hostPath into
// work/inputs/<dest>, replacing what was there. hostPath must lie inside one
// of Options.InputRoots; symbolic links are followed only while they stay
// inside that root. dest is a relative path inside work/inputs; "" means the
// base name of hostPath. The copy is bounded by Options.MaxInputFiles and
// Options.MaxInputBytes; on error nothing is left at dest.
//
// Nothing is opened through a symbolic link: a link is resolved once,
// element by element beneath the input root, and the link-free path it
// leads to is opened one element at a time relative to its folder, each
// with O_NOFOLLOW and O_NONBLOCK; folders are listed through the
// descriptor opened. Every
// file opened is checked with fstat on that descriptor to be the regular
// file listed (type, size, device and inode) and exactly the listed bytes
// are copied, so a file swapped for a link, a FIFO or another file while
// the input is copied makes CopyInput fail with an error wrapping
// ErrInputChanged that names the file, and cannot lead it out of the root
// or block it. The input root's own path may hold links; the operator
// configured it.
func (w *Workspace) CopyInput(ctx context.Context, hostPath, dest string) (res *InputResult, err error) {
	ctx, span := w.start(ctx, spanStageInputs, attrInputs.Int(1))
	defer func() {
		if res != nil {
			span.SetAttributes(tracing.Files.Int(res.Files), tracing.Bytes.Int64(res.Bytes), tracing.Skipped.Int(len(res.Skipped)))
		}
		tracing.End(span, err)
	}()
	return w.copyInput(ctx, hostPath, dest)
}

// copyInput is CopyInput, within its span.
func (w *Workspace) copyInput(ctx context.Context, hostPath, dest string) (*InputResult, error) {
	allowed, rel, err := w.m.allowedInput(hostPath)
	if err != nil {
		return nil, err
	}
	if dest == "" {
		dest = filepath.Base(filepath.Join(allowed, rel))
	}
	dest, err = localPath("CopyInput destination", dest)
	if err != nil {
		return nil, err
	}
	rfd, err := retry(func() (int, error) { return unix.Open(allowed, inputRootFlags, 0) })
	if err != nil {
		return nil, fmt.Errorf("workspace %s: open input root %s: %w", w.id, allowed, err)
	}
	defer unix.Close(rfd)
	c := &inputCopy{w: w, root: allowed, rfd: rfd, buf: make([]byte, 64<<10)}
	var st unix.Stat_t
	src, err := c.resolve(filepath.ToSlash(rel), &st)
	if err != nil {
		return nil, fmt.Errorf("%w: input %s: %w", ErrNotAllowed, hostPath, err)
	}
	ir, err := w.openInputsRoot()
	if err != nil {
		return nil, err
	}
	defer ir.Close()
	if err := ir.RemoveAll(dest); err != nil {
		return nil, fmt.Errorf("workspace %s: replace input %s: %w", w.id, dest, err)
	}
	if err := ir.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return nil, fmt.Errorf("workspace %s: input %s: %w", w.id, dest, err)
	}
	c.ir = ir
	c.res = &InputResult{Path: filepath.ToSlash(filepath.Join(inputsRel, dest))}
	err = c.top(ctx, src, filepath.ToSlash(rel), dest, &st)
	if err != nil {
		_ = ir.RemoveAll(dest)
		if errors.Is(err, ErrLimit) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		return nil, fmt.Errorf("workspace %s: copy input %s: %w", w.id, hostPath, err)
	}
	return c.res, nil
}

// openInputsRoot opens work/inputs as an os.Root, creating it when a
// command removed it.
func (w *Workspace) openInputsRoot() (*os.Root, error) {
	root, err := w.openRoot()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if err := root.MkdirAll(inputsRel, 0o755); err != nil {
		return nil, fmt.Errorf("workspace %s: %w", w.id, err)
	}
	ir, err := root.OpenRoot(inputsRel)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", w.id, err)
	}
	return ir, nil
}

// allowedInput finds the input root holding hostPath and returns it with
// hostPath relative to it.
func (m *Manager) allowedInput(hostPath string) (root, rel string, err error) {
	if len(m.inputRoots) == 0 {
		return "", "", fmt.Errorf("%w: %s: no input roots are configured (Options.InputRoots)", ErrNotAllowed, hostPath)
	}
	abs, err := filepath.Abs(hostPath)
	if err != nil {
		return "", "", fmt.Errorf("%w: %s: %w", ErrNotAllowed, hostPath, err)
	}
	for _, r := range m.inputRoots {
		if rel, err := filepath.Rel(r, abs); err == nil && filepath.IsLocal(rel) {
			return r, rel, nil
		}
	}
	return "", "", fmt.Errorf("%w: %s is outside the allowed input roots %s; add its directory to Options.InputRoots", ErrNotAllowed, hostPath, strings.Join(m.inputRoots, ", "))
}

// inputCopy copies from an allowed host root into work/inputs. Paths in
// the host root are slash paths relative to it: src paths are link-free
// (resolved), shown paths are as the caller named them (for Skipped and
// errors).
type inputCopy struct {
	w    *Workspace
	root string   // allowed host root
	rfd  int      // the allowed root, opened
	ir   *os.Root // work/inputs
	res  *InputResult
	buf  []byte
}

// errLeavesRoot is the error of a link that leads out of the input root.
var errLeavesRoot = errors.New("symbolic link leads outside the allowed input root")

// top copies the input: src is its link-free path, shown the path the
// caller gave, st its lstat.
func (c *inputCopy) top(ctx context.Context, src, shown, dst string, st *unix.Stat_t) error {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		fd, err := c.openListedDir(src, st)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		if err := c.ir.Mkdir(dst, 0o755); err != nil {
			return err
		}
		return c.dir(ctx, fd, src, shown, dst)
	case unix.S_IFREG:
		return c.inParent(src, func(dirfd int, base string) error {
			return c.file(dirfd, base, shown, dst, st)
		})
	}
	c.skip(shown, "not a regular file or directory")
	return nil
}

// dir copies the entries of the open folder fd (link-free path src,
// shown as shown) to the existing folder dst, in name order.
func (c *inputCopy) dir(ctx context.Context, fd int, src, shown, dst string) error {
	names, err := readNames(fd, c.buf)
	if err != nil {
		return c.pathErr("readdir", shown, err)
	}
	slices.Sort(names)
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return err
		}
		from, show, to := joinRel(src, name), joinRel(shown, name), filepath.Join(dst, name)
		var st unix.Stat_t
		if err := fstatat(fd, name, &st); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue // removed since it was listed
			}
			return c.pathErr("lstat", show, err)
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			if err := c.ir.Mkdir(to, 0o755); err != nil {
				return err
			}
			sub, err := openDir(fd, name, true)
			if err != nil {
				return c.openErr(show, err)
			}
			err = c.same(sub, show, &st)
			if err == nil {
				err = c.dir(ctx, sub, from, show, to)
			}
			unix.Close(sub)
			if err != nil {
				return err
			}
		case unix.S_IFLNK:
			if err := c.link(from, show, to); err != nil {
				return err
			}
		case unix.S_IFREG:
			if err := c.file(fd, name, show, to, &st); err != nil {
				return err
			}
		default:
			c.skip(show, "not a regular file or directory")
		}
	}
	return nil
}

// link copies the file the link src (shown as shown) leads to, when it
// stays inside the root; links to folders are not followed, so that
// copies cannot loop.
func (c *inputCopy) link(src, shown, dst string) error {
	var st unix.Stat_t
	target, err := c.resolve(src, &st)
	if err != nil {
		c.skip(shown, "symbolic link leaves the allowed input root or leads nowhere")
		return nil
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		c.skip(shown, "symbolic link to a directory is not followed")
		return nil
	case unix.S_IFREG:
		return c.inParent(target, func(dirfd int, base string) error {
			return c.file(dirfd, base, shown, dst, &st)
		})
	}
	c.skip(shown, "not a regular file or directory")
	return nil
}

// file copies name, an entry of the open folder dirfd listed as the
// regular file st (shown as shown), to the new file dst: it opens name
// without following a link and without blocking, checks with fstat that
// it opened the file listed, and copies exactly its listed size.
func (c *inputCopy) file(dirfd int, name, shown, dst string, st *unix.Stat_t) error {
	c.res.Files++
	if c.res.Files > c.w.m.maxInputFiles {
		return fmt.Errorf("%w: input has more than %d files (Options.MaxInputFiles)", ErrLimit, c.w.m.maxInputFiles)
	}
	if st.Size > c.w.m.maxInputBytes-c.res.Bytes {
		return fmt.Errorf("%w: input is larger than %d bytes (Options.MaxInputBytes)", ErrLimit, c.w.m.maxInputBytes)
	}
	fd, err := retry(func() (int, error) { return unix.Openat(dirfd, name, inputFileFlags, 0) })
	if err != nil {
		return c.openErr(shown, err)
	}
	in := os.NewFile(uintptr(fd), c.host(shown))
	defer in.Close()
	if err := c.same(fd, shown, st); err != nil {
		return err
	}
	out, err := c.ir.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode(st.Mode&0o111 != 0))
	if err != nil {
		return err
	}
	n, err := io.CopyBuffer(out, io.LimitReader(in, st.Size+1), c.buf)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	c.res.Bytes += n
	switch {
	case err != nil:
		return fmt.Errorf("copy %s: %w", c.host(shown), err)
	case n != st.Size:
		return c.changed(shown, fmt.Sprintf("was listed with %d bytes and %d were read", st.Size, n))
	}
	return nil
}

// same checks with fstat that the open descriptor fd is the entry listed
// as st: the same type, and for a regular file the same size; always the
// same device and inode.
func (c *inputCopy) same(fd int, shown string, st *unix.Stat_t) error {
	var now unix.Stat_t
	if err := fstat(fd, &now); err != nil {
		return c.pathErr("fstat", shown, err)
	}
	switch {
	case now.Mode&unix.S_IFMT != st.Mode&unix.S_IFMT:
		return c.changed(shown, fmt.Sprintf("is not a %s any more (%v)", typeName(st), modeOf(&now).Type()))
	case st.Mode&unix.S_IFMT == unix.S_IFREG && now.Size != st.Size:
		return c.changed(shown, fmt.Sprintf("was listed with %d bytes and has %d", st.Size, now.Size))
	case uint64(now.Dev) != uint64(st.Dev) || uint64(now.Ino) != uint64(st.Ino):
		return c.changed(shown, "is another file than the one listed")
	}
	return nil
}

// resolve returns the link-free path of p (a slash path below the root)
// and sets st to its lstat: each element is examined without following
// it, and each link met is read and replaced by its target, which must be
// relative and stay inside the root. The path returned may be raced
// again, so whoever opens it opens it link-free and checks what it got
// against st.
func (c *inputCopy) resolve(p string, st *unix.Stat_t) (string, error) {
	pending := splitPath(p)
	var cur []string
	hops := 0
	stale := true // st is not yet the lstat of cur
	for len(pending) > 0 {
		elem := pending[0]
		pending = pending[1:]
		switch elem {
		case "", ".":
			continue
		case "..":
			if len(cur) == 0 {
				return "", fmt.Errorf("%s: %w", p, errLeavesRoot)
			}
			cur, stale = cur[:len(cur)-1], true
			continue
		}
		next := strings.Join(append(cur, elem), "/")
		if err := c.lstat(next, st); err != nil {
			return "", err
		}
		stale = false
		if st.Mode&unix.S_IFMT != unix.S_IFLNK {
			cur = append(cur, elem)
			continue
		}
		if hops++; hops > maxInputLinkHops {
			return "", fmt.Errorf("%s: %w", p, unix.ELOOP)
		}
		var target string
		err := c.inParent(next, func(dirfd int, base string) (err error) {
			target, err = readlinkat(dirfd, base)
			return err
		})
		if err != nil {
			return "", c.pathErr("readlink", next, err)
		}
		if path.IsAbs(target) {
			return "", fmt.Errorf("%s -> %s: %w", next, target, errLeavesRoot)
		}
		pending = append(strings.Split(target, "/"), pending...)
		stale = true
	}
	out := "."
	if len(cur) > 0 {
		out = strings.Join(cur, "/")
	}
	if stale {
		if err := c.lstat(out, st); err != nil {
			return "", err
		}
	}
	return out, nil
}

// lstat stats p (link-free, below the root) without following it.
func (c *inputCopy) lstat(p string, st *unix.Stat_t) error {
	if p == "." {
		return fstat(c.rfd, st)
	}
	err := c.inParent(p, func(dirfd int, base string) error { return fstatat(dirfd, base, st) })
	if err != nil {
		return c.pathErr("lstat", p, err)
	}
	return nil
}

// inParent opens the folder holding p (a link-free path below the root,
// not "."), one element at a time without following links, and calls fn
// with it and the last element of p.
func (c *inputCopy) inParent(p string, fn func(dirfd int, base string) error) error {
	dir, base := path.Split(p)
	fd, err := c.openPath(strings.TrimSuffix(dir, "/"))
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return fn(fd, base)
}

// openListedDir opens the folder p (link-free, below the root), listed as st,
// and checks that it opened that folder.
func (c *inputCopy) openListedDir(p string, st *unix.Stat_t) (int, error) {
	fd, err := c.openPath(p)
	if err != nil {
		return -1, c.openErr(p, err)
	}
	if err := c.same(fd, p, st); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// openPath opens the folder p (link-free, below the root; "" or "." for
// the root) one element at a time, each with O_NOFOLLOW.
func (c *inputCopy) openPath(p string) (int, error) {
	fd, err := retry(func() (int, error) { return unix.Openat(c.rfd, ".", inputRootFlags, 0) })
	if err != nil {
		return -1, err
	}
	for _, elem := range splitPath(p) {
		next, err := openDir(fd, elem, true)
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

// skip records that shown was not copied, and why.
func (c *inputCopy) skip(shown, why string) {
	c.res.Skipped = append(c.res.Skipped, Skipped{shown, why})
}

// host returns the host path of shown, a path below the root.
func (c *inputCopy) host(shown string) string {
	return filepath.Join(c.root, filepath.FromSlash(shown))
}

// changed is the error of an input file that is not the one listed.
func (c *inputCopy) changed(shown, why string) error {
	return fmt.Errorf("%w: %s %s; copy the input again", ErrInputChanged, c.host(shown), why)
}

// openErr is the error of opening shown; a link where the listing saw
// none means the entry was swapped meanwhile.
func (c *inputCopy) openErr(shown string, err error) error {
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EMLINK) || errors.Is(err, unix.ENOTDIR) {
		return c.changed(shown, "was replaced by a symbolic link or another type of file (not followed)")
	}
	return c.pathErr("open", shown, err)
}

func (c *inputCopy) pathErr(op, shown string, err error) error {
	return &os.PathError{Op: op, Path: c.host(shown), Err: err}
}

// typeName names the type of st for people.
func typeName(st *unix.Stat_t) string {
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return "directory"
	}
	return "regular file"
}
