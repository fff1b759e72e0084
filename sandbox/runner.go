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
	// Workspace is the one read-write directory tree. It must exist. The
	// isolated runner shows it to the command at WorkspaceDir (see
	// WorkspacePath) and requires it to lie on a filesystem no larger than
	// Limits.DiskBytes and Limits.DiskInodes (see NewVolume).
	Workspace string
	// Dir is the working directory, relative to Workspace or absolute
	// inside it; empty means Workspace.
	Dir string
	// ReadOnly lists extra host paths the command may read (for example a
	// skills root); the isolated runner mounts each read-only at the same
	// path and shows nothing else of the host. The unconfined runner does
	// not enforce it.
	ReadOnly []string
	// Env holds trusted variables set by the operator or a skill; they may
	// set any key, including PATH. Paths in them must be the ones the
	// command sees (WorkspacePath).
	Env map[string]string
	// ToolEnv holds untrusted variables taken from tool arguments. Keys
	// must match [A-Za-z_][A-Za-z0-9_]*, and keys that change how programs
	// are found, loaded or configured (PATH, HOME, LD_*, PYTHON*, GIT_*,
	// ...; see CheckToolEnvKey) are rejected with an error naming the key.
	// ToolEnv wins over Env.
	ToolEnv map[string]string
	// Stdin is fed to the command; nil means an empty stdin.
	Stdin []byte
	// Timeout bounds the wall-clock time; zero means DefaultTimeout.
	// Values above the runner's MaxTimeout (for Start, its
	// MaxStartTimeout) are an error, not clamped.
	Timeout time.Duration
	// Limits bounds resources; zero fields mean the documented defaults.
	Limits Limits
	// Network allows network access in the isolated runner (the host's
	// network namespace, with the host's resolv.conf). The default (false)
	// means no network at all: not even loopback.
	Network bool
}

// Limits bounds the resources of one command. A zero field means the
// default named next to it; a negative field is an error.
type Limits struct {
	// CPUSeconds is RLIMIT_CPU; default DefaultCPUSeconds.
	CPUSeconds int64
	// AddressSpace is RLIMIT_AS in bytes; default DefaultAddressSpace.
	AddressSpace int64
	// Memory bounds the memory of all the command's processes together
	// (and of its private /tmp and /dev/shm, which live in memory): a
	// memory cgroup per call. Past it the kernel kills a process and the
	// Result says OOMKilled. Default DefaultMemory.
	Memory int64
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
	// DiskBytes and DiskInodes bound what the command can store: its
	// private /tmp and /dev/shm are filesystems of this size, and the
	// isolated runner refuses a workspace on a larger filesystem (one made
	// by NewVolume, as workspace.Manager does, fits) unless
	// IsolatedOptions.UnboundedDisk is set. A write past the bound fails
	// inside with ENOSPC and the Result says DiskLimit. Defaults
	// DefaultDiskBytes and DefaultDiskInodes.
	DiskBytes int64
	// DiskInodes is the inode (file count) bound that goes with
	// DiskBytes.
	DiskInodes int64
}

// Defaults for Spec and Limits.
const (
	DefaultTimeout    = 60 * time.Second
	DefaultMaxTimeout = 10 * time.Minute
	// DefaultMaxStartTimeout bounds Spec.Timeout of Start: a background
	// command may run longer than a call.
	DefaultMaxStartTimeout = time.Hour
	DefaultKillGrace       = 2 * time.Second
	DefaultCPUSeconds      = 60
	DefaultAddressSpace    = 2 << 30  // 2 GiB per process
	DefaultMemory          = 1 << 30  // 1 GiB for all processes together
	DefaultProcesses       = 256      // tasks, threads included
	DefaultFileSize        = 64 << 20 // 64 MiB
	DefaultOpenFiles       = 256
	DefaultOutputBytes     = 1 << 20 // 1 MiB per stream
	DefaultDiskBytes       = 1 << 30 // 1 GiB
	DefaultDiskInodes      = 100_000
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
	// truncated). A started command's output is read with Process.Read
	// instead; its Result holds none.
	Stdout, Stderr []byte
	// StdoutTruncated and StderrTruncated are set when output was dropped
	// (for a started command: when unread output was dropped).
	StdoutTruncated, StderrTruncated bool
	// TimedOut is set when the deadline (Spec.Timeout or the context)
	// ended the command, at any moment of the call. ExitCode is then
	// 128+SIGTERM, or 128+SIGKILL when the command outlived the grace
	// after SIGTERM.
	TimedOut bool
	// Killed is set when Process.Kill ended a started command (exit
	// code 137); a command that ended by itself first reports its own
	// status. Run never sets it.
	Killed bool
	// OOMKilled is set when the memory bound (Limits.Memory) made the
	// kernel kill a process of the command.
	OOMKilled bool
	// DiskLimit is set when, as the command ended, the workspace, /tmp or
	// /dev/shm had (almost) no space or no inodes left: a write may have
	// failed with ENOSPC because of Limits.DiskBytes or DiskInodes.
	DiskLimit bool
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
	// ErrCommandLost: the command ran, but its end is not known — the
	// container runner's command agent ended or stopped answering (a
	// command of the workspace can do that), or the workspace's
	// container was removed while it ran. Its processes were killed. A
	// Result may come with it: the output read until then.
	ErrCommandLost = errors.New("sandbox: the command's end is not known")
	// ErrUnboundedDisk: the workspace lies on a filesystem larger than
	// Limits.DiskBytes or Limits.DiskInodes, so the isolated runner could
	// not bound what the command stores (see NewVolume and
	// IsolatedOptions.UnboundedDisk).
	ErrUnboundedDisk = errors.New("sandbox: the workspace's disk use is not bounded")
)

