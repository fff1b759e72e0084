//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// The helper is this binary re-executed with argv[0] == helperArg0 and
// helperEnv=1 in an otherwise empty environment. Both must match, so a
// stray variable alone never diverts a normal program.
const (
	helperArg0 = "skillkit-sandbox-init"
	helperEnv  = "SKILLKIT_SANDBOX_HELPER"
)

// helperConfig is sent by the host on fd 3.
type helperConfig struct {
	Args       []string `json:"args"`
	Env        []string `json:"env"`
	Dir        string   `json:"dir"`
	Workspace  string   `json:"workspace"`
	ReadOnly   []string `json:"read_only,omitempty"`
	Limits     Limits   `json:"limits"`
	Namespaces bool     `json:"namespaces"`
	Landlock   bool     `json:"landlock"`
	BestEffort bool     `json:"best_effort"`
	Network    bool     `json:"network"`
}

// helperStatus is written by the helper on fd 4 before it exits.
type helperStatus struct {
	Stage  string `json:"stage,omitempty"`
	Err    string `json:"err,omitempty"`
	Exit   int    `json:"exit"`
	Signal int    `json:"signal,omitempty"`
}

// err turns a setup failure reported by the helper into an error.
func (s helperStatus) err() error {
	if s.Stage == "exec" {
		return fmt.Errorf("%w: %s", ErrCommandStart, s.Err)
	}
	return fmt.Errorf("sandbox: helper %s: %s", s.Stage, s.Err)
}

// System paths the command may read and execute. Only what interpreters
// need: no /home, /root, /var, /tmp, /run or /srv.
var (
	roDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
		"/etc/alternatives", "/etc/ssl", "/etc/ca-certificates", "/etc/ld.so.conf.d",
		"/etc/python3", "/etc/python3.11", "/etc/fonts"}
	roFiles = []string{"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/passwd", "/etc/group",
		"/etc/nsswitch.conf", "/etc/localtime", "/etc/timezone", "/etc/mime.types",
		"/etc/locale.alias", "/etc/hosts", "/etc/host.conf", "/etc/resolv.conf",
		"/etc/debian_version", "/etc/os-release", "/dev/urandom", "/dev/random"}
	rwFiles = []string{"/dev/null", "/dev/zero", "/dev/full"}
)

func init() {
	if len(os.Args) == 0 || os.Args[0] != helperArg0 || os.Getenv(helperEnv) != "1" {
		return
	}
	// Keep this goroutine (and main) on the main thread: its tid equals
	// the pid the host placed in the pids cgroup, and the credentials,
	// no_new_privs and Landlock domain set below are per thread.
	runtime.LockOSThread()
	os.Exit(helperMain())
}

// helperMain sets up confinement, runs the command as its child and reports
// how it ended. It returns the helper's exit code.
func helperMain() int {
	for _, fd := range []int{3, 4} {
		// The command must not inherit the config or status pipes.
		unix.CloseOnExec(fd)
	}
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
	var cfg helperConfig
	b, err := io.ReadAll(os.NewFile(3, "config"))
	if err == nil {
		err = json.Unmarshal(b, &cfg)
	}
	if err != nil {
		return report(helperStatus{Stage: "config", Err: err.Error()})
	}
	path, err := lookPath(cfg.Args[0], cfg.Env)
	if err != nil {
		return report(helperStatus{Stage: "exec", Err: err.Error()})
	}
	if cfg.Namespaces {
		if err := mountProc(); err != nil {
			return report(helperStatus{Stage: "mount", Err: err.Error()})
		}
	}
	if err := dropCapabilities(); err != nil {
		return report(helperStatus{Stage: "capabilities", Err: err.Error()})
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return report(helperStatus{Stage: "no_new_privs", Err: err.Error()})
	}
	if cfg.Landlock {
		if err := restrictLandlock(cfg); err != nil {
			return report(helperStatus{Stage: "landlock", Err: err.Error()})
		}
	}

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	// ForkExec forks from this locked thread, so the child inherits its
	// credentials, no_new_privs and Landlock domain. The child stops at
	// execve (ptrace) so that its rlimits are set before it runs a single
	// instruction of the command, while the helper itself stays unlimited
	// (a Go runtime under RLIMIT_AS or RLIMIT_NPROC cannot start threads).
	pid, err := syscall.ForkExec(path, cfg.Args, &syscall.ProcAttr{
		Dir:   cfg.Dir,
		Env:   cfg.Env,
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Ptrace: true},
	})
	if err != nil {
		return report(helperStatus{Stage: "exec", Err: fmt.Sprintf("%s: %v", cfg.Args[0], err)})
	}
	if err := limitStopped(pid, cfg.Limits); err != nil {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		return report(helperStatus{Stage: "rlimit", Err: err.Error()})
	}
	if cfg.Namespaces {
		go func() {
			// As PID 1 of the namespace, pass termination requests to
			// every process in it (kill(-1) spares the caller).
			for s := range sigs {
				_ = syscall.Kill(-1, s.(syscall.Signal))
			}
		}()
	}
	for {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return report(helperStatus{Stage: "wait", Err: err.Error()})
		}
		if wpid != pid {
			continue // an orphan reparented to us
		}
		st := helperStatus{Exit: ws.ExitStatus()}
		if ws.Signaled() {
			st.Signal = int(ws.Signal())
			st.Exit = 128 + st.Signal
		}
		// Returning ends PID 1: the kernel kills whatever is left in the
		// namespace.
		return report(st)
	}
}

// mountProc makes mounts private and mounts a /proc that shows only the
// new PID namespace.
func mountProc() error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	return nil
}

// helperTaskSlack is added to RLIMIT_NPROC because the kernel counts the
// helper's own threads, which share the command's uid. RLIMIT_NPROC is
// only a backstop: it does not bind uid 0 (the kernel exempts it), which
// is why the pids cgroup is the real bound.
const helperTaskSlack = 32

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
	)
}

// dropCapabilities empties the bounding, inheritable and ambient sets of
// this thread, so the command (uid 0 inside the namespace) gets no
// capabilities at execve.
func dropCapabilities() error {
	last := 63
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = n
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("clear ambient: %w", err)
	}
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	data[0].Inheritable, data[1].Inheritable = 0, 0
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

// restrictLandlock enforces the filesystem, network and IPC-scope ruleset
// on this thread.
func restrictLandlock(cfg helperConfig) error {
	c := landlock.Config{
		HandledAccessFS: landlock.V6.HandledAccessFS,
		Scoped:          landlock.V6.Scoped,
	}
	if !cfg.Network {
		c.HandledAccessNet = landlock.V6.HandledAccessNet
	}
	if cfg.BestEffort {
		c = c.BestEffort()
	}
	rules := []landlock.Rule{
		landlock.RODirs(roDirs...).IgnoreIfMissing(),
		landlock.ROFiles(roFiles...).IgnoreIfMissing(),
		landlock.RWFiles(rwFiles...).IgnoreIfMissing(),
		landlock.RWDirs(cfg.Workspace).WithRefer(),
	}
	if cfg.Namespaces {
		// This /proc shows only the namespace's own processes.
		rules = append(rules, landlock.RODirs("/proc"))
	}
	for _, p := range cfg.ReadOnly {
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("Spec.ReadOnly path %q: %w", p, err)
		}
		if fi.IsDir() {
			rules = append(rules, landlock.RODirs(p))
		} else {
			rules = append(rules, landlock.ROFiles(p))
		}
	}
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
