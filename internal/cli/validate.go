package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/source"
)

func newValidate(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "validate PATH...",
		Short: "Validate skills strictly against the Agent Skills specification",
		Long: "validate checks each PATH — a skill folder, a SKILL.md file, or a folder holding skills —\n" +
			"against the Agent Skills specification, with the reference validator's messages and output:\n" +
			"\"Valid skill: P\" on stdout, or \"Validation failed for P:\" and one \"  - message\" line per\n" +
			"problem on stderr. The exit status is 1 when any skill fails.\n\n" +
			"Where skillkit's discovery (list, catalog, show, exec) would read a skill otherwise — skip it\n" +
			"(a name outside the skill tool's ASCII rule, a lower-case skill.md), read past a byte-order\n" +
			"mark, or read on past a \"---\" inside the front matter — \"FILE:LINE: warning: ...\" lines\n" +
			"on stderr after the verdict say so.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			depth, err := env.searchDepth()
			if err != nil {
				return err
			}
			failed := false
			for _, arg := range args {
				for _, t := range validationTargets(arg, depth) {
					var notes []skill.Diagnostic
					if len(t.errs) == 0 {
						t.errs, notes = validateDir(t.dir)
					}
					if len(t.errs) == 0 {
						fmt.Fprintf(env.Stdout, "Valid skill: %s\n", t.dir)
					} else {
						failed = true
						fmt.Fprintf(env.Stderr, "Validation failed for %s:\n", t.dir)
						for _, e := range t.errs {
							fmt.Fprintf(env.Stderr, "  - %s\n", e)
						}
					}
					printDiagnostics(env.Stderr, notes)
				}
				printDiagnostics(env.Stderr, walkWarnings(cmd.Context(), arg, depth))
			}
			if failed {
				return exitError{1}
			}
			return nil
		},
	}
	addDepthFlag(cmd, env)
	return cmd
}

// validateDir validates the skill folder dir and returns the problems
// (in the reference validator's words) and the notes on how discovery
// reads the skill otherwise. Its files are read through
// the file system of source.Dir, which opens beneath the folder without
// following symbolic links and with O_NONBLOCK, so that a link or a FIFO
// swapped in cannot redirect or hang the read. Links in the folder's own
// path are followed, so a linked skill folder validates as before; a
// SKILL.md that is itself a link is read where it leads when that is
// inside the folder, as discovery reads it (see skillFileFS).
func validateDir(dir string) ([]string, []skill.Diagnostic) {
	var fsys fs.FS
	if src, err := source.Dir(dir, "", 0); err != nil {
		// Gone or replaced since it was found: the error is worded as a
		// file that cannot be read (a folder that no longer exists lacks
		// its SKILL.md).
		fsys = errFS{err}
	} else {
		fsys = skillFileFS{src.FS}
	}
	name := skill.FileName
	data, err := fs.ReadFile(fsys, name)
	if errors.Is(err, fs.ErrNotExist) {
		// The reference validator also accepts a lower-case skill.md.
		name = skill.LowerFileName
		data, err = fs.ReadFile(fsys, name)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return []string{"Missing required file: SKILL.md"}, nil
	case err != nil:
		return []string{fmt.Sprintf("Cannot read SKILL.md: %v", err)}, nil
	}
	file := filepath.Join(dir, name)
	dirName := dirNameOf(dir)
	errs := skill.ValidateData(data, dirName)
	notes := skill.ValidateNotes(data, file)
	if len(errs) > 0 {
		return errs, notes
	}
	// Valid: say what discovery makes of it, where that differs.
	if name != skill.FileName {
		return errs, append(notes, skill.Diagnostic{File: file, Line: 1, Severity: skill.Warning, Message: fmt.Sprintf(
			"skillkit's discovery reads only %s and skips this skill: rename %s to %s", skill.FileName, name, skill.FileName)})
	}
	_, diags, err := skill.Parse(data, skill.ParseOptions{File: file, DirName: dirName})
	for _, d := range diags {
		if !slices.Contains(notes, d) {
			notes = append(notes, d)
		}
	}
	var le *skill.LoadError
	if errors.As(err, &le) {
		d := le.Diagnostic()
		d.Severity = skill.Warning
		d.Message = "skillkit's discovery skips this skill: " + d.Message
		notes = append(notes, d)
	}
	return errs, notes
}

// skillFileFS reads the files of a skill folder's no-follow file system;
// a file that is a symbolic link is resolved once, inside the folder
// (skill.Resolve), and the link-free path it leads to is read.
type skillFileFS struct{ fsys fs.FS }

