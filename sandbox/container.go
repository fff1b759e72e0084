package sandbox

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// ContainerOptions configures the container runner. Image is required; a
// zero field of the others means the default named next to it.
type ContainerOptions struct {
	// Socket is the engine's unix socket: a path or a unix:// URL. Empty
	// means $DOCKER_HOST when set (only unix:// is accepted), else the
	// first of DefaultContainerSockets that exists.
	Socket string
	// Image is the image every container is made from (e.g.
	// "docker.io/library/python:3.13-slim"); it must already be in the
	// engine: the runner never pulls. Its /tmp should be mode 1777, as in
	// every common image (Podman gives the /tmp tmpfs the image's mode).
	Image string
	// UID and GID are the user the commands run as inside the container;
	// zero means DefaultSandboxUID and DefaultSandboxGID (nobody). Root
	// (0) cannot be chosen.
	UID, GID int
	// CPUs bounds the CPU time per wall-clock second of each container
	// (the engine's NanoCpus); zero means DefaultContainerCPUs.
	CPUs float64
	// Init is the argv of each container's first process, which only has
	// to stay up and reap orphans; the agent and the commands run next
	// to it. It should handle no signal, or a command can end it. Empty
	// means DefaultContainerInit, which needs /bin/sh and sleep in the
	// image.
	Init []string
	// IdleTTL is how long a container with no command running is kept
	// for its workspace's next command before it is removed; zero means
	// DefaultContainerIdleTTL.
	IdleTTL time.Duration
	// KillGrace is the time between SIGTERM and SIGKILL at the deadline;
	// zero means DefaultKillGrace.
	KillGrace time.Duration
	// MaxTimeout bounds Spec.Timeout; zero means DefaultMaxTimeout.
	MaxTimeout time.Duration
	// MaxStartTimeout bounds Spec.Timeout of Start; zero means
	// DefaultMaxStartTimeout.
	MaxStartTimeout time.Duration
	// NoAgent makes every command an engine exec (about 100 ms each with
	// Podman) instead of a request to the container's command agent
	// (a few milliseconds); see NewContainer.
	NoAgent bool
	// Logger receives what the runner removes on its own (idle
	// containers, leftovers of runners that died); nil means
	// slog.Default().
	Logger *slog.Logger
}

// Defaults of ContainerOptions.
const (
	DefaultContainerCPUs    = 1.0
	DefaultContainerIdleTTL = 10 * time.Minute
	// ContainerAPIVersion is the Docker Engine API version the runner
	// speaks; Docker and Podman's compatibility API both serve it.
	ContainerAPIVersion = "v1.41"
)

// DefaultContainerInit keeps a container up: a shell (PID 1) that waits
// for a long sleep, over and over, reaping orphaned processes as it goes.
// It handles no signal, so the kernel drops every signal a command sends
// it (a PID namespace's init gets from inside only the signals it
// handles): no command can end the container. The runner ends it from
// the host.
var DefaultContainerInit = []string{"/bin/sh", "-c", "while :; do sleep 3600 & wait $!; done"}

// DefaultContainerSockets are the sockets tried, in order, when neither
// ContainerOptions.Socket nor DOCKER_HOST names one: Docker's, then
// rootful Podman's.
var DefaultContainerSockets = []string{"/var/run/docker.sock", "/run/podman/podman.sock"}

// ErrContainerEngine wraps every failure reported by the container engine
// or in talking to it.
var ErrContainerEngine = errors.New("sandbox: container engine")

// WorkspaceReleaser is implemented by runners that keep something per
// workspace between commands (the container runner keeps a container).
// Call ReleaseWorkspace when a workspace ends, before its directory is
// removed: with workspace.Workspace.Attach, for example, an io.Closer
// that calls it.
type WorkspaceReleaser interface {
	// ReleaseWorkspace ends what the runner keeps for the workspace
	// (commands still running in it are killed). A workspace with
	// nothing kept is not an error.
	ReleaseWorkspace(workspace string) error
}

// ReleaseWorkspace calls ReleaseWorkspace of r, or of a runner it wraps,
// when one is a WorkspaceReleaser; otherwise it does nothing.
func ReleaseWorkspace(r Runner, workspace string) error {
	if wr, ok := capability[WorkspaceReleaser](r); ok {
		return wr.ReleaseWorkspace(workspace)
	}
	return nil
}

