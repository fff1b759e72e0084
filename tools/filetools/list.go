package filetools

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/skillkit/skillkit/tools"
)

// listArgs are the arguments of list_files.
type listArgs struct {
	Path string `json:"path,omitempty" jsonschema:"The folder to list, relative to the top folder (default: the top folder itself)."`
}

// globArgs are the arguments of glob.
type globArgs struct {
	Pattern string `json:"pattern" jsonschema:"A glob relative to the folder: * and ? match within one path segment, ** matches any number of folders, {a,b} either (for example **/*.md)."`
}

// readDirBatch is how many entries list_files reads at a time, so a huge
// folder is never held in memory whole.
const readDirBatch = 256

func (s *fileSet) runList(ctx context.Context, a listArgs) (tools.Result, error) {
	p, bad := s.resolve("path", a.Path, true)
	if bad != nil {
		return *bad, nil
	}
	arg := cmp.Or(a.Path, ".")
	f, fi, err := open(s.root, p)
	if err != nil {
		return s.fsError("path", arg, err), nil
	}
	defer f.Close()
	if !fi.IsDir() {
		return tools.Errorf("Error: path %s is not a folder; read a file with %s", strconv.Quote(arg), s.tool(ReadFileName)), nil
	}
	keep := firstN[fs.DirEntry]{n: s.maxEntries, cmp: func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) }}
	for {
		if err := ctx.Err(); err != nil {
			return tools.Result{}, err
		}
		batch, err := f.ReadDir(readDirBatch)
		for _, e := range batch {
			keep.add(e)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return s.fsError("path", arg, err), nil
		}
	}
	entries := keep.sorted()
	if len(entries) == 0 {
		return tools.Result{Text: fmt.Sprintf("[folder %s is empty]", strconv.Quote(arg))}, nil
	}
	var b strings.Builder
	for _, e := range entries {
		b.WriteString(s.describe(path.Join(p, e.Name()), e))
		b.WriteByte('\n')
	}
	b.WriteString(leftOut(keep.total, len(entries), "entries", "list the folders below one at a time, or narrow down with "+s.tool(GlobName)))
	return tools.Result{Text: strings.TrimSuffix(b.String(), "\n")}, nil
}

// describe is one line of list_files: the name, '/' for a folder, the
// size of a file, and for a link what it leads to (followed beneath the
// root, so a link out of the folder says only that it cannot be
// followed).
func (s *fileSet) describe(p string, e fs.DirEntry) string {
	name := e.Name()
	if e.IsDir() {
		return name + "/"
	}
	if e.Type()&fs.ModeSymlink != 0 {
		fi, err := s.root.Stat(p)
		switch {
		case err != nil:
			return name + " (link that leads nowhere inside the folder)"
		case fi.IsDir():
			return name + "/ (link)"
		case fi.Mode().IsRegular():
			return fmt.Sprintf("%s (%d bytes, link)", name, fi.Size())
		}
		return fmt.Sprintf("%s (link to %s)", name, typeName(fi.Mode()))
	}
	if !e.Type().IsRegular() {
		return fmt.Sprintf("%s (%s)", name, typeName(e.Type()))
	}
	fi, err := e.Info()
	if err != nil {
		return name
	}
	return fmt.Sprintf("%s (%d bytes)", name, fi.Size())
}

func (s *fileSet) runGlob(ctx context.Context, a globArgs) (tools.Result, error) {
	pat, bad := s.pattern("pattern", a.Pattern)
	if bad != nil {
		return *bad, nil
	}
	keep := firstN[string]{n: s.maxEntries, cmp: strings.Compare}
	err := s.walk(ctx, pat, func(p string, d fs.DirEntry) error {
		if p == "." {
			return nil
		}
		if d.IsDir() {
			p += "/"
		}
		keep.add(p)
		return nil
	})
	if err != nil {
		return walkFailed(ctx, "pattern", a.Pattern, err)
	}
	paths := keep.sorted()
	if len(paths) == 0 {
		return tools.Result{Text: fmt.Sprintf("[no paths match %s]", strconv.Quote(a.Pattern))}, nil
	}
	text := strings.Join(paths, "\n")
	if note := leftOut(keep.total, len(paths), "paths", "use a narrower pattern"); note != "" {
		text += "\n" + note
	}
	return tools.Result{Text: text}, nil
}

