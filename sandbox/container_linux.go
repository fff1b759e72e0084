//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/skillkit/skillkit/internal/owner"
	"golang.org/x/sys/unix"
)

// Labels the container runner puts on its containers.
const (
	labelRunner    = "io.skillkit.runner"
	labelOwner     = "io.skillkit.owner"
	labelWorkspace = "io.skillkit.workspace"
)

// initTasks is the number of tasks of DefaultContainerInit (the shell and
// its sleep), added to Limits.Processes for the container's pids bound.
const initTasks = 2

// containerRunner runs each command as an exec in a container kept per
// workspace (and per set of container-wide settings).
type containerRunner struct {
	cfg *containerConfig
	api *engine
	id  string // random, in container names and labels
	own string // this process, for the next runner's sweep
	// podman: the engine is Podman, whose API splits mount sources at
	// commas.
	podman bool
	nproc  int64 // RLIMIT_NPROC of the containers (see engineNproc)
	// agent is how the containers run the command agent; nil: every
	// command is an engine exec.
	agent *agentFiles

	mu     sync.Mutex
	ctrs   map[string]*ctr
	closed bool
	// sweeping: a sweep for leftovers runs (one at a time).
	sweeping bool
	made     uint64 // containers made, in their names
}

// ctr is one container.
type ctr struct {
	key, workspace, name string
	ready                chan struct{} // closed once made (or failed)
	err                  error
	id                   string
	initPid              int    // host PID of the container's first process
	pidns                string // its PID namespace (readlink of /proc/PID/ns/pid)
	oomFile              string // the memory cgroup's oom_kill counter, or ""

	// Guarded by the runner's mu.
	live    int           // commands running
	removed bool          // taken out of the map: no new command
	idle    *time.Timer   // removes the container once idle for IdleTTL
	cleaned chan struct{} // closed once the kill of leftovers is done; nil: none under way

	agentMu       sync.Mutex
	agent         *agentConn // nil until the first command
	agentFailures int        // agents that did not start
}

// agentPid returns the host PID of c's running agent, or 0.
func (c *ctr) agentPid() int {
	c.agentMu.Lock()
	defer c.agentMu.Unlock()
	if c.agent == nil || c.agent.isDead() {
		return 0
	}
	return c.agent.hostPid
}

