package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os/exec"
	"time"
)

// LocalOptions configures the unconfined local runner. A nil
// *LocalOptions means defaults.
type LocalOptions struct {
	// KillGrace is the time between SIGTERM and SIGKILL at the deadline;
	// zero means DefaultKillGrace.
	KillGrace time.Duration
	// MaxTimeout bounds Spec.Timeout; zero means DefaultMaxTimeout.
	MaxTimeout time.Duration
	// MaxStartTimeout bounds Spec.Timeout of Start; zero means
	// DefaultMaxStartTimeout.
	MaxStartTimeout time.Duration
	// Logger receives the warning that the runner is unconfined; nil
	// means slog.Default().
	Logger *slog.Logger
}

// unconfinedLocal runs commands as plain child processes.
type unconfinedLocal struct {
	grace, maxTimeout, maxStart time.Duration
}

// NewUnconfinedLocal returns a Runner with NO confinement: the command can
// read and write every file the host process can, reach the network and
// signal other processes of the same user. Use it only where every command
// is trusted. It still runs the command in its own process group with a
// clean environment, kills the whole group at the deadline and when the
// command exits, and bounds captured output; Spec.ReadOnly, Spec.Network
// and the rlimits in Spec.Limits (all but OutputBytes) are not enforced.
func NewUnconfinedLocal(opts *LocalOptions) (Runner, error) {
	var o LocalOptions
	if opts != nil {
		o = *opts
	}
	grace, maxT, err := durations(o.KillGrace, o.MaxTimeout)
	if err != nil {
		return nil, err
	}
	maxStart, err := startDuration(o.MaxStartTimeout)
	if err != nil {
		return nil, err
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.Default()
	}
	logger.Warn("sandbox: UNCONFINED local runner in use; commands can read and write any file, use the network and signal host processes",
		slog.String("runner", "unconfined-local"))
	return &unconfinedLocal{grace: grace, maxTimeout: maxT, maxStart: maxStart}, nil
}

// MaxTimeout implements TimeoutCeiling.
func (l *unconfinedLocal) MaxTimeout() time.Duration { return l.maxTimeout }

// Name implements Namer.
func (l *unconfinedLocal) Name() string { return "unconfined-local" }

// MaxStartTimeout implements StartTimeoutCeiling.
func (l *unconfinedLocal) MaxStartTimeout() time.Duration { return l.maxStart }

// Run implements Runner.
func (l *unconfinedLocal) Run(ctx context.Context, spec Spec) (*Result, error) {
	p, cmd, err := l.command(spec, l.maxTimeout)
	if err != nil {
		return nil, err
	}
	res, err := execute(ctx, p, cmd, l.grace, hooks{})
	if err != nil && res == nil {
		return nil, localStartErr(p, err)
	}
	return res, err
}

// Start implements Starter: the command runs as Run runs it (its own
// process group, a clean environment, every process of the group killed
// at the deadline, by Kill and when the leader exits), with its stdin a
// pipe and its output kept for Read.
func (l *unconfinedLocal) Start(ctx context.Context, spec Spec) (Process, error) {
	if err := checkStartSpec(spec); err != nil {
		return nil, err
	}
	p, cmd, err := l.command(spec, l.maxStart)
	if err != nil {
		return nil, err
	}
	pr, err := startProcess(ctx, p, cmd, l.grace, hooks{}, func() {})
	if err != nil {
		return nil, localStartErr(p, err)
	}
	return pr, nil
}

// command validates spec against maxTimeout and returns the command.
func (l *unconfinedLocal) command(spec Spec, maxTimeout time.Duration) (*prepared, *exec.Cmd, error) {
	p, err := prepare(spec, maxTimeout, view{})
	if err != nil {
		return nil, nil, err
	}
	path, err := lookPath(p.args[0], p.env)
	if err != nil {
		return nil, nil, err
	}
	return p, &exec.Cmd{Path: path, Args: p.args, Env: p.env, Dir: p.dir}, nil
}

// localStartErr words a failure to run the command.
func localStartErr(p *prepared, err error) error {
	if errors.Is(err, errStart) {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return fmt.Errorf("%w: %s: %w", ErrCommandStart, p.args[0], pe.Err)
		}
		return fmt.Errorf("%w: %s: %w", ErrCommandStart, p.args[0], err)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("sandbox: run %q: %w", p.args[0], err)
}

// durations validates and defaults the kill grace and the maximum timeout.
func durations(grace, maxTimeout time.Duration) (time.Duration, time.Duration, error) {
	if grace < 0 {
		return 0, 0, fmt.Errorf("sandbox: KillGrace %v is negative; use 0 for the default %v", grace, DefaultKillGrace)
	}
	if maxTimeout < 0 {
		return 0, 0, fmt.Errorf("sandbox: MaxTimeout %v is negative; use 0 for the default %v", maxTimeout, DefaultMaxTimeout)
	}
	if grace == 0 {
		grace = DefaultKillGrace
	}
	if maxTimeout == 0 {
		maxTimeout = DefaultMaxTimeout
	}
	return grace, maxTimeout, nil
}

// startDuration validates and defaults a maximum Start timeout.
func startDuration(d time.Duration) (time.Duration, error) {
	switch {
	case d < 0:
		return 0, fmt.Errorf("sandbox: MaxStartTimeout %v is negative; use 0 for the default %v", d, DefaultMaxStartTimeout)
	case d == 0:
		return DefaultMaxStartTimeout, nil
	}
	return d, nil
}
