// Package watch keeps a registry current while agents run: it watches the
// folders of every local skill root (fsnotify: inotify on Linux), and a
// short while after the last change (the debounce, 250 ms by default) it
// refreshes the registry, which makes a new snapshot when a skill was
// added, changed or removed. Conversations then append a replacement
// catalog on their next request (the first is never edited, so the
// provider's prompt cache survives), and an MCP server tells its clients.
//
// A root that disappears is reported (the registry's diagnostic, and
// Options.OnError) and its skills withdrawn; when it comes back it is
// watched again. Roots without a host path (embedded files, archives,
// remote servers) are not watched.
package watch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/source"
)

// Defaults of Options.
const (
	// DefaultDebounce is how long the watcher waits after the last change
	// before it refreshes: an editor's save or a checkout is many events.
	DefaultDebounce = 250 * time.Millisecond
	// DefaultMaxWatches bounds the folders watched; past it the watcher
	// reports an error and the caller should poll instead.
	DefaultMaxWatches = 8192
	// rescanEvery is how often a missing root is looked for.
	rescanEvery = time.Second
)

// ErrTooManyFolders is reported when the roots hold more folders than
// Options.MaxWatches.
var ErrTooManyFolders = errors.New("too many folders to watch")

// Options configure a Watcher; nil means defaults.
type Options struct {
	// Debounce is the quiet time after a change before the refresh; 0 is
	// DefaultDebounce.
	Debounce time.Duration
	// MaxWatches bounds the folders watched; 0 is DefaultMaxWatches.
	MaxWatches int
	// OnChange is called, from the watcher's goroutine, with each new
	// snapshot a refresh made.
	OnChange func(ctx context.Context, snap *registry.Snapshot)
	// OnError is called with what went wrong: a refresh that failed, a
	// root that disappeared, a folder that could not be watched.
	OnError func(error)
}

// Watcher watches the local roots of one registry until Close.
type Watcher struct {
	reg   *registry.Registry
	o     Options
	fw    *fsnotify.Watcher
	roots []root

	mu      sync.Mutex // guards watched, missing and links
	watched map[string]bool
	missing map[string]bool
	// links maps each root that is a symbolic link to the folder it led
	// to when last followed.
	links map[string]string

	cancel context.CancelFunc
	done   chan struct{}
}

// root is one local root and how deep its skills are searched.
type root struct {
	path  string
	depth int
}

// Start watches every local root of reg and refreshes reg after changes,
// until Close or ctx ends.
func Start(ctx context.Context, reg *registry.Registry, opts *Options) (*Watcher, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Debounce <= 0 {
		o.Debounce = DefaultDebounce
	}
	if o.MaxWatches <= 0 {
		o.MaxWatches = DefaultMaxWatches
	}
	if o.OnError == nil {
		o.OnError = func(error) {}
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	w := &Watcher{reg: reg, o: o, fw: fw, watched: map[string]bool{}, missing: map[string]bool{}, links: map[string]string{}, done: make(chan struct{})}
	for _, src := range reg.Sources() {
		if src.Path == "" {
			continue
		}
		depth := src.MaxDepth
		if depth == 0 {
			depth = source.DefaultMaxDepth
		}
		w.roots = append(w.roots, root{path: src.Path, depth: depth})
	}
	for _, r := range w.roots {
		if err := w.watchRoot(r.path); err != nil {
			if errors.Is(err, ErrTooManyFolders) {
				_ = fw.Close()
				return nil, err
			}
			o.OnError(err)
		}
	}
	ctx, w.cancel = context.WithCancel(ctx)
	go w.loop(ctx)
	return w, nil
}

// Roots returns the host folders watched, as the registry names them.
func (w *Watcher) Roots() []string {
	out := make([]string, len(w.roots))
	for i, r := range w.roots {
		out[i] = r.path
	}
	return out
}

// Close stops watching and waits for a refresh in progress.
func (w *Watcher) Close() error {
	w.cancel()
	<-w.done
	return w.fw.Close()
}

// watchRoot watches a root; a root that is a link (an atomic deploy's
// "current") is watched where it leads, and its folder is watched for the
// link being replaced.
func (w *Watcher) watchRoot(root string) error {
	fi, err := os.Lstat(root)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return w.addTree(root)
	}
	parent := filepath.Dir(root)
	w.mu.Lock()
	w.links[root] = ""
	known := w.watched[parent]
	w.mu.Unlock()
	if !known {
		if err := w.fw.Add(parent); err != nil {
			return fmt.Errorf("watch: %s: %w", parent, err)
		}
		w.mu.Lock()
		w.watched[parent] = true
		w.mu.Unlock()
	}
	return w.followLink(root)
}

// followLink watches the folder the root link leads to now, forgetting
// the one it led to before.
func (w *Watcher) followLink(root string) error {
	target, err := filepath.EvalSymlinks(root)
	if err != nil {
		w.setMissing(root, true)
		return fmt.Errorf("watch: skill root %s leads nowhere (%v); its skills are withdrawn until it is back", root, err)
	}
	w.mu.Lock()
	old := w.links[root]
	w.links[root] = target
	w.mu.Unlock()
	if old != "" && old != target {
		w.forget(old)
	}
	return w.addTree(target)
}