func (s skillFileFS) Open(name string) (fs.File, error) {
	p, err := s.resolve(name)
	if err != nil {
		return nil, err
	}
	return s.fsys.Open(p)
}

func (s skillFileFS) ReadFile(name string) ([]byte, error) {
	p, err := s.resolve(name)
	if err != nil {
		return nil, err
	}
	return fs.ReadFile(s.fsys, p)
}

// resolve returns the link-free path of name: name itself unless it is a
// symbolic link (an Lstat that fails leaves the open to report it).
func (s skillFileFS) resolve(name string) (string, error) {
	info, err := fs.Lstat(s.fsys, name)
	if err != nil || info.Mode()&fs.ModeSymlink == 0 {
		return name, nil
	}
	p, err := skill.Resolve(s.fsys, ".", name)
	if errors.Is(err, skill.ErrEscape) {
		return "", fmt.Errorf("%w; skillkit reads a linked %s only inside its skill folder (discovery skips this skill): put the file itself in the folder", err, name)
	}
	return p, err
}

// errFS is a file system whose every open fails with err.
type errFS struct{ err error }

func (e errFS) Open(string) (fs.File, error) { return nil, e.err }

type target struct {
	dir  string
	errs []string // set when the path is wrong before any SKILL.md is read
}

// validationTargets resolves one PATH argument into the skill folders to
// validate: the folder of a SKILL.md file, a skill folder, or every skill
// folder under a root (to the discovery depth).
func validationTargets(arg string, depth int) []target {
	p := filepath.Clean(arg)
	info, err := os.Stat(p)
	if err != nil {
		return []target{{dir: p, errs: []string{"Path does not exist: " + p}}}
	}
	if !info.IsDir() {
		base := filepath.Base(p)
		if base == skill.FileName || base == skill.LowerFileName {
			return []target{{dir: filepath.Dir(p)}}
		}
		return []target{{dir: p, errs: []string{"Not a directory: " + p}}}
	}
	if hasSkillFile(p) {
		return []target{{dir: p}}
	}
	var out []target
	findSkillDirs(p, depth, &out)
	if len(out) == 0 {
		return []target{{dir: p, errs: []string{"Missing required file: SKILL.md"}}}
	}
	return out
}

// walkWarnings returns what discovery says about searching the folder of
// skills arg, apart from the skills themselves: skills below the depth,
// symlink loops, folders it could not read. validate finds the skills in
// a folder as discovery does, so it says the same about what it passed
// over. Nothing is returned for a skill folder or a file.
func walkWarnings(ctx context.Context, arg string, depth int) []skill.Diagnostic {
	p := filepath.Clean(arg)
	if info, err := os.Stat(p); err != nil || !info.IsDir() || hasSkillFile(p) {
		return nil
	}
	src, err := source.Dir(p, p, 0)
	if err != nil {
		return nil
	}
	src.MaxDepth = depth
	res, err := source.Discover(ctx, src, source.Options{})
	if err != nil {
		return nil
	}
	var out []skill.Diagnostic
	for _, d := range res.Diagnostics {
		base := filepath.Base(d.File)
		if d.Line != 0 || base == skill.FileName || base == skill.LowerFileName || d.File == src.DisplayPath(".") && len(res.Skills) == 0 && strings.HasPrefix(d.Message, "no skills found:") {
			continue // about a skill (validate says it), or what "Missing required file" says
		}
		out = append(out, d)
	}
	return out
}

func hasSkillFile(dir string) bool {
	for _, n := range []string{skill.FileName, skill.LowerFileName} {
		if info, err := os.Stat(filepath.Join(dir, n)); err == nil && !info.IsDir() {
			return true
		}
	}
	return false
}

// findSkillDirs collects folders holding a SKILL.md below dir, not
// searching inside skill folders, down to depth levels.
func findSkillDirs(dir string, depth int, out *[]target) {
	if depth <= 0 {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		*out = append(*out, target{dir: dir, errs: []string{"Cannot read folder: " + err.Error()}})
		return
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	for _, e := range entries {
		if skill.IgnoredDir(e.Name()) {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		link := e.Type()&fs.ModeSymlink != 0
		if link {
			if info, err := os.Stat(sub); err != nil || !info.IsDir() {
				continue
			}
		} else if !e.IsDir() {
			continue
		}
		if hasSkillFile(sub) {
			*out = append(*out, target{dir: sub})
			continue
		}
		if link {
			continue // as in discovery: a linked folder is followed only to a skill
		}
		findSkillDirs(sub, depth-1, out)
	}
}

func dirNameOf(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		return filepath.Base(abs)
	}
	return filepath.Base(dir)
}
