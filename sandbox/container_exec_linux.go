//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// cexec is one command started as an exec in a container; wait finishes
// it.
type cexec struct {
	r *containerRunner
	c *ctr
	p *prepared
	x *execution
	h *hijacked
	// life bounds the command (the caller's context for Run, none for
	// Start); killCtx ends when Process.Kill asks for the command to end
	// at once (kill).
	life       context.Context
	killCtx    context.Context
	kill       context.CancelFunc
	killAsked  atomic.Bool
	streamDone chan struct{}
	start      time.Time
	oomBefore  int64
	oomOK      bool
}

// launch makes and starts the exec of p in c, its output demultiplexed
// into stdout and stderr. With keepStdin the stdin stays open for the
// caller (Start); otherwise p.stdin, if any, is written and closed.
func (r *containerRunner) launch(ctx, life context.Context, c *ctr, p *prepared, stdout, stderr io.Writer, keepStdin bool) (*cexec, error) {
	rel, _ := filepath.Rel(p.workspace, p.dir)
	ec := execCreate{
		AttachStdin:  len(p.stdin) > 0 || keepStdin,
		AttachStdout: true,
		AttachStderr: true,
		Env:          p.env,
		WorkingDir:   filepath.Join(WorkspaceDir, rel),
		User:         strconv.Itoa(r.cfg.uid) + ":" + strconv.Itoa(r.cfg.gid),
		Cmd:          p.args,
	}
	var made idAnswer
	if err := r.api.call(ctx, "POST", "/containers/"+url.PathEscape(c.id)+"/exec", nil, ec, &made); err != nil {
		if s := engineStatus(err); s == 404 || s == 409 || s != 0 && !r.running(ctx, c) {
			// (Podman answers 500 for a container that stopped.)
			return nil, fmt.Errorf("%w: %w", errContainerGone, err)
		}
		return nil, fmt.Errorf("sandbox: run %q: %w", p.args[0], err)
	}
	e := &cexec{r: r, c: c, p: p, x: &execution{r: r, c: c, id: made.ID}, life: life, streamDone: make(chan struct{})}
	e.oomBefore, e.oomOK = c.oomKills()
	e.start = time.Now()
	h, err := r.api.startExec(ctx, made.ID)
	if err != nil {
		return nil, err
	}
	e.h = h
	e.killCtx, e.kill = context.WithCancel(context.Background())
	go func() {
		defer close(e.streamDone)
		_ = h.demux(stdout, stderr)
	}()
	if len(p.stdin) > 0 && !keepStdin {
		go func() {
			_, _ = h.conn.Write(p.stdin)
			_ = h.conn.CloseWrite()
		}()
	}
	return e, nil
}

// stop asks for the command to end at once (Process.Kill).
func (e *cexec) stop() {
	e.killAsked.Store(true)
	e.kill()
}

