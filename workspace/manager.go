package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Errors callers branch on. Returned errors wrap one of these and name the
// offending argument, path or limit.
var (
	// ErrInvalidName reports a workspace ID or skill name that is not a
	// single safe path element.
	ErrInvalidName = errors.New("workspace: invalid name")
	// ErrInvalidOption reports an Options or CollectLimits value out of range.
	ErrInvalidOption = errors.New("workspace: invalid option")
	// ErrLimit reports that a size or count limit was exceeded.
	ErrLimit = errors.New("workspace: limit exceeded")
	// ErrNotAllowed reports a host path outside every allowed input root.
	ErrNotAllowed = errors.New("workspace: host path not allowed")
	// ErrEscape reports a path that would leave its root directory.
	ErrEscape = errors.New("workspace: path escapes its root")
	// ErrInvalidGlob reports an output glob that is malformed, absolute or
	// contains "..".
	ErrInvalidGlob = errors.New("workspace: invalid glob")
	// ErrNotStaged reports a run requested for a skill that was never staged.
	ErrNotStaged = errors.New("workspace: skill not staged")
)

// Defaults used when an Options field is zero.
const (
	DefaultTTL           = 24 * time.Hour
	DefaultMaxSkillFiles = 10_000
	DefaultMaxSkillBytes = 256 << 20
	DefaultMaxInputFiles = 10_000
	DefaultMaxInputBytes = 1 << 30
)

// Options configures a Manager. The zero value (or a nil *Options) means
// defaults; negative values are errors.
type Options struct {
	// Root holds one directory per workspace. Default:
	// os.UserCacheDir()/skillkit/workspaces.
	Root string
	// TTL is how long a workspace may stay unused before Sweep removes it.
	// Default DefaultTTL.
	TTL time.Duration
	// InputRoots are the host directories CopyInput may copy from. Empty
	// means no host inputs are allowed at all.
	InputRoots []string
	// MaxSkillFiles and MaxSkillBytes bound one staged skill (regular files
	// and their total size). Defaults DefaultMaxSkillFiles, DefaultMaxSkillBytes.
	MaxSkillFiles int
	MaxSkillBytes int64
	// MaxInputFiles and MaxInputBytes bound one CopyInput call. Defaults
	// DefaultMaxInputFiles, DefaultMaxInputBytes.
	MaxInputFiles int
	MaxInputBytes int64
}

// Manager creates, locks and sweeps the workspaces under one root. It is safe
// for concurrent use; use one Manager per root in a process so that its
// in-process locks see every user.
type Manager struct {
	root          string
	ttl           time.Duration
	inputRoots    []string
	maxSkillFiles int
	maxSkillBytes int64
	maxInputFiles int
	maxInputBytes int64

	mu     sync.Mutex
	states map[string]*state
}

// state is the in-process side of one workspace, shared by every Workspace
// value for the same ID.
type state struct {
	sem       chan struct{} // capacity 1: the in-process command lock
	stageMu   sync.Mutex    // serializes Stage and guards manifests
	manifests map[string]*manifest
}

// New validates opts and returns a Manager. The root directory is created
// when missing.
func New(opts *Options) (*Manager, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	m := &Manager{
		root:          o.Root,
		ttl:           o.TTL,
		maxSkillFiles: o.MaxSkillFiles,
		maxSkillBytes: o.MaxSkillBytes,
		maxInputFiles: o.MaxInputFiles,
		maxInputBytes: o.MaxInputBytes,
		states:        make(map[string]*state),
	}
	if m.root == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Errorf("workspace: no default root (set Options.Root): %w", err)
		}
		m.root = filepath.Join(cache, "skillkit", "workspaces")
	}
	root, err := filepath.Abs(m.root)
	if err != nil {
		return nil, fmt.Errorf("workspace: Options.Root %q: %w", m.root, err)
	}
	m.root = root
	if err := setDefault("TTL", &m.ttl, DefaultTTL); err != nil {
		return nil, err
	}
	if err := setDefault("MaxSkillFiles", &m.maxSkillFiles, DefaultMaxSkillFiles); err != nil {
		return nil, err
	}
	if err := setDefault("MaxSkillBytes", &m.maxSkillBytes, DefaultMaxSkillBytes); err != nil {
		return nil, err
	}
	if err := setDefault("MaxInputFiles", &m.maxInputFiles, DefaultMaxInputFiles); err != nil {
		return nil, err
	}
	if err := setDefault("MaxInputBytes", &m.maxInputBytes, DefaultMaxInputBytes); err != nil {
		return nil, err
	}
	for i, r := range o.InputRoots {
		if !filepath.IsAbs(r) {
			return nil, fmt.Errorf("%w: Options.InputRoots[%d] %q must be an absolute path", ErrInvalidOption, i, r)
		}
		info, err := os.Stat(r)
		if err != nil {
			return nil, fmt.Errorf("%w: Options.InputRoots[%d]: %w", ErrInvalidOption, i, err)
		}
		if !info.IsDir() {
			return nil, fmt.Errorf("%w: Options.InputRoots[%d] %q is not a directory", ErrInvalidOption, i, r)
		}
		m.inputRoots = append(m.inputRoots, filepath.Clean(r))
	}
	if err := os.MkdirAll(m.root, 0o700); err != nil {
		return nil, fmt.Errorf("workspace: create root %s: %w", m.root, err)
	}
	return m, nil
}