// NewContainer returns a Runner that runs each command in a container of
// opts.Image through the Docker Engine API on a local unix socket, so
// that Docker and Podman (`podman system service`) both serve it. It
// speaks the API with net/http directly: the official client
// (github.com/moby/moby/client) brings dozens of modules for the handful
// of calls needed. The runner also implements io.Closer (Close removes
// every container it made), WorkspaceReleaser, Starter, WorkspaceViewer
// (the workspace is at WorkspaceDir), TimeoutCeiling and Namer
// ("container").
//
// Each workspace gets one container, made on its first command and kept
// running: no network (unless Spec.Network: the engine's default
// bridge), a read-only root file system, the workspace bind-mounted
// read-write at WorkspaceDir, Spec.ReadOnly paths bind-mounted read-only
// at the same paths (shown with their host permissions), a tmpfs /tmp of
// Limits.DiskBytes, a private IPC namespace, user UID:GID (default
// 65534:65534) with no capabilities and no_new_privs, and these bounds
// from the Spec's Limits: a memory cgroup of Limits.Memory (no swap), a
// pids cgroup of Limits.Processes (plus the two tasks of the container's
// init and the agent's eight threads), RLIMIT_CPU, RLIMIT_FSIZE and RLIMIT_NOFILE, and
// ContainerOptions.CPUs. They are the container's, so commands of one
// workspace running at the same time share them, and a Spec whose
// Network, ReadOnly or one of those limits differ gets a container of
// its own. Limits.AddressSpace and DiskInodes are not applied (the
// memory cgroup bounds memory), the workspace's own size is not checked,
// and DiskLimit is never reported. Each command runs in the container
// with the clean environment of Spec: through the agent, that alone; as
// an engine exec, the image's ENV and what the engine adds (HOSTNAME;
// Podman's container=podman and TERM) stay
// visible unless Spec.Env sets them. As root, the runner gives the
// workspace tree to UID:GID when it makes the container, so the command
// can write it (the isolated runner shows the workspace as the command's
// own through an idmapped mount; a bind mount cannot); otherwise the
// workspace must be writable by UID:GID as the engine maps it.
//
// Commands are started by the container's command agent: this very
// binary, run once per container by one engine exec and kept for the
// container's life, which starts each command (in a session of its own),
// forwards its stdin and output and reports its end, so a command costs
// a message (about 1.5 ms for `true`) instead of an engine exec (about
// 100 ms with Podman). The agent is bind-mounted read-only at /.skillkit
// together with the dynamic loader and libraries this process runs with
// (none when the binary is static), so it runs in any image of the
// host's architecture. It runs as the command user, confined as an exec
// of the container is, and its 8 threads are made at its start and
// added to the pids bound, so a command gets Limits.Processes tasks,
// never more (one fewer for each thread the agent's Go runtime adds
// later, which is rare). A command can kill or stop the agent (they
// share a user); the command then ends with an error wrapping
// ErrCommandLost and the result read until then, its processes are
// killed (a stopped agent, found out when it does not answer by the
// command's deadline, too), and the next command gets a new agent. It
// cannot trace the agent or read its memory (the agent is not dumpable).
// Commands start with oom_score_adj 1000, so that the kernel, out of
// memory, ends them before the agent (a command may lower its own back
// to the agent's, and so harm only its own workspace). No command can
// end its container: DefaultContainerInit handles no signal, so the
// kernel drops those a command sends it; a container that dies anyway is
// replaced on the next command. A command whose argv and
// environment exceed 1 MiB is an engine exec. Where the agent cannot
// start three times in a container, that container's commands are engine
// execs (logged as a warning); ContainerOptions.NoAgent makes every
// command one. The rest of this comment holds for both.
//
// At the deadline the command's session (the exec's process and what it
// started, unless a process made its own session) gets SIGTERM, then
// SIGKILL after KillGrace; the result says TimedOut with exit status 143
// or 137, as the isolated runner's. Once no command of a container runs,
// every process in it but its init is killed, so nothing a command left
// running outlives it (while other commands of the workspace run, such a
// process lives on until the last one ends). The agent reports a
// command killed by a signal as that signal; the engine reports it as
// 128+signal, so for an engine exec the Result reports any status above
// 128 as that signal. A program that does not exist is an
// error wrapping ErrCommandStart. OOMKilled comes from the container's
// memory cgroup: some process of the container was killed for memory
// during the command.
//
// The engine must run on this host: the runner ends commands by
// signalling their host processes, found through /proc, and refuses an
// engine whose containers it cannot see there (a Docker Desktop VM, say).
// A container is removed (forced) by ReleaseWorkspace, after IdleTTL
// without a command, or by Close; containers left by a runner that died
// are removed by the next runner made on the same engine, and whenever a
// runner on it makes a container. The runner never
// pulls: the image must be in the engine. Podman keeps a conmon process
// for five minutes after each exec (containers.conf
// engine.exit_command_delay): one per container for the agent, one per
// command for engine execs.
func NewContainer(opts *ContainerOptions) (Runner, error) {
	cfg, err := containerConfigOf(opts)
	if err != nil {
		return nil, err
	}
	self, err := owner.Self()
	if err != nil {
		return nil, fmt.Errorf("sandbox: container runner: read this process's start time: %w", err)
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	r := &containerRunner{cfg: cfg, api: newEngine(cfg.socket), id: hex.EncodeToString(rnd[:]), own: self, ctrs: map[string]*ctr{}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var ver struct {
		Components []struct {
			Name string `json:"Name"`
		} `json:"Components"`
	}
	if err := r.api.call(ctx, "GET", "/version", nil, nil, &ver); err != nil {
		return nil, fmt.Errorf("%w; is the engine running? (podman system service, or the Docker daemon)", err)
	}
	for _, c := range ver.Components {
		r.podman = r.podman || strings.HasPrefix(c.Name, "Podman")
	}
	var img struct {
		ID string `json:"Id"`
	}
	if err := r.api.call(ctx, "GET", "/images/"+cfg.image+"/json", nil, nil, &img); err != nil {
		if engineStatus(err) == 404 {
			return nil, fmt.Errorf("sandbox: ContainerOptions.Image %q is not in the engine at %s; pull or import it first (the runner never pulls)", cfg.image, cfg.socket)
		}
		return nil, err
	}
	r.nproc = engineNproc(cfg.socket)
	if !cfg.noAgent {
		if r.agent, err = findAgentFiles(); err == nil {
			err = r.agent.mountable(r.podman)
		}
		if err != nil {
			r.agent = nil
			cfg.logger.Warn("sandbox: container runner: this binary cannot run as the containers' command agent; each command is an engine exec (about 100 ms)",
				slog.String("error", err.Error()))
		}
	}
	r.sweep(ctx)
	return r, nil
}

// sweep removes the containers of runners whose process has ended.
func (r *containerRunner) sweep(ctx context.Context) {
	var list []ctrListed
	q := url.Values{"all": {"1"}, "filters": {`{"label":["` + labelOwner + `"]}`}}
	if err := r.api.call(ctx, "GET", "/containers/json", q, nil, &list); err != nil {
		r.cfg.logger.Debug("sandbox: list leftover containers", slog.String("error", err.Error()))
		return
	}
	for _, c := range list {
		if o := c.Labels[labelOwner]; o != "" && !owner.Alive(o) {
			r.cfg.logger.Info("sandbox: removing a container left by a runner that ended", slog.String("container", c.ID), slog.String("owner", o))
			_ = r.removeContainer(ctx, c.ID)
		}
	}
}

// sweepLater sweeps in the background, unless a sweep runs already.
func (r *containerRunner) sweepLater() {
	r.mu.Lock()
	if r.sweeping || r.closed {
		r.mu.Unlock()
		return
	}
	r.sweeping = true
	r.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		r.sweep(ctx)
		cancel()
		r.mu.Lock()
		r.sweeping = false
		r.mu.Unlock()
	}()
}

// MaxTimeout implements TimeoutCeiling.
func (r *containerRunner) MaxTimeout() time.Duration { return r.cfg.maxTimeout }

// Name implements Namer.
func (r *containerRunner) Name() string { return "container" }

// WorkspaceView implements WorkspaceViewer: the workspace is always at
// WorkspaceDir inside.
func (r *containerRunner) WorkspaceView(string) string { return WorkspaceDir }

// Close removes every container the runner made (commands still running
// are killed); the runner must not be used afterwards.
func (r *containerRunner) Close() error {
	r.mu.Lock()
	r.closed = true
	var all []*ctr
	for _, c := range r.ctrs {
		all = append(all, c)
	}
	r.ctrs = map[string]*ctr{}
	r.mu.Unlock()
	return r.removeAll(all)
}

// ReleaseWorkspace implements WorkspaceReleaser: the workspace's
// containers are removed.
func (r *containerRunner) ReleaseWorkspace(workspace string) error {
	ws, err := filepath.Abs(workspace)
	if err != nil {
		return fmt.Errorf("sandbox: release workspace %q: %w", workspace, err)
	}
	if real, err := filepath.EvalSymlinks(ws); err == nil {
		ws = real
	}
	r.mu.Lock()
	var mine []*ctr
	for k, c := range r.ctrs {
		if c.workspace == ws {
			mine = append(mine, c)
			delete(r.ctrs, k)
		}
	}
	r.mu.Unlock()
	return r.removeAll(mine)
}

// removeAll removes the containers cs (already out of the map).
func (r *containerRunner) removeAll(cs []*ctr) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.retire(c); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// retire removes c once it is made; c is out of the map.
func (r *containerRunner) retire(c *ctr) error {
	r.mu.Lock()
	c.removed = true
	if c.idle != nil {
		c.idle.Stop()
	}
	r.mu.Unlock()
	<-c.ready
	if c.err != nil {
		return nil // never made
	}
	c.agentMu.Lock()
	if c.agent != nil {
		c.agent.close()
	}
	c.agentMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Every process first, so that the engine does not wait for a
	// command still running before it removes the container.
	c.killIf(syscall.SIGKILL, func(int) bool { return true })
	return r.removeContainer(ctx, c.id)
}

// removeContainer force-removes a container; one already gone is fine.
func (r *containerRunner) removeContainer(ctx context.Context, id string) error {
	err := r.api.call(ctx, "DELETE", "/containers/"+url.PathEscape(id), url.Values{"force": {"1"}, "v": {"1"}}, nil, nil)
	if s := engineStatus(err); s == 404 {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sandbox: remove container %s: %w", id, err)
	}
	return nil
}

// checkContainerReadOnly refuses read-only paths that would cover what the
// container needs for itself. Paths below /tmp are fine: they are mounted
// over the container's tmpfs.
func checkContainerReadOnly(paths []string) error {
	for i, p := range paths {
		for _, reserved := range []string{WorkspaceDir, "/proc", "/dev", "/sys", "/tmp"} {
			if within(reserved, p) && (reserved != "/tmp" || p == "/tmp") || within(p, reserved) {
				return fmt.Errorf("%w: Spec.ReadOnly[%d] %q overlaps the container's own %s; pass a path outside %s, /proc, /dev and /sys (below /tmp is fine)", ErrInvalidSpec, i, p, reserved, WorkspaceDir)
			}
		}
	}
	return nil
}

// errContainerGone marks an exec that could not be made because its
// container no longer runs: the command did not start.
var errContainerGone = errors.New("the container is gone")

// containerKey names the container settings a Spec asks for.
func containerKey(p *prepared) string {
	l := p.limits
	return fmt.Sprintf("%s\x00net=%v\x00mem=%d\x00pids=%d\x00cpu=%d\x00fsize=%d\x00nofile=%d\x00disk=%d\x00ro=%q",
		p.workspace, p.network, l.Memory, l.Processes, l.CPUSeconds, l.FileSize, l.OpenFiles, l.DiskBytes, p.readOnly)
}

// acquire returns the running container for p, making it when needed,
// and counts a command in it.
func (r *containerRunner) acquire(ctx context.Context, p *prepared) (*ctr, error) {
	key := containerKey(p)
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, errors.New("sandbox: the container runner is closed")
	}
	c := r.ctrs[key]
	made := false
	if c == nil {
		sum := sha256.Sum256([]byte(key))
		// Numbered: the container this one replaces may still be on its
		// way out under the same settings.
		r.made++
		c = &ctr{key: key, workspace: p.workspace, ready: make(chan struct{}),
			name: "skillkit-" + r.id + "-" + hex.EncodeToString(sum[:6]) + "-" + strconv.FormatUint(r.made, 10)}
		r.ctrs[key] = c
		made = true
	}
	c.live++
	if c.idle != nil {
		c.idle.Stop()
		c.idle = nil
	}
	cleaned := c.cleaned
	r.mu.Unlock()
	if cleaned != nil {
		// The leftovers of the previous commands are being killed: a
		// new command must not start among them.
		<-cleaned
	}
	if made {
		// Made with a context of its own: a caller that gives up must
		// not leave a half-made container others wait for.
		mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		c.err = r.create(mctx, c, p)
		cancel()
		close(c.ready)
		// A replica that died may have left containers (its sessions
		// now go on here): each new container is a moment to look.
		r.sweepLater()
	}
	select {
	case <-c.ready:
	case <-ctx.Done():
		r.release(c, false)
		return nil, fmt.Errorf("sandbox: waiting for the workspace's container: %w", ctx.Err())
	}
	if c.err != nil {
		r.release(c, true)
		return nil, c.err
	}
	return c, nil
}

