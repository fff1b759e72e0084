//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/psx"
)

// The helper is this binary re-executed with argv[0] == helperArg0 and
// helperEnv=1 in an otherwise empty environment; both must match, so a
// stray variable alone never diverts a normal program. It is PID 1 of the
// new namespaces: it builds the private root, drops every privilege of all
// its threads, confines its main thread the way the command must be
// confined, starts the command from that thread, reaps and reports.
const (
	helperArg0 = "skillkit-sandbox-init"
	helperEnv  = "SKILLKIT_SANDBOX_HELPER"
)

// helperConfig is sent by the host on the socket at fd 3, after one byte
// that carries the detached mounts (SCM_RIGHTS) when the host made them.
type helperConfig struct {
	Exec execConfig `json:"exec"`
	// Workspace and ReadOnly are host paths the helper clones itself
	// when the host sent no mounts (an unprivileged runner).
	Workspace string   `json:"workspace"`
	ReadOnly  []string `json:"read_only,omitempty"`
	// MountsSent says the host sent the workspace mount and then one
	// mount per ReadOnly path.
	MountsSent bool `json:"mounts_sent"`
	// Etc is the runner's /etc snapshot; EtcDirs the host /etc folders
	// bound onto it.
	Etc     string   `json:"etc"`
	EtcDirs []string `json:"etc_dirs,omitempty"`
}

// execConfig says how to start the command.
type execConfig struct {
	Args       []string `json:"args"`
	Env        []string `json:"env"`
	Dir        string   `json:"dir"`
	ReadOnly   []string `json:"read_only,omitempty"`
	Limits     Limits   `json:"limits"`
	Network    bool     `json:"network"`
	Landlock   bool     `json:"landlock"`
	BestEffort bool     `json:"best_effort"`
	Seccomp    bool     `json:"seccomp"`
}

// helperStatus is written by a stage on its status descriptor.
type helperStatus struct {
	Stage    string `json:"stage,omitempty"`
	Err      string `json:"err,omitempty"`
	NotFound bool   `json:"not_found,omitempty"`
	Exit     int    `json:"exit"`
	Signal   int    `json:"signal,omitempty"`
	DiskFull bool   `json:"disk_full,omitempty"`
}

// err turns a setup failure reported by the helper into an error.
func (s helperStatus) err() error {
	if s.Stage == "exec" {
		return fmt.Errorf("%w: %s", ErrCommandStart, s.Err)
	}
	return fmt.Errorf("sandbox: helper %s: %s", s.Stage, s.Err)
}

func init() {
	if len(os.Args) == 0 || os.Getenv(helperEnv) != "1" {
		return
	}
	if os.Args[0] != helperArg0 {
		return
	}
	// Keep this goroutine (and main) on the main thread: its tid is the
	// pid the host placed in the pids cgroup, and the keyring, Landlock
	// domain and seccomp filter the command inherits are set on it.
	runtime.LockOSThread()
	// Now tell the host it may place this thread in the pids cgroup.
	// From here on the main thread starts no thread itself (a locked
	// thread hands that to the runtime's template thread, started by
	// LockOSThread above), so every runtime thread stays outside the
	// cgroup; placed earlier, threads the runtime starts during its own
	// start-up would count against Limits.Processes, and a fork bomb
	// that fills the cgroup would leave the helper unable to start one.
	if _, err := unix.Write(3, []byte{0}); err != nil {
		os.Exit(125)
	}
	os.Exit(helperMain())
}

