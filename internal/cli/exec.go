package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/sandbox"
	"github.com/skillkit/skillkit/tools"
	"github.com/skillkit/skillkit/workspace"
)

// Exit statuses of `skillkit exec` that are not the command's own.
const (
	// execTimeoutStatus is returned when the command hit --timeout, as
	// timeout(1) does.
	execTimeoutStatus = 124
	// execUnknownStatus is returned when the sandbox reports no status.
	execUnknownStatus = 1
)

// freshWorkspaceID names the workspace inside a temporary root.
const freshWorkspaceID = "exec"

// execFlags holds the flags of `skillkit exec`.
type execFlags struct {
	asJSON    bool
	skills    []string
	outputs   []string
	workspace string
	timeout   time.Duration
	network   bool
	local     bool
}

func newExec(env *Env) *cobra.Command {
	var f execFlags
	cmd := &cobra.Command{
		Use:   "exec [--json] [--skill NAME]... [--output GLOB]... [--workspace DIR] [--timeout D] [--network] [--local] [ROOT...] -- COMMAND [ARG...]",
		Short: "Run one command in a sandboxed workspace with skills staged",
		Long: "exec runs COMMAND in a workspace: a fresh temporary one (removed afterwards) or DIR from\n" +
			"--workspace (kept; created when missing; its parent gets a lock file). Each --skill is taken\n" +
			"from the ROOTs (or the default roots) and copied to skills/NAME first. The working directory\n" +
			"is the workspace; WORKSPACE_DIR, SKILLS_DIR, WORK_DIR, OUTPUT_DIR and RUN_DIR are set.\n\n" +
			"The command runs in the isolated sandbox: no network unless --network, no files outside the\n" +
			"workspace but read-only system directories. --local runs it UNCONFINED instead (trusted\n" +
			"commands only). After the command, files matching the --output globs (relative to the\n" +
			"workspace, e.g. 'out/**') are collected.\n\n" +
			"Without --json, the command's stdout and stderr are passed through and a summary of\n" +
			"truncation, timeout and output files goes to stderr. With --json, one object is printed:\n" +
			"exit_code, stdout, stderr, stdout_truncated, stderr_truncated, timed_out, duration_ms and\n" +
			"output_files (path, size, mime, content when inline), the workspace_exec tool's shape.\n\n" +
			"Exit status: the command's own (128+N when killed by signal N), 124 when it timed out,\n" +
			"1 when no status is known, 2 when skillkit could not run it.",
		RunE: func(cmd *cobra.Command, args []string) error {
			dash := cmd.ArgsLenAtDash()
			if dash < 0 || dash == len(args) {
				return errors.New("exec: no COMMAND; put it after --, e.g. skillkit exec -- python3 script.py")
			}
			return runExec(cmd.Context(), env, f, args[:dash], args[dash:])
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.asJSON, "json", false, "print the result as one JSON object")
	fl.StringArrayVar(&f.skills, "skill", nil, "stage this skill into skills/NAME (repeatable)")
	fl.StringArrayVar(&f.outputs, "output", nil, "collect files matching this glob, relative to the workspace (repeatable)")
	fl.StringVar(&f.workspace, "workspace", "", "use (and keep) this workspace directory instead of a temporary one")
	fl.DurationVar(&f.timeout, "timeout", sandbox.DefaultTimeout, "kill the command after this long")
	fl.BoolVar(&f.network, "network", false, "allow network access in the isolated sandbox")
	fl.BoolVar(&f.local, "local", false, "run UNCONFINED, without the sandbox (trusted commands only)")
	return cmd
}

// runExec stages the skills, runs argv and reports the result.
func runExec(ctx context.Context, env *Env, f execFlags, roots, argv []string) error {
	if f.timeout <= 0 {
		return fmt.Errorf("exec: --timeout is %v; pass a positive duration such as 30s", f.timeout)
	}
	snap, err := execSnapshot(ctx, env, f.skills, roots)
	if err != nil {
		return err
	}
	runner, err := execRunner(env, f)
	if err != nil {
		return err
	}
	ex, err := tools.NewExecutor(runner, &tools.ExecOptions{
		MaxTimeout: max(f.timeout, sandbox.DefaultMaxTimeout),
		Network:    f.network,
	})
	if err != nil {
		return err
	}
	ws, cleanup, err := execWorkspace(ctx, env, f.workspace)
	if err != nil {
		return err
	}
	defer cleanup()
	res, err := ex.Exec(ctx, ws, snap, tools.ExecRequest{
		Args:        argv,
		Timeout:     f.timeout,
		OutputFiles: f.outputs,
		Skills:      f.skills,
	})
	if err != nil {
		return fmt.Errorf("exec: %w", err)
	}
	if f.asJSON {
		if err := printJSON(env.Stdout, res); err != nil {
			return err
		}
	} else {
		io.WriteString(env.Stdout, res.Stdout)
		io.WriteString(env.Stderr, res.Stderr)
		printExecSummary(env.Stderr, res, f.timeout, f.workspace != "")
	}
	switch {
	case res.TimedOut:
		return exitError{execTimeoutStatus}
	case res.ExitCode < 0:
		return exitError{execUnknownStatus}
	case res.ExitCode != 0:
		return exitError{res.ExitCode}
	}
	return nil
}

// execSnapshot opens the registry when skills are requested and checks
// that every one of them exists.
func execSnapshot(ctx context.Context, env *Env, skills, roots []string) (*registry.Snapshot, error) {
	if len(skills) == 0 {
		if len(roots) > 0 {
			return nil, fmt.Errorf("exec: ROOT arguments %q given without --skill; name the skills to stage with --skill NAME", roots)
		}
		return nil, nil
	}
	reg, err := openRegistry(ctx, env, roots)
	if err != nil {
		return nil, err
	}
	snap := reg.Snapshot()
	seen := map[string]bool{}
	for _, name := range skills {
		if _, ok := snap.Lookup(name); !ok {
			return nil, fmt.Errorf("exec: --skill %q: no such skill in the roots; run skillkit list to see the names", name)
		}
		if seen[name] {
			return nil, fmt.Errorf("exec: --skill %q is given twice; name each skill once", name)
		}
		seen[name] = true
	}
	return snap, nil
}

// execRunner returns the isolated runner, or the unconfined one with a loud
// warning when --local is set.
func execRunner(env *Env, f execFlags) (sandbox.Runner, error) {
	maxT := max(f.timeout, sandbox.DefaultMaxTimeout)
	if f.local {
		if f.network {
			return nil, errors.New("exec: --network only applies to the sandbox; --local already allows all network access, drop one of them")
		}
		// The runner's own warning goes to stderr, without a timestamp.
		logger := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{
			ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
				if len(groups) == 0 && a.Key == slog.TimeKey {
					return slog.Attr{}
				}
				return a
			},
		}))
		fmt.Fprintln(env.Stderr, "skillkit exec: WARNING: --local runs the command UNCONFINED: it can read and write every file you can, use the network and signal your processes")
		return sandbox.NewUnconfinedLocal(&sandbox.LocalOptions{MaxTimeout: maxT, Logger: logger})
	}
	r, err := sandbox.NewIsolated(&sandbox.IsolatedOptions{MaxTimeout: maxT})
	var fe *sandbox.FeatureError
	if errors.As(err, &fe) {
		return nil, fmt.Errorf("exec: %w; or pass --local to run without confinement (trusted commands only)", err)
	}
	return r, err
}

