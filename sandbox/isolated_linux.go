//go:build linux

package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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
	"syscall"
	"time"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// isolated runs commands through the re-exec helper (see helper_linux.go).
type isolated struct {
	grace, maxTimeout time.Duration
	namespaces        bool
	landlock          bool
	landlockABI       int
	cgroupRoot        string // "" when the pids cgroup is not used
	uid, gid          int
	// netns is an empty network namespace made once and shared by every
	// command that has no network (nil: each call makes its own). Making
	// a network namespace is the most expensive part of starting the
	// sandbox (≈1.7 ms here); an empty one has nothing to share: its
	// loopback is down and only the init user namespace could raise it,
	// and Landlock's abstract-socket scope keeps commands apart.
	netns *os.File
}

// NewIsolated returns the confining Runner. It probes the kernel once and
// returns *FeatureError naming the first missing feature unless
// opts.AllowDowngrade is set, in which case the layer is skipped and a
// warning is logged.
func NewIsolated(opts *IsolatedOptions) (Runner, error) {
	var o IsolatedOptions
	if opts != nil {
		o = *opts
	}
	grace, maxT, err := durations(o.KillGrace, o.MaxTimeout)
	if err != nil {
		return nil, err
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.Default()
	}
	r := &isolated{grace: grace, maxTimeout: maxT, namespaces: true, landlock: true, uid: os.Getuid(), gid: os.Getgid()}
	missing := func(feature string, cause error) error {
		if !o.AllowDowngrade {
			return &FeatureError{Feature: feature, Err: cause}
		}
		logger.Warn("sandbox: isolated runner DOWNGRADED: kernel feature missing, layer skipped",
			slog.String("feature", feature), slog.String("cause", cause.Error()))
		return nil
	}

	if err := probeUserNamespaces(); err != nil {
		if err := missing(FeatureUserNamespaces, err); err != nil {
			return nil, err
		}
		r.namespaces = false
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

	if r.namespaces && r.uid == 0 {
		// Only a process with CAP_SYS_ADMIN can make and enter a network
		// namespace owned by the initial user namespace; others keep
		// making one per call.
		if f, err := newEmptyNetns(); err == nil {
			r.netns = f
		} else {
			logger.Debug("sandbox: shared network namespace unavailable; one per call", slog.String("cause", err.Error()))
		}
	}

	root := o.PidsCgroup
	if root == "" {
		root = DefaultPidsCgroup
	}
	if err := probeCgroup(root); err != nil {
		// RLIMIT_NPROC binds every uid but root (the kernel exempts
		// INIT_USER), so only root strictly needs the cgroup.
		if r.uid == 0 {
			if err := missing(FeaturePidsCgroup, err); err != nil {
				return nil, err
			}
		}
	} else {
		r.cgroupRoot = root
	}
	return r, nil
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

// probeCgroup checks that root is a pids hierarchy we can create in.
func probeCgroup(root string) error {
	if _, err := os.Stat(filepath.Join(root, "cgroup.procs")); err != nil {
		return fmt.Errorf("%s is not a cgroup hierarchy: %w", root, err)
	}
	dir, err := newCgroup(root, 1)
	if err != nil {
		return err
	}
	return removeCgroup(dir)
}

// newCgroup creates a uniquely named pids cgroup under root with pids.max.
func newCgroup(root string, max int64) (string, error) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	dir := filepath.Join(root, "skillkit-sandbox-"+hex.EncodeToString(b[:]))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", fmt.Errorf("create pids cgroup: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.FormatInt(max, 10)), 0); err != nil {
		_ = os.Remove(dir)
		return "", fmt.Errorf("set %s/pids.max: %w", dir, err)
	}
	return dir, nil
}

