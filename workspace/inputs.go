package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// InputResult describes one CopyInput call.
type InputResult struct {
	// Path is the copy's path relative to the workspace, with slashes
	// (work/inputs/<dest>).
	Path string
	// Files and Bytes count the regular files copied and their size.
	Files int
	Bytes int64
	// Skipped lists entries not copied: links to directories (not followed,
	// so copies cannot loop), links leaving the allowed root, special files.
	Skipped []Skipped
}

// CopyInput copies the host file or directory hostPath into
// work/inputs/<dest>, replacing what was there. hostPath must lie inside one
// of Options.InputRoots; symbolic links are followed only while they stay
// inside that root. dest is a relative path inside work/inputs; "" means the
// base name of hostPath. The copy is bounded by Options.MaxInputFiles and
// Options.MaxInputBytes; on error nothing is left at dest.
func (w *Workspace) CopyInput(ctx context.Context, hostPath, dest string) (*InputResult, error) {
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
	hr, err := os.OpenRoot(allowed)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: input root %s: %w", w.id, allowed, err)
	}
	defer hr.Close()
	info, err := hr.Stat(rel)
	if err != nil {
		return nil, fmt.Errorf("%w: input %s: %w", ErrNotAllowed, hostPath, err)
	}
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
	defer ir.Close()
	if err := ir.RemoveAll(dest); err != nil {
		return nil, fmt.Errorf("workspace %s: replace input %s: %w", w.id, dest, err)
	}
	if err := ir.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return nil, fmt.Errorf("workspace %s: input %s: %w", w.id, dest, err)
	}
	c := &inputCopy{w: w, hr: hr, ir: ir, res: &InputResult{Path: filepath.ToSlash(filepath.Join(inputsRel, dest))}, buf: make([]byte, 64<<10)}
	if info.IsDir() {
		err = c.dir(ctx, rel, dest)
	} else {
		err = c.file(rel, dest, info)
	}
	if err != nil {
		_ = ir.RemoveAll(dest)
		if errors.Is(err, ErrLimit) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		return nil, fmt.Errorf("workspace %s: copy input %s: %w", w.id, hostPath, err)
	}
	return c.res, nil
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

// inputCopy copies from an allowed host root into work/inputs.
type inputCopy struct {
	w   *Workspace
	hr  *os.Root // allowed host root
	ir  *os.Root // work/inputs
	res *InputResult
	buf []byte
}

// file copies one regular file (info describes it, links resolved).
func (c *inputCopy) file(src, dst string, info fs.FileInfo) error {
	if !info.Mode().IsRegular() {
		c.res.Skipped = append(c.res.Skipped, Skipped{filepath.ToSlash(src), "not a regular file or directory"})
		return nil
	}
	c.res.Files++
	if c.res.Files > c.w.m.maxInputFiles {
		return fmt.Errorf("%w: input has more than %d files (Options.MaxInputFiles)", ErrLimit, c.w.m.maxInputFiles)
	}
	budget := c.w.m.maxInputBytes - c.res.Bytes
	n, err := copyFile(c.hr.FS(), filepath.ToSlash(src), c.ir, dst, fileMode(info.Mode()&0o111 != 0), budget, io.Discard, c.buf)
	c.res.Bytes += n
	if errors.Is(err, ErrLimit) {
		return fmt.Errorf("%w: input is larger than %d bytes (Options.MaxInputBytes)", ErrLimit, c.w.m.maxInputBytes)
	}
	return err
}

// dir copies the directory tree src to dst.
func (c *inputCopy) dir(ctx context.Context, src, dst string) error {
	if err := c.ir.Mkdir(dst, 0o755); err != nil {
		return err
	}
	fsys := c.hr.FS()
	base := filepath.ToSlash(src)
	return fs.WalkDir(fsys, base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == base {
			return nil
		}
		rel := strings.TrimPrefix(p, base+"/")
		if base == "." {
			rel = p
		}
		to := filepath.Join(dst, filepath.FromSlash(rel))
		switch t := d.Type(); {
		case t.IsDir():
			return c.ir.Mkdir(to, 0o755)
		case t&fs.ModeSymlink != 0:
			info, err := c.hr.Stat(filepath.FromSlash(p)) // follows links inside the root only
			switch {
			case err != nil:
				c.res.Skipped = append(c.res.Skipped, Skipped{p, "symbolic link leaves the allowed input root or leads nowhere"})
				return nil
			case info.IsDir():
				c.res.Skipped = append(c.res.Skipped, Skipped{p, "symbolic link to a directory is not followed"})
				return nil
			}
			return c.file(p, to, info)
		default:
			info, err := d.Info()
			if err != nil {
				return err
			}
			return c.file(p, to, info)
		}
	})
}