// release ends the count of a command in c; gone drops c (it failed or
// died). The last command out kills what is left in the container and
// arms the idle timer.
func (r *containerRunner) release(c *ctr, gone bool) {
	r.mu.Lock()
	c.live--
	if gone && !c.removed {
		c.removed = true
		if r.ctrs[c.key] == c {
			delete(r.ctrs, c.key)
		}
		go func() { _ = r.retire(c) }()
	}
	quiet := c.live == 0 && !c.removed && c.err == nil
	var cleaned chan struct{}
	if quiet {
		c.idle = time.AfterFunc(r.cfg.idleTTL, func() { r.expire(c) })
		cleaned = make(chan struct{})
		c.cleaned = cleaned
	}
	r.mu.Unlock()
	if quiet {
		// Nothing of the workspace runs: nothing but init and the agent
		// may stay. (The agent is alone in its session: it starts each
		// command in a session of its own.)
		agent := c.agentPid()
		c.killIf(syscall.SIGKILL, func(sid int) bool { return sid != c.initPid && sid != agent })
		r.mu.Lock()
		if c.cleaned == cleaned {
			c.cleaned = nil
		}
		r.mu.Unlock()
		close(cleaned)
	}
}

// expire removes c when it is still idle.
func (r *containerRunner) expire(c *ctr) {
	r.mu.Lock()
	if c.live > 0 || c.removed {
		r.mu.Unlock()
		return
	}
	c.removed = true
	if r.ctrs[c.key] == c {
		delete(r.ctrs, c.key)
	}
	r.mu.Unlock()
	r.cfg.logger.Debug("sandbox: removing an idle container", slog.String("container", c.name), slog.String("workspace", c.workspace))
	if err := r.retire(c); err != nil {
		r.cfg.logger.Warn("sandbox: remove an idle container", slog.String("container", c.name), slog.String("error", err.Error()))
	}
}

