package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Environment variable names set for each command.
const (
	EnvWorkspaceDir = "WORKSPACE_DIR"
	EnvSkillsDir    = "SKILLS_DIR"
	EnvWorkDir      = "WORK_DIR"
	EnvOutputDir    = "OUTPUT_DIR"
	EnvRunDir       = "RUN_DIR"
	EnvSkillName    = "SKILL_NAME"
)

// Workspace is one session's working directory. Obtain it from
// Manager.Open; its methods are safe for concurrent use, but commands should
// hold Lock so that they do not run in the same workspace at once.
type Workspace struct {
	m   *Manager
	id  string
	dir string
	st  *state
}

// ID returns the workspace (session) ID.
func (w *Workspace) ID() string { return w.id }

// Dir returns the workspace directory (WORKSPACE_DIR).
func (w *Workspace) Dir() string { return w.dir }

// SkillsDir returns the directory holding staged skill copies (SKILLS_DIR).
func (w *Workspace) SkillsDir() string { return filepath.Join(w.dir, skillsName) }

// WorkDir returns the shared scratch directory (WORK_DIR).
func (w *Workspace) WorkDir() string { return filepath.Join(w.dir, workName) }

// OutputDir returns the directory for results (OUTPUT_DIR).
func (w *Workspace) OutputDir() string { return filepath.Join(w.dir, outName) }

// InputsDir returns the directory CopyInput copies into (WORK_DIR/inputs).
func (w *Workspace) InputsDir() string { return filepath.Join(w.dir, filepath.FromSlash(inputsRel)) }

// RunsDir returns the directory holding one subdirectory per command.
func (w *Workspace) RunsDir() string { return filepath.Join(w.dir, runsName) }

// SkillDir returns the directory of the staged copy of skill name. It does
// not check that the skill was staged.
func (w *Workspace) SkillDir(name string) (string, error) {
	if err := validName("skill name", name, maxSkillLen); err != nil {
		return "", err
	}
	return filepath.Join(w.dir, skillsName, name), nil
}

// Run is the per-command view of a workspace: a fresh run directory and the
// environment a command gets.
type Run struct {
	// ID names the run directory under runs/; IDs sort by creation time.
	ID string
	// Dir is the fresh run directory (RUN_DIR).
	Dir string
	// Skill is the skill the command runs for, or "".
	Skill string
	// SkillDir is the staged skill copy, or "" when Skill is "". It is the
	// natural working directory for the command.
	SkillDir string
	// Env holds WORKSPACE_DIR, SKILLS_DIR, WORK_DIR, OUTPUT_DIR, RUN_DIR and,
	// for a skill, SKILL_NAME.
	Env map[string]string
}

// Environ returns r.Env as sorted KEY=value strings, the form exec.Cmd.Env
// takes.
func (r *Run) Environ() []string {
	out := make([]string, 0, len(r.Env))
	for k, v := range r.Env {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// Rebased returns r.Env with the workspace directory replaced by root: the
// environment for a runner that shows the workspace to the command at root
// (see sandbox.WorkspacePath).
func (r *Run) Rebased(root string) map[string]string {
	ws := r.Env[EnvWorkspaceDir]
	out := make(map[string]string, len(r.Env))
	for k, v := range r.Env {
		if rest, ok := strings.CutPrefix(v, ws); ok && (rest == "" || rest[0] == filepath.Separator) {
			v = root + filepath.ToSlash(rest)
		}
		out[k] = v
	}
	return out
}

// NewRun creates a fresh run directory for one command and returns its
// environment. skill names the staged skill the command runs for; "" means a
// command not tied to a skill. A named skill must have been staged.
func (w *Workspace) NewRun(ctx context.Context, skill string) (*Run, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := &Run{Skill: skill, Env: map[string]string{
		EnvWorkspaceDir: w.dir,
		EnvSkillsDir:    w.SkillsDir(),
		EnvWorkDir:      w.WorkDir(),
		EnvOutputDir:    w.OutputDir(),
	}}
	root, err := w.openRoot()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if skill != "" {
		dir, err := w.SkillDir(skill)
		if err != nil {
			return nil, err
		}
		info, err := root.Lstat(skillsName + "/" + skill)
		if err != nil || !info.IsDir() {
			return nil, fmt.Errorf("%w: workspace %s has no skill %q; call Stage first", ErrNotStaged, w.id, skill)
		}
		r.SkillDir = dir
		r.Env[EnvSkillName] = skill
	}
	for {
		r.ID = time.Now().UTC().Format("20060102T150405.000000000Z") + "-" + randomHex(4)
		err := root.Mkdir(runsName+"/"+r.ID, 0o755)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("workspace %s: create run directory: %w", w.id, err)
		}
		break
	}
	r.Dir = filepath.Join(w.RunsDir(), r.ID)
	r.Env[EnvRunDir] = r.Dir
	return r, nil
}

// openRoot opens the workspace directory as an os.Root: every path below it
// is then resolved without leaving it, even through symbolic links a command
// created.
func (w *Workspace) openRoot() (*os.Root, error) {
	r, err := os.OpenRoot(w.dir)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", w.id, err)
	}
	return r, nil
}

// layoutDirs are the directories every workspace has, parents first.
var layoutDirs = []string{skillsName, workName, inputsRel, outName, runsName}

// ensureLayout creates the workspace directories that are missing. Anything
// else a command left at one of those paths (a file, a symbolic link) is
// removed first, so that the host's later writes there stay inside.
func (w *Workspace) ensureLayout() error {
	top, err := os.OpenRoot(w.m.root)
	if err != nil {
		return fmt.Errorf("workspace %s: %w", w.id, err)
	}
	defer top.Close()
	if err := top.Mkdir(w.id, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("workspace %s: create: %w", w.id, err)
	}
	root, err := top.OpenRoot(w.id)
	if err != nil {
		return fmt.Errorf("workspace %s: %w", w.id, err)
	}
	defer root.Close()
	for _, d := range layoutDirs {
		info, err := root.Lstat(d)
		if err == nil && info.IsDir() {
			continue
		}
		if err == nil {
			if err := root.Remove(d); err != nil {
				return fmt.Errorf("workspace %s: replace %s: %w", w.id, d, err)
			}
		}
		if err := root.Mkdir(d, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("workspace %s: create %s: %w", w.id, d, err)
		}
	}
	return nil
}