// Root returns the absolute directory holding the workspaces.
func (m *Manager) Root() string { return m.root }

// Open creates the workspace for id (a session ID) or reopens it, records it
// as used now and returns a handle. id must be a single path element of
// letters, digits, '.', '_' and '-' that does not start with '.'.
func (m *Manager) Open(ctx context.Context, id string) (*Workspace, error) {
	if err := validName("workspace ID", id, maxIDLen); err != nil {
		return nil, err
	}
	// A shared hold on the sweep lock keeps Sweep from removing the
	// workspace between its creation and the last-used touch.
	release, err := lockFile(ctx, filepath.Join(m.root, sweepLockName), false)
	if err != nil {
		return nil, err
	}
	w := &Workspace{m: m, id: id, dir: filepath.Join(m.root, id), st: m.state(id)}
	err = w.ensureLayout()
	if err == nil {
		err = w.touch()
	}
	release()
	if err != nil {
		return nil, err
	}
	m.sweepIfDue(ctx)
	return w, nil
}

// sweepStampName is a file in the root whose modification time records
// the last sweep Open started.
const sweepStampName = ".last-sweep"

// sweepIfDue sweeps idle workspaces when the last sweep is older than a
// quarter of the TTL, so workspaces are removed without anyone scheduling
// Sweep, at the cost of one stat per Open. A failed sweep is retried by a
// later Open.
func (m *Manager) sweepIfDue(ctx context.Context) {
	stamp := filepath.Join(m.root, sweepStampName)
	if info, err := os.Stat(stamp); err == nil && time.Since(info.ModTime()) < m.ttl/4 {
		return
	}
	now := time.Now()
	if err := os.Chtimes(stamp, now, now); err != nil {
		if f, err := os.OpenFile(stamp, os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
			f.Close()
		}
	}
	_, _ = m.Sweep(ctx)
}

// Sweep removes every workspace unused for longer than the TTL and returns
// their IDs. Workspaces locked by a command (in this or another process) are
// left alone. Directories without a workspace marker are never touched.
func (m *Manager) Sweep(ctx context.Context) ([]string, error) {
	release, err := lockFile(ctx, filepath.Join(m.root, sweepLockName), true)
	if err != nil {
		return nil, err
	}
	defer release()
	entries, err := os.ReadDir(m.root)
	if err != nil {
		return nil, fmt.Errorf("workspace: sweep %s: %w", m.root, err)
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return removed, err
		}
		name := e.Name()
		if isTrash(name) {
			// Left over from an interrupted sweep.
			if err := os.RemoveAll(filepath.Join(m.root, name)); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		if !e.IsDir() || validName("", name, maxIDLen) != nil {
			continue
		}
		ok, err := m.sweepOne(name)
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			removed = append(removed, name)
		}
	}
	return removed, errors.Join(errs...)
}

// sweepOne removes workspace id if it is idle past the TTL and nobody holds
// its lock.
func (m *Manager) sweepOne(id string) (bool, error) {
	dir := filepath.Join(m.root, id)
	if !m.idle(dir) {
		return false, nil
	}
	st := m.state(id)
	select {
	case st.sem <- struct{}{}:
	default:
		return false, nil // a command holds it in this process
	}
	defer func() { <-st.sem }()
	f, err := os.OpenFile(filepath.Join(dir, metaDir, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return false, fmt.Errorf("workspace: sweep %s: %w", id, err)
	}
	defer f.Close()
	locked, err := tryFlock(f, true)
	if err != nil || !locked {
		return false, err // another process holds it
	}
	defer unflock(f)
	if !m.idle(dir) { // touched while we were taking the locks
		return false, nil
	}
	trash := filepath.Join(m.root, trashPrefix+id+"-"+randomHex(4))
	if err := os.Rename(dir, trash); err != nil {
		return false, fmt.Errorf("workspace: sweep %s: %w", id, err)
	}
	st.stageMu.Lock()
	st.manifests = make(map[string]*manifest)
	st.stageMu.Unlock()
	// Forget the state so that a server with many short sessions does not
	// grow; handles still holding it stay serialized by the flock.
	m.mu.Lock()
	if m.states[id] == st {
		delete(m.states, id)
	}
	m.mu.Unlock()
	if err := os.RemoveAll(trash); err != nil {
		return true, fmt.Errorf("workspace: sweep %s: remove %s: %w", id, trash, err)
	}
	return true, nil
}

// idle reports whether dir is a workspace whose last use is older than the
// TTL.
func (m *Manager) idle(dir string) bool {
	info, err := os.Stat(filepath.Join(dir, metaDir, usedName))
	if err != nil {
		return false
	}
	return time.Since(info.ModTime()) > m.ttl
}

// state returns the shared in-process state for id.
func (m *Manager) state(id string) *state {
	m.mu.Lock()
	defer m.mu.Unlock()
	st, ok := m.states[id]
	if !ok {
		st = &state{sem: make(chan struct{}, 1), manifests: make(map[string]*manifest)}
		m.states[id] = st
	}
	return st
}

// setDefault replaces a zero option with def and rejects negative values.
func setDefault[T int | int64 | time.Duration](field string, v *T, def T) error {
	switch {
	case *v < 0:
		return fmt.Errorf("%w: Options.%s is %v; use a positive value or 0 for the default %v", ErrInvalidOption, field, *v, def)
	case *v == 0:
		*v = def
	}
	return nil
}