// removeCgroup removes dir, waiting briefly for exiting tasks to leave.
func removeCgroup(dir string) error {
	deadline := time.Now().Add(2 * time.Second)
	for {
		err := syscall.Rmdir(dir)
		if err == nil || errors.Is(err, syscall.ENOENT) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
			return fmt.Errorf("remove pids cgroup %s: %w", dir, err)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// Run implements Runner.
func (r *isolated) Run(ctx context.Context, spec Spec) (*Result, error) {
	p, err := prepare(spec, r.maxTimeout)
	if err != nil {
		return nil, err
	}
	cfg := helperConfig{
		Args:       p.args,
		Env:        p.env,
		Dir:        p.dir,
		Workspace:  p.workspace,
		ReadOnly:   p.readOnly,
		Limits:     p.limits,
		Namespaces: r.namespaces,
		Landlock:   r.landlock,
		BestEffort: r.landlock && r.landlockABI < MinLandlockABI,
		Network:    p.network,
	}
	cfgBytes, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("sandbox: encode helper config: %w", err)
	}

	var cgDir string
	if r.cgroupRoot != "" {
		// +1: the helper's thread that forks the command lives there too.
		if cgDir, err = newCgroup(r.cgroupRoot, p.limits.Processes+1); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		defer func() { _ = removeCgroup(cgDir) }()
	}

	cfgR, cfgW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: config pipe: %w", err)
	}
	stR, stW, err := os.Pipe()
	if err != nil {
		closeAll(cfgR, cfgW)
		return nil, fmt.Errorf("sandbox: status pipe: %w", err)
	}
	defer closeAll(cfgW, stR)

	sys := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if r.namespaces {
		sys.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNS |
			syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS
		if !p.network && r.netns == nil {
			sys.Cloneflags |= syscall.CLONE_NEWNET
		}
		sys.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: r.uid, Size: 1}}
		sys.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: r.gid, Size: 1}}
		sys.GidMappingsEnableSetgroups = false
	}
	cmd := &exec.Cmd{
		Path:        "/proc/self/exe",
		Args:        []string{helperArg0},
		Env:         []string{helperEnv + "=1", "GOMAXPROCS=1", "GOGC=off"},
		Dir:         "/",
		SysProcAttr: sys,
		ExtraFiles:  []*os.File{cfgR, stW}, // fd 3 and fd 4 in the helper
	}
	h := hooks{
		afterStart: func(pid int) error {
			closeAll(cfgR, stW)
			if cgDir != "" {
				// The helper's main thread (tid == pid) forks the command,
				// so moving that one thread is enough; it waits for the
				// config below before forking.
				if err := os.WriteFile(filepath.Join(cgDir, "tasks"), []byte(strconv.Itoa(pid)), 0); err != nil {
					return fmt.Errorf("sandbox: join pids cgroup %s: %w", cgDir, err)
				}
			}
			if _, err := cfgW.Write(cfgBytes); err != nil {
				return fmt.Errorf("sandbox: send helper config: %w", err)
			}
			return cfgW.Close()
		},
		afterWait: func(res *Result) error {
			b, err := io.ReadAll(io.LimitReader(stR, 1<<16))
			if err != nil {
				return fmt.Errorf("sandbox: read helper status: %w", err)
			}
			var st helperStatus
			if len(b) == 0 {
				// The helper was killed (deadline) before reporting; the
				// wait status of the helper stands.
				return nil
			}
			if err := json.Unmarshal(b, &st); err != nil {
				return fmt.Errorf("sandbox: decode helper status %q: %w", b, err)
			}
			if st.Err != "" {
				return st.err()
			}
			res.ExitCode, res.Signal = st.Exit, st.Signal
			return nil
		},
	}
	if r.namespaces && !p.network && r.netns != nil {
		h.start = func(cmd *exec.Cmd) error { return startInNetns(cmd, r.netns) }
	}
	res, err := execute(ctx, p, cmd, r.grace, h)
	if err != nil && res == nil {
		closeAll(cfgR, stW)
		if r.namespaces && errors.Is(err, errStart) && (errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC)) {
			return nil, &FeatureError{Feature: FeatureUserNamespaces, Err: err}
		}
		return nil, fmt.Errorf("sandbox: run %q: %w", p.args[0], err)
	}
	return res, err
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
		// Leave the thread locked: it exits with this goroutine rather
		// than running other goroutines in the wrong namespace.
		return errors.Join(startErr, fmt.Errorf("return to the host network namespace: %w", err))
	}
	runtime.UnlockOSThread()
	return startErr
}
