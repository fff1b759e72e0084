//go:build linux

package sandbox

import (
	"bufio"
	"context"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// agentDir is where a container sees the agent: the binary, and the
// dynamic loader and libraries it was linked with.
const agentDir = "/.skillkit"

// agentFiles are the host files the agent runs from in a container and
// the argv that starts it there.
type agentFiles struct {
	mounts []ctrMount
	argv   []string
}

// findAgentFiles returns how to run this very binary as the agent in a
// container of any image: a static binary alone; a dynamic one through
// its own loader, given the libraries this process has mapped (so the
// image needs no C library of its own).
func findAgentFiles() (*agentFiles, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return nil, err
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return nil, err
	}
	return agentFilesOf(exe, string(maps))
}

// agentFilesOf is findAgentFiles for the binary exe of a process whose
// /proc/PID/maps is maps.
func agentFilesOf(exe, maps string) (*agentFiles, error) {
	f, err := elf.Open(exe)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", exe, err)
	}
	defer f.Close()
	bin := agentDir + "/" + agentArg0
	af := &agentFiles{mounts: []ctrMount{{Type: "bind", Source: exe, Target: bin, ReadOnly: true}}}
	var interp string
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b, err := io.ReadAll(p.Open())
			if err != nil {
				return nil, fmt.Errorf("read the loader of %s: %w", exe, err)
			}
			interp = strings.TrimRight(string(b), "\x00")
		}
	}
	if interp == "" {
		af.argv = []string{bin}
		return af, nil
	}
	interpReal, err := filepath.EvalSymlinks(interp)
	if err != nil {
		return nil, fmt.Errorf("the loader %s of %s: %w", interp, exe, err)
	}
	seen := map[string]bool{}
	loader := ""
	for _, line := range strings.Split(maps, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 6 || !strings.HasPrefix(fields[5], "/") || seen[fields[5]] {
			continue
		}
		path := fields[5]
		seen[path] = true
		if len(fields) > 6 {
			return nil, fmt.Errorf("a mapped file was replaced: %s", line)
		}
		if path == exe || !strings.Contains(filepath.Base(path), ".so") {
			continue
		}
		name, err := soname(path)
		if err != nil {
			return nil, err
		}
		af.mounts = append(af.mounts, ctrMount{Type: "bind", Source: path, Target: agentDir + "/lib/" + name, ReadOnly: true})
		if real, err := filepath.EvalSymlinks(path); err == nil && real == interpReal {
			loader = agentDir + "/lib/" + name
		}
	}
	if loader == "" {
		return nil, fmt.Errorf("the loader %s of %s is not among this process's mapped files", interp, exe)
	}
	af.argv = []string{loader, "--library-path", agentDir + "/lib", bin}
	return af, nil
}

// mountable says why the engine cannot bind-mount the agent's files, or
// returns nil: Podman's API splits a mount's source at commas.
func (af *agentFiles) mountable(podman bool) error {
	for _, m := range af.mounts {
		if podman && strings.Contains(m.Source, ",") {
			return fmt.Errorf("%s has a comma in its path, which Podman's API cannot bind-mount", m.Source)
		}
	}
	return nil
}

// soname returns the name a library is asked for by (its DT_SONAME), or
// its file name.
func soname(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	if names, err := f.DynString(elf.DT_SONAME); err == nil && len(names) == 1 && names[0] != "" && !strings.Contains(names[0], "/") {
		return names[0], nil
	}
	return filepath.Base(path), nil
}

// errAgentGone marks a command the agent could not be asked to start
// because it had ended: the command did not start.
var errAgentGone = errors.New("the container's command agent ended")

// agentConn is the host's end of a container's agent.
type agentConn struct {
	r       *containerRunner
	c       *ctr
	h       *hijacked
	wmu     sync.Mutex
	hostPid int // the agent's process on the host

	lastFrame atomic.Int64 // when the agent last sent a frame (UnixNano)

	mu      sync.Mutex
	next    uint32
	cmds    map[uint32]*aexec
	dead    bool
	closing bool   // the host ends it: the container goes
	diag    []byte // the agent's stderr, the first KiB
	ended   chan struct{}
}