// FeatureError reports a host feature the isolated runner (or NewVolume)
// needs and the machine lacks. It is returned instead of running with less
// confinement; its message says what to do.
type FeatureError struct {
	// Feature names what is missing, e.g. "user namespaces".
	Feature string
	// Err is the underlying cause.
	Err error
}

// Error implements error.
func (e *FeatureError) Error() string {
	return fmt.Sprintf("sandbox: host feature %q unavailable: %v (%s)", e.Feature, e.Err, featureHint(e.Feature))
}

// featureHint says what to do about a missing feature.
func featureHint(feature string) string {
	switch feature {
	case FeatureUserNamespaces:
		return "enable user namespaces (sysctl user.max_user_namespaces > 0, and kernel.unprivileged_userns_clone=1 where it exists); the isolated runner cannot work without them"
	case FeatureVolume:
		return "run as root with loop devices and mkfs.ext4, or set IsolatedOptions.UnboundedDisk to accept a workspace whose disk use is not bounded"
	case FeatureIDMap:
		return "put the workspace on a filesystem that supports idmapped mounts (ext4, xfs, btrfs, tmpfs)"
	case FeatureCgroups:
		return "run as root, or give the runner delegated cgroups (IsolatedOptions.PidsCgroup and MemoryCgroup, or Cgroup2Parent), or set IsolatedOptions.AllowDowngrade to run without the memory and process bounds"
	}
	return "fix the host, or set IsolatedOptions.AllowDowngrade to run with less confinement"
}

// Unwrap returns the cause.
func (e *FeatureError) Unwrap() error { return e.Err }

// forbiddenToolEnv lists exact keys tool arguments may not set: they decide
// which programs run, which libraries or code load, or where programs read
// their configuration.
var forbiddenToolEnv = map[string]bool{
	"PATH": true, "HOME": true, "SHELL": true, "ENV": true, "IFS": true,
	"CDPATH": true, "PS1": true, "PS2": true, "PS3": true, "PS4": true,
	"PROMPT_COMMAND": true, "TMPDIR": true, "GCONV_PATH": true,
	"HOSTALIASES": true, "LOCPATH": true, "NLSPATH": true,
	"RESOLV_HOST_CONF": true, "CLASSPATH": true, "PHPRC": true,
	"PHP_INI_SCAN_DIR": true, "TERMINFO": true, "TERMINFO_DIRS": true,
	"EDITOR": true, "VISUAL": true, "PAGER": true, "LESSOPEN": true,
	"LESSCLOSE": true, "MANPAGER": true, "BROWSER": true,
	"XDG_CONFIG_HOME": true, "XDG_CONFIG_DIRS": true, "XDG_DATA_HOME": true,
	"XDG_DATA_DIRS": true, "SUDO_ASKPASS": true, "SSH_ASKPASS": true,
	"CURL_HOME": true, "CURL_CA_BUNDLE": true, "REQUESTS_CA_BUNDLE": true,
	"WGETRC": true, "INPUTRC": true, "ZDOTDIR": true,
	"GOFLAGS": true, "GOENV": true, "GOTOOLCHAIN": true, "GOROOT": true, "GOPATH": true,
	"RUSTC": true, "RUSTC_WRAPPER": true, "RUSTFLAGS": true, "RUSTDOCFLAGS": true,
	"MAKEFILES": true, "MAKEFLAGS": true, "MFLAGS": true, "CONFIG_SITE": true,
	"VIMINIT": true, "EXINIT": true, "MYVIMRC": true, "GVIMINIT": true,
	"IPYTHONDIR": true, "JUPYTER_CONFIG_DIR": true, "MPLCONFIGDIR": true,
	"AWS_CONFIG_FILE": true, "AWS_SHARED_CREDENTIALS_FILE": true, "KUBECONFIG": true,
	"DOCKER_CONFIG": true, "DOCKER_HOST": true, "GNUPGHOME": true, "SSH_AUTH_SOCK": true,
	"GTK_MODULES": true, "GTK_PATH": true, "GIO_EXTRA_MODULES": true, "QT_PLUGIN_PATH": true,
	"GST_PLUGIN_PATH": true, "MAGIC": true, "LOCALDOMAIN": true, "RES_OPTIONS": true,
	"HISTFILE": true, "NO_PROXY": true, "VIRTUAL_ENV": true, "CC": true, "CXX": true,
	"LESSKEY": true, "SYSTEMD_PAGER": true, "GIT_PAGER": true,
}

