package workspace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/skillkit/skillkit/internal/tracing"
	"github.com/skillkit/skillkit/sandbox"
	"go.opentelemetry.io/otel/trace"
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
	// ErrNotWorkspace reports a directory at a workspace's path that has no
	// metadata record and is not empty: Open never adopts such a folder.
	ErrNotWorkspace = errors.New("workspace: directory is not a workspace")
	// ErrSweepDisabled is returned by Sweep when Options.NoSweep is set.
	ErrSweepDisabled = errors.New("workspace: sweeping is disabled")
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
	// MetaRoot holds the host's records of the workspaces (locks, last use,
	// staging digests), one folder per workspace ID. A directory under Root
	// is a workspace only if it has a record here. Commands must not be
	// able to write MetaRoot, so it may not be a workspace directory or lie
	// inside one. Default: Root/.meta (hidden names are never workspace IDs).
	MetaRoot string
	// NoSweep disables idle removal: Open does not sweep and Sweep returns
	// ErrSweepDisabled. Use it when Root is a directory of the user's, whose
	// other entries must be left alone.
	NoSweep bool
	// TTL is how long a workspace may stay unused before Sweep removes it.
	// Default DefaultTTL.
	TTL time.Duration
	// InputRoots are the host directories CopyInput may copy from. Empty
	// means no host inputs are allowed at all.
	InputRoots []string
	// MaxSkillFiles and MaxSkillBytes bound one staged skill (regular files
	// and their total size). Defaults DefaultMaxSkillFiles, DefaultMaxSkillBytes.
	MaxSkillFiles int
	// MaxSkillBytes bounds the total size of one staged skill, in bytes.
	MaxSkillBytes int64
	// MaxInputFiles and MaxInputBytes bound one CopyInput call; for
	// CopyInputFiles, the files of one call and the size of each. Defaults
	// DefaultMaxInputFiles, DefaultMaxInputBytes.
	MaxInputFiles int
	// MaxInputBytes bounds, in bytes, the size of one CopyInput call, or
	// of each file of a CopyInputFiles call.
	MaxInputBytes int64
	// DiskBytes and DiskInodes bound each workspace. Where the process
	// may mount filesystems (root), every workspace is a volume of this
	// size (sandbox.NewVolume) whose image lives in its metadata record,
	// so that a command cannot fill the host's disk; the isolated runner
	// refuses a workspace on a larger filesystem. Elsewhere workspaces are
	// plain directories. Defaults sandbox.DefaultDiskBytes and
	// sandbox.DefaultDiskInodes.
	DiskBytes int64
	// DiskInodes is the inode (file count) bound that goes with
	// DiskBytes.
	DiskInodes int64
	// InMemoryVolumes makes the volumes tmpfs: made at once, but their
	// contents live in memory and vanish when unmounted (Remove, Close, a
	// reboot). Meant for workspaces that end with the process.
	InMemoryVolumes bool
	// PlainDirs keeps workspaces plain directories even where volumes
	// could be made; their disk use is then not bounded.
	PlainDirs bool
	// TracerProvider receives the Manager's spans (workspace.create,
	// workspace.stage.skill, workspace.stage.inputs, workspace.collect,
	// workspace.cleanup; see the package documentation). Nil means
	// otel.GetTracerProvider(), a no-op unless the application installed
	// a provider.
	TracerProvider trace.TracerProvider
}

// Manager creates, locks and sweeps the workspaces under one root. It is safe
// for concurrent use; use one Manager per root in a process so that its
// in-process locks see every user.
type Manager struct {
	root          string
	metaRoot      string
	noSweep       bool
	ttl           time.Duration
	inputRoots    []string
	maxSkillFiles int
	maxSkillBytes int64
	maxInputFiles int
	maxInputBytes int64
	volumes       bool // make a volume per workspace
	volume        sandbox.VolumeOptions
	tracer        trace.Tracer

	mu     sync.Mutex
	states map[string]*state
}

