package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
)

// Starter is implemented by runners that can start a command and leave it
// running, with a pipe to its stdin and its output kept for reading, under
// the same confinement and limits as Run except the wall-clock bound,
// which has its own ceiling (StartTimeoutCeiling). Use the package-level
// Start, which looks through wrappers.
type Starter interface {
	// Start starts the command of spec and returns once it runs; a command
	// that cannot start (bad Spec, missing program, missing kernel
	// feature) is an error, as for Run. ctx bounds the start only: the
	// process outlives it and ends by itself, at Spec.Timeout, by
	// Process.Kill, or when the runner is closed. Spec.Stdin must be
	// empty: write to the process instead.
	Start(ctx context.Context, spec Spec) (Process, error)
}

// Process is a command started by a Starter. Its methods are safe for
// concurrent use.
type Process interface {
	// Write writes b to the command's stdin. Writes are serialized; one
	// blocks while the pipe is full (the command is not reading) until
	// ctx ends, and then returns the bytes written so far with ctx's
	// error. After CloseStdin it fails with ErrStdinClosed, once the
	// command has ended with ErrProcessEnded.
	Write(ctx context.Context, b []byte) (int, error)
	// CloseStdin closes the command's stdin, so that it reads end of
	// file. Closing it twice is not an error.
	CloseStdin() error
	// Read returns the output the command wrote since the previous Read,
	// at most max bytes of stdout and stderr together (each gets half,
	// and what one leaves unused goes to the other); the rest waits for
	// the next Read. When there is none yet and the command still runs,
	// it waits for some, for the end, or for ctx.
	Read(ctx context.Context, max int) Output
	// Done is closed when the command has ended and its output is
	// complete.
	Done() <-chan struct{}
	// Wait waits for Done and reports how the command ended (its Result
	// holds no output: that is read with Read). An error is a failure of
	// the sandbox, as for Run.
	Wait() (*Result, error)
	// Kill ends every process of the command at once with SIGKILL (the
	// isolated runner kills PID 1 of its PID namespace, which takes all
	// the others with it); Done follows. Killing an ended command does
	// nothing.
	Kill()
}

// Output is what a started command wrote between two calls of
// Process.Read.
type Output struct {
	// Stdout and Stderr are the new bytes, oldest first. A cut at the
	// read's max is moved back to the start of a UTF-8 sequence it would
	// split, so that text read in pieces joins up intact.
	Stdout, Stderr []byte
	// StdoutDropped and StderrDropped count bytes lost before these ones:
	// more than Limits.OutputBytes of the stream waited unread, and the
	// oldest went first.
	StdoutDropped, StderrDropped int64
	// Pending counts the bytes still waiting after this read (max was
	// reached).
	Pending int
	// Done reports that the command had ended and its output was
	// complete when these bytes were taken: with Pending 0, nothing more
	// will come.
	Done bool
}

// Errors of a started command.
var (
	// ErrStartUnsupported is returned by Start for a runner that is not a
	// Starter (or wraps one that is not).
	ErrStartUnsupported = errors.New("sandbox: the runner cannot start background commands")
	// ErrStdinClosed is returned by Process.Write after CloseStdin.
	ErrStdinClosed = errors.New("sandbox: the command's stdin is closed")
	// ErrProcessEnded is returned by Process.Write once the command has
	// ended (or closed its stdin).
	ErrProcessEnded = errors.New("sandbox: the command has ended")
)

// Start starts spec's command with r, or with the runner r wraps, when it
// is a Starter (see CanStart); otherwise it fails with
// ErrStartUnsupported.
func Start(ctx context.Context, r Runner, spec Spec) (Process, error) {
	s, ok := r.(Starter)
	if !ok || !CanStart(r) {
		return nil, fmt.Errorf("%w (%s)", ErrStartUnsupported, RunnerName(r))
	}
	return s.Start(ctx, spec)
}

// CanStart reports whether Start works with r: r is a Starter and so is
// every runner it wraps, since a wrapper that starts commands does so
// through the runner it wraps.
func CanStart(r Runner) bool {
	for r != nil {
		if _, ok := r.(Starter); !ok {
			return false
		}
		w, ok := r.(Wrapper)
		if !ok {
			return true
		}
		r = w.Unwrap()
	}
	return false
}

// StartTimeoutCeiling is implemented by runners whose Start refuses a
// Spec.Timeout above a maximum, which may be larger than MaxTimeout:
// background commands (a server, a watcher) are meant to run longer than
// a call.
type StartTimeoutCeiling interface {
	// MaxStartTimeout returns the largest Spec.Timeout Start accepts.
	MaxStartTimeout() time.Duration
}