// agentOf returns the running agent of c, starting it on first use, or
// nil when c's commands are engine execs (the agent is off, or cannot run
// in this image).
func (r *containerRunner) agentOf(ctx context.Context, c *ctr) *agentConn {
	if r.agent == nil {
		return nil
	}
	c.agentMu.Lock()
	defer c.agentMu.Unlock()
	if c.agent != nil && !c.agent.isDead() {
		return c.agent
	}
	if c.agentFailures >= 3 {
		return nil
	}
	a, err := r.startAgent(ctx, c)
	if err != nil {
		c.agentFailures++
		level := slog.LevelDebug
		if c.agentFailures == 3 {
			level = slog.LevelWarn
		}
		r.cfg.logger.Log(ctx, level, "sandbox: the container's command agent did not start; its commands are engine execs (about 100 ms each)",
			slog.String("container", c.name), slog.String("error", err.Error()))
		return nil
	}
	c.agent = a
	return a
}

// startAgent starts the agent in c (an engine exec) and waits for its
// greeting.
func (r *containerRunner) startAgent(ctx context.Context, c *ctr) (*agentConn, error) {
	ec := execCreate{
		AttachStdin:  true,
		AttachStdout: true,
		AttachStderr: true,
		Env:          []string{agentEnv + "=1", "GOMAXPROCS=1", "GOTRACEBACK=none"},
		WorkingDir:   "/",
		User:         strconv.Itoa(r.cfg.uid) + ":" + strconv.Itoa(r.cfg.gid),
		Cmd:          r.agent.argv,
	}
	var made idAnswer
	if err := r.api.call(ctx, "POST", "/containers/"+url.PathEscape(c.id)+"/exec", nil, ec, &made); err != nil {
		return nil, err
	}
	h, err := r.api.startExec(ctx, made.ID)
	if err != nil {
		return nil, err
	}
	a := &agentConn{r: r, c: c, h: h, cmds: map[uint32]*aexec{}, ended: make(chan struct{})}
	fr := bufio.NewReaderSize(&stdoutReader{r: h.r, other: diagWriter{a}}, 64<<10)
	_ = h.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	typ, _, payload, err := readFrame(fr)
	_ = h.conn.SetReadDeadline(time.Time{})
	var hello agentHello
	if err == nil && (typ != frameHello || json.Unmarshal(payload, &hello) != nil) {
		err = fmt.Errorf("a first frame %q that is not a greeting", typ)
	}
	if err == nil && hello.Proto != agentProto {
		err = fmt.Errorf("the agent speaks version %d, not %d (a binary of another build)", hello.Proto, agentProto)
	}
	if err != nil {
		h.conn.Close()
		a.mu.Lock()
		diag := strings.TrimSpace(string(a.diag))
		a.mu.Unlock()
		if diag != "" {
			err = fmt.Errorf("%w; it said: %s", err, diag)
		}
		return nil, err
	}
	a.lastFrame.Store(time.Now().UnixNano())
	var st execInspect
	if r.api.call(ctx, "GET", "/exec/"+url.PathEscape(made.ID)+"/json", nil, nil, &st) == nil && st.Running {
		a.hostPid = st.Pid
	}
	r.cfg.logger.Debug("sandbox: the container's command agent started", slog.String("container", c.name), slog.Int("threads", hello.Threads), slog.Int("pid", a.hostPid))
	go a.serve(fr)
	return a, nil
}

// diagWriter keeps the first KiB of the agent's stderr, for the log.
type diagWriter struct{ a *agentConn }

// Write implements io.Writer.
func (w diagWriter) Write(b []byte) (int, error) {
	w.a.mu.Lock()
	defer w.a.mu.Unlock()
	if room := 1024 - len(w.a.diag); room > 0 {
		w.a.diag = append(w.a.diag, truncate(b, room)...)
	}
	return len(b), nil
}