// state is the in-process side of one workspace, shared by every Workspace
// value for the same ID.
type state struct {
	sem       chan struct{} // capacity 1: the in-process command lock
	stageMu   sync.Mutex    // serializes Stage and guards manifests
	manifests map[string]*manifest
	attachMu  sync.Mutex // guards attached and removed
	attached  map[*attachment]io.Closer
	removed   bool // the workspace was removed: nothing more may attach
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
		metaRoot:      o.MetaRoot,
		noSweep:       o.NoSweep,
		ttl:           o.TTL,
		maxSkillFiles: o.MaxSkillFiles,
		maxSkillBytes: o.MaxSkillBytes,
		maxInputFiles: o.MaxInputFiles,
		maxInputBytes: o.MaxInputBytes,
		volumes:       !o.PlainDirs && os.Geteuid() == 0,
		volume:        sandbox.VolumeOptions{Bytes: o.DiskBytes, Inodes: o.DiskInodes, InMemory: o.InMemoryVolumes},
		tracer:        tracing.Tracer(o.TracerProvider, tracerName),
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
	if m.metaRoot == "" {
		m.metaRoot = filepath.Join(m.root, ".meta")
	}
	if m.metaRoot, err = filepath.Abs(m.metaRoot); err != nil {
		return nil, fmt.Errorf("workspace: Options.MetaRoot %q: %w", o.MetaRoot, err)
	}
	if err := checkMetaRoot(m.root, m.metaRoot); err != nil {
		return nil, err
	}
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
	if err := setDefault("DiskBytes", &m.volume.Bytes, sandbox.DefaultDiskBytes); err != nil {
		return nil, err
	}
	if err := setDefault("DiskInodes", &m.volume.Inodes, sandbox.DefaultDiskInodes); err != nil {
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
	if err := os.MkdirAll(m.metaRoot, 0o700); err != nil {
		return nil, fmt.Errorf("workspace: create metadata root %s: %w", m.metaRoot, err)
	}
	return m, nil
}

// checkMetaRoot refuses a metadata root that commands could write (the
// workspace root itself or a workspace inside it) or that holds the
// workspace root (whose name could then be taken for a workspace ID).
func checkMetaRoot(root, meta string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w: Options.MetaRoot %s %s; use a directory outside Root, or a hidden one such as %s",
			ErrInvalidOption, meta, why, filepath.Join(root, ".meta"))
	}
	if meta == root {
		return bad("is Options.Root")
	}
	if rel, err := filepath.Rel(root, meta); err == nil && filepath.IsLocal(rel) {
		first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		if validName("", first, maxIDLen) == nil {
			return bad("lies inside workspace directory " + filepath.Join(root, first))
		}
	}
	if rel, err := filepath.Rel(meta, root); err == nil && filepath.IsLocal(rel) {
		return bad("contains Options.Root")
	}
	return nil
}

// Root returns the absolute directory holding the workspaces.
func (m *Manager) Root() string { return m.root }

// MetaRoot returns the absolute directory holding the workspace records.
func (m *Manager) MetaRoot() string { return m.metaRoot }

// Open creates the workspace for id (a session ID) or reopens it, records it
// as used now and returns a handle. id must be a single path element of
// letters, digits, '.', '_' and '-' that does not start with '.'. An
// existing directory at Root/id is adopted only when it is empty or has a
// metadata record; otherwise Open fails with ErrNotWorkspace.
func (m *Manager) Open(ctx context.Context, id string) (*Workspace, error) {
	if err := validName("workspace ID", id, maxIDLen); err != nil {
		return nil, err
	}
	// A shared hold on the sweep lock keeps Sweep from removing the
	// workspace between its creation and the last-used touch.
	release, err := m.lockMeta(ctx, sweepLockName, false)
	if err != nil {
		return nil, err
	}
	// Opens of one ID, in this process or another, create it one at a
	// time: two at once would both make its record and its volume.
	releaseID, err := m.lockMeta(ctx, openLockName(id), true)
	if err != nil {
		release()
		return nil, err
	}
	w := &Workspace{m: m, id: id, dir: filepath.Join(m.root, id), st: m.state(id)}
	err = w.ensure(ctx)
	if err == nil {
		err = w.touch()
	}
	releaseID()
	release()
	if err != nil {
		return nil, err
	}
	if !m.noSweep {
		m.sweepIfDue(ctx)
	}
	return w, nil
}

// sweepIfDue sweeps idle workspaces when the last sweep is older than a
// quarter of the TTL, so workspaces are removed without anyone scheduling
// Sweep, at the cost of one stat per Open. A failed sweep is retried by a
// later Open.
func (m *Manager) sweepIfDue(ctx context.Context) {
	meta, err := m.openMeta()
	if err != nil {
		return
	}
	info, err := meta.Lstat(sweepStampName)
	if err == nil && time.Since(info.ModTime()) < m.ttl/4 {
		meta.Close()
		return
	}
	_ = touchMeta(meta, sweepStampName)
	meta.Close()
	_, _ = m.Sweep(ctx)
}