// helperMain is stage 1. It returns the helper's exit code.
func helperMain() int {
	// The command may signal PID 1. Signals the Go runtime would die or
	// dump its stacks on are dropped (a signal a process sends is never
	// taken for a fault of the helper's own); termination requests are
	// forwarded once the command runs.
	signal.Ignore(ignoredSignals...)
	sigs := make(chan os.Signal, 4)
	for _, fd := range []int{3, 4} {
		unix.CloseOnExec(fd)
	}
	// Nothing the host process inherited stays open here.
	_ = unix.CloseRange(5, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	status := os.NewFile(4, "status")
	report := func(st helperStatus) int {
		b, _ := json.Marshal(st)
		_, _ = status.Write(b)
		_ = status.Close()
		if st.Err != "" {
			return 125
		}
		return 0
	}
	cfg, fds, err := readHelperConfig(3)
	if err != nil {
		return report(helperStatus{Stage: "config", Err: err.Error()})
	}
	// The host has placed this process in the call's cgroups: a cgroup
	// namespace rooted there shows the command its cgroup as "/" and no
	// host cgroup name.
	if err := unix.Unshare(unix.CLONE_NEWCGROUP); err != nil {
		return report(helperStatus{Stage: "namespaces", Err: "cgroup namespace: " + err.Error()})
	}
	plan := mountPlan{
		readOnlyPaths: cfg.ReadOnly,

		diskBytes:  cfg.Exec.Limits.DiskBytes,
		diskInodes: cfg.Exec.Limits.DiskInodes,
		newRoot:    "/tmp",
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return report(helperStatus{Stage: "mount", Err: "make / private: " + err.Error()})
	}
	// Take the /etc snapshot, the workspace and the read-only paths
	// before the new root's tmpfs covers /tmp, where they may lie.
	if plan.etc, err = cloneTree(cfg.Etc, true); err != nil {
		return report(helperStatus{Stage: "mount", Err: fmt.Sprintf("the /etc snapshot %s: %v", cfg.Etc, err)})
	}
	if cfg.MountsSent {
		if len(fds) != 1+len(cfg.ReadOnly) {
			return report(helperStatus{Stage: "config", Err: fmt.Sprintf("got %d mounts, want %d", len(fds), 1+len(cfg.ReadOnly))})
		}
		plan.workspace, plan.readOnly = fds[0], fds[1:]
	} else {
		if plan.workspace, err = cloneTree(cfg.Workspace, false); err != nil {
			return report(helperStatus{Stage: "mount", Err: fmt.Sprintf("Spec.Workspace %s: %v", cfg.Workspace, err)})
		}
		for i, p := range cfg.ReadOnly {
			fd, err := cloneTree(p, true)
			if err != nil {
				return report(helperStatus{Stage: "mount", Err: fmt.Sprintf("Spec.ReadOnly[%d] %s: %v", i, p, err)})
			}
			plan.readOnly = append(plan.readOnly, fd)
		}
	}
	// After the clones above (each is an anonymous mount namespace),
	// before /proc/sys turns read-only.
	if err := limitNamespace(); err != nil {
		return report(helperStatus{Stage: "namespaces", Err: err.Error()})
	}
	if err := buildRoot(plan); err != nil {
		return report(helperStatus{Stage: "mount", Err: err.Error()})
	}
	_ = unix.Sethostname([]byte("sandbox"))
	if err := dropPrivileges(); err != nil {
		return report(helperStatus{Stage: "privileges", Err: err.Error()})
	}

	pid, err := startCommand(cfg.Exec)
	if err != nil {
		var st *helperStatus
		if errors.As(err, &st) {
			return report(*st)
		}
		return report(helperStatus{Stage: "exec", Err: err.Error()})
	}
	// Tell the host the command runs: from now on a deadline asks it to
	// stop (SIGTERM) before killing it; before, there was nothing to ask.
	_, _ = unix.Write(3, []byte{1})
	// Asked for only now, while the command starts on the other CPU:
	// setting up os/signal costs ~0.4 ms. A termination request before
	// this point ends the helper (and so the namespace) at once, which the
	// host reports as the deadline it is.
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		// As PID 1 of the namespace, pass termination requests to every
		// process in it (kill(-1) spares the caller).
		for s := range sigs {
			_ = syscall.Kill(-1, s.(syscall.Signal))
		}
	}()
	for {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return report(helperStatus{Stage: "wait", Err: err.Error()})
		}
		if ws.Stopped() {
			// A process that asked to be traced by us (PTRACE_TRACEME)
			// stopped: let it go.
			_ = syscall.PtraceDetach(wpid)
			continue
		}
		if wpid != pid {
			continue // an orphan reparented to us
		}
		st := helperStatus{Exit: ws.ExitStatus()}
		if ws.Signaled() {
			st.Signal = int(ws.Signal())
			st.Exit = 128 + st.Signal
		}
		// Stop the rest before measuring what they left.
		_ = syscall.Kill(-1, syscall.SIGKILL)
		st.DiskFull = nearlyFull("/tmp") || nearlyFull("/dev/shm") || nearlyFull(WorkspaceDir)
		// Returning ends PID 1: the kernel kills and reaps whatever is
		// left in the namespace before the host's wait returns.
		return report(st)
	}
}