// forbiddenToolEnvPrefixes lists key prefixes tool arguments may not set:
// dynamic loader and libc hooks, shells, and the interpreters and tools
// whose variables run code or redirect configuration.
var forbiddenToolEnvPrefixes = []string{
	"LD_", "DYLD_", "GLIBC_", "MALLOC_", "BASH", "ZSH", "KSH",
	"PYTHON", "PERL", "RUBY", "GEM_", "BUNDLE_", "NODE_", "NPM_", "YARN_",
	"PIP_", "CONDA_", "CARGO_", "DOTNET_", "COMPLUS_", "CORECLR_",
	"GIT_", "JAVA_", "_JAVA_", "JDK_", "LUA_", "TCL", "R_", "OPENSSL_",
	"SSL_", "GNUTLS_", "NSS_", "GCONV_", "SKILLKIT_",
}

// forbiddenToolEnvSuffixes lists key suffixes tool arguments may not set
// (proxies, which redirect every download).
var forbiddenToolEnvSuffixes = []string{"_PROXY"}

// CheckToolEnvKey returns an error naming key when tool arguments may not
// set it: it must match [A-Za-z_][A-Za-z0-9_]* and must not be one of the
// variables that change how programs are found, loaded or configured
// (checked case-insensitively: exact names such as PATH, HOME, TMPDIR,
// CLASSPATH, GOFLAGS, MAKEFLAGS, KUBECONFIG, prefixes such as LD_, BASH,
// PYTHON, PERL, RUBY, NODE_, NPM_, PIP_, CARGO_, DOTNET_, GIT_, JAVA_,
// OPENSSL_, and the *_PROXY variables). It is a deny list, so a program's
// own configuration variable it does not know stays settable; the command
// itself is untrusted anyway, this keeps tool arguments from turning a
// trusted command into another one. The error wraps ErrForbiddenEnv.
func CheckToolEnvKey(key string) error {
	if !validEnvName(key) {
		return fmt.Errorf("%w: environment variable name %q is not a plain NAME; use letters, digits and '_' (not starting with a digit)", ErrForbiddenEnv, key)
	}
	up := strings.ToUpper(key)
	if forbiddenToolEnv[up] {
		return fmt.Errorf("%w: environment variable %q changes how programs are found, loaded or configured and cannot be set here; remove it", ErrForbiddenEnv, key)
	}
	for _, p := range forbiddenToolEnvPrefixes {
		if strings.HasPrefix(up, p) {
			return fmt.Errorf("%w: environment variables starting with %s change how programs load code or configuration and cannot be set here; remove %q", ErrForbiddenEnv, p, key)
		}
	}
	for _, p := range forbiddenToolEnvSuffixes {
		if strings.HasSuffix(up, p) {
			return fmt.Errorf("%w: environment variables ending in %s redirect programs' connections and cannot be set here; remove %q", ErrForbiddenEnv, p, key)
		}
	}
	return nil
}