// pattern checks a glob argument as resolve checks a path (not empty, not
// absolute, no ".." segment) and that it is a valid pattern, drops a
// leading "./" and applies the inputs alias. Patterns are not cleaned as
// paths, since cleaning could change what they match.
func (s *fileSet) pattern(arg, pat string) (string, *tools.Result) {
	q := strconv.Quote(pat)
	switch {
	case pat == "":
		return "", errResult("Error: %s is empty; give a glob relative to the folder, such as \"**/*.md\"", arg)
	case strings.IndexByte(pat, 0) >= 0:
		return "", errResult("Error: %s %s contains a NUL byte", arg, q)
	case absolute(pat):
		return "", errResult("Error: %s %s is absolute; give a glob relative to the folder, such as \"**/*.md\"", arg, q)
	case slices.Contains(strings.Split(pat, "/"), ".."):
		return "", errResult("Error: %s %s has a \"..\" segment; globs match only paths inside the folder", arg, q)
	case !doublestar.ValidatePattern(pat):
		return "", errResult("Error: %s %s is not a valid glob (check its brackets and braces); for example \"**/*.md\"", arg, q)
	}
	for strings.HasPrefix(pat, "./") {
		pat = strings.TrimLeft(pat[2:], "/")
	}
	if pat == "" || pat == "." {
		return ".", nil
	}
	// "**/**" matches what "**" matches, but the globber walks each
	// repetition anew: n of them cost exponential time in the depth.
	segs := strings.Split(pat, "/")
	segs = slices.CompactFunc(segs, func(a, b string) bool { return a == "**" && b == "**" })
	return s.alias(strings.Join(segs, "/")), nil
}

// walk calls fn for each path matching pat (checked by pattern) in the
// globber's order, stopping when ctx ends. Links to folders are not
// followed below the pattern's fixed prefix, so a link loop inside the
// folder cannot make a walk endless.
//
// A path the globber reaches twice (a pattern such as "**/x/**" can) is
// passed to fn once.
func (s *fileSet) walk(ctx context.Context, pat string, fn doublestar.GlobWalkFunc, opts ...doublestar.GlobOption) error {
	seen := map[string]bool{}
	return doublestar.GlobWalk(rootFS{s.root}, pat, func(p string, d fs.DirEntry) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if seen[p] {
			return nil
		}
		seen[p] = true
		return fn(p, d)
	}, append(opts, doublestar.WithNoFollow())...)
}

// walkFailed is the outcome of a walk that failed with err: the context's
// error when it ended, else an error result naming the argument.
func walkFailed(ctx context.Context, arg, pat string, err error) (tools.Result, error) {
	if ctx.Err() != nil {
		return tools.Result{}, ctx.Err()
	}
	return tools.Errorf("Error: %s %s cannot be used: %v", arg, strconv.Quote(pat), err), nil
}

// rootFS is the root as an fs.FS for globbing. Unlike os.Root.FS, it
// opens without blocking (a pattern such as "fifo/*" makes the globber
// read "fifo" as a folder, and a plain open of a FIFO waits for a
// writer) and reads a folder only after fstat on the opened descriptor
// says it is one.
type rootFS struct{ r *os.Root }

func (f rootFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	return f.r.OpenFile(name, os.O_RDONLY|openFlags, 0)
}

func (f rootFS) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	return f.r.Stat(name)
}

func (f rootFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	d, fi, err := open(f.r, name)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	if !fi.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: syscall.ENOTDIR}
	}
	entries, err := d.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	if err != nil {
		return entries, fmt.Errorf("filetools: reading folder %s: %w", name, err)
	}
	return entries, nil
}
