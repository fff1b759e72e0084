package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Runner runs one command and reports how it ended. A non-nil error means
// the command could not be run as specified (bad Spec, missing kernel
// feature, failure to start); a command that ran and failed is reported in
// the Result with a nil error.
type Runner interface {
	Run(ctx context.Context, spec Spec) (*Result, error)
}

// Spec describes one command. The zero value of every field except Args and
// Workspace means "the default".
type Spec struct {
	// Args is the argv; Args[0] is an absolute path or a name looked up in
	// the sandbox PATH. Callers pass ["/bin/sh", "-c", cmd] for shell text.
	Args []string
	// Workspace is the one read-write directory tree. It must exist.
	Workspace string
	// Dir is the working directory, relative to Workspace or absolute
	// inside it; empty means Workspace.
	Dir string
	// ReadOnly lists extra host paths the command may read (for example a
	// skills root). Only the isolated runner enforces it.
	ReadOnly []string
	// Env holds trusted variables set by the operator or a skill; they may
	// set any key, including PATH.
	Env map[string]string
	// ToolEnv holds untrusted variables taken from tool arguments. Keys
	// that change how programs are found or loaded (PATH, HOME, LD_*, ...)
	// are rejected with an error naming the key. ToolEnv wins over Env.
	ToolEnv map[string]string
	// Stdin is fed to the command; nil means an empty stdin.
	Stdin []byte
	// Timeout bounds the wall-clock time; zero means DefaultTimeout.
	// Values above the runner's MaxTimeout are an error, not clamped.
	Timeout time.Duration
	// Limits bounds resources; zero fields mean the documented defaults.
	Limits Limits
	// Network allows network access in the isolated runner. The default
	// (false) means no network at all: not even loopback.
	Network bool
}

// Limits bounds the resources of one command. A zero field means the
// default named next to it; a negative field is an error.
type Limits struct {
	// CPUSeconds is RLIMIT_CPU; default DefaultCPUSeconds.
	CPUSeconds int64
	// AddressSpace is RLIMIT_AS in bytes; default DefaultAddressSpace.
	AddressSpace int64
	// Processes bounds the number of tasks (processes and threads) the
	// command may have at once; default DefaultProcesses.
	Processes int64
	// FileSize is RLIMIT_FSIZE in bytes; default DefaultFileSize.
	FileSize int64
	// OpenFiles is RLIMIT_NOFILE; default DefaultOpenFiles.
	OpenFiles int64
	// OutputBytes bounds the captured bytes of each of stdout and stderr;
	// default DefaultOutputBytes. Output beyond it is dropped from the
	// middle (see HeadTail) and flagged in the Result.
	OutputBytes int64
}

// Defaults for Spec and Limits.
const (
	DefaultTimeout      = 60 * time.Second
	DefaultMaxTimeout   = 10 * time.Minute
	DefaultKillGrace    = 2 * time.Second
	DefaultCPUSeconds   = 60
	DefaultAddressSpace = 2 << 30  // 2 GiB
	DefaultProcesses    = 256      // tasks, threads included
	DefaultFileSize     = 64 << 20 // 64 MiB
	DefaultOpenFiles    = 256
	DefaultOutputBytes  = 1 << 20 // 1 MiB per stream
	// DefaultPath is PATH inside the sandbox unless Spec.Env sets it.
	DefaultPath = "/usr/local/bin:/usr/bin:/bin"
)

// Result reports how a command ended.
type Result struct {
	// ExitCode is the exit status, or 128+signal when killed by a signal,
	// or -1 when no status is known.
	ExitCode int
	// Signal is the signal that killed the command, or 0.
	Signal int
	// Stdout and Stderr hold the captured output (head and tail when
	// truncated).
	Stdout, Stderr []byte
	// StdoutTruncated and StderrTruncated are set when output was dropped.
	StdoutTruncated, StderrTruncated bool
	// TimedOut is set when the deadline (Spec.Timeout or the context)
	// ended the command.
	TimedOut bool
	// Duration is the wall-clock time from start to the end of the call.
	Duration time.Duration
}

// Errors callers branch on.
var (
	// ErrInvalidSpec wraps every validation failure of a Spec.
	ErrInvalidSpec = errors.New("sandbox: invalid spec")
	// ErrOutsideWorkspace is returned when Spec.Dir resolves outside
	// Spec.Workspace.
	ErrOutsideWorkspace = errors.New("sandbox: working directory outside the workspace")
	// ErrWorkingDir: the working directory cannot be used (missing, not a
	// folder). Outside-the-workspace errors wrap ErrOutsideWorkspace too.
	ErrWorkingDir = errors.New("sandbox: bad working directory")
	// ErrForbiddenEnv is returned when Spec.ToolEnv sets a key that tool
	// arguments may not set.
	ErrForbiddenEnv = errors.New("sandbox: environment key not allowed from tool arguments")
	// ErrCommandStart: the command could not be started (not found, not
	// executable, bad interpreter). Shells report this as status 127.
	ErrCommandStart = errors.New("sandbox: cannot start the command")
)

