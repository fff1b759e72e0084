package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/sandbox"
	"github.com/skillkit/skillkit/tools"
	"github.com/skillkit/skillkit/workspace"
)

// Exit statuses of `skillkit exec` that are not the command's own.
const (
	// execNotFoundStatus is returned when the command cannot be found or
	// started, as shells do.
	execNotFoundStatus = 127
	// execUnknownStatus is returned when the sandbox reports no status
	// (exit_code -1).
	execUnknownStatus = 1
)

// execMaxTimeout is the longest --timeout: the runners' own default
// ceiling. The CLI lowers the runner's ceiling to --timeout and never
// raises it, so a typo such as 100h is an error, not a command that runs
// for days.
const execMaxTimeout = sandbox.DefaultMaxTimeout

// freshWorkspaceID names the workspace inside a temporary root.
const freshWorkspaceID = "exec"

// execFlags holds the flags of `skillkit exec`.
type execFlags struct {
	asJSON    bool
	skills    []string
	outputs   []string
	workspace string
	cwd       string
	timeout   time.Duration
	network   bool
	local     bool
	// unboundedDisk and allowDowngrade are the isolated runner's
	// explicit opt-ins for hosts that lack a bound.
	unboundedDisk  bool
	allowDowngrade bool
	// runner names the runner (--runner: isolated, local or container)
	// and image the container runner's image.
	runner string
	image  string
	// inputs are the --input arguments, PATH[=DEST]; inputLimit bounds
	// each file and stdinLimit the stdin forwarded (0: none is read).
	inputs     []string
	inputLimit byteSize
	stdinLimit byteSize
}