// isDead reports whether the agent's stream has ended.
func (a *agentConn) isDead() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.dead
}

// serve dispatches the agent's frames to the commands until the stream
// ends; what is left running then is told the agent is gone.
func (a *agentConn) serve(fr *bufio.Reader) {
	var err error
	for {
		var (
			typ     byte
			id      uint32
			payload []byte
		)
		if typ, id, payload, err = readFrame(fr); err != nil {
			break
		}
		a.lastFrame.Store(time.Now().UnixNano())
		a.mu.Lock()
		e := a.cmds[id]
		a.mu.Unlock()
		if e == nil {
			continue
		}
		switch typ {
		case frameStarted:
			var st agentStarted
			if json.Unmarshal(payload, &st) != nil {
				st = agentStarted{Err: "an answer that cannot be read"}
			}
			select {
			case e.started <- st:
			default:
			}
		case frameStdout:
			_, _ = e.stdout.Write(payload)
		case frameStderr:
			_, _ = e.stderr.Write(payload)
		case frameAck:
			select {
			case e.acks <- len(payload) == 1 && payload[0] == 0:
			default:
			}
		case frameExit:
			var st agentExit
			if json.Unmarshal(payload, &st) == nil {
				e.exit = st
				e.exitOnce.Do(func() { close(e.exited) })
			}
			a.mu.Lock()
			delete(a.cmds, id)
			a.mu.Unlock()
		}
	}
	a.mu.Lock()
	a.dead = true
	cmds := a.cmds
	a.cmds = map[uint32]*aexec{}
	diag := strings.TrimSpace(string(a.diag))
	a.mu.Unlock()
	close(a.ended)
	a.h.conn.Close()
	if len(cmds) > 0 || !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
		a.r.cfg.logger.Debug("sandbox: the container's command agent ended", slog.String("container", a.c.name),
			slog.String("error", fmt.Sprint(err)), slog.String("stderr", diag))
	}
}

// send writes one frame to the agent.
func (a *agentConn) send(typ byte, id uint32, payload []byte) error {
	return a.sendWithin(agentSilence, typ, id, payload)
}

// sendWithin writes one frame to the agent within d. An agent that takes
// none of its input for that long is stopped (or starved by a command),
// and a frame cut short leaves the stream unusable: a write that fails
// abandons the agent, and the error wraps errAgentGone.
func (a *agentConn) sendWithin(d time.Duration, typ byte, id uint32, payload []byte) error {
	a.wmu.Lock()
	defer a.wmu.Unlock()
	if a.isDead() {
		return errAgentGone
	}
	_ = a.h.conn.SetWriteDeadline(time.Now().Add(d))
	err := writeFrame(a.h.conn, typ, id, payload)
	_ = a.h.conn.SetWriteDeadline(time.Time{})
	if err != nil {
		a.abandon()
		return fmt.Errorf("%w: write to the agent: %w", errAgentGone, err)
	}
	return nil
}

// close ends the agent (its stdin ends: it kills what it started), as
// its container goes.
func (a *agentConn) close() {
	a.mu.Lock()
	a.closing = true
	a.mu.Unlock()
	a.h.conn.Close()
}

// abandon ends an agent that stopped answering (a command of the
// workspace may have stopped it: they share a user): from the host, the
// sessions of every command it started are killed, then the agent; the
// next command gets a new one.
func (a *agentConn) abandon() {
	if a.hostPid > 0 {
		kids := a.children()
		a.c.killIf(syscall.SIGKILL, func(sid int) bool { return slices.Contains(kids, sid) })
		if ns, err := os.Readlink("/proc/" + strconv.Itoa(a.hostPid) + "/ns/pid"); err == nil && ns == a.c.pidns {
			_ = syscall.Kill(a.hostPid, syscall.SIGKILL)
		}
	}
	a.h.conn.Close()
}

// agentSilence is how long an agent that owes an answer may send nothing
// at all before it is taken for stopped; one whose process is stopped is
// taken for stopped at once.
const agentSilence = 5 * time.Second