// MaxStartTimeout returns the ceiling of Start of r, or of a runner it
// wraps, when one has it.
func MaxStartTimeout(r Runner) (time.Duration, bool) {
	if c, ok := capability[StartTimeoutCeiling](r); ok {
		return c.MaxStartTimeout(), true
	}
	return 0, false
}

// checkStartSpec refuses what Start cannot do with a Spec.
func checkStartSpec(spec Spec) error {
	if len(spec.Stdin) > 0 {
		return fmt.Errorf("%w: Spec.Stdin is set; a started command's stdin is a pipe, write to it with Process.Write", ErrInvalidSpec)
	}
	return nil
}

// process is the Process of both runners.
type process struct {
	l       *launched
	out     *outputs
	writeMu sync.Mutex // serializes writes
	closeMu sync.Mutex // guards stdinClosed
	closed  bool
	done    chan struct{}
	res     *Result
	err     error
}

// startProcess launches cmd with its stdin kept open and its output
// buffered, and waits for it in the background; release runs once the
// command has ended (or failed to start).
func startProcess(ctx context.Context, p *prepared, cmd *exec.Cmd, grace time.Duration, h hooks, release func()) (*process, error) {
	if err := ctx.Err(); err != nil {
		release()
		return nil, fmt.Errorf("sandbox: start: %w", err)
	}
	out := newOutputs(int(p.limits.OutputBytes))
	l, err := launch(ctx, p, cmd, grace, h, streams{stdout: out.writer(0), stderr: out.writer(1), keepStdin: true, detached: true,
		finish: func(res *Result) {
			res.StdoutTruncated, res.StderrTruncated = out.dropped()
		}})
	if err != nil {
		release()
		return nil, err
	}
	if l.hookErr != nil || ctx.Err() != nil || (h.notStarted != nil && h.notStarted()) {
		// The command never ran (a failed hook has killed it already,
		// a helper that never started it has ended): the call fails as
		// Run's would.
		if ctx.Err() != nil {
			l.kill()
		}
		res, err := l.wait()
		release()
		switch {
		case ctx.Err() != nil:
			return nil, fmt.Errorf("sandbox: start: %w", ctx.Err())
		case err != nil:
			return nil, err
		}
		return nil, fmt.Errorf("sandbox: the helper ended (exit status %d) before the command started", res.ExitCode)
	}
	pr := &process{l: l, out: out, done: make(chan struct{})}
	go func() {
		pr.res, pr.err = l.wait()
		release()
		// Before done, so that once Wait returns a Read reports Done.
		out.end()
		close(pr.done)
	}()
	return pr, nil
}

// Write implements Process.
func (pr *process) Write(ctx context.Context, b []byte) (int, error) {
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
	f := pr.l.stdin
	// A write the command does not take ends with ctx. The deadline is
	// set from a callback, since a context may end without one, and the
	// callback does nothing once the write is over, so that the deadline
	// cleared below stays cleared.
	var mu sync.Mutex
	over := false
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if !over {
			_ = f.SetWriteDeadline(time.Now())
		}
	})
	n, err := f.Write(b)
	mu.Lock()
	over = true
	mu.Unlock()
	stop()
	_ = f.SetWriteDeadline(time.Time{})
	switch {
	case err == nil:
		return n, nil
	case errors.Is(err, os.ErrDeadlineExceeded):
		return n, fmt.Errorf("sandbox: write to stdin: %w", context.Cause(ctx))
	case errors.Is(err, syscall.EPIPE), errors.Is(err, os.ErrClosed):
		pr.closeMu.Lock()
		closed := pr.closed
		pr.closeMu.Unlock()
		if closed {
			return n, ErrStdinClosed
		}
		return n, ErrProcessEnded
	}
	return n, fmt.Errorf("sandbox: write to stdin: %w", err)
}

// CloseStdin implements Process.
func (pr *process) CloseStdin() error {
	pr.closeMu.Lock()
	defer pr.closeMu.Unlock()
	if pr.closed {
		return nil
	}
	pr.closed = true
	if err := pr.l.stdin.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		return fmt.Errorf("sandbox: close stdin: %w", err)
	}
	return nil
}

// Read implements Process.
func (pr *process) Read(ctx context.Context, max int) Output { return pr.out.read(ctx, max) }

// Done implements Process.
func (pr *process) Done() <-chan struct{} { return pr.done }

// Wait implements Process.
func (pr *process) Wait() (*Result, error) {
	<-pr.done
	return pr.res, pr.err
}

// Kill implements Process.
func (pr *process) Kill() { pr.l.kill() }

// ended reports whether the command has ended.
func (pr *process) ended() bool {
	select {
	case <-pr.done:
		return true
	default:
		return false
	}
}

// outputs holds a started command's unread stdout and stderr, each
// bounded: the oldest unread bytes are dropped first.
type outputs struct {
	mu      sync.Mutex
	streams [2]fifo
	changed chan struct{} // closed and replaced on every write and at the end
	ended   bool
}