func newExec(env *Env) *cobra.Command {
	f := execFlags{inputLimit: execInputLimit, stdinLimit: execStdinLimit}
	cmd := &cobra.Command{
		Use:   "exec [--json] [--skill NAME]... [--input PATH[=DEST]]... [--output GLOB]... [--workspace DIR] [--cwd DIR] [--timeout D] [--input-limit SIZE] [--stdin-limit SIZE] [--network] [--local] [--unbounded-disk] [--allow-downgrade] [ROOT...] -- COMMAND [ARG...]",
		Short: "Run one command in a sandboxed workspace with skills staged",
		Long: "exec runs COMMAND in a workspace: a fresh temporary one (removed afterwards) or DIR from\n" +
			"--workspace (kept, never swept; created when missing; an existing DIR must be empty or one\n" +
			"an earlier --workspace run created: skillkit never adopts a folder of yours). Its records\n" +
			"(lock, staging digests) live under the user cache directory, not next to DIR. Each --skill\n" +
			"is taken from the ROOTs (or the default roots) and copied to skills/NAME first.\n\n" +
			"The working directory is --cwd (relative to the workspace, no '..'); without --cwd it is\n" +
			"skills/NAME when exactly one --skill is given, else the workspace. WORKSPACE_DIR, SKILLS_DIR,\n" +
			"WORK_DIR, OUTPUT_DIR and RUN_DIR are set, and SKILL_NAME=NAME when the working directory\n" +
			"is inside skills/NAME of a staged skill.\n\n" +
			"Each --input PATH[=DEST] copies the host file PATH into work/inputs/DEST before the command\n" +
			"runs: the command finds it at $WORK_DIR/inputs/DEST, or inputs/DEST from skills/NAME. DEST\n" +
			"defaults to PATH's file name; it is a relative path without '..', one per --input. The last\n" +
			"'=' starts DEST, so a PATH holding '=' needs an explicit DEST. PATH must be a regular file\n" +
			"(not a directory, FIFO or device) of at most --input-limit (default " + (&f.inputLimit).String() + ", suffixes KiB,\n" +
			"MiB, GiB), and a symbolic link as its last element is refused, not followed. Any error stops\n" +
			"exec before the command runs, with no input copied.\n\n" +
			"When skillkit's stdin is not a terminal, it is read to its end before the command starts and\n" +
			"given to the command as its stdin: at most --stdin-limit (default " + (&f.stdinLimit).String() + "), more is an error;\n" +
			"--stdin-limit 0 leaves it unread (for a pipe that is never closed). On a terminal the command\n" +
			"gets an empty stdin.\n\n" +
			"The command runs in the isolated sandbox: a private root holding only the workspace (at\n" +
			sandbox.WorkspaceDir + "), read-only system directories and private /tmp and /dev/shm; no network unless\n" +
			"--network; as an unprivileged user with no capability; seccomp; no inherited descriptors; a\n" +
			"clean environment. Limits per command (defaults): memory " + mib(sandbox.DefaultMemory) + " for all its\n" +
			"processes, " + strconv.Itoa(sandbox.DefaultProcesses) + " tasks, " + strconv.Itoa(sandbox.DefaultCPUSeconds) + " CPU seconds and " + mib(sandbox.DefaultAddressSpace) + " address space per\n" +
			"process, files of " + mib(sandbox.DefaultFileSize) + ", " + strconv.Itoa(sandbox.DefaultOpenFiles) + " open files, " + mib(sandbox.DefaultOutputBytes) + " of stdout and of stderr, disk\n" +
			mib(sandbox.DefaultDiskBytes) + " and " + strconv.Itoa(sandbox.DefaultDiskInodes) + " files (workspace, /tmp, /dev/shm), --timeout (default " + sandbox.DefaultTimeout.String() + ",\n" +
			"at most " + execMaxTimeout.String() + "). Run as root, each workspace is a bounded volume: a temporary one in\n" +
			"memory, a --workspace DIR one backed by an image in the cache directory and left mounted at\n" +
			"DIR (umount DIR before removing it). An unprivileged user cannot make volumes or, on a\n" +
			"cgroup v1 host, memory cgroups: --unbounded-disk and --allow-downgrade accept running\n" +
			"without those bounds, explicitly. --local runs the command UNCONFINED instead (trusted\n" +
			"commands only). After the command, files matching the --output globs (relative to the\n" +
			"workspace, e.g. 'out/**') are collected.\n\n" +
			"Without --json, the command's stdout and stderr are passed through (with control characters\n" +
			"escaped on a terminal, see skillkit --help) and a summary of truncation, timeout and output\n" +
			"files goes to stderr. With --json, one object is printed: exit_code, stdout, stderr,\n" +
			"stdout_truncated, stderr_truncated, timed_out, oom_killed, disk_limit, duration_ms,\n" +
			"output_files (path, size, mime, content when inline) and notes, the workspace_exec tool's\n" +
			"shape.\n\n" +
			"Exit status: the command's exit_code, as in the JSON (128+N when killed by signal N; at\n" +
			"--timeout exactly 143, or 137 when it outlived the grace after SIGTERM); 127 when the\n" +
			"command cannot be found or started; 1 when no status is known; 2 when skillkit could not\n" +
			"run it.",
		RunE: func(cmd *cobra.Command, args []string) error {
			dash := cmd.ArgsLenAtDash()
			if dash < 0 || dash == len(args) {
				return errors.New("exec: no COMMAND; put it after --, e.g. skillkit exec -- python3 script.py")
			}
			return runExec(cmd.Context(), env, f, args[:dash], args[dash:])
		},
	}
	addDepthFlag(cmd, env)
	addLimitFlags(cmd, env, false)
	fl := cmd.Flags()
	fl.BoolVar(&f.asJSON, "json", false, "print the result as one JSON object")
	fl.StringArrayVar(&f.skills, "skill", nil, "stage this skill into skills/NAME (repeatable)")
	fl.StringArrayVar(&f.inputs, "input", nil, "copy the host file PATH to work/inputs/DEST, PATH[=DEST] (DEST: PATH's file name by default; repeatable)")
	fl.Var(&f.inputLimit, "input-limit", "largest --input file, in bytes or with KiB, MiB, GiB")
	fl.Var(&f.stdinLimit, "stdin-limit", "most stdin forwarded to the command when stdin is not a terminal (0: leave stdin unread)")
	fl.StringArrayVar(&f.outputs, "output", nil, "collect files matching this glob, relative to the workspace (repeatable)")
	fl.StringVar(&f.workspace, "workspace", "", "use (and keep) this workspace directory instead of a temporary one")
	fl.StringVar(&f.cwd, "cwd", "", "working directory relative to the workspace (default: skills/NAME for one --skill)")
	fl.DurationVar(&f.timeout, "timeout", sandbox.DefaultTimeout, "kill the command after this long (at most "+execMaxTimeout.String()+")")
	addSandboxFlags(cmd, &f)
	return cmd
}