// unresponsive reports whether the agent, which owes an answer, is
// stopped (or traced), or has sent nothing for agentSilence: it may be
// busy forwarding output, which is fine.
func (a *agentConn) unresponsive() bool {
	if st, ok := procStat(a.hostPid); ok && st.stopped() {
		return true
	}
	return time.Since(time.Unix(0, a.lastFrame.Load())) > agentSilence
}

// lostErr says why a command's agent went away while the command ran.
func (a *agentConn) lostErr(args0 string) error {
	a.mu.Lock()
	closing := a.closing
	a.mu.Unlock()
	if closing {
		return fmt.Errorf("%w: run %q: the workspace's container was removed while the command ran", ErrCommandLost, args0)
	}
	return fmt.Errorf("%w: run %q: the container's command agent ended or stopped answering while the command ran (a command of the workspace can kill or stop it, or it ran out of memory); the command was killed", ErrCommandLost, args0)
}

// aexec is one command started by a container's agent.
type aexec struct {
	a              *agentConn
	p              *prepared
	id             uint32
	stdout, stderr io.Writer
	started        chan agentStarted
	acks           chan bool
	exited         chan struct{}
	exitOnce       sync.Once
	exit           agentExit
	pid            int // in the container's PID namespace
	leader         int // host PID, once looked up; -1: not found

	life      context.Context
	killCtx   context.Context
	kill      context.CancelFunc
	killAsked atomic.Bool
	start     time.Time
	oomBefore int64
	oomOK     bool
	deadline  time.Time // Spec.Timeout from the request to start

	writeMu  sync.Mutex // guards inFlight
	inFlight bool       // a stdin chunk is sent and not yet acknowledged
}

// errAgentTooBig marks a command whose start request exceeds a frame: it
// goes as an engine exec instead.
var errAgentTooBig = errors.New("the command's start request is larger than the agent takes")

// agentAnswerTimeout bounds the wait for the agent's answer to a start
// request when the command's own deadline is further.
const agentAnswerTimeout = 30 * time.Second

// launch starts p's command through the agent, its output written to
// stdout and stderr. With keepStdin the stdin stays open for the caller
// (Start); otherwise p.stdin, if any, is written and closed. The
// command's deadline runs from here.
func (a *agentConn) launch(ctx, life context.Context, p *prepared, stdout, stderr io.Writer, keepStdin bool) (*aexec, error) {
	rel, _ := filepath.Rel(p.workspace, p.dir)
	req, err := json.Marshal(agentStart{Args: p.args, Env: p.env, Dir: filepath.Join(WorkspaceDir, rel),
		Stdin: len(p.stdin) > 0 || keepStdin, Drain: a.r.cfg.grace})
	if err != nil {
		return nil, err
	}
	if len(req) > agentMaxFrame {
		return nil, errAgentTooBig
	}
	e := &aexec{a: a, p: p, stdout: stdout, stderr: stderr, started: make(chan agentStarted, 1), acks: make(chan bool, 1),
		exited: make(chan struct{}), life: life}
	e.killCtx, e.kill = context.WithCancel(context.Background())
	a.mu.Lock()
	if a.dead {
		a.mu.Unlock()
		return nil, errAgentGone
	}
	a.next++
	e.id = a.next
	a.cmds[e.id] = e
	a.mu.Unlock()
	e.oomBefore, e.oomOK = a.c.oomKills()
	e.start = time.Now()
	e.deadline = e.start.Add(p.timeout)
	forget := func() {
		a.mu.Lock()
		delete(a.cmds, e.id)
		a.mu.Unlock()
		e.kill()
	}
	if err := a.sendWithin(min(agentSilence, p.timeout), frameStart, e.id, req); err != nil {
		// Cut short, or not sent: the agent cannot have started it.
		forget()
		return nil, err
	}
	answer := time.NewTimer(min(p.timeout, agentAnswerTimeout))
	defer answer.Stop()
	var st agentStarted
wait:
	select {
	case st = <-e.started:
	case <-a.ended:
		forget()
		if a.wasClosed() || !a.r.running(ctx, a.c) {
			// The container goes, or went: as an exec the container
			// lost (what it may have started went with it).
			return nil, fmt.Errorf("%w: %w", errContainerGone, a.lostErr(p.args[0]))
		}
		// Whether the command started is not known: it is not started
		// again.
		return nil, a.lostErr(p.args[0])
	case <-answer.C:
		if !a.unresponsive() {
			answer.Reset(time.Second)
			goto wait
		}
		forget()
		a.abandon()
		return nil, a.lostErr(p.args[0])
	case <-ctx.Done():
		// The command may start anyway: end it.
		go func() {
			select {
			case st := <-e.started:
				if st.Pid > 0 {
					e.pid = st.Pid
					e.signal(syscall.SIGKILL)
				}
			case <-a.ended:
			}
			forget()
		}()
		return nil, fmt.Errorf("sandbox: start %q: %w", p.args[0], ctx.Err())
	}
	if st.Pid <= 0 {
		forget()
		return nil, fmt.Errorf("%w: %s", ErrCommandStart, st.Err)
	}
	e.pid = st.Pid
	if len(p.stdin) > 0 && !keepStdin {
		go func() {
			_, _ = e.write(context.Background(), p.stdin)
			_ = e.closeStdin()
		}()
	}
	return e, nil
}

