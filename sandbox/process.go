package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// errStart marks errors from starting the process (as opposed to hooks).
var errStart = errors.New("start")

// hooks lets a runner act around the shared process lifecycle.
type hooks struct {
	// start, when set, starts cmd in place of cmd.Start (for example on
	// a thread placed in another namespace).
	start func(cmd *exec.Cmd) error
	// afterStart runs once the process exists and before it is waited
	// for; an error kills the process group and fails the call.
	afterStart func(pid int) error
	// afterWait runs after the leader was reaped and may refine res; an
	// error fails the call.
	afterWait func(res *Result) error
	// notStarted, when set, reports that the command itself has not
	// started yet: a deadline then kills at once (nothing to ask to
	// stop) and the result still reports SIGTERM's 143.
	notStarted func() bool
	// ready, when set, is closed once the command itself runs or the
	// process has ended, whichever comes first: Start returns only then,
	// so that a command that cannot start is Start's error, not a
	// process that ends at once.
	ready <-chan struct{}
}

// streams says where a launched command's output goes and how its stdin
// is fed.
type streams struct {
	// stdout and stderr receive the output; each is written by one
	// goroutine only.
	stdout, stderr io.Writer
	// keepStdin leaves the write end of a stdin pipe open for the caller
	// (Start); otherwise p.stdin, if any, is written and the pipe closed.
	keepStdin bool
	// detached makes the command's life independent of the context
	// passed to launch, which then bounds only the set-up: a started
	// process outlives the call that started it.
	detached bool
	// finish fills the output fields of the result once the output is
	// drained.
	finish func(res *Result)
}

// launched is a started command; wait finishes it.
type launched struct {
	ctx     context.Context // the caller's: its end is reported by wait (Run)
	cancel  context.CancelFunc
	cmd     *exec.Cmd
	h       hooks
	s       streams
	grace   time.Duration
	start   time.Time
	pgid    int
	stdin   *os.File // the write end of stdin, nil when there is none
	outR    *os.File
	errR    *os.File
	readers sync.WaitGroup
	// hookErr is afterStart's error: the group was killed, and wait
	// reports it.
	hookErr error
	// timedOut: the deadline fired; graceKilled: SIGKILL followed the
	// grace; killAsked: kill was called.
	timedOut, graceKilled, killAsked atomic.Bool
	killReq                          chan struct{}
	killOnce                         sync.Once
	exited, killerDone               chan struct{}
}

// execute starts cmd (whose Path, Args, Env, Dir, SysProcAttr and
// ExtraFiles the caller set) in its own process group, feeds stdin,
// captures bounded output, enforces the deadline with SIGTERM then SIGKILL
// to the whole group, and kills what is left of the group when the leader
// exits.
func execute(ctx context.Context, p *prepared, cmd *exec.Cmd, grace time.Duration, h hooks) (*Result, error) {
	if ctx.Err() != nil {
		// The deadline came before anything started: nothing to kill.
		res := &Result{TimedOut: true, Signal: int(syscall.SIGTERM), ExitCode: 128 + int(syscall.SIGTERM)}
		return res, fmt.Errorf("sandbox: command ended by the caller's context: %w", ctx.Err())
	}
	stdout := NewHeadTail(int(p.limits.OutputBytes))
	stderr := NewHeadTail(int(p.limits.OutputBytes))
	l, err := launch(ctx, p, cmd, grace, h, streams{stdout: stdout, stderr: stderr, finish: func(res *Result) {
		res.Stdout, res.Stderr = stdout.Bytes(), stderr.Bytes()
		res.StdoutTruncated, res.StderrTruncated = stdout.Truncated(), stderr.Truncated()
	}})
	if err != nil {
		return nil, err
	}
	return l.wait()
}

