//go:build linux

package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// isolated runs commands through the re-exec helper (see helper_linux.go).
type isolated struct {
	grace, maxTimeout time.Duration
	maxStart          time.Duration // the ceiling of Start's Spec.Timeout
	landlock          bool
	landlockABI       int
	seccomp           bool
	cgroups           *cgroupSet // nil when downgraded away
	// root: the runner is root, so the command runs as a dedicated
	// unprivileged host uid and the host hands the helper idmapped
	// mounts of the workspace and read-only paths.
	root          bool
	uid, gid      int // the command's host ids
	unboundedDisk bool
	// etc and etcNet are the /etc snapshots for commands without and
	// with network (the latter has the host's resolv.conf), made when
	// first needed.
	etcOnce, etcNetOnce sync.Once
	etc, etcNet         *etcSnapshot
	etcErr, etcNetErr   error
	// netns holds empty network namespaces for commands without network
	// (nil: each call makes its own, inside its user namespace). Making one
	// is the most expensive step of starting the sandbox, so a root runner
	// makes them outside the call and reuses each, one call at a time: when
	// a call ends all its processes, and so all its sockets, are gone,
	// which leaves the namespace empty again. Its loopback is down and
	// only the initial user namespace could raise it.
	netns *netnsPool
	// forker starts the helpers, from a thread that lives as long as the
	// runner (see forker).
	forker *forker
}

// netnsPool is a free list of empty network namespaces.
type netnsPool struct {
	mu   sync.Mutex
	free []*os.File
}

// maxIdleNetns bounds the namespaces kept for reuse.
const maxIdleNetns = 64

// get returns an idle namespace, or a new one.
func (p *netnsPool) get() (*os.File, error) {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		f := p.free[n-1]
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return f, nil
	}
	p.mu.Unlock()
	return newEmptyNetns()
}

// put gives a namespace whose processes are all gone back for reuse.
func (p *netnsPool) put(f *os.File) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free) >= maxIdleNetns {
		f.Close()
		return
	}
	p.free = append(p.free, f)
}

// NewIsolated returns the confining Runner; it also implements io.Closer
// (see Close). It probes the host once and
// returns *FeatureError naming the first missing feature. With
// opts.AllowDowngrade, a missing Landlock, seccomp or cgroup layer is
// skipped with a warning instead; user namespaces are always required,
// since without them there is no private root.
func NewIsolated(opts *IsolatedOptions) (Runner, error) {
	var o IsolatedOptions
	if opts != nil {
		o = *opts
	}
	grace, maxT, err := durations(o.KillGrace, o.MaxTimeout)
	if err != nil {
		return nil, err
	}
	maxStart, err := startDuration(o.MaxStartTimeout)
	if err != nil {
		return nil, err
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.Default()
	}
	r := &isolated{grace: grace, maxTimeout: maxT, maxStart: maxStart, landlock: true, seccomp: true,
		root: os.Geteuid() == 0, uid: os.Getuid(), gid: os.Getgid(), unboundedDisk: o.UnboundedDisk}
	switch {
	case o.UID < 0 || o.GID < 0:
		return nil, fmt.Errorf("sandbox: IsolatedOptions.UID %d / GID %d must not be negative; use 0 for the defaults", o.UID, o.GID)
	case r.root:
		r.uid, r.gid = DefaultSandboxUID, DefaultSandboxGID
		if o.UID != 0 {
			r.uid = o.UID
		}
		if o.GID != 0 {
			r.gid = o.GID
		}
		if err := checkHelperExecutable(); err != nil {
			return nil, err
		}
	case o.UID != 0 || o.GID != 0:
		return nil, fmt.Errorf("sandbox: IsolatedOptions.UID/GID need a root runner; an unprivileged one runs commands as its own uid %d", r.uid)
	}
	missing := func(feature string, cause error) error {
		if !o.AllowDowngrade {
			return &FeatureError{Feature: feature, Err: cause}
		}
		logger.Warn("sandbox: isolated runner DOWNGRADED: host feature missing, layer skipped",
			slog.String("feature", feature), slog.String("cause", cause.Error()))
		return nil
	}

	if err := probeUserNamespaces(); err != nil {
		return nil, &FeatureError{Feature: FeatureUserNamespaces, Err: err}
	}
	abi, err := llsys.LandlockGetABIVersion()
	if err == nil && abi < MinLandlockABI {
		err = fmt.Errorf("kernel has Landlock ABI %d, need %d", abi, MinLandlockABI)
	}
	if err != nil {
		if err := missing(FeatureLandlock, err); err != nil {
			return nil, err
		}
		r.landlock = abi > 0
	}
	r.landlockABI = abi
	if err := probeSeccomp(); err != nil {
		if err := missing(FeatureSeccomp, err); err != nil {
			return nil, err
		}
		r.seccomp = false
	}
	sweepEtcSnapshots()
	cg, err := newCgroupSet(o)
	if err != nil {
		if err := missing(FeatureCgroups, err); err != nil {
			return nil, err
		}
	} else {
		cg.sweep()
		r.cgroups = cg
	}
	if r.unboundedDisk {
		logger.Warn("sandbox: UNBOUNDED DISK: commands may fill the filesystem holding their workspace",
			slog.String("option", "IsolatedOptions.UnboundedDisk"))
	}
	if r.root {
		// Only a process with CAP_SYS_ADMIN can make and enter a network
		// namespace owned by the initial user namespace; others make one
		// per call.
		if f, err := newEmptyNetns(); err == nil {
			r.netns = &netnsPool{free: []*os.File{f}}
		} else {
			logger.Debug("sandbox: network namespaces made per call", slog.String("cause", err.Error()))
		}
	}
	r.forker = newForker()
	return r, nil
}