// wasClosed reports whether the host ended the agent (close).
func (a *agentConn) wasClosed() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.closing
}

// write sends b to the command's stdin, a chunk at a time, each
// acknowledged once written, so a command that does not read holds the
// writer, as a pipe does. One chunk at most is on its way: a chunk sent
// before ctx ended counts as written (the agent writes it as the
// command reads), and the next write waits for it first.
func (e *aexec) write(ctx context.Context, b []byte) (int, error) {
	e.writeMu.Lock()
	defer e.writeMu.Unlock()
	awaitAck := func() error {
		select {
		case ok := <-e.acks:
			e.inFlight = false
			if !ok {
				return ErrProcessEnded
			}
			return nil
		case <-e.exited:
			return ErrProcessEnded
		case <-e.a.ended:
			return ErrProcessEnded
		case <-ctx.Done():
			return fmt.Errorf("sandbox: write to stdin: %w", context.Cause(ctx))
		}
	}
	if e.inFlight {
		if err := awaitAck(); err != nil {
			return 0, err
		}
	}
	n := 0
	for len(b) > 0 {
		chunk := b[:min(len(b), agentChunk)]
		if err := e.a.send(frameStdin, e.id, chunk); err != nil {
			return n, ErrProcessEnded
		}
		e.inFlight = true
		if err := awaitAck(); err != nil {
			if e.inFlight && !errors.Is(err, ErrProcessEnded) {
				// On its way: it will be written.
				n += len(chunk)
			}
			return n, err
		}
		n += len(chunk)
		b = b[len(chunk):]
	}
	return n, nil
}

// closeStdin closes the command's stdin.
func (e *aexec) closeStdin() error {
	if err := e.a.send(frameClose, e.id, nil); err != nil && !e.ended() {
		return fmt.Errorf("sandbox: close stdin: %w", err)
	}
	return nil
}

// ended reports whether the command's end is known.
func (e *aexec) ended() bool {
	select {
	case <-e.exited:
		return true
	default:
		return false
	}
}

// stop asks for the command to end at once (Process.Kill).
func (e *aexec) stop() {
	e.killAsked.Store(true)
	e.kill()
}

// signal sends sig to the command's session: from the host, to every
// process of the container in it (the agent could be stopped by a
// command), and through the agent to its process group.
func (e *aexec) signal(sig syscall.Signal) {
	if e.leader == 0 {
		e.leader = e.a.hostPidOf(e.pid)
	}
	if e.leader > 0 {
		e.a.c.killIf(sig, func(s int) bool { return s == e.leader })
	}
	_ = e.a.send(frameSignal, e.id, []byte{byte(sig)})
}