// FeatureError reports a kernel feature the isolated runner needs and the
// machine lacks. It is returned instead of running with less confinement
// unless IsolatedOptions.AllowDowngrade is set.
type FeatureError struct {
	// Feature names what is missing, e.g. "user namespaces".
	Feature string
	// Err is the underlying cause.
	Err error
}

// Error implements error.
func (e *FeatureError) Error() string {
	return fmt.Sprintf("sandbox: kernel feature %q unavailable: %v (fix the host, or set IsolatedOptions.AllowDowngrade to run with less confinement)", e.Feature, e.Err)
}

// Unwrap returns the cause.
func (e *FeatureError) Unwrap() error { return e.Err }

// forbiddenToolEnv lists exact keys tool arguments may not set: they decide
// which programs run, which libraries load or where the shell reads config.
var forbiddenToolEnv = map[string]bool{
	"PATH": true, "HOME": true, "SHELL": true, "ENV": true, "BASH_ENV": true,
	"IFS": true, "CDPATH": true, "PS4": true, "PROMPT_COMMAND": true,
	"TMPDIR": true, "PYTHONPATH": true, "PYTHONHOME": true, "PYTHONSTARTUP": true,
	"PERL5LIB": true, "PERL5OPT": true, "RUBYLIB": true, "RUBYOPT": true,
	"NODE_OPTIONS": true, "NODE_PATH": true, "GCONV_PATH": true,
	"HOSTALIASES": true, "LOCPATH": true, "NLSPATH": true, "MALLOC_CONF": true,
}

// forbiddenToolEnvPrefixes lists key prefixes tool arguments may not set.
var forbiddenToolEnvPrefixes = []string{"LD_", "DYLD_", "BASH_FUNC_", "GLIBC_", "SKILLKIT_SANDBOX_"}

// checkToolEnvKey returns an error naming key if tool arguments may not set
// it.
func checkToolEnvKey(key string) error {
	if err := checkEnvKey("ToolEnv", key); err != nil {
		return err
	}
	up := strings.ToUpper(key)
	if forbiddenToolEnv[up] {
		return fmt.Errorf("%w: environment variable %q is set by the sandbox and cannot be overridden here; remove it", ErrForbiddenEnv, key)
	}
	for _, p := range forbiddenToolEnvPrefixes {
		if strings.HasPrefix(up, p) {
			return fmt.Errorf("%w: environment variables starting with %s are reserved by the sandbox; remove %q", ErrForbiddenEnv, p, key)
		}
	}
	return nil
}

// checkEnvKey rejects keys that cannot be represented in an environment.
func checkEnvKey(field, key string) error {
	if key == "" || strings.ContainsAny(key, "=\x00") {
		return fmt.Errorf("%w: environment variable name %q (in %s) is empty or contains '=' or NUL; use a plain NAME", ErrInvalidSpec, key, envField(field))
	}
	return nil
}

// prepared is a validated Spec with defaults applied.
type prepared struct {
	args      []string
	workspace string // absolute, symlinks resolved
	dir       string // absolute, symlinks resolved, inside workspace
	readOnly  []string
	env       []string
	stdin     []byte
	timeout   time.Duration
	limits    Limits
	network   bool
}