// ignoredSignals are the signals the helper drops: all but SIGKILL and
// SIGSTOP (which a namespace's init never gets from inside), SIGCHLD (it
// reaps), SIGURG (the Go runtime's preemption) and the termination
// requests it forwards.
var ignoredSignals = []os.Signal{
	syscall.SIGQUIT, syscall.SIGABRT, syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGILL,
	syscall.SIGTRAP, syscall.SIGSYS, syscall.SIGFPE, syscall.SIGUSR1, syscall.SIGUSR2,
	syscall.SIGALRM, syscall.SIGVTALRM, syscall.SIGXCPU, syscall.SIGXFSZ, syscall.SIGPIPE,
	syscall.SIGPWR, syscall.SIGSTKFLT, syscall.SIGTTIN, syscall.SIGTTOU, syscall.SIGTSTP,
	syscall.SIGWINCH, syscall.SIGIO, syscall.SIGPROF, syscall.SIGCONT,
}

// namespaceLimits are the per-user-namespace counts the sandbox's own
// namespace is held to (/proc/sys/user). The kernel charges what a user
// namespace uses to the user that made it as well — the runner's uid, root
// for a root runner — so without them a command could take all of root's
// inotify instances for the length of a call. No user namespace may be
// made inside, seccomp or not (the other kinds need one first, or are
// refused by seccomp).
var namespaceLimits = map[string]string{
	"max_inotify_instances": "32",
	"max_inotify_watches":   "8192",
	"max_user_namespaces":   "0",
}

// limitNamespace writes namespaceLimits for this user namespace.
func limitNamespace() error {
	for name, v := range namespaceLimits {
		p := "/proc/sys/user/" + name
		if err := os.WriteFile(p, []byte(v), 0); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("limit %s: %w", p, err)
		}
	}
	return nil
}

// readHelperConfig reads the host's config and the mounts sent with it.
func readHelperConfig(fd int) (*helperConfig, []int, error) {
	one := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4*64))
	_, oobn, _, _, err := unix.Recvmsg(fd, one, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, nil, fmt.Errorf("receive config: %w", err)
	}
	var fds []int
	if oobn > 0 {
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return nil, nil, fmt.Errorf("parse mounts: %w", err)
		}
		for _, m := range msgs {
			got, err := unix.ParseUnixRights(&m)
			if err != nil {
				return nil, nil, fmt.Errorf("parse mounts: %w", err)
			}
			fds = append(fds, got...)
		}
	}
	// Read to the end of what the host sends; the socket stays open for
	// the "command started" byte.
	var b []byte
	buf := make([]byte, 4096)
	for {
		n, err := unix.Read(fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read config: %w", err)
		}
		if n == 0 {
			break
		}
		b = append(b, buf[:n]...)
		if len(b) > maxHelperConfig {
			return nil, nil, fmt.Errorf("read config: more than %d bytes", maxHelperConfig)
		}
	}
	var cfg helperConfig
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, nil, fmt.Errorf("decode config: %w", err)
	}
	return &cfg, fds, nil
}

// maxHelperConfig bounds the config the helper reads (arguments and
// environment included).
const maxHelperConfig = 16 << 20