// wait enforces the deadline (SIGTERM to the command's session, SIGKILL
// after the grace) and a kill, waits for the command's end and reports
// it; finish fills the output fields.
func (e *cexec) wait(finish func(res *Result)) (*Result, error) {
	defer e.h.conn.Close()
	defer e.kill()
	r, x := e.r, e.x
	runCtx, cancel := context.WithTimeout(e.life, e.p.timeout)
	defer cancel()
	// A kill ends the wait as the deadline does.
	defer context.AfterFunc(e.killCtx, cancel)()
	var (
		st                  execInspect
		stErr               error
		ended, timedOut     bool
		killed, graceKilled bool
	)
	select {
	case <-e.streamDone:
		// The stream ends when the process does, or earlier when it
		// closed its output: its end is the engine's word.
		st, stErr = x.exited(runCtx)
		ended = runCtx.Err() == nil
	case <-runCtx.Done():
	}
	switch {
	case ended:
	case e.killAsked.Load():
		killed = true
		x.signal(syscall.SIGKILL)
	default:
		// The deadline or the caller's context.
		timedOut = true
		x.signal(syscall.SIGTERM)
		t := time.NewTimer(r.cfg.grace)
		select {
		case <-e.streamDone:
			wctx, wcancel := context.WithTimeout(context.Background(), r.cfg.grace)
			if s, err := x.exited(wctx); err != nil || s.Running {
				graceKilled = true
			}
			wcancel()
		case <-t.C:
			graceKilled = true
		case <-e.killCtx.Done():
			if e.killAsked.Load() {
				killed, timedOut = true, false
			}
		}
		t.Stop()
		if graceKilled || killed {
			x.signal(syscall.SIGKILL)
		}
	}
	if !ended {
		stErr = nil
	}
	if x.known() {
		// Whatever the exec's session left behind ends with it.
		x.signal(syscall.SIGKILL)
	}
	_ = e.h.conn.SetReadDeadline(time.Now().Add(r.cfg.grace))
	<-e.streamDone

	res := &Result{ExitCode: -1, TimedOut: timedOut, Killed: killed}
	finish(res)
	if after, ok := e.c.oomKills(); ok && e.oomOK {
		res.OOMKilled = after > e.oomBefore
	} else if st.ExitCode == 128+int(syscall.SIGKILL) {
		// No cgroup counter to read: the engine may know.
		var cst ctrInspect
		ictx, icancel := context.WithTimeout(context.Background(), 10*time.Second)
		if r.api.call(ictx, "GET", "/containers/"+url.PathEscape(e.c.id)+"/json", nil, nil, &cst) == nil {
			res.OOMKilled = cst.State.OOMKilled
		}
		icancel()
	}
	switch {
	case forcedEnd(res, killed, timedOut, graceKilled):
	case stErr != nil:
		return nil, fmt.Errorf("sandbox: run %q: %w", e.p.args[0], stErr)
	default:
		res.ExitCode = st.ExitCode
		if st.ExitCode > 128 && st.ExitCode < 128+65 {
			res.Signal = st.ExitCode - 128
		}
	}
	res.Duration = time.Since(e.start)
	if err := e.life.Err(); err != nil {
		return res, fmt.Errorf("sandbox: command ended by the caller's context: %w", err)
	}
	r.mu.Lock()
	removed := e.c.removed
	r.mu.Unlock()
	if removed && !killed && !timedOut && res.Signal == int(syscall.SIGKILL) {
		// Ended by the container's removal (ReleaseWorkspace, Close),
		// not by itself: as the agent's path says.
		return nil, fmt.Errorf("%w: run %q: the workspace's container was removed while the command ran", ErrCommandLost, e.p.args[0])
	}
	return res, nil
}

// running reports whether the engine says c runs (false when it cannot
// tell).
func (r *containerRunner) running(ctx context.Context, c *ctr) bool {
	var st ctrInspect
	return r.api.call(ctx, "GET", "/containers/"+url.PathEscape(c.id)+"/json", nil, nil, &st) == nil && st.State.Running
}

// forcedEnd fills the signal and status of res for a command the runner
// ended — Process.Kill (SIGKILL) or the deadline (SIGTERM, or SIGKILL
// after the grace) — and reports whether it was one.
func forcedEnd(res *Result, killed, timedOut, graceKilled bool) bool {
	switch {
	case killed:
		res.Signal = int(syscall.SIGKILL)
	case timedOut:
		res.Signal = int(syscall.SIGTERM)
		if graceKilled {
			res.Signal = int(syscall.SIGKILL)
		}
	default:
		return false
	}
	res.ExitCode = 128 + res.Signal
	return true
}

// startFailed reports whether an exec that ended with status and stdout
// and stderr is the engine's report that the program could not be started
// (Podman's "Error: ... OCI runtime ...", Docker's "OCI runtime exec
// failed: ..."), with status 126 or 127.
func startFailed(status int, stdout, stderr []byte) bool {
	return (status == 126 || status == 127) && len(stdout) == 0 && bytes.Contains(stderr, []byte("OCI runtime")) &&
		(bytes.HasPrefix(stderr, []byte("Error: ")) || bytes.HasPrefix(stderr, []byte("OCI runtime exec failed")))
}

// startErr is the error of a program that could not be started.
func startErr(p *prepared, stderr []byte) error {
	line, _, _ := strings.Cut(string(stderr), "\n")
	return fmt.Errorf("%w: %s: %s", ErrCommandStart, p.args[0], strings.TrimPrefix(line, "Error: "))
}

// Run implements Runner.
func (r *containerRunner) Run(ctx context.Context, spec Spec) (*Result, error) {
	p, err := r.prepare(spec, r.cfg.maxTimeout)
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		res := &Result{TimedOut: true, Signal: int(syscall.SIGTERM), ExitCode: 128 + int(syscall.SIGTERM)}
		return res, fmt.Errorf("sandbox: command ended by the caller's context: %w", ctx.Err())
	}
	for attempt := 0; ; attempt++ {
		c, err := r.acquire(ctx, p)
		if err != nil {
			return nil, err
		}
		res, err := r.runIn(ctx, c, p)
		gone := errors.Is(err, errContainerGone)
		r.release(c, gone)
		if gone && attempt == 0 {
			// The container died (its init was killed, or someone
			// removed it) before the command started: once more in a
			// new one.
			continue
		}
		return res, err
	}
}

