package sandbox

import (
	"log/slog"
	"time"
)

// IsolatedOptions configures the isolated runner. A nil *IsolatedOptions
// means defaults: every layer required, no downgrade.
type IsolatedOptions struct {
	// AllowDowngrade lets the runner skip a confinement layer the kernel
	// lacks (user namespaces, Landlock, a writable pids cgroup) instead of
	// failing with *FeatureError. Each skipped layer is logged at Warn.
	// Leave it false unless you accept weaker isolation.
	AllowDowngrade bool
	// KillGrace is the time between SIGTERM and SIGKILL at the deadline;
	// zero means DefaultKillGrace.
	KillGrace time.Duration
	// MaxTimeout bounds Spec.Timeout; zero means DefaultMaxTimeout.
	MaxTimeout time.Duration
	// PidsCgroup is the cgroup v1 pids hierarchy under which a cgroup per
	// call bounds the number of tasks; empty means DefaultPidsCgroup.
	PidsCgroup string
	// Logger receives downgrade warnings; nil means slog.Default().
	Logger *slog.Logger
}

// DefaultPidsCgroup is the cgroup v1 pids hierarchy used by default.
const DefaultPidsCgroup = "/sys/fs/cgroup/pids"

// Feature names used in FeatureError.
const (
	FeatureUserNamespaces = "user namespaces"
	FeatureLandlock       = "Landlock ABI >= 6"
	FeaturePidsCgroup     = "writable pids cgroup"
)

// MinLandlockABI is the Landlock ABI the isolated runner needs for full
// confinement: filesystem (with truncate and ioctl rights), TCP and IPC
// scoping of signals and abstract UNIX sockets.
const MinLandlockABI = 6