// etcSnapshot returns the /etc snapshot for commands with or without
// network, making it the first time.
func (r *isolated) etcSnapshot(network bool) (*etcSnapshot, error) {
	if network {
		r.etcNetOnce.Do(func() {
			var resolv []byte
			if b, err := os.ReadFile("/etc/resolv.conf"); err == nil && len(b) < 1<<16 {
				resolv = b
			}
			r.etcNet, r.etcNetErr = newEtcSnapshot(resolv)
		})
		return r.etcNet, r.etcNetErr
	}
	r.etcOnce.Do(func() { r.etc, r.etcErr = newEtcSnapshot(nil) })
	return r.etc, r.etcErr
}

// Close removes the runner's /etc snapshots and ends the thread that
// starts its commands (a command still running then is killed); the
// runner must not be used afterwards. A runner that is never closed leaves them in the temporary
// directory, where the next runner created by this user removes them once
// this process has ended. Nothing else outlives a Run: it returns after
// the helper, and with it every process of the command, has exited and
// the call's cgroups are removed.
func (r *isolated) Close() error {
	r.forker.close()
	var errs []error
	for _, d := range []*etcSnapshot{r.etc, r.etcNet} {
		if d != nil {
			if err := os.RemoveAll(d.dir); err != nil {
				errs = append(errs, fmt.Errorf("sandbox: remove /etc snapshot: %w", err))
			}
		}
	}
	return errors.Join(errs...)
}

// MaxTimeout implements TimeoutCeiling.
func (r *isolated) MaxTimeout() time.Duration { return r.maxTimeout }

// MaxStartTimeout implements StartTimeoutCeiling.
func (r *isolated) MaxStartTimeout() time.Duration { return r.maxStart }

// Name implements Namer.
func (r *isolated) Name() string { return "isolated" }

// WorkspaceView implements WorkspaceViewer: the workspace is always at
// WorkspaceDir inside.
func (r *isolated) WorkspaceView(string) string { return WorkspaceDir }

// checkHelperExecutable makes sure the sandbox uid can execute this
// binary, which a root runner re-executes as that uid.
func checkHelperExecutable() error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("sandbox: find this binary: %w", err)
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return fmt.Errorf("sandbox: this binary: %w", err)
	}
	if fi.Mode().Perm()&0o005 != 0o005 {
		return fmt.Errorf("sandbox: %s (mode %v) must be readable and executable by others: the isolated runner re-executes it as the unprivileged sandbox user; chmod 755 it", exe, fi.Mode().Perm())
	}
	return nil
}