// runIn runs p's command in c.
func (r *containerRunner) runIn(ctx context.Context, c *ctr, p *prepared) (*Result, error) {
	stdout := NewHeadTail(int(p.limits.OutputBytes))
	stderr := NewHeadTail(int(p.limits.OutputBytes))
	start := time.Now()
	e, engineExec, err := r.launchIn(ctx, ctx, c, p, stdout, stderr, false)
	if errors.Is(err, ErrCommandLost) && !errors.Is(err, errContainerGone) {
		// The agent went before it said the command started (which it
		// may have, and killed it): killed, as when it goes later.
		res := &Result{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), Signal: int(syscall.SIGKILL), ExitCode: 128 + int(syscall.SIGKILL), Duration: time.Since(start)}
		return res, err
	}
	if err != nil {
		if ctx.Err() != nil && !errors.Is(err, errContainerGone) {
			res := &Result{TimedOut: true, Signal: int(syscall.SIGTERM), ExitCode: 128 + int(syscall.SIGTERM), Duration: time.Since(start)}
			return res, fmt.Errorf("sandbox: command ended by the caller's context: %w", ctx.Err())
		}
		return nil, err
	}
	res, err := e.wait(func(res *Result) {
		res.Stdout, res.Stderr = stdout.Bytes(), stderr.Bytes()
		res.StdoutTruncated, res.StderrTruncated = stdout.Truncated(), stderr.Truncated()
	})
	if engineExec && err == nil && !res.TimedOut && startFailed(res.ExitCode, res.Stdout, res.Stderr) {
		return nil, startErr(p, res.Stderr)
	}
	return res, err
}

// launchIn starts p's command in c through the container's agent, or as
// an engine exec (engineExec) when c has none.
func (r *containerRunner) launchIn(ctx, life context.Context, c *ctr, p *prepared, stdout, stderr io.Writer, keepStdin bool) (e ccommand, engineExec bool, err error) {
	for attempt := 0; attempt < 2; attempt++ {
		a := r.agentOf(ctx, c)
		if a == nil {
			break
		}
		ae, err := a.launch(ctx, life, p, stdout, stderr, keepStdin)
		if errors.Is(err, errAgentGone) {
			// It ended before the command started: a new one.
			continue
		}
		if errors.Is(err, errAgentTooBig) {
			break // an engine exec takes it
		}
		if err != nil {
			return nil, false, err
		}
		return ae, false, nil
	}
	ce, err := r.launch(ctx, life, c, p, stdout, stderr, keepStdin)
	if err != nil {
		return nil, true, err
	}
	return ce, true, nil
}

// prepare validates spec for this runner.
func (r *containerRunner) prepare(spec Spec, maxTimeout time.Duration) (*prepared, error) {
	p, err := prepare(spec, maxTimeout, view{workspace: WorkspaceDir, tmp: "/tmp"})
	if err != nil {
		return nil, err
	}
	if err := checkContainerReadOnly(p.readOnly); err != nil {
		return nil, err
	}
	if r.podman {
		for i, path := range append([]string{p.workspace}, p.readOnly...) {
			if strings.Contains(path, ",") {
				field := "Spec.Workspace"
				if i > 0 {
					field = fmt.Sprintf("Spec.ReadOnly[%d]", i-1)
				}
				return nil, fmt.Errorf("%w: %s %q contains a comma, which Podman's API cannot bind-mount; use a path without one", ErrInvalidSpec, field, path)
			}
		}
	}
	return p, nil
}

// Start implements Starter: the command runs as an exec in the
// workspace's container, as Run's does, with its stdin kept open for
// Process.Write and its output drained into bounded buffers. Start
// returns once the engine reports the program running (a program that
// cannot be started is an error wrapping ErrCommandStart). Kill, the
// deadline and the end of the command end its session as Run's; the
// container stays up (and out of the idle sweep) while it runs.
func (r *containerRunner) Start(ctx context.Context, spec Spec) (Process, error) {
	if err := checkStartSpec(spec); err != nil {
		return nil, err
	}
	p, err := r.prepare(spec, r.cfg.maxStart)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sandbox: start: %w", err)
	}
	for attempt := 0; ; attempt++ {
		c, err := r.acquire(ctx, p)
		if err != nil {
			return nil, err
		}
		pr, err := r.startIn(ctx, c, p)
		if err != nil {
			gone := errors.Is(err, errContainerGone)
			r.release(c, gone)
			if gone && attempt == 0 {
				continue
			}
			return nil, err
		}
		return pr, nil
	}
}