// prepare validates spec and applies defaults. maxTimeout bounds Timeout.
func prepare(spec Spec, maxTimeout time.Duration) (*prepared, error) {
	if len(spec.Args) == 0 || spec.Args[0] == "" {
		return nil, fmt.Errorf("%w: Spec.Args is empty; pass the argv, e.g. [\"/bin/sh\", \"-c\", cmd]", ErrInvalidSpec)
	}
	for i, a := range spec.Args {
		if strings.ContainsRune(a, 0) {
			return nil, fmt.Errorf("%w: Spec.Args[%d] contains a NUL byte", ErrInvalidSpec, i)
		}
	}
	if spec.Workspace == "" {
		return nil, fmt.Errorf("%w: Spec.Workspace is empty; pass the directory the command may write", ErrInvalidSpec)
	}
	ws, err := filepath.Abs(spec.Workspace)
	if err == nil {
		ws, err = filepath.EvalSymlinks(ws)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: Spec.Workspace %q: %w", ErrInvalidSpec, spec.Workspace, err)
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%w: Spec.Workspace %q is not a directory", ErrInvalidSpec, spec.Workspace)
	}
	dir, err := resolveDir(ws, spec.Dir)
	if err != nil {
		return nil, err
	}
	p := &prepared{
		args:      append([]string(nil), spec.Args...),
		workspace: ws,
		dir:       dir,
		stdin:     spec.Stdin,
		network:   spec.Network,
	}
	for i, ro := range spec.ReadOnly {
		if !filepath.IsAbs(ro) {
			return nil, fmt.Errorf("%w: Spec.ReadOnly[%d] %q must be an absolute path", ErrInvalidSpec, i, ro)
		}
		p.readOnly = append(p.readOnly, filepath.Clean(ro))
	}
	switch {
	case spec.Timeout < 0:
		return nil, fmt.Errorf("%w: Spec.Timeout %v is negative; use 0 for the default %v", ErrInvalidSpec, spec.Timeout, DefaultTimeout)
	case spec.Timeout == 0:
		p.timeout = DefaultTimeout
	case spec.Timeout > maxTimeout:
		return nil, fmt.Errorf("%w: Spec.Timeout %v exceeds the runner's MaxTimeout %v", ErrInvalidSpec, spec.Timeout, maxTimeout)
	default:
		p.timeout = spec.Timeout
	}
	if p.limits, err = spec.Limits.withDefaults(); err != nil {
		return nil, err
	}
	if p.env, err = buildEnv(ws, spec.Env, spec.ToolEnv); err != nil {
		return nil, err
	}
	return p, nil
}

// resolveDir resolves dir against the workspace ws and checks containment
// after resolving symlinks, so neither ".." nor a symlink escapes.
func resolveDir(ws, dir string) (string, error) {
	if dir == "" {
		return ws, nil
	}
	d := dir
	if !filepath.IsAbs(d) {
		d = filepath.Join(ws, d)
	}
	d = filepath.Clean(d)
	if !within(ws, d) {
		return "", fmt.Errorf("%w: %w: working directory %q is outside the workspace %s; pass a path inside it", ErrWorkingDir, ErrOutsideWorkspace, dir, ws)
	}
	r, err := filepath.EvalSymlinks(d)
	if err != nil {
		return "", fmt.Errorf("%w: %w: working directory %q: %w", ErrInvalidSpec, ErrWorkingDir, dir, err)
	}
	if !within(ws, r) {
		return "", fmt.Errorf("%w: %w: working directory %q leads to %s, outside the workspace %s", ErrWorkingDir, ErrOutsideWorkspace, dir, r, ws)
	}
	return r, nil
}

// within reports whether p equals root or lies below it (both cleaned).
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

// withDefaults validates l and fills zero fields with defaults.
func (l Limits) withDefaults() (Limits, error) {
	fields := []struct {
		name string
		v    *int64
		def  int64
	}{
		{"CPUSeconds", &l.CPUSeconds, DefaultCPUSeconds},
		{"AddressSpace", &l.AddressSpace, DefaultAddressSpace},
		{"Processes", &l.Processes, DefaultProcesses},
		{"FileSize", &l.FileSize, DefaultFileSize},
		{"OpenFiles", &l.OpenFiles, DefaultOpenFiles},
		{"OutputBytes", &l.OutputBytes, DefaultOutputBytes},
	}
	for _, f := range fields {
		if *f.v < 0 {
			return l, fmt.Errorf("%w: Spec.Limits.%s is %d; use 0 for the default %d or a positive value", ErrInvalidSpec, f.name, *f.v, f.def)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	return l, nil
}

// buildEnv builds the clean environment: a small allowlist, then Env, then
// ToolEnv (validated). Nothing is inherited from the host process.
func buildEnv(ws string, env, toolEnv map[string]string) ([]string, error) {
	m := map[string]string{
		"PATH":   DefaultPath,
		"HOME":   ws,
		"TMPDIR": ws,
		"LANG":   "C.UTF-8",
		"LC_ALL": "C.UTF-8",
		"TZ":     "UTC",
	}
	for k, v := range env {
		if err := checkEnvKey("Env", k); err != nil {
			return nil, err
		}
		if strings.ContainsRune(v, 0) {
			return nil, fmt.Errorf("%w: the value of environment variable %q contains a NUL byte", ErrInvalidSpec, k)
		}
		m[k] = v
	}
	for k, v := range toolEnv {
		if err := checkToolEnvKey(k); err != nil {
			return nil, err
		}
		if strings.ContainsRune(v, 0) {
			return nil, fmt.Errorf("%w: the value of environment variable %q contains a NUL byte", ErrInvalidSpec, k)
		}
		m[k] = v
	}
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out, nil
}

// envField names, for messages, where an environment variable came from.
func envField(field string) string {
	if field == "ToolEnv" {
		return "the tool's env"
	}
	return "Spec.Env"
}