// probeUserNamespaces checks that new user namespaces can be created.
func probeUserNamespaces() error {
	if _, err := os.Stat("/proc/self/ns/user"); err != nil {
		return fmt.Errorf("no /proc/self/ns/user: %w", err)
	}
	b, err := os.ReadFile("/proc/sys/user/max_user_namespaces")
	if err == nil && strings.TrimSpace(string(b)) == "0" {
		return errors.New("/proc/sys/user/max_user_namespaces is 0")
	}
	return nil
}

// probeSeccomp checks that seccomp filters that kill the process exist.
func probeSeccomp() error {
	if len(seccompFilter()) == 0 {
		return errors.New("no reviewed seccomp syscall table for " + runtime.GOARCH)
	}
	action := uint32(unix.SECCOMP_RET_KILL_PROCESS)
	if _, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action))); e != 0 {
		return fmt.Errorf("seccomp(SECCOMP_GET_ACTION_AVAIL): %w", e)
	}
	return nil
}

// checkDisk refuses a workspace on a filesystem larger than the limits.
func (r *isolated) checkDisk(p *prepared) error {
	if r.unboundedDisk {
		return nil
	}
	return CheckDiskBound(p.workspace, p.limits)
}

// DiskBoundError is the error of CheckDiskBound (it wraps
// ErrUnboundedDisk): the filesystem holding Path is larger than the
// bounds.
type DiskBoundError struct {
	// Path is the folder checked.
	Path string
	// Bytes is the size of its filesystem.
	Bytes int64
	// Inodes is its filesystem's inode count (0: unbounded).
	Inodes uint64
	// MaxBytes is the bound on Bytes (Limits.DiskBytes).
	MaxBytes int64
	// MaxInodes is the bound on Inodes (Limits.DiskInodes).
	MaxInodes int64
}

// Error implements error.
func (e *DiskBoundError) Error() string {
	inodes := strconv.FormatUint(e.Inodes, 10)
	if e.Inodes == 0 {
		inodes = "unbounded"
	}
	return fmt.Sprintf("%v: the workspace %s is on a filesystem of %d bytes and %s inodes, above Limits.DiskBytes %d or DiskInodes %d, so a command could fill it; "+
		"put the workspace on a volume (sandbox.NewVolume; workspace.Manager makes one per workspace when it runs as root) "+
		"or set IsolatedOptions.UnboundedDisk (skillkit exec --unbounded-disk) to accept that",
		ErrUnboundedDisk, e.Path, e.Bytes, inodes, e.MaxBytes, e.MaxInodes)
}

// Unwrap returns ErrUnboundedDisk.
func (e *DiskBoundError) Unwrap() error { return ErrUnboundedDisk }

// CheckDiskBound returns a *DiskBoundError when the filesystem holding
// path is larger than l's DiskBytes or DiskInodes (zero: the defaults)
// allow: the isolated runner refuses such a workspace unless it is a
// volume of its own or IsolatedOptions.UnboundedDisk accepts it. A path
// not made yet is checked on the folder that will hold it.
func CheckDiskBound(path string, l Limits) error {
	l, err := l.withDefaults()
	if err != nil {
		return err
	}
	for {
		if _, err := os.Stat(path); err == nil || filepath.Dir(path) == path {
			break
		}
		path = filepath.Dir(path)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return fmt.Errorf("sandbox: statfs the workspace %s: %w", path, err)
	}
	size := int64(st.Blocks) * st.Frsize
	if size <= l.DiskBytes && st.Files > 0 && int64(st.Files) <= l.DiskInodes {
		return nil
	}
	return &DiskBoundError{Path: path, Bytes: size, Inodes: st.Files, MaxBytes: l.DiskBytes, MaxInodes: l.DiskInodes}
}

// checkReadOnly refuses read-only paths that would cover the parts of the
// private root the runner makes itself. Paths inside /tmp are fine: they
// are mounted over the private one.
func checkReadOnly(paths []string) error {
	for i, p := range paths {
		for _, reserved := range []string{WorkspaceDir, "/proc", "/dev", "/etc"} {
			if within(reserved, p) {
				return fmt.Errorf("%w: Spec.ReadOnly[%d] %q lies in the sandbox's own %s; pass a path outside %s, /proc, /dev and /etc", ErrInvalidSpec, i, p, reserved, WorkspaceDir)
			}
		}
		if p == "/" || p == "/tmp" {
			return fmt.Errorf("%w: Spec.ReadOnly[%d] %q would hide the sandbox's own %s; pass a directory below it", ErrInvalidSpec, i, p, p)
		}
	}
	return nil
}

