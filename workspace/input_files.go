package workspace

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/skillkit/skillkit/internal/tracing"
)

// inputTmpPrefix starts the temporary folder of CopyInputFiles inside
// work/inputs, so that the final renames stay on one file system.
const inputTmpPrefix = ".copy-"

// InputFile is one host file for CopyInputFiles: a file the caller has
// opened, and where its copy goes.
type InputFile struct {
	// File is the open host file; it must be a regular file. It is read
	// from offset 0 with ReadAt, whatever its current offset.
	File *os.File
	// Dest is the copy's path relative to work/inputs, with slashes; it
	// must pass CheckInputDest.
	Dest string
}

// CheckInputDest checks that dest can name a copied input inside
// work/inputs and returns it cleaned: a non-empty relative slash path with
// no ".." element, no backslash or NUL, not ending in '/', not
// work/inputs itself, with names of at most 255 bytes and at most 1024
// bytes in all. Errors wrap ErrEscape (an absolute path, "..") or
// ErrInvalidName (the rest) and say what to pass instead.
func CheckInputDest(dest string) (string, error) {
	const (
		maxNameBytes = 255  // NAME_MAX of Linux file systems
		maxInputDest = 1024 // far below PATH_MAX once under the workspace
	)
	bad := func(kind error, why string) (string, error) {
		return "", fmt.Errorf("%w: input destination %q %s", kind, dest, why)
	}
	switch {
	case dest == "":
		return bad(ErrInvalidName, "is empty; name a file such as data.csv")
	case strings.ContainsRune(dest, 0) || strings.Contains(dest, `\`):
		return bad(ErrInvalidName, "contains a NUL or backslash; use '/' between folders, e.g. dir/data.csv")
	case path.IsAbs(dest):
		return bad(ErrEscape, "is absolute; pass a path relative to work/inputs, e.g. data.csv")
	case slices.Contains(strings.Split(dest, "/"), ".."):
		return bad(ErrEscape, "contains \"..\"; pass a path inside work/inputs, e.g. data.csv")
	case strings.HasSuffix(dest, "/"):
		return bad(ErrInvalidName, "ends with '/'; name the file itself, e.g. dir/data.csv")
	case len(dest) > maxInputDest:
		return bad(ErrInvalidName, fmt.Sprintf("is %d bytes; use at most %d", len(dest), maxInputDest))
	}
	for _, el := range strings.Split(dest, "/") {
		if len(el) > maxNameBytes {
			return bad(ErrInvalidName, fmt.Sprintf("has a name of %d bytes; file systems allow at most %d per file or folder name", len(el), maxNameBytes))
		}
	}
	clean := path.Clean(dest)
	if clean == "." {
		return bad(ErrInvalidName, "names work/inputs itself; name a file inside it, e.g. data.csv")
	}
	return localPath("input destination", clean)
}

// InputDestConflict finds two destinations, as CheckInputDest returns
// them, that one CopyInputFiles call cannot both write: dests[inner] is
// dests[outer] again, or lies inside it (so dests[outer] would have to be
// both a file and a folder). ok is false when there is no such pair.
func InputDestConflict(dests []string) (outer, inner int, ok bool) {
	seen := make(map[string]int, len(dests))
	for i, d := range dests {
		if j, dup := seen[d]; dup {
			return j, i, true
		}
		seen[d] = i
	}
	for i, d := range dests {
		for k := range len(d) {
			if d[k] != '/' {
				continue
			}
			if j, in := seen[d[:k]]; in {
				return j, i, true
			}
		}
	}
	return 0, 0, false
}

// CopyInputFiles copies open host files into work/inputs, each to its
// Dest, replacing what was there, and returns one InputResult per file in
// order. Unlike CopyInput it needs no input root: the caller chose and
// opened each file (without following a link and without blocking, say),
// and CopyInputFiles checks with fstat on it that it is a regular file of
// at most Options.MaxInputBytes; at most Options.MaxInputFiles files go in
// one call. Exactly the size fstat reports is copied: a file that grows
// or shrinks meanwhile fails with an error wrapping ErrInputChanged.
//
// The copies are written to a temporary folder inside work/inputs and
// renamed into place only once every one is complete, so an error while
// copying (a limit, a full disk, a changed file, ctx ending) leaves
// work/inputs as it was, but for the folders made for the Dests; what a
// Dest held before is moved aside and put back if a later rename fails. Hold
// Lock so that no command runs while the inputs are replaced.
func (w *Workspace) CopyInputFiles(ctx context.Context, files []InputFile) (res []InputResult, err error) {
	ctx, span := w.start(ctx, spanStageInputs, attrInputs.Int(len(files)))
	defer func() {
		if res != nil {
			var size int64
			for _, r := range res {
				size += r.Bytes
			}
			span.SetAttributes(tracing.Files.Int(len(res)), tracing.Bytes.Int64(size))
		}
		tracing.End(span, err)
	}()
	return w.copyInputFiles(ctx, files)
}

// copyInputFiles is CopyInputFiles, within its span.
func (w *Workspace) copyInputFiles(ctx context.Context, files []InputFile) ([]InputResult, error) {
	if len(files) > w.m.maxInputFiles {
		return nil, fmt.Errorf("%w: %d input files, more than %d (Options.MaxInputFiles)", ErrLimit, len(files), w.m.maxInputFiles)
	}
	dests := make([]string, len(files))
	sizes := make([]int64, len(files))
	modes := make([]os.FileMode, len(files))
	for i, f := range files {
		d, err := CheckInputDest(f.Dest)
		if err != nil {
			return nil, err
		}
		dests[i] = d
		fi, err := f.File.Stat()
		if err != nil {
			return nil, fmt.Errorf("workspace %s: input %s: %w", w.id, f.File.Name(), err)
		}
		switch {
		case !fi.Mode().IsRegular():
			return nil, fmt.Errorf("workspace %s: input %s is not a regular file (mode %v); copy regular files only", w.id, f.File.Name(), fi.Mode())
		case fi.Size() > w.m.maxInputBytes:
			return nil, fmt.Errorf("%w: input %s has %d bytes, more than %d (Options.MaxInputBytes)", ErrLimit, f.File.Name(), fi.Size(), w.m.maxInputBytes)
		}
		sizes[i], modes[i] = fi.Size(), fileMode(fi.Mode()&0o111 != 0)
	}
	if outer, inner, ok := InputDestConflict(dests); ok {
		return nil, fmt.Errorf("workspace %s: input destinations %q and %q collide (the same path, or a file inside the other); give each input its own path", w.id, dests[outer], dests[inner])
	}
	ir, err := w.openInputsRoot()
	if err != nil {
		return nil, err
	}
	defer ir.Close()
	tmp := inputTmpPrefix + randomHex(6)
	if err := ir.Mkdir(tmp, 0o700); err != nil {
		return nil, fmt.Errorf("workspace %s: %w", w.id, err)
	}
	defer ir.RemoveAll(tmp) // empty unless the copies failed
	buf := make([]byte, 64<<10)
	res := make([]InputResult, len(files))
	for i, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := ir.MkdirAll(path.Dir(dests[i]), 0o755); err != nil {
			return nil, fmt.Errorf("workspace %s: input %s: %w", w.id, dests[i], err)
		}
		res[i] = InputResult{Path: inputsRel + "/" + dests[i], Files: 1}
		n, err := copyOpenFile(ctx, f.File, sizes[i], ir, tmp+"/"+strconv.Itoa(i), modes[i], buf)
		if err != nil {
			return nil, fmt.Errorf("workspace %s: copy input %s to %s: %w", w.id, f.File.Name(), res[i].Path, err)
		}
		res[i].Bytes = n
	}
	// What a destination held before is moved aside into tmp (and removed
	// with it) rather than deleted, so a rename that fails can be undone
	// and the call changes all inputs or none.
	type placed struct {
		dest, old string
		had       bool
	}
	var done []placed
	undo := func() {
		for j := len(done) - 1; j >= 0; j-- {
			p := done[j]
			_ = ir.Remove(p.dest)
			if p.had {
				_ = ir.Rename(p.old, p.dest)
			}
		}
	}
	for i, d := range dests {
		p := placed{dest: d, old: tmp + "/old-" + strconv.Itoa(i)}
		if _, err := ir.Lstat(d); err == nil {
			if err := ir.Rename(d, p.old); err != nil {
				undo()
				return nil, fmt.Errorf("workspace %s: replace input %s: %w (no input was changed)", w.id, d, err)
			}
			p.had = true
		}
		if err := ir.Rename(tmp+"/"+strconv.Itoa(i), d); err != nil {
			if p.had {
				_ = ir.Rename(p.old, d)
			}
			undo()
			return nil, fmt.Errorf("workspace %s: input %s: %w (no input was changed)", w.id, d, err)
		}
		done = append(done, p)
	}
	return res, nil
}

// copyOpenFile copies exactly size bytes of in, read from offset 0, to the
// new file dst under root, or fails with ErrInputChanged when in holds
// another number of bytes. It stops when ctx ends.
func copyOpenFile(ctx context.Context, in *os.File, size int64, root *os.Root, dst string, mode os.FileMode, buf []byte) (int64, error) {
	out, err := root.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return 0, err
	}
	src := ctxReader{ctx, io.NewSectionReader(in, 0, size+1)}
	n, err := io.CopyBuffer(out, src, buf)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
		return n, err
	case n != size:
		return n, fmt.Errorf("%w: %s had %d bytes when it was opened and %d were read; copy it again", ErrInputChanged, in.Name(), size, n)
	}
	return n, nil
}

// ctxReader is a Reader that fails with ctx's error once ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