// launch starts cmd in its own process group with its output copied to
// s, runs the afterStart hook and arms the deadline (p.timeout) with
// SIGTERM, then SIGKILL after grace, to the whole group. A start failure
// is an error wrapping errStart; a hook failure kills the group and is
// reported by wait.
func launch(ctx context.Context, p *prepared, cmd *exec.Cmd, grace time.Duration, h hooks, s streams) (*launched, error) {
	life := ctx
	if s.detached {
		life = context.WithoutCancel(ctx)
	}
	l := &launched{ctx: life, cmd: cmd, h: h, s: s, grace: grace, start: time.Now(),
		killReq: make(chan struct{}), exited: make(chan struct{}), killerDone: make(chan struct{})}
	runCtx, cancel := context.WithTimeout(life, p.timeout)
	l.cancel = cancel
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true

	outR, outW, err := os.Pipe()
	if err != nil {
		cancel()
		return nil, fmt.Errorf("sandbox: stdout pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		cancel()
		closeAll(outR, outW)
		return nil, fmt.Errorf("sandbox: stderr pipe: %w", err)
	}
	var inR, inW *os.File
	if len(p.stdin) > 0 || s.keepStdin {
		if inR, inW, err = os.Pipe(); err != nil {
			cancel()
			closeAll(outR, outW, errR, errW)
			return nil, fmt.Errorf("sandbox: stdin pipe: %w", err)
		}
		cmd.Stdin = inR
	}
	cmd.Stdout, cmd.Stderr = outW, errW

	startCmd := h.start
	if startCmd == nil {
		startCmd = (*exec.Cmd).Start
	}
	if err := startCmd(cmd); err != nil {
		cancel()
		closeAll(outR, outW, errR, errW, inR, inW)
		return nil, fmt.Errorf("%w: %w", errStart, err)
	}
	l.pgid = cmd.Process.Pid
	l.outR, l.errR, l.stdin = outR, errR, inW
	closeAll(outW, errW, inR)

	// The pipes are always drained, whatever the reader of the output
	// does: a command (or the helper) never blocks on a full pipe.
	l.readers.Add(2)
	go func() { defer l.readers.Done(); _, _ = io.Copy(s.stdout, outR) }()
	go func() { defer l.readers.Done(); _, _ = io.Copy(s.stderr, errR) }()
	if inW != nil && !s.keepStdin {
		// A command that never reads stdin must not block the call: the
		// writer is closed at the end at the latest.
		go func() { _, _ = inW.Write(p.stdin); _ = inW.Close() }()
	}

	// The deadline, at any moment from here on (even while a hook or the
	// helper is still setting up), sends SIGTERM to the group and
	// SIGKILL after the grace; the result then reports exactly that. A
	// kill asked for ends the group at once.
	go l.killer(runCtx)

	if s.detached {
		// The caller's context still bounds the set-up.
		stop := context.AfterFunc(ctx, l.kill)
		defer stop()
	}
	if h.afterStart != nil {
		if l.hookErr = h.afterStart(l.pgid); l.hookErr != nil {
			_ = syscall.Kill(-l.pgid, syscall.SIGKILL)
		}
	}
	if l.hookErr == nil && h.ready != nil {
		select {
		case <-h.ready:
		case <-ctx.Done():
			l.kill()
		}
	}
	return l, nil
}

// killer ends the group at the deadline (SIGTERM, then SIGKILL after the
// grace) or at once when kill is called.
func (l *launched) killer(runCtx context.Context) {
	defer close(l.killerDone)
	select {
	case <-l.exited:
		return
	case <-l.killReq:
		_ = syscall.Kill(-l.pgid, syscall.SIGKILL)
		return
	case <-runCtx.Done():
	}
	l.timedOut.Store(true)
	if l.h.notStarted != nil && l.h.notStarted() {
		// A process still setting up may not have its signal
		// handlers yet (a namespace's init drops what it has no
		// handler for): end it now.
		_ = syscall.Kill(-l.pgid, syscall.SIGKILL)
		return
	}
	_ = syscall.Kill(-l.pgid, syscall.SIGTERM)
	t := time.NewTimer(l.grace)
	defer t.Stop()
	select {
	case <-l.exited:
	case <-l.killReq:
		_ = syscall.Kill(-l.pgid, syscall.SIGKILL)
	case <-t.C:
		l.graceKilled.Store(true)
		_ = syscall.Kill(-l.pgid, syscall.SIGKILL)
	}
}

// kill asks the killer to end the group with SIGKILL now.
func (l *launched) kill() {
	l.killOnce.Do(func() {
		l.killAsked.Store(true)
		close(l.killReq)
	})
}

// wait reaps the leader, kills what is left of the group, drains the
// output and reports how the command ended.
func (l *launched) wait() (*Result, error) {
	defer l.cancel()
	waitErr := l.cmd.Wait()
	close(l.exited)
	<-l.killerDone
	// Nothing of the group may outlive the call.
	_ = syscall.Kill(-l.pgid, syscall.SIGKILL)
	if l.stdin != nil {
		_ = l.stdin.Close()
	}

	// Drain what the group wrote; a descendant that left the group could
	// hold the pipes open, so bound the wait.
	drained := make(chan struct{})
	go func() { l.readers.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(l.grace):
		closeAll(l.outR, l.errR)
		<-drained
	}
	closeAll(l.outR, l.errR)

	res := &Result{ExitCode: -1, TimedOut: l.timedOut.Load()}
	l.s.finish(res)
	if st := l.cmd.ProcessState; st != nil {
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Signal = int(ws.Signal())
			res.ExitCode = 128 + res.Signal
			// Only a leader the SIGKILL reached was killed; one that
			// ended first reports its own status.
			res.Killed = l.killAsked.Load() && ws.Signal() == syscall.SIGKILL
		} else {
			res.ExitCode = st.ExitCode()
		}
	}
	hookErr := l.hookErr
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		hookErr = errors.Join(hookErr, fmt.Errorf("sandbox: wait: %w", waitErr))
	}
	if res.TimedOut || res.Killed {
		// A set-up step the deadline or the kill interrupted failed
		// because of it.
		hookErr = nil
	}
	if hookErr == nil && l.h.afterWait != nil {
		hookErr = l.h.afterWait(res)
	}
	switch {
	case res.Killed:
		res.Signal = int(syscall.SIGKILL)
		res.ExitCode = 128 + res.Signal
	case res.TimedOut:
		res.Signal = int(syscall.SIGTERM)
		if l.graceKilled.Load() {
			res.Signal = int(syscall.SIGKILL)
		}
		res.ExitCode = 128 + res.Signal
	}
	res.Duration = time.Since(l.start)
	if hookErr != nil {
		return nil, hookErr
	}
	if err := l.ctx.Err(); err != nil {
		return res, fmt.Errorf("sandbox: command ended by the caller's context: %w", err)
	}
	return res, nil
}

// closeAll closes every non-nil file, ignoring errors (used on paths where
// the files are no longer needed).
func closeAll(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			_ = f.Close()
		}
	}
}

// lookPath resolves name against the PATH in env the way the command will
// see it, not against the host PATH.
func lookPath(name string, env []string) (string, error) {
	if strings.ContainsRune(name, '/') {
		return name, nil
	}
	path := DefaultPath
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		cand := filepath.Join(dir, name)
		if fi, err := os.Stat(cand); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return cand, nil
		}
	}
	return "", fmt.Errorf("%w: %q not found in the sandbox's PATH (%s); pass an absolute path or a path relative to the working directory", ErrCommandStart, name, path)
}