// startIn starts p's command in c; c is released when it ends.
func (r *containerRunner) startIn(ctx context.Context, c *ctr, p *prepared) (*cprocess, error) {
	out := newOutputs(int(p.limits.OutputBytes))
	cmd, engineExec, err := r.launchIn(ctx, context.Background(), c, p, out.writer(0), out.writer(1), true)
	if err != nil {
		if ctx.Err() != nil && !errors.Is(err, errContainerGone) {
			return nil, fmt.Errorf("sandbox: start: %w", ctx.Err())
		}
		return nil, err
	}
	if engineExec {
		// Running, or ended already: a program that could not be
		// started ends at once with the engine's report on stderr.
		e := cmd.(*cexec)
		st, err := e.x.running(ctx)
		if err != nil {
			e.stop()
			_, _ = e.wait(func(*Result) {})
			return nil, fmt.Errorf("sandbox: start: %w", err)
		}
		if !st.Running {
			res, err := e.wait(func(res *Result) {
				res.StdoutTruncated, res.StderrTruncated = out.dropped()
			})
			if err != nil {
				return nil, err
			}
			if stdout, stderr := out.peek(0), out.peek(1); startFailed(res.ExitCode, stdout, stderr) {
				return nil, startErr(p, stderr)
			}
			// It ran and ended at once: its output and end are there
			// to read.
			r.release(c, false)
			out.end()
			pr := &cprocess{e: e, out: out, done: make(chan struct{}), res: res}
			close(pr.done)
			return pr, nil
		}
	}
	pr := &cprocess{e: cmd, out: out, done: make(chan struct{})}
	go func() {
		pr.res, pr.err = cmd.wait(func(res *Result) {
			res.StdoutTruncated, res.StderrTruncated = out.dropped()
		})
		r.release(c, false)
		out.end()
		close(pr.done)
	}()
	return pr, nil
}

// peek returns a copy of the unread bytes of stream i, leaving them
// unread.
func (o *outputs) peek(i int) []byte {
	o.mu.Lock()
	defer o.mu.Unlock()
	f := &o.streams[i]
	return append([]byte(nil), f.data[f.off:]...)
}

// MaxStartTimeout implements StartTimeoutCeiling.
func (r *containerRunner) MaxStartTimeout() time.Duration { return r.cfg.maxStart }

// ccommand is a command started in a container: an engine exec (cexec)
// or a command of the container's agent (aexec).
type ccommand interface {
	wait(finish func(res *Result)) (*Result, error)
	stop()
	write(ctx context.Context, b []byte) (int, error)
	closeStdin() error
}

// cprocess is the Process of the container runner.
type cprocess struct {
	e       ccommand
	out     *outputs
	writeMu sync.Mutex
	closeMu sync.Mutex
	closed  bool
	done    chan struct{}
	res     *Result
	err     error
}

// Write implements Process.
func (pr *cprocess) Write(ctx context.Context, b []byte) (int, error) {
	pr.writeMu.Lock()
	defer pr.writeMu.Unlock()
	pr.closeMu.Lock()
	closed := pr.closed
	pr.closeMu.Unlock()
	switch {
	case closed:
		return 0, ErrStdinClosed
	case pr.ended():
		return 0, ErrProcessEnded
	case len(b) == 0:
		return 0, nil
	}
	n, err := pr.e.write(ctx, b)
	if errors.Is(err, ErrProcessEnded) {
		pr.closeMu.Lock()
		closed := pr.closed
		pr.closeMu.Unlock()
		if closed {
			return n, ErrStdinClosed
		}
	}
	return n, err
}

