package sandbox

import (
	"errors"
	"os/exec"
	"runtime"
	"sync"
)

// errRunnerClosed is returned by a Run after Close.
var errRunnerClosed = errors.New("sandbox: the runner is closed")

// errTainted, wrapped by what a start function returns, says the thread
// could not be put back as it was (its network namespace): it must not
// start anything else.
var errTainted = errors.New("the starting thread could not be restored")

// forker starts every helper of a runner from one OS thread that lives as
// long as the runner. The helper's parent-death signal (SIGKILL, so that
// nothing survives the host) is tied by the kernel to the thread that
// forked it, not to the process: started from an ordinary goroutine, the
// helper would be killed whenever the Go runtime retires that thread — as
// it does when any goroutine that locked it exits locked (this package's
// own network-namespace maker does, and so may code of the program).
type forker struct {
	reqs chan forkReq
	stop chan struct{}
	once sync.Once
}

type forkReq struct {
	fn   func() error
	done chan error
}

func newForker() *forker {
	f := &forker{reqs: make(chan forkReq), stop: make(chan struct{})}
	go f.loop()
	return f
}

func (f *forker) loop() {
	// Never unlocked: the thread ends with the runner, and with it (by
	// the parent-death signal) any helper still running.
	runtime.LockOSThread()
	for {
		select {
		case r := <-f.reqs:
			err := r.fn()
			r.done <- err
			if errors.Is(err, errTainted) {
				// This thread ends (and the helper it just started with
				// it); a fresh one serves the next start.
				go f.loop()
				return
			}
		case <-f.stop:
			return
		}
	}
}

// start runs fn (which forks) on the forker's thread.
func (f *forker) start(fn func() error) error {
	done := make(chan error, 1)
	select {
	case f.reqs <- forkReq{fn, done}:
		return <-done
	case <-f.stop:
		return errRunnerClosed
	}
}

// close ends the forker's thread.
func (f *forker) close() { f.once.Do(func() { close(f.stop) }) }

// startCmd starts cmd on the forker's thread.
func (f *forker) startCmd(cmd *exec.Cmd) error { return f.start(cmd.Start) }