// nearlyFull reports whether the filesystem at path has under 1 MiB or no
// inode left.
func nearlyFull(path string) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return false
	}
	return int64(st.Bavail)*st.Bsize < 1<<20 || (st.Files > 0 && st.Ffree == 0)
}

// dropPrivileges leaves every thread of the helper with no capabilities,
// and the main thread — the only one that starts anything — also with an
// empty bounding set, no_new_privs and locked securebits that keep uid 0
// from regaining capabilities at execve. The process is made non-dumpable
// so the command cannot ptrace it or open its /proc files. Only clearing
// the capabilities pays psx's cross-thread signalling (~0.15 ms); the other
// threads run nothing but the Go runtime and never execute a program, so
// repeating the rest on them (~4 ms for the bounding set alone) would buy
// nothing.
func dropPrivileges() error {
	// linux/securebits.h: NOROOT, NO_SETUID_FIXUP, KEEP_CAPS and
	// NO_CAP_AMBIENT_RAISE, each with its lock bit; KEEP_CAPS itself
	// stays off.
	const (
		secNoRoot            = 1 << 0
		secNoRootLocked      = 1 << 1
		secNoSetuidFixup     = 1 << 2
		secNoSetuidFixupLock = 1 << 3
		secKeepCapsLocked    = 1 << 5
		secNoAmbientRaise    = 1 << 6
		secNoAmbientLocked   = 1 << 7
	)
	const secbits = secNoRoot | secNoRootLocked | secNoSetuidFixup | secNoSetuidFixupLock |
		secKeepCapsLocked | secNoAmbientRaise | secNoAmbientLocked
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, secbits, 0, 0, 0); err != nil {
		return fmt.Errorf("set securebits: %w", err)
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	for c, last := 0, lastCap(); c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if _, _, e := psx.Syscall3(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return fmt.Errorf("clear capabilities: %w", e)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("make the helper non-dumpable: %w", err)
	}
	return nil
}

// allThreadsPrctl runs prctl on every thread of the process.
func allThreadsPrctl(option int, arg2, arg3 uintptr) error {
	if _, _, e := psx.Syscall6(unix.SYS_PRCTL, uintptr(option), arg2, arg3, 0, 0, 0); e != 0 {
		return e
	}
	return nil
}

// lastCap returns the highest capability number the kernel knows.
func lastCap() int {
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			return n
		}
	}
	return 63
}

// Error implements error, so that startCommand can return a status.
func (s *helperStatus) Error() string { return s.Err }

// startCommand confines this (the main) thread — a fresh session
// keyring, Landlock, seccomp; no_new_privs and the dropped capabilities
// are already there — and starts the command from it, so the command
// inherits all of them. Descriptors other than stdin, stdout and stderr
// close at execve. The command stops at its execve (ptrace) until its
// rlimits are set, so its first instruction runs under every bound, while
// the helper itself stays unlimited (a Go runtime under RLIMIT_AS or
// RLIMIT_NPROC cannot start threads).
func startCommand(cfg execConfig) (int, error) {
	fail := func(code int, notFound bool, format string, a ...any) (int, error) {
		return 0, &helperStatus{Stage: "exec", Err: fmt.Sprintf(format, a...), NotFound: notFound, Exit: code}
	}
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return fail(125, false, "close inherited descriptors: %v", err)
	}
	// A fresh anonymous session keyring: nothing of the host's.
	if _, _, e := unix.RawSyscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0); e != 0 {
		return fail(125, false, "join a new session keyring: %v", e)
	}
	path, err := lookPath(cfg.Args[0], cfg.Env)
	if err != nil {
		return fail(127, true, "%v", err)
	}
	if cfg.Landlock {
		if err := restrictLandlock(cfg); err != nil {
			return fail(125, false, "landlock: %v", err)
		}
	}
	if cfg.Seccomp {
		if err := loadSeccomp(); err != nil {
			return fail(125, false, "%v", err)
		}
	}
	pid, err := syscall.ForkExec(path, cfg.Args, &syscall.ProcAttr{
		Dir:   cfg.Dir,
		Env:   cfg.Env,
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Setsid: true, Ptrace: true},
	})
	if err != nil {
		code := 126
		if errors.Is(err, syscall.ENOENT) {
			code = 127
		}
		return fail(code, code == 127, "%s: %v", cfg.Args[0], err)
	}
	if err := limitStopped(pid, cfg.Limits); err != nil {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		return fail(125, false, "%v", err)
	}
	return pid, nil
}

