// Package filetools provides file tools over one base folder as a single
// tools.ToolSet: read_file, write_file, list_files, glob and grep, which
// the model sees as "<set>_<tool>" (file_read_file, …) once the set is
// expanded.
//
// Every path comes from the model and is untrusted. All access goes
// through one os.Root opened on the base folder when the set is made, so
// "..", absolute paths and symbolic links that leave the folder are
// refused by the kernel-backed root, not by string checks alone (the
// tools also refuse absolute and ".." paths up front, to say so clearly).
// Relative links that stay inside the folder are followed; an absolute
// link is refused wherever it points, and ** in glob and grep does not
// descend through links to folders, so a link loop cannot make a walk
// endless. Each file is opened once, without blocking (a FIFO cannot hang
// a call), and checked with fstat on the opened descriptor: only regular
// files are read. write_file writes a temporary file beside the target
// and moves it into place, so a file is never seen half-written.
//
// A mistake of the model (a bad or missing path, a file too large, a
// binary file, a bad pattern) is an error result it sees, naming the
// argument and what to do; a handler returns a Go error only when the
// call's context ends.
//
// Skill documentation is written for the workspace layout, where a
// skill's input files sit under inputs/. So when the base folder has no
// entry named inputs, a path or pattern "inputs/<p>" means "<p>" and
// "inputs" means the folder itself; when the folder has a real inputs
// entry (a folder, a file or a link), paths are taken literally. Results
// name paths relative to the folder.
package filetools

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gabriel-vasile/mimetype"

	"github.com/skillkit/skillkit/tools"
)

// Defaults of Options, used where a field is zero.
const (
	// DefaultName is the set's name: its tools reach the model as
	// file_read_file, file_list_files, and so on.
	DefaultName = "file"
	// DefaultMaxReadBytes is the largest file read_file returns and grep
	// searches (1 MiB).
	DefaultMaxReadBytes = 1 << 20
	// DefaultMaxWriteBytes is the largest content write_file writes (1 MiB).
	DefaultMaxWriteBytes = 1 << 20
	// DefaultMaxEntries is how many entries list_files and glob return.
	DefaultMaxEntries = 1000
	// DefaultMaxMatches is how many matching lines grep returns.
	DefaultMaxMatches = 200
)

// Names of the tools inside the set; the model sees them prefixed with
// the set's name and '_'.
const (
	ReadFileName  = "read_file"
	WriteFileName = "write_file"
	ListFilesName = "list_files"
	GlobName      = "glob"
	GrepName      = "grep"
)

// inputsAlias is the folder name skill documentation uses for a skill's
// input files (the workspace layout).
const inputsAlias = "inputs"

// maxLineBytes caps one line of grep output, so a minified file cannot
// fill the result with one match.
const maxLineBytes = 500

// Options configure New. Every zero field means its default; negative
// limits are errors.
type Options struct {
	// BaseDir is the folder the tools work in; required. It is opened
	// once, by New, and every path is resolved beneath it.
	BaseDir string
	// Name names the set (DefaultName when empty) and prefixes its tools,
	// so two sets over two folders do not collide. It must be a valid
	// tool name: letters, digits, '_' or '-', short enough that every
	// "<Name>_<tool>" has at most 64 characters.
	Name string
	// ReadOnly leaves write_file out of the set, so the model cannot
	// change the folder.
	ReadOnly bool
	// MaxReadBytes is the largest file read_file returns and grep
	// searches; larger files are refused (read_file) or skipped (grep)
	// rather than truncated, since a partial file reads as a whole one.
	// Zero means DefaultMaxReadBytes.
	MaxReadBytes int64
	// MaxWriteBytes is the largest content write_file accepts. Zero means
	// DefaultMaxWriteBytes.
	MaxWriteBytes int64
	// MaxEntries caps the entries list_files and glob return, each with
	// a note saying how many were left out. Zero means DefaultMaxEntries.
	MaxEntries int
	// MaxMatches caps the lines grep returns, with a note when there are
	// more. Zero means DefaultMaxMatches.
	MaxMatches int
}

// fileSet is the state the tools of one set share: the open root and the
// limits, fixed at New.
type fileSet struct {
	root                   *os.Root
	name                   string // the set's name, for the tool names the model sees
	maxRead, maxWrite      int64
	maxEntries, maxMatches int
}

