package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/skillkit/skillkit/internal/tracing"
	"github.com/skillkit/skillkit/sandbox"
	"go.opentelemetry.io/otel/trace"
)

// The metadata root holds everything the host records about workspaces,
// outside every workspace directory: commands get read-write access to
// their workspace, so a file the host kept there could be replaced by a
// symbolic link that turns the host's next write into a write elsewhere.
//
//	<MetaRoot>/
//	  sweep.lock           shared by Open, exclusive for Sweep
//	  last-sweep           mtime: when Open last started a sweep
//	  <id>/                the record that makes <Root>/<id> a workspace
//	    lock               flocked while a command runs
//	    used               mtime: last use
//	    staged/<name>.json digests of the staged copy of skill <name>
//
// Every access goes through an os.Root opened on the metadata root, so even
// a link placed there could not lead outside it.
const (
	sweepLockName  = "sweep.lock"
	sweepStampName = "last-sweep"
	lockName       = "lock"
	usedName       = "used"
	stagedName     = "staged"
)

// openLockName is the lock Opens of workspace id take while they create
// it; a leading '.' keeps it apart from every workspace ID.
func openLockName(id string) string { return "." + id + ".open" }

// openLockID returns the workspace ID of an open lock's name.
func openLockID(name string) (string, bool) {
	if !strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".open") || len(name) <= len("..open") {
		return "", false
	}
	id := name[1 : len(name)-len(".open")]
	return id, validName("", id, maxIDLen) == nil
}

// openMeta opens the metadata root.
func (m *Manager) openMeta() (*os.Root, error) {
	r, err := os.OpenRoot(m.metaRoot)
	if err != nil {
		return nil, fmt.Errorf("workspace: metadata root: %w", err)
	}
	return r, nil
}

// metaPath joins a workspace ID and names below its record.
func metaPath(id string, elem ...string) string {
	p := id
	for _, e := range elem {
		p += "/" + e
	}
	return p
}

// Known reports whether id has a metadata record, that is whether a Manager
// with this MetaRoot created (and Sweep has not yet removed) workspace id.
// A directory under Root without a record is not a workspace: Open refuses
// to adopt it unless it is empty, and Sweep never removes it.
func (m *Manager) Known(id string) (bool, error) {
	if err := validName("workspace ID", id, maxIDLen); err != nil {
		return false, err
	}
	meta, err := m.openMeta()
	if err != nil {
		return false, err
	}
	defer meta.Close()
	info, err := meta.Lstat(id)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("workspace %s: metadata: %w", id, err)
	}
	return info.IsDir(), nil
}

// lockMeta takes a shared or exclusive flock on the metadata file name,
// creating it, and returns its release function.
func (m *Manager) lockMeta(ctx context.Context, name string, exclusive bool) (func(), error) {
	meta, err := m.openMeta()
	if err != nil {
		return nil, err
	}
	defer meta.Close()
	f, err := meta.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("workspace: lock %s: %w", name, err)
	}
	if err := waitFlock(ctx, f, exclusive); err != nil {
		f.Close()
		return nil, fmt.Errorf("workspace: lock %s: %w", name, err)
	}
	return func() {
		unflock(f)
		f.Close()
	}, nil
}

// touchMeta sets the mtime of the metadata file name to now, creating it.
func touchMeta(meta *os.Root, name string) error {
	now := time.Now()
	if info, err := meta.Lstat(name); err == nil && info.Mode().IsRegular() {
		return meta.Chtimes(name, now, now)
	}
	// Missing, or not a regular file (which only the host could have put
	// there): replace it with an empty file.
	_ = meta.RemoveAll(name)
	f, err := meta.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	return f.Close()
}

// ensure creates the metadata record and the directory layout of w when
// missing. A directory at w's path that has no record and is not empty
// belongs to someone else: it is refused with ErrNotWorkspace.
func (w *Workspace) ensure(ctx context.Context) (err error) {
	meta, err := w.m.openMeta()
	if err != nil {
		return err
	}
	defer meta.Close()
	switch _, lerr := meta.Lstat(w.id); {
	case errors.Is(lerr, fs.ErrNotExist):
		// Without a record the workspace is new, or was swept since a
		// handle was opened: either way it is made here.
		var span trace.Span
		ctx, span = w.start(ctx, spanCreate, attrVolume.Bool(w.m.volumes))
		defer func() { tracing.End(span, err) }()
		if err := w.checkForeign(); err != nil {
			return err
		}
	case lerr != nil:
		return fmt.Errorf("workspace %s: metadata: %w", w.id, lerr)
	}
	if err := meta.MkdirAll(metaPath(w.id, stagedName), 0o700); err != nil {
		return fmt.Errorf("workspace %s: create metadata record: %w", w.id, err)
	}
	if err := w.ensureVolume(ctx); err != nil {
		return err
	}
	return w.ensureLayout()
}

// volumeImageName is the volume image's name in a workspace's record.
const volumeImageName = "volume.img"

// ensureVolume mounts w's volume (creating it the first time) when the
// Manager makes volumes.
func (w *Workspace) ensureVolume(ctx context.Context) error {
	if !w.m.volumes {
		return nil
	}
	top, err := os.OpenRoot(w.m.root)
	if err != nil {
		return fmt.Errorf("workspace %s: %w", w.id, err)
	}
	err = top.Mkdir(w.id, 0o700)
	top.Close()
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("workspace %s: create: %w", w.id, err)
	}
	image := filepath.Join(w.m.metaRoot, w.id, volumeImageName)
	if _, err := sandbox.NewVolume(ctx, w.dir, image, &w.m.volume); err != nil {
		if errors.Is(err, sandbox.ErrNotEmpty) {
			return fmt.Errorf("workspace %s: %s holds files but no volume (it was made as a plain directory); "+
				"remove the workspace (Manager.Remove) to start it afresh on a bounded volume, or open it with Options.PlainDirs: %w", w.id, w.dir, err)
		}
		return fmt.Errorf("workspace %s: %w", w.id, err)
	}
	if err := os.Chmod(w.dir, 0o700); err != nil {
		return fmt.Errorf("workspace %s: %w", w.id, err)
	}
	return nil
}

// checkForeign refuses an existing, non-empty directory (or any other file)
// at w's path.
func (w *Workspace) checkForeign() error {
	top, err := os.OpenRoot(w.m.root)
	if err != nil {
		return fmt.Errorf("workspace %s: %w", w.id, err)
	}
	defer top.Close()
	info, err := top.Lstat(w.id)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("workspace %s: %w", w.id, err)
	}
	foreign := !info.IsDir()
	if !foreign {
		d, err := top.Open(w.id)
		if err != nil {
			return fmt.Errorf("workspace %s: %w", w.id, err)
		}
		names, _ := d.Readdirnames(1)
		d.Close()
		foreign = len(names) > 0
	}
	if foreign {
		return fmt.Errorf("%w: %s exists, is not empty and has no workspace record in %s; pass a new or empty directory",
			ErrNotWorkspace, w.dir, w.m.metaRoot)
	}
	return nil
}

// touch records the workspace as used now (the used marker's mtime).
func (w *Workspace) touch() error {
	meta, err := w.m.openMeta()
	if err != nil {
		return err
	}
	defer meta.Close()
	if err := touchMeta(meta, metaPath(w.id, usedName)); err != nil {
		return fmt.Errorf("workspace %s: record use: %w", w.id, err)
	}
	return nil
}