// limitStopped waits for the traced child pid to stop at its execve, sets
// its rlimits and lets it run untraced.
func limitStopped(pid int, l Limits) error {
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("wait for exec stop: %w", err)
		}
		break
	}
	if !ws.Stopped() {
		return fmt.Errorf("command did not stop at exec (status %v)", ws)
	}
	if err := setRlimits(pid, l); err != nil {
		return err
	}
	if err := syscall.PtraceDetach(pid); err != nil {
		return fmt.Errorf("ptrace detach: %w", err)
	}
	return nil
}

// helperTaskSlack is added to RLIMIT_NPROC because the kernel counts the
// helper's own threads, which share the command's uid in its user
// namespace; the pids cgroup is the exact bound.
const helperTaskSlack = 32

// setRlimits applies the limits to process pid.
func setRlimits(pid int, l Limits) error {
	set := func(name string, res int, soft, hard uint64) error {
		if err := unix.Prlimit(pid, res, &unix.Rlimit{Cur: soft, Max: hard}, nil); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	u := func(v int64) uint64 { return uint64(v) }
	return errors.Join(
		// The hard CPU limit one second later turns SIGXCPU into SIGKILL.
		set("RLIMIT_CPU", unix.RLIMIT_CPU, u(l.CPUSeconds), u(l.CPUSeconds+1)),
		set("RLIMIT_AS", unix.RLIMIT_AS, u(l.AddressSpace), u(l.AddressSpace)),
		set("RLIMIT_FSIZE", unix.RLIMIT_FSIZE, u(l.FileSize), u(l.FileSize)),
		set("RLIMIT_NOFILE", unix.RLIMIT_NOFILE, u(l.OpenFiles), u(l.OpenFiles)),
		set("RLIMIT_NPROC", unix.RLIMIT_NPROC, u(l.Processes+helperTaskSlack), u(l.Processes+helperTaskSlack)),
		set("RLIMIT_CORE", unix.RLIMIT_CORE, 0, 0),
		// Queued signals, POSIX message queues and locked memory are
		// charged up the user namespaces to the runner's uid: keep
		// each call to a small share.
		set("RLIMIT_SIGPENDING", unix.RLIMIT_SIGPENDING, 1024, 1024),
		set("RLIMIT_MSGQUEUE", unix.RLIMIT_MSGQUEUE, 256<<10, 256<<10),
		set("RLIMIT_MEMLOCK", unix.RLIMIT_MEMLOCK, 8<<20, 8<<20),
	)
}

// Paths of the private root the command may use, for Landlock.
var (
	llRODirs  = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/proc", "/var"}
	llROFiles = []string{"/dev/random", "/dev/urandom"}
	llRWFiles = []string{"/dev/null", "/dev/zero", "/dev/full"}
	llRWDirs  = []string{WorkspaceDir, "/tmp", "/dev/shm"}
)

// restrictLandlock enforces the filesystem, network and IPC-scope ruleset
// on this thread (and so on the command it starts), a second layer over
// the private root.
func restrictLandlock(cfg execConfig) error {
	c := landlockConfig(cfg.Network)
	if cfg.BestEffort {
		c = c.BestEffort()
	}
	rules := landlockRules(cfg.ReadOnly)
	fd, flags, err := c.NewRulesetFD(rules...)
	if err != nil {
		return err
	}
	if fd < 0 {
		return nil // best effort on a kernel without Landlock
	}
	defer unix.Close(fd)
	return llsys.LandlockRestrictSelf(fd, flags)
}
