package sandbox

import (
	"log/slog"
	"time"
)

// IsolatedOptions configures the isolated runner. A nil *IsolatedOptions
// means defaults: every layer required, no downgrade.
type IsolatedOptions struct {
	// AllowDowngrade lets the runner skip a confinement layer the host
	// lacks (user namespaces, Landlock, seccomp, the pids and memory
	// cgroups) instead of failing with *FeatureError. Each skipped layer is
	// logged at Warn. Leave it false unless you accept weaker isolation.
	AllowDowngrade bool
	// UnboundedDisk lets commands run in a workspace whose filesystem is
	// larger than Limits.DiskBytes or Limits.DiskInodes, so a command can
	// fill the disk holding it. Without it such a workspace is refused with
	// ErrUnboundedDisk. Needed where no volume can be made (NewVolume needs
	// root); logged at Warn.
	UnboundedDisk bool
	// UID and GID are the host user and group the command runs as when
	// the runner is root; zero means DefaultSandboxUID and
	// DefaultSandboxGID. The command sees itself as uid 0 of its own user
	// namespace and the workspace as its own. An unprivileged runner can
	// only use its own ids, so setting them there is an error.
	UID, GID int
	// KillGrace is the time between SIGTERM and SIGKILL at the deadline;
	// zero means DefaultKillGrace.
	KillGrace time.Duration
	// MaxTimeout bounds Spec.Timeout; zero means DefaultMaxTimeout.
	MaxTimeout time.Duration
	// MaxStartTimeout bounds Spec.Timeout of Start (background
	// commands); zero means DefaultMaxStartTimeout.
	MaxStartTimeout time.Duration
	// PidsCgroup and MemoryCgroup are the cgroup v1 hierarchies (or
	// delegated cgroups in them) under which a cgroup per call bounds the
	// number of tasks and the memory; empty means DefaultPidsCgroup and
	// DefaultMemoryCgroup. Used on hosts with v1 controllers.
	PidsCgroup, MemoryCgroup string
	// Cgroup2Parent is the cgroup v2 directory under which a cgroup per
	// call is made; empty means DefaultCgroup2Parent on a host with only
	// the unified hierarchy. It must allow the pids and memory controllers
	// for its children (as a systemd Delegate= unit does).
	Cgroup2Parent string
	// Logger receives downgrade warnings; nil means slog.Default().
	Logger *slog.Logger
}

// Defaults of IsolatedOptions.
const (
	DefaultPidsCgroup    = "/sys/fs/cgroup/pids"
	DefaultMemoryCgroup  = "/sys/fs/cgroup/memory"
	DefaultCgroup2Parent = "/sys/fs/cgroup/skillkit"
	// DefaultSandboxUID and DefaultSandboxGID are nobody and nogroup.
	DefaultSandboxUID = 65534
	DefaultSandboxGID = 65534
)

// WorkspaceDir is where the isolated runner shows Spec.Workspace to the
// command.
const WorkspaceDir = "/workspace"

// Feature names used in FeatureError.
const (
	FeatureUserNamespaces = "user namespaces"
	FeatureLandlock       = "Landlock ABI >= 6"
	FeatureSeccomp        = "seccomp filters"
	FeatureCgroups        = "writable pids and memory cgroups"
	FeatureIDMap          = "idmapped mounts"
)

// MinLandlockABI is the Landlock ABI the isolated runner needs for full
// confinement: filesystem (with truncate and ioctl rights), TCP and IPC
// scoping of signals and abstract UNIX sockets.
const MinLandlockABI = 6
