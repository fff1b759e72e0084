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
}

// execute starts cmd (whose Path, Args, Env, Dir, SysProcAttr and
// ExtraFiles the caller set) in its own process group, feeds stdin,
// captures bounded output, enforces the deadline with SIGTERM then SIGKILL
// to the whole group, and kills what is left of the group when the leader
// exits.
func execute(ctx context.Context, p *prepared, cmd *exec.Cmd, grace time.Duration, h hooks) (*Result, error) {
	start := time.Now()
	runCtx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	if runCtx.Err() != nil {
		// The deadline came before anything started: nothing to kill.
		res := &Result{TimedOut: true, Signal: int(syscall.SIGTERM), ExitCode: 128 + int(syscall.SIGTERM), Duration: time.Since(start)}
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("sandbox: command ended by the caller's context: %w", err)
		}
		return res, nil
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true

	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: stdout pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(outR, outW)
		return nil, fmt.Errorf("sandbox: stderr pipe: %w", err)
	}
	var inR, inW *os.File
	if len(p.stdin) > 0 {
		if inR, inW, err = os.Pipe(); err != nil {
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
		closeAll(outR, outW, errR, errW, inR, inW)
		return nil, fmt.Errorf("%w: %w", errStart, err)
	}
	pgid := cmd.Process.Pid
	closeAll(outW, errW, inR)

	stdout := NewHeadTail(int(p.limits.OutputBytes))
	stderr := NewHeadTail(int(p.limits.OutputBytes))
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); _, _ = io.Copy(stdout, outR) }()
	go func() { defer readers.Done(); _, _ = io.Copy(stderr, errR) }()
	if inW != nil {
		// A command that never reads stdin must not block the call: the
		// writer is closed at the end at the latest.
		go func() { _, _ = inW.Write(p.stdin); _ = inW.Close() }()
	}

	// The deadline, at any moment from here on (even while a hook or the
	// helper is still setting up), sends SIGTERM to the group and
	// SIGKILL after the grace; the result then reports exactly that.
	var timedOut, killed atomic.Bool
	exited := make(chan struct{})
	killerDone := make(chan struct{})
	go func() {
		defer close(killerDone)
		select {
		case <-exited:
			return
		case <-runCtx.Done():
		}
		timedOut.Store(true)
		if h.notStarted != nil && h.notStarted() {
			// A process still setting up may not have its signal
			// handlers yet (a namespace's init drops what it has no
			// handler for): end it now.
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			return
		}
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-exited:
		case <-t.C:
			killed.Store(true)
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
	}()

	var hookErr error
	if h.afterStart != nil {
		if hookErr = h.afterStart(pgid); hookErr != nil {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
	}
	waitErr := cmd.Wait()
	close(exited)
	<-killerDone
	// Nothing of the group may outlive the call.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	if inW != nil {
		_ = inW.Close()
	}

	// Drain what the group wrote; a descendant that left the group could
	// hold the pipes open, so bound the wait.
	drained := make(chan struct{})
	go func() { readers.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(grace):
		closeAll(outR, errR)
		<-drained
	}
	closeAll(outR, errR)

	res := &Result{
		ExitCode:        -1,
		Stdout:          stdout.Bytes(),
		Stderr:          stderr.Bytes(),
		StdoutTruncated: stdout.Truncated(),
		StderrTruncated: stderr.Truncated(),
		TimedOut:        timedOut.Load(),
	}
	if st := cmd.ProcessState; st != nil {
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Signal = int(ws.Signal())
			res.ExitCode = 128 + res.Signal
		} else {
			res.ExitCode = st.ExitCode()
		}
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		hookErr = errors.Join(hookErr, fmt.Errorf("sandbox: wait: %w", waitErr))
	}
	if res.TimedOut {
		// A set-up step the deadline interrupted failed because of it.
		hookErr = nil
	}
	if hookErr == nil && h.afterWait != nil {
		hookErr = h.afterWait(res)
	}
	if res.TimedOut {
		res.Signal = int(syscall.SIGTERM)
		if killed.Load() {
			res.Signal = int(syscall.SIGKILL)
		}
		res.ExitCode = 128 + res.Signal
	}
	res.Duration = time.Since(start)
	if hookErr != nil {
		return nil, hookErr
	}
	if err := ctx.Err(); err != nil {
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