// Sweep removes every workspace unused for longer than the TTL, with its
// metadata record, and returns their IDs. Workspaces locked by a command (in
// this or another process) are left alone. Only IDs with a record in the
// metadata root are considered: a directory under Root without one is never
// touched. Workspaces with something attached in this process (Attach: a
// background command) are in use too. With Options.NoSweep, Sweep fails
// with ErrSweepDisabled.
func (m *Manager) Sweep(ctx context.Context) (removed []string, err error) {
	if m.noSweep {
		return nil, fmt.Errorf("%w (Options.NoSweep); remove workspaces under %s yourself", ErrSweepDisabled, m.root)
	}
	ctx, span := m.start(ctx, spanCleanup, attrCleanupOp.String(cleanupSweep))
	defer func() {
		span.SetAttributes(attrRemoved.Int(len(removed)))
		tracing.End(span, err)
	}()
	return m.sweep(ctx)
}

// sweep is Sweep, within its span.
func (m *Manager) sweep(ctx context.Context) ([]string, error) {
	release, err := m.lockMeta(ctx, sweepLockName, true)
	if err != nil {
		return nil, err
	}
	defer release()
	meta, err := m.openMeta()
	if err != nil {
		return nil, err
	}
	defer meta.Close()
	top, err := os.OpenRoot(m.root)
	if err != nil {
		return nil, fmt.Errorf("workspace: sweep %s: %w", m.root, err)
	}
	defer top.Close()
	var errs []error
	// Left over from an interrupted sweep.
	for _, r := range []*os.Root{top, meta} {
		entries, err := fs.ReadDir(r.FS(), ".")
		if err != nil {
			return nil, fmt.Errorf("workspace: sweep %s: %w", r.Name(), err)
		}
		for _, e := range entries {
			if isTrash(e.Name()) {
				if err := r.RemoveAll(e.Name()); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	entries, err := fs.ReadDir(meta.FS(), ".")
	if err != nil {
		return nil, fmt.Errorf("workspace: sweep %s: %w", m.metaRoot, err)
	}
	// No Open runs now (they hold the sweep lock shared): the open locks
	// of workspaces without a record can go.
	for _, e := range entries {
		if id, ok := openLockID(e.Name()); ok {
			if _, err := meta.Lstat(id); errors.Is(err, fs.ErrNotExist) {
				_ = meta.Remove(e.Name())
			}
		}
	}
	var removed []string
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return removed, err
		}
		name := e.Name()
		if !e.IsDir() || validName("", name, maxIDLen) != nil {
			continue
		}
		ok, err := m.sweepOne(top, meta, name)
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			removed = append(removed, name)
		}
	}
	return removed, errors.Join(errs...)
}

