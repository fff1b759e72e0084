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
	// Logger receives the warning that the runner is unconfined; nil
	// means slog.Default().
	Logger *slog.Logger
}

// unconfinedLocal runs commands as plain child processes.
type unconfinedLocal struct {
	grace, maxTimeout time.Duration
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
	logger := o.Logger
	if logger == nil {
		logger = slog.Default()
	}
	logger.Warn("sandbox: UNCONFINED local runner in use; commands can read and write any file, use the network and signal host processes",
		slog.String("runner", "unconfined-local"))
	return &unconfinedLocal{grace: grace, maxTimeout: maxT}, nil
}

// MaxTimeout implements TimeoutCeiling.
func (l *unconfinedLocal) MaxTimeout() time.Duration { return l.maxTimeout }

// Name implements Namer.
func (l *unconfinedLocal) Name() string { return "unconfined-local" }

// Run implements Runner.
func (l *unconfinedLocal) Run(ctx context.Context, spec Spec) (*Result, error) {
	p, err := prepare(spec, l.maxTimeout, view{})
	if err != nil {
		return nil, err
	}
	path, err := lookPath(p.args[0], p.env)
	if err != nil {
		return nil, err
	}
	cmd := &exec.Cmd{Path: path, Args: p.args, Env: p.env, Dir: p.dir}
	res, err := execute(ctx, p, cmd, l.grace, hooks{})
	if err != nil && res == nil {
		if errors.Is(err, errStart) {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("%w: %s: %w", ErrCommandStart, p.args[0], pe.Err)
			}
			return nil, fmt.Errorf("%w: %s: %w", ErrCommandStart, p.args[0], err)
		}
		return nil, fmt.Errorf("sandbox: run %q: %w", p.args[0], err)
	}
	return res, err
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