// execWorkspace opens the workspace at dir, or a fresh temporary one that
// cleanup removes.
func execWorkspace(ctx context.Context, env *Env, dir string) (*workspace.Workspace, func(), error) {
	if dir == "" {
		root, err := os.MkdirTemp("", "skillkit-exec-")
		if err != nil {
			return nil, nil, fmt.Errorf("exec: temporary workspace: %w", err)
		}
		cleanup := func() { os.RemoveAll(root) }
		ws, err := openWorkspace(ctx, root, freshWorkspaceID)
		if err != nil {
			cleanup()
			return nil, nil, err
		}
		return ws, cleanup, nil
	}
	if !filepath.IsAbs(dir) && env.Cwd != "" {
		dir = filepath.Join(env.Cwd, dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("exec: --workspace %q: %w", dir, err)
	}
	ws, err := openWorkspace(ctx, filepath.Dir(abs), filepath.Base(abs))
	if err != nil {
		return nil, nil, fmt.Errorf("exec: --workspace %q: %w", dir, err)
	}
	return ws, func() {}, nil
}

// openWorkspace opens workspace id under root.
func openWorkspace(ctx context.Context, root, id string) (*workspace.Workspace, error) {
	m, err := workspace.New(&workspace.Options{Root: root})
	if err != nil {
		return nil, err
	}
	return m.Open(ctx, id)
}

// printExecSummary tells the user, on stderr, what the plain output does
// not show.
func printExecSummary(w io.Writer, res *tools.ExecResult, timeout time.Duration, kept bool) {
	if res.StdoutTruncated {
		fmt.Fprintln(w, "skillkit exec: stdout truncated (the start and end are kept)")
	}
	if res.StderrTruncated {
		fmt.Fprintln(w, "skillkit exec: stderr truncated (the start and end are kept)")
	}
	if res.TimedOut {
		fmt.Fprintf(w, "skillkit exec: timed out after %v (--timeout); the command was killed\n", timeout)
	}
	for _, of := range res.OutputFiles {
		fmt.Fprintf(w, "skillkit exec: output %s (%d bytes, %s)\n", of.Path, of.Size, of.MIME)
	}
	if res.OutputFilesTruncated {
		fmt.Fprintln(w, "skillkit exec: more output files matched than are listed")
	}
	if len(res.OutputFiles) > 0 && !kept {
		fmt.Fprintln(w, "skillkit exec: the temporary workspace is removed; use --workspace DIR to keep the files or --json for their text")
	}
}