// New opens opts.BaseDir and returns the file tools over it: read_file,
// write_file (unless ReadOnly), list_files, glob and grep. opts may not be
// nil, only because BaseDir is required; every other zero field means its
// default. The set keeps the folder open (one descriptor) for as long as
// its tools are in use; it is closed when they are no longer reachable.
func New(opts *Options) (tools.ToolSet, error) {
	if opts == nil {
		return tools.ToolSet{}, errors.New("filetools: Options are required, since Options.BaseDir (the folder the tools work in) must be set")
	}
	if opts.BaseDir == "" {
		return tools.ToolSet{}, errors.New("filetools: Options.BaseDir is empty; set it to the folder the tools work in")
	}
	for _, l := range []struct {
		field string
		v     int64
	}{
		{"MaxReadBytes", opts.MaxReadBytes}, {"MaxWriteBytes", opts.MaxWriteBytes},
		{"MaxEntries", int64(opts.MaxEntries)}, {"MaxMatches", int64(opts.MaxMatches)},
	} {
		if l.v < 0 {
			return tools.ToolSet{}, fmt.Errorf("filetools: Options.%s is %d; use a positive limit, or 0 for the default", l.field, l.v)
		}
	}
	s := &fileSet{
		name:       cmp.Or(opts.Name, DefaultName),
		maxRead:    cmp.Or(opts.MaxReadBytes, DefaultMaxReadBytes),
		maxWrite:   cmp.Or(opts.MaxWriteBytes, DefaultMaxWriteBytes),
		maxEntries: cmp.Or(opts.MaxEntries, DefaultMaxEntries),
		maxMatches: cmp.Or(opts.MaxMatches, DefaultMaxMatches),
	}
	all := []tools.Tool{
		newTool(ReadFileName, fmt.Sprintf("Read a text file in the folder by its path relative to the folder. Read a long file in windows of lines with offset_line and max_lines. Binary files and files over %d bytes are refused.", s.maxRead), s.runRead),
		newTool(WriteFileName, fmt.Sprintf("Write a text file in the folder, by its path relative to the folder, creating missing folders. An existing file is replaced only with overwrite true. Content of at most %d bytes; the file is written whole or not at all.", s.maxWrite), s.runWrite),
		newTool(ListFilesName, fmt.Sprintf("List the entries of a folder, sorted: folders end with '/', files show their size in bytes. At most %d entries.", s.maxEntries), s.runList),
		newTool(GlobName, fmt.Sprintf("Find the paths in the folder that match a glob pattern (** crosses folders, for example **/*.csv), sorted; folders end with '/'. Links to folders are not followed by **. At most %d paths.", s.maxEntries), s.runGlob),
		newTool(GrepName, fmt.Sprintf("Search the text files of the folder for lines matching a regular expression (Go RE2 syntax); path_glob narrows the files. Returns path:line: text, at most %d lines. Binary files and files over %d bytes are skipped.", s.maxMatches, s.maxRead), s.runGrep),
	}
	// ReadOnly leaves write_file out, rather than offering one that fails.
	set := tools.ToolSet{Name: s.name, Tools: slices.DeleteFunc(all, func(t tools.Tool) bool { return opts.ReadOnly && t.Name == WriteFileName })}
	if _, err := set.Expand(); err != nil {
		return tools.ToolSet{}, fmt.Errorf("filetools: Options.Name: %w", err)
	}
	root, err := os.OpenRoot(opts.BaseDir)
	if err != nil {
		return tools.ToolSet{}, fmt.Errorf("filetools: Options.BaseDir: %w", err)
	}
	s.root = root
	return set, nil
}

// newTool is tools.New for the set's tools: a call whose context has
// already ended returns its error before the folder is touched.
func newTool[In any](name, description string, h func(ctx context.Context, in In) (tools.Result, error)) tools.Tool {
	return tools.New(name, description, func(ctx context.Context, _ tools.Call, in In) (tools.Result, error) {
		if err := ctx.Err(); err != nil {
			return tools.Result{}, err
		}
		return h(ctx, in)
	})
}

// tool returns the name the model sees for one of the set's tools, for
// messages that point to another tool.
func (s *fileSet) tool(name string) string { return s.name + "_" + name }