// addSandboxFlags gives a command that runs commands the flags that pick
// the runner (--local) and the isolated sandbox's opt-ins, the same for
// every such command.
func addSandboxFlags(cmd *cobra.Command, f *execFlags) {
	fl := cmd.Flags()
	fl.BoolVar(&f.network, "network", false, "allow network access in the isolated sandbox")
	fl.BoolVar(&f.local, "local", false, "run UNCONFINED, without the sandbox (trusted commands only)")
	fl.BoolVar(&f.unboundedDisk, "unbounded-disk", false, "accept a workspace whose disk use the sandbox cannot bound (needed without root)")
	fl.BoolVar(&f.allowDowngrade, "allow-downgrade", false, "run the sandbox without a layer this host lacks (Landlock, seccomp, cgroups), with a warning")
	addRunnerFlags(fl, f)
}

// addRunnerFlags gives a command --runner and --image.
func addRunnerFlags(fl *pflag.FlagSet, f *execFlags) {
	fl.StringVar(&f.runner, "runner", "isolated", "where commands run: isolated (the sandbox), local (UNCONFINED: trusted commands only) or container (a Docker or Podman engine, $DOCKER_HOST or its default socket)")
	fl.StringVar(&f.image, "image", "", "the container image of --runner container (present in the engine: it is never pulled)")
}

// runExec stages the skills, runs argv and reports the result.
func runExec(ctx context.Context, env *Env, f execFlags, roots, argv []string) error {
	switch {
	case f.timeout <= 0:
		return fmt.Errorf("exec: --timeout is %v; pass a positive duration such as 30s", f.timeout)
	case f.timeout > execMaxTimeout:
		return fmt.Errorf("exec: --timeout %v is longer than the maximum %v; pass at most %v", f.timeout, execMaxTimeout, execMaxTimeout)
	}
	if f.inputLimit <= 0 {
		return fmt.Errorf("exec: --input-limit is %d; pass a positive size such as 256MiB", f.inputLimit)
	}
	if err := checkExecPaths(f); err != nil {
		return err
	}
	inputs, err := parseInputs(env, f.inputs)
	if err != nil {
		return err
	}
	if err := lookCommand(argv[0]); err != nil {
		fmt.Fprintf(env.Stderr, "skillkit exec: %v\n", err)
		return exitError{execNotFoundStatus}
	}
	if err := openInputs(inputs, int64(f.inputLimit)); err != nil {
		return err
	}
	defer closeInputs(inputs)
	dir := f.cwd
	if dir == "" && len(f.skills) == 1 {
		dir = "skills/" + f.skills[0] // SKILL_NAME is set there
	}
	snap, err := execSnapshot(ctx, env, f.skills, roots)
	if err != nil {
		return err
	}
	runner, err := execRunner(env, f, "exec", "the command")
	if err != nil {
		return err
	}
	if c, ok := runner.(io.Closer); ok {
		defer c.Close() // the isolated runner's /etc snapshot
	}
	ex, err := tools.NewExecutor(runner, &tools.ExecOptions{
		MaxTimeout: f.timeout,
		Network:    f.network,
	})
	if err != nil {
		return err
	}
	stdin, err := readStdin(ctx, env, int64(f.stdinLimit))
	if err != nil {
		return err
	}
	ws, cleanup, err := execWorkspace(ctx, env, f.workspace, int64(f.inputLimit))
	if err != nil {
		return err
	}
	defer cleanup()
	if err := checkWorkspaceDisk(runner, f, "exec", "the command", ws.Dir(), "pass --local to run without confinement (trusted commands only)"); err != nil {
		return err
	}
	copied, err := copyInputs(ctx, ws, inputs)
	if err != nil {
		return err
	}
	if !f.asJSON {
		seen := sandbox.WorkspacePath(runner, ws.Dir())
		for _, in := range copied {
			fmt.Fprintf(env.Stderr, "skillkit exec: input %s/%s (%d bytes)\n", seen, in.Path, in.Bytes)
		}
	}
	res, err := ex.Exec(ctx, ws, snap, tools.ExecRequest{
		Args:        argv,
		Dir:         dir,
		Stdin:       stdin,
		Timeout:     f.timeout,
		OutputFiles: f.outputs,
		Skills:      f.skills,
	})
	if msg, ok := startFailure(err); ok {
		fmt.Fprintf(env.Stderr, "skillkit exec: %s\n", msg)
		return exitError{execNotFoundStatus}
	}
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
		printListing(ctx, env.Stderr, snap, name) // what staging copies
	}
	return snap, nil
}

