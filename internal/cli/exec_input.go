package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/skillkit/skillkit/internal/termtext"
	"github.com/skillkit/skillkit/sandbox"
	"github.com/skillkit/skillkit/workspace"
)

// Defaults of the exec input limits.
const (
	// execInputLimit is the default --input-limit: the sandbox's file size
	// limit, the largest file the command could write itself.
	execInputLimit = sandbox.DefaultFileSize
	// execStdinLimit is the default --stdin-limit: as much as the sandbox
	// keeps of each output stream.
	execStdinLimit = sandbox.DefaultOutputBytes
)

// byteSize is a flag value counting bytes: a number, optionally followed
// by K, M or G (or KiB, MiB, GiB: powers of 1024) or B.
type byteSize int64

// String formats the size as Set reads it, in the largest unit it is a
// whole multiple of.
func (b *byteSize) String() string {
	n := int64(*b)
	for _, u := range []struct {
		name  string
		shift uint
	}{{"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
		if n != 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10)
}

// Set parses s as a number of bytes.
func (b *byteSize) Set(s string) error {
	num, unit := s, ""
	if i := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		num, unit = s[:i], s[i:]
	}
	shifts := map[string]uint{"": 0, "b": 0, "k": 10, "kib": 10, "m": 20, "mib": 20, "g": 30, "gib": 30}
	shift, ok := shifts[strings.ToLower(unit)]
	n, err := strconv.ParseInt(num, 10, 64)
	if !ok || err != nil || num == "" {
		return fmt.Errorf("%q is not a size; pass bytes, or a whole number with KiB, MiB or GiB, e.g. 64MiB", s)
	}
	if n > math.MaxInt64>>shift {
		return fmt.Errorf("%q is too large", s)
	}
	*b = byteSize(n << shift)
	return nil
}

// Type names the value in --help.
func (b *byteSize) Type() string { return "size" }

// execInput is one --input: the argument as given, the host file and the
// destination below work/inputs.
type execInput struct {
	arg  string
	path string // as given, joined to Env.Cwd when relative
	dest string // cleaned by workspace.CheckInputDest
	file *os.File
}

// parseInputs reads the --input arguments, PATH[=DEST] (the last '='
// separates DEST, which defaults to PATH's base name), and checks the
// destinations, each on its own and against each other. Nothing is opened.
func parseInputs(env *Env, args []string) ([]execInput, error) {
	if len(args) > workspace.DefaultMaxInputFiles {
		return nil, fmt.Errorf("exec: %d --input files, more than %d; pack them into an archive and pass that", len(args), workspace.DefaultMaxInputFiles)
	}
	ins := make([]execInput, 0, len(args))
	dests := make([]string, 0, len(args))
	for _, a := range args {
		p, d := a, ""
		i := strings.LastIndexByte(a, '=')
		if i >= 0 {
			p, d = a[:i], a[i+1:]
		}
		switch {
		case p == "":
			return nil, fmt.Errorf("exec: --input %q names no file; pass PATH or PATH=DEST", a)
		case i >= 0 && d == "":
			return nil, fmt.Errorf("exec: --input %q ends with '='; put the destination after it, or drop the '=' to use the file's name", a)
		case i < 0:
			d = filepath.Base(p)
		}
		dest, err := workspace.CheckInputDest(d)
		if err != nil {
			if i < 0 {
				return nil, fmt.Errorf("exec: --input %q: the file's name cannot be its destination: %w; pass PATH=DEST", a, err)
			}
			return nil, fmt.Errorf("exec: --input %q: %w", a, err)
		}
		ins = append(ins, execInput{arg: a, path: hostPath(env, p), dest: dest})
		dests = append(dests, dest)
	}
	if outer, inner, ok := workspace.InputDestConflict(dests); ok {
		o, n := ins[outer], ins[inner]
		if o.dest == n.dest {
			return nil, fmt.Errorf("exec: --input %q and --input %q both go to work/inputs/%s; give one of them another destination (PATH=DEST)", o.arg, n.arg, n.dest)
		}
		return nil, fmt.Errorf("exec: --input %q goes to work/inputs/%s, inside work/inputs/%s, which --input %q makes a file; give one of them another destination (PATH=DEST)", n.arg, n.dest, o.dest, o.arg)
	}
	return ins, nil
}

// hostPath returns p relative to the working directory env gives.
func hostPath(env *Env, p string) string {
	if !filepath.IsAbs(p) && env.Cwd != "" {
		return filepath.Join(env.Cwd, p)
	}
	return p
}

// openInputs opens every input (openInput); on error it closes those it
// opened.
func openInputs(ins []execInput, limit int64) error {
	for i := range ins {
		if err := openInput(&ins[i], limit); err != nil {
			closeInputs(ins[:i])
			return err
		}
	}
	return nil
}

// closeInputs closes the inputs' files.
func closeInputs(ins []execInput) {
	for _, in := range ins {
		if in.file != nil {
			in.file.Close()
		}
	}
}