// containerConfig is ContainerOptions validated, with defaults applied.
type containerConfig struct {
	socket            string
	image             string
	uid, gid          int
	nanoCPUs          int64
	init              []string
	idleTTL           time.Duration
	grace, maxTimeout time.Duration
	maxStart          time.Duration
	noAgent           bool
	logger            *slog.Logger
}

// containerConfigOf validates opts and applies the defaults.
func containerConfigOf(opts *ContainerOptions) (*containerConfig, error) {
	var o ContainerOptions
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
	c := &containerConfig{image: o.Image, uid: o.UID, gid: o.GID, init: o.Init, idleTTL: o.IdleTTL,
		grace: grace, maxTimeout: maxT, maxStart: maxStart, noAgent: o.NoAgent, logger: o.Logger}
	if strings.TrimSpace(c.image) == "" {
		return nil, errors.New("sandbox: ContainerOptions.Image is empty; name the image the commands run in (it must already be in the engine: the runner never pulls)")
	}
	if !imageRef.MatchString(c.image) {
		return nil, fmt.Errorf("sandbox: ContainerOptions.Image %q is not an image reference; use NAME[:TAG][@DIGEST], e.g. docker.io/library/python:3.13-slim", c.image)
	}
	switch {
	case o.UID < 0 || o.GID < 0:
		return nil, fmt.Errorf("sandbox: ContainerOptions.UID %d / GID %d must not be negative; use 0 for the defaults %d:%d", o.UID, o.GID, DefaultSandboxUID, DefaultSandboxGID)
	case o.CPUs < 0:
		return nil, fmt.Errorf("sandbox: ContainerOptions.CPUs %v is negative; use 0 for the default %v", o.CPUs, DefaultContainerCPUs)
	case o.IdleTTL < 0:
		return nil, fmt.Errorf("sandbox: ContainerOptions.IdleTTL %v is negative; use 0 for the default %v", o.IdleTTL, DefaultContainerIdleTTL)
	}
	if c.uid == 0 {
		c.uid = DefaultSandboxUID
	}
	if c.gid == 0 {
		c.gid = DefaultSandboxGID
	}
	cpus := o.CPUs
	if cpus == 0 {
		cpus = DefaultContainerCPUs
	}
	c.nanoCPUs = int64(cpus * 1e9)
	if len(c.init) == 0 {
		c.init = DefaultContainerInit
	}
	if c.idleTTL == 0 {
		c.idleTTL = DefaultContainerIdleTTL
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	if c.socket, err = containerSocket(o.Socket); err != nil {
		return nil, err
	}
	return c, nil
}

// imageRef is the characters of an image reference (name, tag, digest),
// which also keeps it safe in a URL path.
var imageRef = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/:@+-]*$`)

// containerSocket resolves the engine's socket path from the option, then
// DOCKER_HOST, then the default locations.
func containerSocket(opt string) (string, error) {
	field := "ContainerOptions.Socket"
	v := opt
	if v == "" {
		if v = os.Getenv("DOCKER_HOST"); v != "" {
			field = "DOCKER_HOST"
		}
	}
	if v == "" {
		for _, s := range DefaultContainerSockets {
			if _, err := os.Stat(s); err == nil {
				return s, nil
			}
		}
		return "", fmt.Errorf("%w: no engine socket: none of %s exists and DOCKER_HOST is unset; start Docker or `podman system service`, or pass ContainerOptions.Socket",
			ErrContainerEngine, strings.Join(DefaultContainerSockets, ", "))
	}
	if strings.HasPrefix(v, "/") {
		return filepath.Clean(v), nil
	}
	u, err := url.Parse(v)
	if err != nil {
		return "", fmt.Errorf("sandbox: %s %q: %w", field, v, err)
	}
	switch u.Scheme {
	case "unix":
		p := u.Path
		if p == "" {
			p = u.Opaque
		}
		if u.Host != "" || !strings.HasPrefix(p, "/") {
			return "", fmt.Errorf("sandbox: %s %q: the socket path must be absolute (unix:///run/podman/podman.sock)", field, v)
		}
		return filepath.Clean(p), nil
	case "tcp", "http", "https":
		return "", fmt.Errorf("sandbox: %s %q: the container runner refuses an engine over plain TCP: anyone who reaches that port controls the engine (and so the host); use the engine's unix socket (unix:///var/run/docker.sock). "+
			"TCP with TLS is not supported either: the runner must see the engine's processes on this host", field, v)
	}
	return "", fmt.Errorf("sandbox: %s %q: scheme %q is not supported; the container runner talks to a local engine over its unix socket (unix:///PATH)", field, v, u.Scheme)
}