// execRunner returns the isolated runner, or the unconfined one with a loud
// warning when --local is set; cmd names the command in messages and what
// the commands it runs. Its ceiling is --timeout (checked to be at most
// execMaxTimeout): the CLI lowers a runner's ceiling, never raises it.
func execRunner(env *Env, f execFlags, cmd, what string) (sandbox.Runner, error) {
	maxT := f.timeout
	switch f.runner {
	case "", "isolated":
		if f.image != "" {
			return nil, fmt.Errorf("%s: --image applies to --runner container; add --runner container or drop --image", cmd)
		}
	case "local":
		f.local = true
	case "container":
		switch {
		case f.local:
			return nil, fmt.Errorf("%s: --local and --runner container contradict each other; drop one", cmd)
		case f.unboundedDisk || f.allowDowngrade:
			return nil, fmt.Errorf("%s: %s configure the isolated sandbox, not containers; drop them", cmd, strings.Join(weakened(f), " and "))
		case f.image == "":
			return nil, fmt.Errorf("%s: --runner container needs --image IMG, an image the engine has (it is never pulled)", cmd)
		}
		// $DOCKER_HOST as the command sees its environment (the runner
		// would read the process's).
		r, err := sandbox.NewContainer(&sandbox.ContainerOptions{Image: f.image, MaxTimeout: maxT, Socket: env.Getenv("DOCKER_HOST"),
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			return nil, fmt.Errorf("%s: --runner container: %w", cmd, err)
		}
		return r, nil
	default:
		return nil, fmt.Errorf("%s: --runner %q: use isolated, local or container", cmd, f.runner)
	}
	if f.local {
		if f.network {
			return nil, fmt.Errorf("%s: --network only applies to the sandbox; --local already allows all network access, drop one of them", cmd)
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
		fmt.Fprintf(env.Stderr, "skillkit %s: WARNING: --local runs %s UNCONFINED: it can read and write every file you can, use the network and signal your processes\n", cmd, what)
		return sandbox.NewUnconfinedLocal(&sandbox.LocalOptions{MaxTimeout: maxT, Logger: logger})
	}
	if f.unboundedDisk || f.allowDowngrade {
		var what []string
		if f.unboundedDisk {
			what = append(what, "--unbounded-disk: what a command writes to its workspace is not bounded")
		}
		if f.allowDowngrade {
			what = append(what, "--allow-downgrade: the layers this host lacks (Landlock, seccomp, or the memory and process cgroups) are left out")
		}
		fmt.Fprintf(env.Stderr, "skillkit %s: WARNING: the sandbox does not bound everything it would: %s\n", cmd, strings.Join(what, "; "))
	}
	r, err := sandbox.NewIsolated(&sandbox.IsolatedOptions{
		MaxTimeout:     maxT,
		UnboundedDisk:  f.unboundedDisk,
		AllowDowngrade: f.allowDowngrade,
		Logger:         slog.New(slog.NewTextHandler(io.Discard, nil)), // warned above
	})
	var fe *sandbox.FeatureError
	if errors.As(err, &fe) {
		hint := "--local to run without confinement (trusted commands only)"
		if cmd == "serve" {
			hint = "--no-exec to serve without commands, or --local-exec to run them without confinement (trusted skills only)"
		}
		fix := ""
		switch fe.Feature {
		case sandbox.FeatureUserNamespaces:
			fix = "enable user namespaces (sysctl user.max_user_namespaces > 0, and kernel.unprivileged_userns_clone=1 where it exists), or pass "
		case sandbox.FeatureCgroups:
			fix = "run as root, or pass --allow-downgrade to run without the memory and process bounds, or "
			if os.Geteuid() != 0 && !f.unboundedDisk {
				// The disk bound is the next thing a user without root
				// meets: say both at once.
				fix = "run as root, or pass --allow-downgrade --unbounded-disk to run without the memory, process and disk bounds (a user without root needs both), or "
			}
		default:
			fix = "pass --allow-downgrade to run without that layer, or "
		}
		return nil, &flagError{msg: fmt.Sprintf("%s: the sandbox needs %s, which this host does not give it: %v; %s%s", cmd, fe.Feature, fe.Err, fix, hint), err: err}
	}
	return r, err
}

// flagError is an error of a library said the command line's way (its
// flags rather than the library's options); it wraps the library's.
type flagError struct {
	msg string
	err error
}

// Error implements error.
func (e *flagError) Error() string { return e.msg }

// Unwrap returns the library's error.
func (e *flagError) Unwrap() error { return e.err }

// weakened names the opt-ins given, for the warning.
func weakened(f execFlags) []string {
	var w []string
	if f.unboundedDisk {
		w = append(w, "--unbounded-disk")
	}
	if f.allowDowngrade {
		w = append(w, "--allow-downgrade")
	}
	return w
}

// mib formats a byte count in MiB or GiB.
func mib(n int64) string {
	if n >= 1<<30 && n%(1<<30) == 0 {
		return strconv.FormatInt(n>>30, 10) + " GiB"
	}
	return strconv.FormatInt(n>>20, 10) + " MiB"
}

// execWorkspace opens the workspace at dir, or a fresh temporary one that
// cleanup removes.
//
// For a given dir, the workspace root is dir's parent, a folder of the
// user's: nothing may be written there but dir itself, and nothing there
// may be removed. So the records go to a metadata root in the user cache
// directory, keyed by the parent's path, and sweeping is off.
func execWorkspace(ctx context.Context, env *Env, dir string, inputLimit int64) (*workspace.Workspace, func(), error) {
	if dir == "" {
		// In memory: it ends with this command. A root left by a killed
		// skillkit is swept by the next one.
		m, err := workspace.NewTemp(ctx, &workspace.Options{InMemoryVolumes: true, MaxInputBytes: inputLimit})
		if err != nil {
			return nil, nil, fmt.Errorf("exec: temporary workspace: %w", err)
		}
		cleanup := func() {
			if err := m.Discard(context.WithoutCancel(ctx)); err != nil {
				fmt.Fprintf(env.Stderr, "skillkit exec: remove the temporary workspace: %v\n", err)
			}
		}
		ws, err := m.Open(ctx, freshWorkspaceID)
		if err != nil {
			cleanup()
			return nil, nil, fmt.Errorf("exec: temporary workspace: %w", err)
		}
		return ws, cleanup, nil
	}
	abs, err := filepath.Abs(hostPath(env, dir))
	if err != nil {
		return nil, nil, fmt.Errorf("exec: --workspace %q: %w", dir, err)
	}
	parent := filepath.Dir(abs)
	cache, err := userCacheDir(env)
	if err != nil {
		return nil, nil, fmt.Errorf("exec: --workspace %q: no cache directory for its records (set XDG_CACHE_HOME): %w", dir, err)
	}
	sum := sha256.Sum256([]byte(parent))
	m, err := workspace.New(&workspace.Options{
		Root:          parent,
		MetaRoot:      filepath.Join(cache, "skillkit", "workspace-meta", hex.EncodeToString(sum[:])),
		NoSweep:       true,
		MaxInputBytes: inputLimit,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("exec: --workspace %q: %w", dir, err)
	}
	ws, err := m.Open(ctx, filepath.Base(abs))
	if errors.Is(err, workspace.ErrNotWorkspace) {
		return nil, nil, fmt.Errorf("exec: --workspace %q exists, is not empty and was not created by skillkit exec --workspace; "+
			"pass a new or empty directory (skillkit never adopts an existing folder)", dir)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("exec: --workspace %q: %w", dir, err)
	}
	return ws, func() {}, nil
}

// userCacheDir returns $XDG_CACHE_HOME as env sees it, else
// os.UserCacheDir.
func userCacheDir(env *Env) (string, error) {
	if d := env.Getenv("XDG_CACHE_HOME"); filepath.IsAbs(d) {
		return d, nil
	}
	return os.UserCacheDir()
}

// checkExecPaths refuses a --cwd or --output that leaves the workspace,
// naming the flag; the executor checks them again.
func checkExecPaths(f execFlags) error {
	if f.cwd != "" {
		switch {
		case strings.ContainsRune(f.cwd, 0) || strings.Contains(f.cwd, `\`):
			return fmt.Errorf("exec: --cwd %q contains a NUL or backslash; use a slash-separated path", f.cwd)
		case path.IsAbs(f.cwd):
			return fmt.Errorf("exec: --cwd %q is absolute; pass a path relative to the workspace, e.g. skills/NAME", f.cwd)
		case slices.Contains(strings.Split(f.cwd, "/"), ".."):
			return fmt.Errorf("exec: --cwd %q contains \"..\"; pass a path inside the workspace, e.g. skills/NAME", f.cwd)
		}
	}
	for _, g := range f.outputs {
		if err := workspace.CheckGlob(g); err != nil {
			return fmt.Errorf("exec: --output: %w", err)
		}
	}
	return nil
}

// lookCommand checks that a command name without a slash is on the sandbox
// PATH (the CLI never changes it), so a typo gets a shell-like message.
// Paths with a slash are checked when the command starts.
func lookCommand(name string) error {
	if strings.ContainsRune(name, '/') {
		return nil
	}
	for _, d := range filepath.SplitList(sandbox.DefaultPath) {
		if info, err := os.Stat(filepath.Join(d, name)); err == nil && info.Mode().IsRegular() && info.Mode()&0o111 != 0 {
			return nil
		}
	}
	return fmt.Errorf("%s: command not found (searched %s); pass a path such as ./script.sh for a file in the working directory", name, sandbox.DefaultPath)
}

// startFailure recognizes an error from a command that could not be
// started and returns a one-line message for it.
func startFailure(err error) (string, bool) {
	if err == nil {
		return "", false
	}
	if errors.Is(err, sandbox.ErrCommandStart) {
		msg := err.Error()
		prefix := sandbox.ErrCommandStart.Error() + ": "
		if i := strings.LastIndex(msg, prefix); i >= 0 {
			msg = msg[i+len(prefix):]
		}
		return "cannot start: " + msg, true
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Op == "fork/exec" {
		return fmt.Sprintf("cannot start: %s: %v", pe.Path, pe.Err), true
	}
	return "", false
}

// printExecSummary tells the user, on stderr, what the plain output does
// not show.
func printExecSummary(w io.Writer, res *tools.ExecResult, timeout time.Duration, kept bool) {
	for _, u := range res.Unstaged {
		fmt.Fprintf(w, "skillkit exec: warning: skills/%s/%s was not staged: %s\n", u.Skill, u.Path, u.Reason)
	}
	if res.StdoutTruncated {
		fmt.Fprintln(w, "skillkit exec: stdout truncated (the start and end are kept)")
	}
	if res.StderrTruncated {
		fmt.Fprintln(w, "skillkit exec: stderr truncated (the start and end are kept)")
	}
	if res.TimedOut {
		fmt.Fprintf(w, "skillkit exec: timed out after %v (--timeout); the command was killed\n", timeout)
	}
	if res.OOMKilled {
		fmt.Fprintf(w, "skillkit exec: a process was killed for exceeding the memory limit (%s for all the command's processes)\n", mib(sandbox.DefaultMemory))
	}
	if res.DiskLimit {
		fmt.Fprintln(w, "skillkit exec: the workspace or /tmp ran out of space or files (disk limit)")
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