// create makes and starts c for p.
func (r *containerRunner) create(ctx context.Context, c *ctr, p *prepared) error {
	if os.Geteuid() == 0 {
		if err := chownWorkspace(p.workspace, r.cfg.uid, r.cfg.gid); err != nil {
			return err
		}
	}
	l := p.limits
	user := strconv.Itoa(r.cfg.uid) + ":" + strconv.Itoa(r.cfg.gid)
	body := ctrCreate{
		Image:      r.cfg.image,
		Entrypoint: r.cfg.init[:1],
		Cmd:        r.cfg.init[1:],
		User:       user,
		WorkingDir: WorkspaceDir,
		Env:        []string{"PATH=" + DefaultPath},
		Labels:     map[string]string{labelRunner: r.id, labelOwner: r.own, labelWorkspace: p.workspace},
		HostConfig: ctrHostConfig{
			ReadonlyRootfs: true,
			Mounts:         []ctrMount{{Type: "bind", Source: p.workspace, Target: WorkspaceDir}},
			Tmpfs:          map[string]string{"/tmp": "rw,nosuid,nodev,size=" + strconv.FormatInt(l.DiskBytes, 10) + ",mode=1777"},
			Memory:         l.Memory,
			MemorySwap:     l.Memory,
			PidsLimit:      l.Processes + initTasks + r.agentTasks(),
			NanoCpus:       r.cfg.nanoCPUs,
			SecurityOpt:    []string{"no-new-privileges"},
			CapDrop:        []string{"ALL"},
			Ulimits: []ctrUlimit{
				{Name: "cpu", Soft: l.CPUSeconds, Hard: l.CPUSeconds + 1},
				{Name: "fsize", Soft: l.FileSize, Hard: l.FileSize},
				{Name: "nofile", Soft: l.OpenFiles, Hard: l.OpenFiles},
				// The pids cgroup bounds the tasks; RLIMIT_NPROC counts
				// every process of the uid on the host, so it is set to
				// the engine's own bound, which Podman's default
				// (1048576) may exceed, failing the start.
				{Name: "nproc", Soft: r.nproc, Hard: r.nproc},
			},
			IpcMode: "private",
		},
	}
	if p.network {
		body.HostConfig.NetworkMode = "bridge"
	} else {
		body.NetworkDisabled = true
		body.HostConfig.NetworkMode = "none"
	}
	for _, ro := range p.readOnly {
		body.HostConfig.Mounts = append(body.HostConfig.Mounts, ctrMount{Type: "bind", Source: ro, Target: ro, ReadOnly: true})
	}
	if r.agent != nil {
		body.HostConfig.Mounts = append(body.HostConfig.Mounts, r.agent.mounts...)
	}
	var made idAnswer
	if err := r.api.call(ctx, "POST", "/containers/create", url.Values{"name": {c.name}}, body, &made); err != nil {
		return fmt.Errorf("sandbox: make the workspace's container from %q: %w", r.cfg.image, err)
	}
	c.id = made.ID
	fail := func(err error) error {
		rctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return errors.Join(err, r.removeContainer(rctx, c.id))
	}
	if err := r.api.call(ctx, "POST", "/containers/"+url.PathEscape(c.id)+"/start", nil, nil, nil); err != nil {
		return fail(fmt.Errorf("sandbox: start the workspace's container: %w", err))
	}
	var st ctrInspect
	if err := r.api.call(ctx, "GET", "/containers/"+url.PathEscape(c.id)+"/json", nil, nil, &st); err != nil {
		return fail(err)
	}
	if !st.State.Running || st.State.Pid <= 0 {
		return fail(fmt.Errorf("%w: the workspace's container stopped at once; its init %q must keep running (ContainerOptions.Init)", ErrContainerEngine, r.cfg.init))
	}
	c.initPid = st.State.Pid
	ns, err := os.Readlink("/proc/" + strconv.Itoa(c.initPid) + "/ns/pid")
	self, _ := os.Readlink("/proc/self/ns/pid")
	if err != nil || ns == self {
		return fail(fmt.Errorf("%w: the container's process %d is not visible in this host's /proc (%v): the engine does not run on this host, and the container runner needs a local engine to end commands at their deadline",
			ErrContainerEngine, c.initPid, err))
	}
	c.pidns = ns
	c.oomFile = oomCounterFile(c.initPid)
	return nil
}