// Run implements Runner.
func (r *isolated) Run(ctx context.Context, spec Spec) (*Result, error) {
	c, err := r.newCall(spec, r.maxTimeout)
	if err != nil {
		return nil, err
	}
	defer c.release()
	res, err := execute(ctx, c.p, c.cmd, r.grace, c.h)
	if err != nil && res == nil {
		return nil, c.fail(err)
	}
	return res, err
}

// Start implements Starter: the command runs in a sandbox of its own,
// exactly as Run's (the same namespaces, private root, seccomp, Landlock,
// cgroups and rlimits), with the helper's stdin a pipe the caller writes
// to and its stdout and stderr drained into bounded buffers; its cgroups
// and network namespace are released when it ends. Start returns once
// the helper says the command runs, so a command that cannot start is
// an error here.
func (r *isolated) Start(ctx context.Context, spec Spec) (Process, error) {
	if err := checkStartSpec(spec); err != nil {
		return nil, err
	}
	c, err := r.newCall(spec, r.maxStart)
	if err != nil {
		return nil, err
	}
	pr, err := startProcess(ctx, c.p, c.cmd, r.grace, c.h, c.release)
	if err != nil {
		return nil, c.fail(err)
	}
	return pr, nil
}

// call is one helper, set up and not yet started.
type call struct {
	p   *prepared
	cmd *exec.Cmd
	h   hooks
	// release frees what the call holds (sockets, cgroups, the network
	// namespace) once the helper has ended or failed to start.
	release func()
	// fail words an error from starting or running the helper.
	fail func(error) error
}