// children returns the host PIDs of the agent's children (its commands'
// leaders), from every thread's list; none when it is not known or gone.
func (a *agentConn) children() []int {
	if a.hostPid <= 0 {
		return nil
	}
	var kids []int
	dir := "/proc/" + strconv.Itoa(a.hostPid) + "/task/"
	tasks, _ := os.ReadDir(dir)
	for _, t := range tasks {
		b, _ := os.ReadFile(dir + t.Name() + "/children")
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				kids = append(kids, n)
			}
		}
	}
	return kids
}

// hostPidOf returns the host PID of the agent's child whose PID in the
// container is pid, or -1.
func (a *agentConn) hostPidOf(pid int) int {
	cands := a.children()
	if len(cands) == 0 {
		cands = a.c.processes()
	}
	for _, h := range cands {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(h) + "/status")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "NSpid:"); ok {
				f := strings.Fields(v)
				if len(f) > 1 && f[len(f)-1] == strconv.Itoa(pid) {
					if ns, err := os.Readlink("/proc/" + strconv.Itoa(h) + "/ns/pid"); err == nil && ns == a.c.pidns {
						return h
					}
				}
			}
		}
	}
	return -1
}

// wait enforces the deadline (SIGTERM to the command's session, SIGKILL
// after the grace) and a kill, waits for the command's end and reports
// it; finish fills the output fields.
func (e *aexec) wait(finish func(res *Result)) (*Result, error) {
	defer e.kill()
	grace := e.a.r.cfg.grace
	runCtx, cancel := context.WithDeadline(e.life, e.deadline)
	defer cancel()
	defer context.AfterFunc(e.killCtx, cancel)()
	var ended, lost, timedOut, killed, graceKilled bool
	select {
	case <-e.exited:
		ended = true
	case <-e.a.ended:
		lost = true
	case <-runCtx.Done():
	}
	if !ended && !lost {
		if e.killAsked.Load() {
			killed = true
			e.signal(syscall.SIGKILL)
		} else {
			timedOut = true
			e.signal(syscall.SIGTERM)
			t := time.NewTimer(grace)
			select {
			case <-e.exited:
			case <-e.a.ended:
			case <-t.C:
				graceKilled = true
			case <-e.killCtx.Done():
				if e.killAsked.Load() {
					killed, timedOut = true, false
				}
			}
			t.Stop()
			if graceKilled || killed {
				e.signal(syscall.SIGKILL)
			}
		}
		// The end, and the output written until then, follow the
		// leader's death within the agent's drain; an agent that says
		// nothing by then is stopped.
		t := time.NewTimer(grace + time.Second)
	end:
		select {
		case <-e.exited:
		case <-e.a.ended:
			lost = true
		case <-t.C:
			if !e.a.unresponsive() {
				t.Reset(time.Second)
				goto end
			}
			lost = true
			e.a.abandon()
		}
		t.Stop()
	}
	res := &Result{ExitCode: -1, TimedOut: timedOut, Killed: killed}
	finish(res)
	if after, ok := e.a.c.oomKills(); ok && e.oomOK {
		res.OOMKilled = after > e.oomBefore
	}
	switch {
	case lost && !e.ended():
		// The agent died or stopped (a command of the workspace may do
		// that: they share a user): the command's end is unknown, so it
		// is ended.
		e.signal(syscall.SIGKILL)
		res.Signal, res.ExitCode = int(syscall.SIGKILL), 128+int(syscall.SIGKILL)
		res.Duration = time.Since(e.start)
		return res, e.a.lostErr(e.p.args[0])
	case forcedEnd(res, killed, timedOut, graceKilled):
	default:
		res.ExitCode = e.exit.Exit
		res.Signal = e.exit.Signal
	}
	res.Duration = time.Since(e.start)
	if err := e.life.Err(); err != nil {
		return res, fmt.Errorf("sandbox: command ended by the caller's context: %w", err)
	}
	return res, nil
}