// agentTasks is what the agent adds to a container's pids bound.
func (r *containerRunner) agentTasks() int64 {
	if r.agent == nil {
		return 0
	}
	return agentTasks
}

// engineNproc returns the hard RLIMIT_NPROC of the process serving the
// engine's socket (found with SO_PEERCRED), which the runtime it starts
// inherits and cannot raise for the container, or else this process's;
// at most 1<<20.
func engineNproc(socket string) int64 {
	limit := int64(1 << 20)
	var l unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NPROC, &l) == nil && l.Max < uint64(limit) {
		limit = int64(l.Max)
	}
	c, err := net.Dial("unix", socket)
	if err != nil {
		return limit
	}
	defer c.Close()
	raw, err := c.(*net.UnixConn).SyscallConn()
	if err != nil {
		return limit
	}
	var cred *unix.Ucred
	_ = raw.Control(func(fd uintptr) { cred, err = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) })
	if err != nil || cred == nil || cred.Pid <= 0 {
		return limit
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(int(cred.Pid)) + "/limits")
	if err != nil {
		return limit
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "Max processes"); ok {
			if f := strings.Fields(rest); len(f) >= 2 {
				if n, err := strconv.ParseInt(f[1], 10, 64); err == nil && n < limit {
					return n
				}
			}
		}
	}
	return limit
}