// openInput opens in.path once, without following a symbolic link in its
// last element and without blocking (a FIFO opened for reading waits for
// a writer), and checks that it opened a regular file of at most limit
// bytes. Special files are refused from their lstat, before any open, so
// that no device is opened.
func openInput(in *execInput, limit int64) error {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("exec: --input %q: "+format, append([]any{in.arg}, a...)...)
	}
	before, err := os.Lstat(in.path)
	if err != nil {
		hint := ""
		if errors.Is(err, fs.ErrNotExist) && strings.ContainsRune(in.arg, '=') {
			hint = " (the last '=' starts the destination; for a file whose name holds '=', pass PATH=DEST)"
		}
		return fail("%w%s", err, hint)
	}
	if err := regularInput(before); err != nil {
		return fail("%s %w", in.path, err)
	}
	f, err := os.OpenFile(in.path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EMLINK) {
		return fail("%s was replaced by a symbolic link while it was opened; pass the file it leads to", in.path)
	}
	if err != nil {
		return fail("%w", err)
	}
	now, err := f.Stat()
	switch {
	case err != nil:
		f.Close()
		return fail("%w", err)
	case !os.SameFile(before, now) || !now.Mode().IsRegular():
		f.Close()
		return fail("%s changed while it was opened; run again", in.path)
	case now.Size() > limit:
		f.Close()
		return fail("%s has %d bytes, more than --input-limit %s; raise --input-limit (e.g. --input-limit %s)", in.path, now.Size(), (*byteSize)(&limit), suggestLimit(now.Size()))
	}
	in.file = f
	return nil
}

// regularInput explains why fi, an lstat, is not a file --input copies.
func regularInput(fi os.FileInfo) error {
	m := fi.Mode()
	switch {
	case m.IsRegular():
		return nil
	case m&os.ModeSymlink != 0:
		return errors.New("is a symbolic link, which --input does not follow; pass the file it leads to, e.g. \"$(realpath PATH)\"")
	case m.IsDir():
		return errors.New("is a directory; --input copies one regular file: pass each file, or an archive of the folder")
	}
	kind := "a special file"
	for _, k := range specialKinds {
		if m&k.bit != 0 {
			kind = k.name
			break
		}
	}
	return fmt.Errorf("is %s, not a regular file; --input copies regular files only (for a stream, pipe it to skillkit's stdin)", kind)
}

// specialKinds name the types of special files, for errors.
var specialKinds = []struct {
	bit  os.FileMode
	name string
}{{os.ModeNamedPipe, "a FIFO"}, {os.ModeSocket, "a socket"}, {os.ModeDevice, "a device"}}

// suggestLimit returns a --input-limit that admits n bytes: n rounded up
// to whole MiB.
func suggestLimit(n int64) *byteSize {
	b := byteSize((n + 1<<20 - 1) &^ (1<<20 - 1))
	return &b
}

// copyInputs copies the opened inputs into ws's work/inputs, holding the
// workspace lock, and returns where each went, relative to the workspace.
func copyInputs(ctx context.Context, ws *workspace.Workspace, ins []execInput) ([]workspace.InputResult, error) {
	if len(ins) == 0 {
		return nil, nil
	}
	files := make([]workspace.InputFile, len(ins))
	for i, in := range ins {
		files[i] = workspace.InputFile{File: in.file, Dest: in.dest}
	}
	unlock, err := ws.Lock(ctx)
	if err != nil {
		return nil, fmt.Errorf("exec: --input: %w", err)
	}
	defer unlock()
	res, err := ws.CopyInputFiles(ctx, files)
	switch {
	case errors.Is(err, workspace.ErrLimit):
		return nil, fmt.Errorf("exec: --input: %w; raise --input-limit", err)
	case errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT):
		return nil, fmt.Errorf("exec: --input: %w; the workspace holds %s and %d files in all (skills, inputs and what the command writes): pass smaller inputs", err, mib(sandbox.DefaultDiskBytes), sandbox.DefaultDiskInodes)
	case err != nil:
		return nil, fmt.Errorf("exec: --input: %w", err)
	}
	return res, nil
}

// readStdin returns what the command's stdin gets: nothing when limit is
// 0 or env.Stdin is a terminal, else all of env.Stdin, which must hold at
// most limit bytes. It gives up when ctx ends (an interrupt) while stdin
// is still open.
func readStdin(ctx context.Context, env *Env, limit int64) ([]byte, error) {
	if limit == 0 || readerIsTerminal(env.Stdin) {
		return nil, nil
	}
	type result struct {
		b   []byte
		err error
	}
	got := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(env.Stdin, min(limit, math.MaxInt64-1)+1))
		got <- result{b, err}
	}()
	var r result
	select {
	case r = <-got:
	case <-ctx.Done():
		return nil, fmt.Errorf("exec: reading stdin: %w (pass --stdin-limit 0 to leave stdin unread)", ctx.Err())
	}
	switch {
	case r.err != nil:
		return nil, fmt.Errorf("exec: read stdin: %w; pass --stdin-limit 0 to leave stdin unread", r.err)
	case int64(len(r.b)) > limit:
		return nil, fmt.Errorf("exec: stdin holds more than --stdin-limit %s; raise --stdin-limit, or pass the data as a file with --input", (*byteSize)(&limit))
	case len(r.b) == 0:
		return nil, nil
	}
	return r.b, nil
}

// readerIsTerminal reports whether r has an Fd method (as an *os.File
// has) and its descriptor is a terminal. Env.IsTerminal is about the
// outputs, so it is not asked.
func readerIsTerminal(r io.Reader) bool {
	f, ok := r.(interface{ Fd() uintptr })
	return ok && termtext.IsTerminal(f.Fd())
}