// newOutputs returns buffers of limit bytes per stream.
func newOutputs(limit int) *outputs {
	o := &outputs{changed: make(chan struct{})}
	o.streams[0].limit, o.streams[1].limit = limit, limit
	return o
}

// outputWriter is the io.Writer of one stream.
type outputWriter struct {
	o *outputs
	i int
}

// Write keeps what fits and never fails, so a chatty command is never
// blocked or killed by SIGPIPE.
func (w outputWriter) Write(b []byte) (int, error) {
	w.o.mu.Lock()
	w.o.streams[w.i].write(b)
	w.o.wake()
	w.o.mu.Unlock()
	return len(b), nil
}

// writer returns the writer of stream i (0 stdout, 1 stderr).
func (o *outputs) writer(i int) outputWriter { return outputWriter{o, i} }

// wake tells waiting readers that something changed; o.mu is held.
func (o *outputs) wake() {
	close(o.changed)
	o.changed = make(chan struct{})
}

// end marks the output complete.
func (o *outputs) end() {
	o.mu.Lock()
	o.ended = true
	o.wake()
	o.mu.Unlock()
}

// dropped reports whether each stream lost bytes.
func (o *outputs) dropped() (bool, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.streams[0].everDropped, o.streams[1].everDropped
}

// read takes up to max bytes, waiting as Process.Read says.
func (o *outputs) read(ctx context.Context, limit int) Output {
	limit = max(limit, 0)
	stdout, stderr := &o.streams[0], &o.streams[1]
	for {
		o.mu.Lock()
		if stdout.len() > 0 || stderr.len() > 0 || stdout.dropped > 0 || stderr.dropped > 0 || o.ended || ctx.Err() != nil {
			res := Output{StdoutDropped: stdout.dropped, StderrDropped: stderr.dropped, Done: o.ended}
			// Each stream gets half; what stderr leaves goes to stdout,
			// and what stdout leaves to stderr.
			nOut := min(stdout.len(), limit-min(stderr.len(), limit/2))
			nErr := min(stderr.len(), limit-nOut)
			res.Stdout, res.Stderr = stdout.take(nOut), stderr.take(nErr)
			res.Pending = stdout.len() + stderr.len()
			o.mu.Unlock()
			return res
		}
		changed := o.changed
		o.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
		}
	}
}

// fifo is the unread bytes of one stream, at most limit of them.
type fifo struct {
	limit       int
	data        []byte // unread bytes are data[off:]
	off         int
	dropped     int64 // lost since the last take
	everDropped bool
}

// len returns the number of unread bytes.
func (f *fifo) len() int { return len(f.data) - f.off }

// write appends b, dropping the oldest unread bytes beyond the limit.
func (f *fifo) write(b []byte) {
	if f.limit <= 0 {
		f.drop(int64(len(b)))
		return
	}
	if len(b) >= f.limit {
		f.drop(int64(f.len() + len(b) - f.limit))
		f.data = append(f.data[:0], b[len(b)-f.limit:]...)
		f.off = 0
		return
	}
	if over := f.len() + len(b) - f.limit; over > 0 {
		f.off += over
		f.drop(int64(over))
	}
	if f.off > 0 && len(f.data)+len(b) > cap(f.data) {
		// Move the unread bytes to the front instead of growing.
		n := copy(f.data, f.data[f.off:])
		f.data, f.off = f.data[:n], 0
	}
	f.data = append(f.data, b...)
}

// drop counts n lost bytes.
func (f *fifo) drop(n int64) {
	if n > 0 {
		f.dropped += n
		f.everDropped = true
	}
}

// take removes and returns up to n of the oldest unread bytes, never
// ending inside a UTF-8 sequence it could complete later.
func (f *fifo) take(n int) []byte {
	n = min(n, f.len())
	f.dropped = 0
	if n == 0 {
		return nil
	}
	b := f.data[f.off : f.off+n]
	if n < f.len() {
		b = b[:utf8Cut(b)]
	}
	out := append([]byte(nil), b...)
	f.off += len(b)
	if f.off == len(f.data) {
		f.data, f.off = f.data[:0], 0
	}
	return out
}

// utf8Cut returns where to cut b so that it does not end with the
// incomplete start of a UTF-8 sequence: len(b), or up to 3 bytes less. A
// cut that would leave nothing stays at len(b).
func utf8Cut(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax+1; i-- {
		c := b[i]
		if c < utf8.RuneSelf {
			return len(b) // ASCII: nothing open
		}
		if utf8.RuneStart(c) {
			if utf8.FullRune(b[i:]) || i == 0 {
				return len(b)
			}
			return i
		}
	}
	return len(b)
}