// chownWorkspace gives the workspace tree to uid:gid (links themselves,
// never what they point to), so the container's user can write it.
func chownWorkspace(ws string, uid, gid int) error {
	err := filepath.WalkDir(ws, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, uid, gid)
	})
	if err != nil {
		return fmt.Errorf("sandbox: give the workspace %s to the container user %d:%d: %w", ws, uid, gid, err)
	}
	return nil
}

// oomCounterFile returns the file of the memory cgroup of pid that counts
// OOM kills (v1 memory.oom_control, v2 memory.events), or "".
func oomCounterFile(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return ""
	}
	var v2 string
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, ctl := range strings.Split(parts[1], ",") {
			if ctl == "memory" {
				f := filepath.Join("/sys/fs/cgroup/memory", parts[2], "memory.oom_control")
				if _, err := os.Stat(f); err == nil {
					return f
				}
			}
		}
		if parts[0] == "0" && parts[1] == "" {
			v2 = filepath.Join("/sys/fs/cgroup", parts[2], "memory.events")
		}
	}
	if v2 != "" {
		if _, err := os.Stat(v2); err == nil {
			return v2
		}
	}
	return ""
}

// oomKills reads the container's OOM kill count; ok is false when it
// cannot be read (the cgroup is gone with the container).
func (c *ctr) oomKills() (int64, bool) {
	if c.oomFile == "" {
		return 0, false
	}
	b, err := os.ReadFile(c.oomFile)
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// killIf sends sig to every process of the container, but its init,
// whose session id (a host PID) satisfies match, until none is left when
// sig is SIGKILL (a process may fork while it is being killed).
func (c *ctr) killIf(sig syscall.Signal, match func(sid int) bool) {
	for round := 0; round < 50; round++ {
		n := 0
		for _, pid := range c.processes() {
			if pid == c.initPid {
				continue
			}
			if sid, ok := sessionOf(pid); ok && match(sid) {
				if syscall.Kill(pid, sig) == nil {
					n++
				}
			}
		}
		if n == 0 || sig != syscall.SIGKILL {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// processes lists the host PIDs of the live processes in the container's
// PID namespace.
func (c *ctr) processes() []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ns, err := os.Readlink("/proc/" + e.Name() + "/ns/pid"); err == nil && ns == c.pidns {
			pids = append(pids, pid)
		}
	}
	return pids
}

// sessionOf returns the session id of a live (not zombie) process.
func sessionOf(pid int) (int, bool) {
	st, ok := procStat(pid)
	if !ok || st.state == "Z" || st.state == "X" {
		return 0, false
	}
	return st.sid, true
}

// stat is what the runner reads of /proc/PID/stat.
type stat struct {
	state string // R, S, D, T, t, Z, X...
	sid   int
}

// stopped reports whether the process is stopped or stopped by a tracer.
func (s stat) stopped() bool { return s.state == "T" || s.state == "t" }

// procStat reads the state and session of a host process.
func procStat(pid int) (stat, bool) {
	if pid <= 0 {
		return stat{}, false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return stat{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 4 {
		return stat{}, false
	}
	sid, err := strconv.Atoi(f[3])
	return stat{state: f[0], sid: sid}, err == nil
}