// newCall validates spec against maxTimeout and sets up the helper that
// runs it: its config, cgroups, sockets, namespaces and hooks.
func (r *isolated) newCall(spec Spec, maxTimeout time.Duration) (*call, error) {
	p, err := prepare(spec, maxTimeout, view{workspace: WorkspaceDir, tmp: "/tmp"})
	if err != nil {
		return nil, err
	}
	if err := checkReadOnly(p.readOnly); err != nil {
		return nil, err
	}
	if err := r.checkDisk(p); err != nil {
		return nil, err
	}
	rel, _ := filepath.Rel(p.workspace, p.dir)
	cfg := helperConfig{
		Exec: execConfig{
			Args:       p.args,
			Env:        p.env,
			Dir:        filepath.Join(WorkspaceDir, rel),
			ReadOnly:   p.readOnly,
			Limits:     p.limits,
			Network:    p.network,
			Landlock:   r.landlock,
			BestEffort: r.landlock && r.landlockABI < MinLandlockABI,
			Seccomp:    r.seccomp,
		},
		Workspace:  p.workspace,
		ReadOnly:   p.readOnly,
		MountsSent: r.root,
	}
	etc, err := r.etcSnapshot(p.network)
	if err != nil {
		return nil, err
	}
	cfg.Etc, cfg.EtcDirs = etc.dir, etc.dirs
	cfgBytes, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("sandbox: encode helper config: %w", err)
	}

	// A v2 cgroup must exist before the helper is born in it; v1 ones are
	// made while the helper starts up, off the critical path.
	var cg *callCgroups
	if r.cgroups != nil && r.cgroups.v2 != "" {
		if cg, err = r.cgroups.newCall(p.limits); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
	}
	// What the call holds, freed in reverse order by release.
	var held []func()
	release := func() {
		for i := len(held) - 1; i >= 0; i-- {
			held[i]()
		}
	}
	held = append(held, func() {
		if cg != nil {
			_ = cg.remove()
		}
	})

	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		release()
		return nil, fmt.Errorf("sandbox: config socket: %w", err)
	}
	cfgW, cfgR := os.NewFile(uintptr(pair[0]), "config"), os.NewFile(uintptr(pair[1]), "config")
	stR, stW, err := os.Pipe()
	if err != nil {
		closeAll(cfgR, cfgW)
		release()
		return nil, fmt.Errorf("sandbox: status pipe: %w", err)
	}
	// cfgR and stW are the helper's: closed once it started, or here
	// when it never did (closing twice is harmless).
	held = append(held, func() { closeAll(cfgW, stR, cfgR, stW) })

	sys := &syscall.SysProcAttr{
		Pdeathsig: syscall.SIGKILL,
		Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNS |
			syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: r.uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: r.gid, Size: 1}},
		// A root runner may clear the supplementary groups (setgroups
		// to none); an unprivileged one must deny setgroups to map.
		GidMappingsEnableSetgroups: r.root,
		Credential:                 &syscall.Credential{Uid: 0, Gid: 0, NoSetGroups: !r.root},
	}
	var netns *os.File
	if !p.network && r.netns != nil {
		if netns, err = r.netns.get(); err != nil {
			release()
			return nil, fmt.Errorf("sandbox: network namespace: %w", err)
		}
		// Back once the call is over: the helper, PID 1, has exited
		// and with it every process of the command.
		held = append(held, func() { r.netns.put(netns) })
	}
	if !p.network && netns == nil {
		sys.Cloneflags |= syscall.CLONE_NEWNET
	}
	if cg != nil && cg.v2fd >= 0 {
		sys.UseCgroupFD, sys.CgroupFD = true, cg.v2fd
	}
	cmd := &exec.Cmd{
		Path:        "/proc/self/exe",
		Args:        []string{helperArg0},
		Env:         []string{helperEnv + "=1", "GOMAXPROCS=1", "GOGC=off"},
		Dir:         "/",
		SysProcAttr: sys,
		ExtraFiles:  []*os.File{cfgR, stW}, // fd 3 and fd 4 in the helper
	}
	var st helperStatus
	statusRead := make(chan error, 1)
	var commandRuns atomic.Bool
	ready := make(chan struct{}) // the command runs, or the helper ended
	gotStatus := false
	h := hooks{
		afterStart: func(pid int) error {
			closeAll(cfgR, stW)
			// The status arrives when the helper is done (or gone).
			go func() {
				b, err := io.ReadAll(io.LimitReader(stR, 1<<16))
				if err == nil && len(b) > 0 {
					gotStatus = true
					err = json.Unmarshal(b, &st)
					if err != nil {
						err = fmt.Errorf("sandbox: decode helper status %q: %w", b, err)
					}
				}
				statusRead <- err
			}()
			if r.cgroups != nil && cg == nil {
				var err error
				if cg, err = r.cgroups.newCall(p.limits); err != nil {
					return fmt.Errorf("sandbox: %w", err)
				}
			}
			var fds []int
			if r.root {
				var err error
				if fds, err = hostMounts(pid, p); err != nil {
					return err
				}
				defer func() {
					for _, fd := range fds {
						unix.Close(fd)
					}
				}()
			}
			// The helper is placed only once its runtime is up and its
			// main thread locked (it says so with one byte): see init.
			if err := readReady(cfgW); err != nil {
				return err
			}
			if cg != nil {
				if err := cg.join(pid); err != nil {
					return fmt.Errorf("sandbox: %w", err)
				}
			}
			if err := unix.Sendmsg(int(cfgW.Fd()), []byte{0}, unix.UnixRights(fds...), nil, 0); err != nil {
				return fmt.Errorf("sandbox: send helper config: %w", err)
			}
			if _, err := cfgW.Write(cfgBytes); err != nil {
				return fmt.Errorf("sandbox: send helper config: %w", err)
			}
			if err := unix.Shutdown(int(cfgW.Fd()), unix.SHUT_WR); err != nil {
				return fmt.Errorf("sandbox: send helper config: %w", err)
			}
			// The helper answers one byte once the command runs.
			go func() {
				defer close(ready)
				b := make([]byte, 1)
				if n, _ := cfgW.Read(b); n == 1 {
					commandRuns.Store(true)
				}
			}()
			return nil
		},
		notStarted: func() bool { return !commandRuns.Load() },
		ready:      ready,
		afterWait: func(res *Result) error {
			if cg != nil {
				res.OOMKilled = cg.oomKilled()
			}
			if err := <-statusRead; err != nil {
				return fmt.Errorf("sandbox: read helper status: %w", err)
			}
			if !gotStatus {
				// The helper was killed before reporting: by the
				// deadline, Kill or the memory bound, whose result
				// says so.
				if res.TimedOut || res.Killed || res.OOMKilled {
					return nil
				}
				return fmt.Errorf("sandbox: the helper ended (exit status %d) without reporting how the command ended", res.ExitCode)
			}
			res.DiskLimit = st.DiskFull
			if st.Err != "" {
				if res.TimedOut || res.Killed {
					return nil // the deadline or Kill interrupted the set-up
				}
				return st.err()
			}
			res.ExitCode, res.Signal = st.Exit, st.Signal
			return nil
		},
	}
	h.start = r.forker.startCmd
	if netns != nil {
		h.start = func(cmd *exec.Cmd) error { return r.forker.start(func() error { return startInNetns(cmd, netns) }) }
	}
	fail := func(err error) error {
		if errors.Is(err, errStart) && (errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC)) {
			return &FeatureError{Feature: FeatureUserNamespaces, Err: err}
		}
		if errors.Is(err, ErrCommandStart) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return fmt.Errorf("sandbox: run %q: %w", p.args[0], err)
	}
	return &call{p: p, cmd: cmd, h: h, release: release, fail: fail}, nil
}