// validEnvName reports whether key matches [A-Za-z_][A-Za-z0-9_]*.
func validEnvName(key string) bool {
	if key == "" {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case c == '_', 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
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

// view says where a runner's command sees the workspace and its temporary
// directory; the zero value means the host paths (no private root).
type view struct {
	workspace string
	tmp       string
}

// prepare validates spec and applies defaults. maxTimeout bounds Timeout;
// v gives the paths the command sees, for HOME and TMPDIR.
func prepare(spec Spec, maxTimeout time.Duration, v view) (*prepared, error) {
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
		err = fmt.Errorf("%w: Spec.%w", ErrInvalidSpec, err)
		return nil, err
	}
	home, tmp := v.workspace, v.tmp
	if home == "" {
		home = ws
	}
	if tmp == "" {
		tmp = ws
	}
	if p.env, err = buildEnv(home, tmp, spec.Env, spec.ToolEnv); err != nil {
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

// Validate reports the first negative limit, naming its field (zero
// fields mean the defaults), so a caller can refuse bad limits when it is
// configured rather than on every run.
func (l Limits) Validate() error {
	_, err := l.withDefaults()
	return err
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
		{"Memory", &l.Memory, DefaultMemory},
		{"Processes", &l.Processes, DefaultProcesses},
		{"FileSize", &l.FileSize, DefaultFileSize},
		{"OpenFiles", &l.OpenFiles, DefaultOpenFiles},
		{"OutputBytes", &l.OutputBytes, DefaultOutputBytes},
		{"DiskBytes", &l.DiskBytes, DefaultDiskBytes},
		{"DiskInodes", &l.DiskInodes, DefaultDiskInodes},
	}
	for _, f := range fields {
		if *f.v < 0 {
			return l, fmt.Errorf("Limits.%s is %d; use 0 for the default %d or a positive value", f.name, *f.v, f.def)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	return l, nil
}

// buildEnv builds the clean environment: a small allowlist, then Env, then
// ToolEnv (validated). Nothing is inherited from the host process.
func buildEnv(home, tmp string, env, toolEnv map[string]string) ([]string, error) {
	m := map[string]string{
		"PATH":   DefaultPath,
		"HOME":   home,
		"TMPDIR": tmp,
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
		if err := CheckToolEnvKey(k); err != nil {
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

// WorkspaceViewer is implemented by runners whose commands see the
// workspace at another path than the host's (the isolated runner shows it
// at WorkspaceDir). Callers build Spec.Env with WorkspacePath.
type WorkspaceViewer interface {
	// WorkspaceView returns where the command sees the host directory
	// workspace.
	WorkspaceView(workspace string) string
}

// Wrapper is implemented by runners that add behaviour to another runner
// (as WithEnv does); WorkspacePath, MaxTimeout, MaxStartTimeout and
// CanStart look through them.
type Wrapper interface {
	// Unwrap returns the wrapped runner.
	Unwrap() Runner
}

// WorkspacePath returns the path at which commands run by r see the host
// workspace directory: the WorkspaceView of r or of a runner it wraps,
// else workspace itself.
func WorkspacePath(r Runner, workspace string) string {
	if v, ok := capability[WorkspaceViewer](r); ok {
		return v.WorkspaceView(workspace)
	}
	return workspace
}

// TimeoutCeiling is implemented by runners that refuse a Spec.Timeout
// above a maximum, so that callers can check their own maximum against it
// when they are configured instead of failing on a call.
type TimeoutCeiling interface {
	// MaxTimeout returns the largest Spec.Timeout the runner accepts.
	MaxTimeout() time.Duration
}

// MaxTimeout returns the ceiling of r, or of a runner it wraps, when one
// has it.
func MaxTimeout(r Runner) (time.Duration, bool) {
	if c, ok := capability[TimeoutCeiling](r); ok {
		return c.MaxTimeout(), true
	}
	return 0, false
}

// Namer is implemented by runners that name themselves, for logs and
// traces: the isolated runner is "isolated", the unconfined one
// "unconfined-local".
type Namer interface {
	// Name returns the runner's name.
	Name() string
}

// RunnerName returns the Name of r or of a runner it wraps, or else the
// Go type of the innermost runner, so that a trace says which runner ran
// a command.
func RunnerName(r Runner) string {
	if n, ok := capability[Namer](r); ok {
		return n.Name()
	}
	for {
		w, ok := r.(Wrapper)
		if !ok {
			return fmt.Sprintf("%T", r)
		}
		r = w.Unwrap()
	}
}

// capability returns r, or the first runner it wraps, as a T, if one of
// them implements T.
func capability[T any](r Runner) (T, bool) {
	for r != nil {
		if c, ok := r.(T); ok {
			return c, true
		}
		w, ok := r.(Wrapper)
		if !ok {
			break
		}
		r = w.Unwrap()
	}
	var zero T
	return zero, false
}