// resolve turns a path argument into the path to open beneath the root:
// cleaned, with the inputs alias applied. An absolute path, one that
// climbs out with "..", one with a NUL byte or (unless empty means the top
// folder) an empty one is an error result naming the argument. The root
// refuses whatever gets past these checks and still leaves the folder.
func (s *fileSet) resolve(arg, p string, emptyIsTop bool) (string, *tools.Result) {
	if p == "" {
		if emptyIsTop {
			return ".", nil
		}
		return "", errResult("Error: %s is empty; give a path relative to the folder, such as \"notes.txt\"", arg)
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", errResult("Error: %s %s contains a NUL byte; give a path relative to the folder", arg, strconv.Quote(p))
	}
	if absolute(p) {
		return "", errResult("Error: %s %s is absolute; give a path relative to the folder, such as \"notes.txt\"", arg, strconv.Quote(p))
	}
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", errResult("Error: %s %s leads out of the folder with \"..\"; the tools reach only files inside it", arg, strconv.Quote(p))
	}
	return s.alias(c), nil
}

// absolute reports whether a path or pattern is absolute, on this system
// or in slash form.
func absolute(p string) bool {
	return strings.HasPrefix(p, "/") || filepath.IsAbs(p) || filepath.VolumeName(p) != ""
}

// alias applies the inputs rule to a clean relative path (or pattern):
// without a real inputs entry in the folder, inputs/<p> is <p> and inputs
// is the folder itself. The entry is looked up on each call, since the
// folder may change (write_file can create one).
func (s *fileSet) alias(c string) string {
	rest, ok := strings.CutPrefix(c, inputsAlias)
	if !ok || rest != "" && rest[0] != '/' {
		return c
	}
	if _, err := s.root.Lstat(inputsAlias); !errors.Is(err, fs.ErrNotExist) {
		return c
	}
	if rest = strings.TrimLeft(rest, "/"); rest == "" {
		return "."
	}
	return rest
}

// errResult is tools.Errorf returned by pointer, for resolve's two results.
func errResult(format string, args ...any) *tools.Result {
	r := tools.Errorf(format, args...)
	return &r
}

// fsError words a file system error on path p (the argument arg, as the
// model gave it) for the model: what went wrong and what to do. The
// message quotes only the model's own path and the system's reason, never
// the base folder's location.
func (s *fileSet) fsError(arg, p string, err error) tools.Result {
	q := strconv.Quote(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return tools.Errorf("Error: %s %s does not exist in the folder; %s shows what is there", arg, q, s.tool(ListFilesName))
	case errors.Is(err, fs.ErrPermission):
		return tools.Errorf("Error: %s %s cannot be opened: permission denied", arg, q)
	}
	reason := err.Error()
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		reason = pe.Err.Error()
	case errors.As(err, &le):
		reason = le.Err.Error()
	}
	return tools.Errorf("Error: %s %s cannot be used: %s; give a path to a file inside the folder (links that lead out of it are refused)", arg, q, reason)
}

// firstN keeps the n smallest of the items it is given, in bounded
// memory, and counts them all: list_files and glob sort before they cap,
// so the entries shown do not depend on the order the disk returns them.
type firstN[T any] struct {
	n     int
	cmp   func(a, b T) int
	items []T
	total int
}

func (f *firstN[T]) add(v T) {
	f.total++
	f.items = append(f.items, v)
	if len(f.items) >= 2*f.n {
		f.compact()
	}
}

func (f *firstN[T]) compact() {
	slices.SortFunc(f.items, f.cmp)
	if len(f.items) > f.n {
		clear(f.items[f.n:])
		f.items = f.items[:f.n]
	}
}

// sorted returns the kept items in order.
func (f *firstN[T]) sorted() []T {
	f.compact()
	return f.items
}

// leftOut is the note after a list cut at the limit, or "".
func leftOut(total, shown int, what, hint string) string {
	if total <= shown {
		return ""
	}
	return fmt.Sprintf("[%d of %d %s left out: at most %d are shown; %s]", total-shown, total, what, shown, hint)
}

// isText reports whether data is text a model can read: no NUL byte, and
// valid UTF-8 or a textual type by content sniffing (Latin-1 text, say).
func isText(data []byte) (bool, string) {
	if !slices.Contains(data, 0) && utf8.Valid(data) {
		return true, "text/plain"
	}
	mt := mimetype.Detect(data)
	if slices.Contains(data, 0) {
		return false, mt.String()
	}
	for m := mt; m != nil; m = m.Parent() {
		if m.Is("text/plain") {
			return true, mt.String()
		}
	}
	return false, mt.String()
}