// readReady waits for the helper's first byte on the config socket. A
// helper that dies first (or is killed by the deadline) closes it.
func readReady(sock *os.File) error {
	b := make([]byte, 1)
	if n, err := sock.Read(b); n != 1 {
		return fmt.Errorf("sandbox: the helper ended before it started: %v", err)
	}
	return nil
}

// hostMounts makes, as root, the detached mounts the helper attaches: the
// workspace idmapped so that the command (the sandbox uid) owns what the
// host owns there and its own files are stored as the host's (the
// helper's own user namespace, pid, provides the mapping), and each
// read-only path cloned as it is, so that only what others may read or
// connect to there is open to the command.
func hostMounts(pid int, p *prepared) ([]int, error) {
	userns, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/ns/user", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: open the helper's user namespace: %w", err)
	}
	defer unix.Close(userns)
	var fds []int
	fail := func(err error) ([]int, error) {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, err
	}
	ws, err := idmapped(p.workspace, userns)
	if err != nil {
		if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
			return fail(&FeatureError{Feature: FeatureIDMap, Err: fmt.Errorf("the workspace %s: %w", p.workspace, err)})
		}
		return fail(fmt.Errorf("sandbox: mount the workspace %s: %w", p.workspace, err))
	}
	fds = append(fds, ws)
	for i, ro := range p.readOnly {
		fd, err := cloneTree(ro, true)
		if err != nil {
			return fail(fmt.Errorf("%w: Spec.ReadOnly[%d] %s: %w", ErrInvalidSpec, i, ro, err))
		}
		fds = append(fds, fd)
	}
	return fds, nil
}

// idmapped returns a detached, idmapped clone of the mount at path.
func idmapped(path string, userns int) (int, error) {
	fd, err := unix.OpenTree(unix.AT_FDCWD, path, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return -1, err
	}
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_IDMAP | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV, Userns_fd: uint64(userns)}
	if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH, &attr); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// newEmptyNetns makes a network namespace with nothing in it and returns
// a handle to it. The thread that made it is never returned to the Go
// scheduler: it ends with its goroutine.
func newEmptyNetns() (*os.File, error) {
	type result struct {
		f   *os.File
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with us
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			ch <- result{err: fmt.Errorf("unshare network namespace: %w", err)}
			return
		}
		f, err := os.Open("/proc/thread-self/ns/net")
		ch <- result{f, err}
	}()
	r := <-ch
	return r.f, r.err
}

// startInNetns starts cmd from a thread that has entered netns, so the
// child is created inside it, then moves the thread back. A thread that
// cannot move back is retired instead of being reused.
func startInNetns(cmd *exec.Cmd, netns *os.File) error {
	runtime.LockOSThread()
	home, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("open current network namespace: %w", err)
	}
	defer home.Close()
	if err := unix.Setns(int(netns.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("enter the sandbox network namespace: %w", err)
	}
	startErr := cmd.Start()
	if err := unix.Setns(int(home.Fd()), unix.CLONE_NEWNET); err != nil {
		// Leave the thread locked: it is retired rather than run anything
		// else in the wrong namespace.
		return errors.Join(startErr, fmt.Errorf("return to the host network namespace: %w: %w", err, errTainted))
	}
	runtime.UnlockOSThread()
	return startErr
}