// sweepOne removes workspace id and its record if it is idle past the TTL
// and nobody holds its lock.
func (m *Manager) sweepOne(top, meta *os.Root, id string) (bool, error) {
	if !m.idle(meta, id) {
		return false, nil
	}
	st := m.state(id)
	select {
	case st.sem <- struct{}{}:
	default:
		return false, nil // a command holds it in this process
	}
	defer func() { <-st.sem }()
	if st.hasAttached() {
		return false, nil // a background command runs in it
	}
	f, err := meta.OpenFile(metaPath(id, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return false, fmt.Errorf("workspace: sweep %s: %w", id, err)
	}
	defer f.Close()
	locked, err := tryFlock(f, true)
	if err != nil || !locked {
		return false, err // another process holds it
	}
	defer unflock(f)
	if !m.idle(meta, id) { // touched while we were taking the locks
		return false, nil
	}
	return true, m.removeLocked(top, meta, id, st)
}

// Remove deletes workspace id now: its files, its volume and its record.
// It waits for a command running in it (in this or another process) to
// end, or for ctx, and ends what is attached to it (Attach: background
// commands) first. Removing a workspace that does not exist is not an
// error.
func (m *Manager) Remove(ctx context.Context, id string) (err error) {
	if err := validName("workspace ID", id, maxIDLen); err != nil {
		return err
	}
	ctx, span := m.start(ctx, spanCleanup, attrCleanupOp.String(cleanupRemove), tracing.WorkspaceID.String(id))
	defer func() { tracing.End(span, err) }()
	release, err := m.lockMeta(ctx, sweepLockName, false)
	if err != nil {
		return err
	}
	defer release()
	st := m.state(id)
	select {
	case st.sem <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("workspace %s: remove: %w", id, ctx.Err())
	}
	defer func() { <-st.sem }()
	meta, err := m.openMeta()
	if err != nil {
		return err
	}
	defer meta.Close()
	top, err := os.OpenRoot(m.root)
	if err != nil {
		return fmt.Errorf("workspace %s: remove: %w", id, err)
	}
	defer top.Close()
	if _, err := meta.Lstat(id); errors.Is(err, fs.ErrNotExist) {
		return nil // never made, or already removed (a directory without a record is not ours)
	}
	f, err := meta.OpenFile(metaPath(id, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("workspace %s: remove: %w", id, err)
	}
	defer f.Close()
	if err := waitFlock(ctx, f, true); err != nil {
		return fmt.Errorf("workspace %s: remove: %w", id, err)
	}
	defer unflock(f)
	return m.removeLocked(top, meta, id, st)
}

// removeLocked removes workspace id and its record; the caller holds its
// locks.
func (m *Manager) removeLocked(top, meta *os.Root, id string, st *state) error {
	// What runs in it ends first: its files are about to go, and a
	// process keeps a volume busy.
	attached := st.closeAttached(id)
	// A volume is unmounted first: a mount point cannot be renamed, and
	// its image goes with the record.
	if err := unmountVolume(filepath.Join(m.root, id)); err != nil {
		return errors.Join(attached, fmt.Errorf("workspace %s: %w", id, err))
	}
	// The directory goes first: a record without a directory is swept
	// again, while a directory without a record would be refused by Open
	// and never swept.
	trash := trashPrefix + id + "-" + randomHex(4)
	err := top.Rename(id, trash)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		trash = ""
	case err != nil:
		return fmt.Errorf("workspace %s: remove: %w", id, err)
	}
	metaTrash := trashPrefix + id + "-" + randomHex(4)
	if err := meta.Rename(id, metaTrash); err != nil {
		return fmt.Errorf("workspace %s: remove record: %w", id, err)
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
	st.markRemoved()
	errs := []error{attached}
	if trash != "" {
		if err := top.RemoveAll(trash); err != nil {
			errs = append(errs, fmt.Errorf("workspace %s: remove %s: %w", id, trash, err))
		}
	}
	if err := meta.RemoveAll(metaTrash); err != nil {
		errs = append(errs, fmt.Errorf("workspace %s: remove record: %w", id, err))
	}
	return errors.Join(errs...)
}

// Close ends what is attached to the workspaces (Attach: background
// commands) and unmounts the volumes of the workspaces under Root, for a
// clean shutdown: their files stay in their images (in-memory volumes
// lose theirs), and the next Open mounts them again. Workspaces in use
// must not be closed. Having no context, its workspace.cleanup span is a
// root.
func (m *Manager) Close() (err error) {
	_, span := m.start(context.Background(), spanCleanup, attrCleanupOp.String(cleanupClose))
	defer func() { tracing.End(span, err) }()
	return errors.Join(m.closeAllAttached(), m.unmountAll())
}

// unmountAll unmounts the volumes of the workspaces under Root.
func (m *Manager) unmountAll() error {
	entries, err := os.ReadDir(m.root)
	if err != nil {
		return fmt.Errorf("workspace: close: %w", err)
	}
	var errs []error
	for _, e := range entries {
		// Only this package mounts on a workspace directory, record or
		// not (a test may have removed the record).
		if e.IsDir() && validName("", e.Name(), maxIDLen) == nil {
			if err := unmountVolume(filepath.Join(m.root, e.Name())); err != nil {
				errs = append(errs, fmt.Errorf("workspace %s: %w", e.Name(), err))
			}
		}
	}
	return errors.Join(errs...)
}

// idle reports whether workspace id has a record whose last use is older
// than the TTL.
func (m *Manager) idle(meta *os.Root, id string) bool {
	info, err := meta.Lstat(metaPath(id, usedName))
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

// IDFor maps a session ID to the ID of its workspace: the session ID
// itself where it is a valid workspace ID not starting with "x-", and
// otherwise "x-" followed by a SHA-256 digest of it. The two forms never
// meet, so no session can name another's workspace.
func IDFor(sessionID string) string {
	if !strings.HasPrefix(sessionID, "x-") && validName("workspace ID", sessionID, maxIDLen) == nil {
		return sessionID
	}
	sum := sha256.Sum256([]byte(sessionID))
	return "x-" + hex.EncodeToString(sum[:24])
}