// write writes b to the exec's stdin; ErrProcessEnded when it is gone.
func (e *cexec) write(ctx context.Context, b []byte) (int, error) {
	conn := e.h.conn
	var mu sync.Mutex
	over := false
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if !over {
			_ = conn.SetWriteDeadline(time.Now())
		}
	})
	n, err := conn.Write(b)
	mu.Lock()
	over = true
	mu.Unlock()
	stop()
	_ = conn.SetWriteDeadline(time.Time{})
	switch {
	case err == nil:
		return n, nil
	case errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() != nil:
		return n, fmt.Errorf("sandbox: write to stdin: %w", context.Cause(ctx))
	case errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, net.ErrClosed):
		return n, ErrProcessEnded
	}
	select {
	case <-e.streamDone:
		return n, ErrProcessEnded
	default:
	}
	return n, fmt.Errorf("sandbox: write to stdin: %w", err)
}

// closeStdin half-closes the exec's stream: the command's stdin ends.
func (e *cexec) closeStdin() error {
	if err := e.h.conn.CloseWrite(); err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("sandbox: close stdin: %w", err)
	}
	return nil
}

// CloseStdin implements Process.
func (pr *cprocess) CloseStdin() error {
	pr.closeMu.Lock()
	defer pr.closeMu.Unlock()
	if pr.closed {
		return nil
	}
	pr.closed = true
	if pr.ended() {
		return nil
	}
	return pr.e.closeStdin()
}

// Read implements Process.
func (pr *cprocess) Read(ctx context.Context, max int) Output { return pr.out.read(ctx, max) }

// Done implements Process.
func (pr *cprocess) Done() <-chan struct{} { return pr.done }

// Wait implements Process.
func (pr *cprocess) Wait() (*Result, error) {
	<-pr.done
	return pr.res, pr.err
}

// Kill implements Process.
func (pr *cprocess) Kill() {
	if !pr.ended() {
		pr.e.stop()
	}
}

// ended reports whether the command has ended.
func (pr *cprocess) ended() bool {
	select {
	case <-pr.done:
		return true
	default:
		return false
	}
}

// execution is one exec, for signalling it and reading its end.
type execution struct {
	r  *containerRunner
	c  *ctr
	id string

	mu  sync.Mutex
	pid int // host PID of the exec's process, once known; -1: it has ended
}

// inspect reads the exec's state.
func (x *execution) inspect(ctx context.Context) (execInspect, error) {
	var st execInspect
	err := x.r.api.call(ctx, "GET", "/exec/"+url.PathEscape(x.id)+"/json", nil, nil, &st)
	return st, err
}

// running reads the exec's state once and notes its process.
func (x *execution) running(ctx context.Context) (execInspect, error) {
	st, err := x.inspect(ctx)
	if err == nil {
		x.note(st)
	}
	return st, err
}

// note records the process of a running exec, once checked to be a
// process of this container (not one that reused the number).
func (x *execution) note(st execInspect) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.pid != 0 {
		return
	}
	if !st.Running || st.Pid <= 0 {
		x.pid = -1
		return
	}
	if ns, err := os.Readlink("/proc/" + strconv.Itoa(st.Pid) + "/ns/pid"); err != nil || ns != x.c.pidns {
		x.pid = -1
		return
	}
	x.pid = st.Pid
}

// leader returns the host PID of the exec's process (the leader of its
// session), looking it up the first time, or 0 when it has ended.
func (x *execution) leader() int {
	x.mu.Lock()
	pid := x.pid
	x.mu.Unlock()
	if pid == 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		st, err := x.inspect(ctx)
		cancel()
		if err != nil {
			st = execInspect{}
		}
		x.note(st)
		x.mu.Lock()
		pid = x.pid
		x.mu.Unlock()
	}
	return max(pid, 0)
}

// known reports whether the exec's process was found.
func (x *execution) known() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.pid > 0
}

// signal sends sig to every process of the exec's session in the
// container.
func (x *execution) signal(sig syscall.Signal) {
	if sid := x.leader(); sid > 0 {
		x.c.killIf(sig, func(s int) bool { return s == sid })
	}
}

// exited waits until the engine reports the exec ended and returns its
// state; it polls, since the stream may end a moment before the engine
// has recorded the exit status, or long before when the command closed
// its output and runs on.
func (x *execution) exited(ctx context.Context) (execInspect, error) {
	wait := time.Millisecond
	for {
		st, err := x.inspect(ctx)
		if err != nil {
			if s := engineStatus(err); s == 404 {
				// Not errContainerGone: the command had started, and is
				// not to be run again.
				return st, fmt.Errorf("the workspace's container was removed while the command ran: %w", err)
			}
			return st, err
		}
		if !st.Running {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}