// forget stops watching dir and the folders below it.
func (w *Watcher) forget(dir string) {
	w.mu.Lock()
	var gone []string
	for p := range w.watched {
		if p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)) {
			delete(w.watched, p)
			gone = append(gone, p)
		}
	}
	w.mu.Unlock()
	for _, p := range gone {
		_ = w.fw.Remove(p)
	}
}

// addTree watches dir and every folder below it, without following
// links (a linked skill folder is watched at its link, which is what
// discovery reads through). A missing root is remembered and looked for
// again.
func (w *Watcher) addTree(dir string) error {
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir && errors.Is(err, fs.ErrNotExist) {
				w.setMissing(dir, true)
				return fmt.Errorf("watch: skill root %s is missing; its skills are withdrawn until it is back", dir)
			}
			return nil // a folder that vanished or cannot be read
		}
		if d.Type()&fs.ModeSymlink != 0 {
			// Discovery reads a linked skill folder through its link:
			// watch where it leads (the watched set stops loops).
			if target, err := filepath.EvalSymlinks(p); err == nil {
				if fi, err := os.Stat(target); err == nil && fi.IsDir() {
					return w.addTree(target)
				}
			}
			return nil
		}
		if !d.IsDir() {
			return nil
		}
		if p != dir && strings.HasPrefix(d.Name(), ".") && d.Name() != ".agents" {
			return fs.SkipDir // .git and the like change often and hold no skills
		}
		w.mu.Lock()
		seen, n := w.watched[p], len(w.watched)
		w.mu.Unlock()
		if seen {
			return nil
		}
		if n >= w.o.MaxWatches {
			return fmt.Errorf("watch: %w: more than %d under %s", ErrTooManyFolders, w.o.MaxWatches, dir)
		}
		if err := w.fw.Add(p); err != nil {
			return fmt.Errorf("watch: %s: %w", p, err)
		}
		w.mu.Lock()
		w.watched[p] = true
		w.mu.Unlock()
		return nil
	})
	if err == nil {
		w.setMissing(dir, false)
	}
	return err
}

func (w *Watcher) setMissing(dir string, missing bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if missing {
		w.missing[dir] = true
	} else {
		delete(w.missing, dir)
	}
}

// loop debounces events into refreshes.
func (w *Watcher) loop(ctx context.Context) {
	defer close(w.done)
	debounce := time.NewTimer(time.Hour)
	debounce.Stop()
	rescan := time.NewTicker(rescanEvery)
	defer rescan.Stop()
	last := w.reg.Snapshot()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			w.event(ev)
			debounce.Reset(w.o.Debounce)
		case err, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			w.o.OnError(fmt.Errorf("watch: %w", err))
			debounce.Reset(w.o.Debounce) // an overflow loses events: refresh anyway
		case <-rescan.C:
			if w.findMissing() {
				debounce.Reset(w.o.Debounce)
			}
		case <-debounce.C:
			snap, err := w.reg.Refresh(ctx)
			if err != nil {
				if ctx.Err() == nil {
					w.o.OnError(fmt.Errorf("watch: refreshing the skills: %w", err))
				}
				continue
			}
			if snap != last {
				last = snap
				if w.o.OnChange != nil {
					w.o.OnChange(ctx, snap)
				}
			}
		}
	}
}

// event watches new folders and notices roots that went away.
func (w *Watcher) event(ev fsnotify.Event) {
	w.mu.Lock()
	_, isLink := w.links[ev.Name]
	w.mu.Unlock()
	if isLink {
		// The root link was replaced (or removed, or made again).
		if err := w.followLink(ev.Name); err != nil {
			w.o.OnError(err)
		} else {
			w.setMissing(ev.Name, false)
		}
		return
	}
	switch {
	case ev.Has(fsnotify.Create):
		if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
			if err := w.addTree(ev.Name); err != nil {
				w.o.OnError(err)
			}
		}
	case ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename):
		// A folder that goes is forgotten with the folders below it: the
		// kernel drops their watches when they are deleted, and they are
		// removed here when they are renamed away (the kernel keeps those).
		w.forget(ev.Name)
		for _, r := range w.roots {
			if ev.Name == r.path {
				w.setMissing(r.path, true)
				w.o.OnError(fmt.Errorf("watch: skill root %s was removed; its skills are withdrawn until it is back", r.path))
			}
		}
	}
}

// findMissing watches the missing roots that exist again and reports
// whether one came back.
func (w *Watcher) findMissing() bool {
	w.mu.Lock()
	var dirs []string
	for d := range w.missing {
		dirs = append(dirs, d)
	}
	w.mu.Unlock()
	back := false
	for _, d := range dirs {
		if _, err := os.Stat(d); err == nil {
			if err := w.watchRoot(d); err == nil {
				w.setMissing(d, false)
				back = true
			}
		}
	}
	return back
}
