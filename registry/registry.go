// Package registry merges ordered skill sources into one set of skills and
// hands out immutable snapshots of it.
//
// Listing and catalog rendering work on a Snapshot and touch no files.
// Bodies, manifests and documents load lazily on first use and are then
// pinned: a snapshot is a value, so a document edited in the middle of a
// turn cannot change what an earlier tool result showed, and a file that
// no longer matches what the snapshot listed or first read fails with
// ErrStale. Digests gives every file's SHA-256 (computed once per
// snapshot), Files one skill as an fs.FS confined to its manifest,
// ListedFS the skill's folder narrowed to its manifest (what a workspace
// stages), ListAll every skill's files listed at once, and CleanPath and
// ResolveDocs the one rule for paths and document names. A skill over
// the per-skill limits (Options.Limits) keeps the files met first, the
// same for every method, and its manifest says it was truncated.
// Refresh re-reads only the SKILL.md files that changed, and replaces a
// skill whose pinned files changed on disk so the new snapshot reads them
// anew. When two sources hold a skill of the same name, the one from the
// lower rank wins and the other is reported as shadowed, never silently
// dropped. Per-request visibility filters hide a skill from every view of
// a snapshot at once.
//
// Every read of a skill goes through its source's SkillFS: for a host
// folder, files are opened beneath the skill folder without following
// symbolic links, and a file read must still be the regular file of the
// size its listing recorded, so a file swapped for a link or a FIFO is
// refused instead of read.
package registry

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/source"
)

// Options adjusts a Registry. A nil *Options means the defaults.
type Options struct {
	// Limits bounds each skill (SKILL.md size, files, bytes). A skill
	// over the files or bytes limit keeps the files met first, up to the
	// limit: its manifest is truncated (skill.Manifest.Truncated) for
	// every method of a snapshot, with one warning among the manifest's
	// diagnostics.
	Limits skill.Limits
	// LimitNames names, in that warning, the settings that raise the
	// limits; empty names mean these fields ("registry.Options.Limits.MaxFiles").
	// A command line puts its flags here.
	LimitNames skill.LimitNames
	// Workers is the number of folders read in parallel during discovery
	// (and of listed skills Refresh checks in parallel); 0 means twice
	// GOMAXPROCS.
	Workers int
	// ListFiles has discovery list each skill folder of a host source as
	// it reads the SKILL.md (source.Options.ListFolders), for a caller
	// that lists every skill's files right after (ListAll, as `skillkit
	// list` does): a skill's top folder is then read once, and its
	// listing costs no further system call. The listing describes the
	// folder at that discovery; a skill still unlisted when the registry
	// is refreshed is listed from its folder again.
	ListFiles bool
	// MaxReadBytes caps what ReadFile and DocText return for one file;
	// 0 means DefaultMaxReadBytes. Files and Digests read any listed file
	// (Limits bounds those).
	MaxReadBytes int64
}

// DefaultMaxReadBytes is the default cap on one file read whole through a
// snapshot (ReadFile, DocText).
const DefaultMaxReadBytes = 256 << 10

// Registry is a set of skill sources and the current snapshot of the
// skills they hold. It is safe for concurrent use.
type Registry struct {
	sources []source.Source
	opts    Options
	seed    maphash.Seed

	refresh sync.Mutex // serializes discoveries
	// refreshes counts the discoveries started (under refresh), for Renew.
	refreshes atomic.Int64
	snap      atomic.Pointer[Snapshot]
}

// New discovers the skills of sources and returns a registry holding the
// first snapshot. Sources are ranked by their Rank field; equal ranks keep
// the order given.
func New(ctx context.Context, sources []source.Source, opts *Options) (*Registry, error) {
	r := &Registry{seed: maphash.MakeSeed()}
	if opts != nil {
		r.opts = *opts
	}
	if _, err := r.opts.Limits.WithDefaults(); err != nil {
		return nil, err
	}
	if r.opts.Workers < 0 {
		return nil, fmt.Errorf("registry: Options.Workers is %d; use 0 for the default or a positive count", r.opts.Workers)
	}
	if r.opts.MaxReadBytes < 0 {
		return nil, fmt.Errorf("registry: Options.MaxReadBytes is %d; use 0 for the default or a positive byte count", r.opts.MaxReadBytes)
	}
	if r.opts.MaxReadBytes == 0 {
		r.opts.MaxReadBytes = DefaultMaxReadBytes
	}
	if r.opts.LimitNames.MaxFiles == "" {
		r.opts.LimitNames.MaxFiles = "registry.Options.Limits.MaxFiles"
	}
	if r.opts.LimitNames.MaxBytes == "" {
		r.opts.LimitNames.MaxBytes = "registry.Options.Limits.MaxBytes"
	}
	for _, src := range sources {
		// Configuration mistakes fail here; a root that cannot be read
		// later (deleted, unmounted) is reported by Refresh instead.
		if src.FS == nil {
			return nil, fmt.Errorf("source %q has no file system", src.Label)
		}
		if src.MaxDepth < 0 {
			return nil, fmt.Errorf("source %q: MaxDepth is %d; use 0 for the default (%d) or a positive depth", src.Label, src.MaxDepth, source.DefaultMaxDepth)
		}
	}
	r.sources = append([]source.Source(nil), sources...)
	sort.SliceStable(r.sources, func(i, j int) bool { return r.sources[i].Rank < r.sources[j].Rank })
	if _, err := r.Refresh(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// Sources returns the registry's sources in rank order.
func (r *Registry) Sources() []source.Source { return append([]source.Source(nil), r.sources...) }

// Snapshot returns the current snapshot. It never blocks on discovery.
func (r *Registry) Snapshot() *Snapshot { return r.snap.Load() }

// Refresh discovers the sources again and installs a new snapshot. A
// SKILL.md whose size and modification time did not change is not read
// again, and its skill keeps its cached body. A skill whose files the
// current snapshot listed is checked too (only those are stat'ed): when a
// listed file's size or modification time, or a listed folder's
// modification time, changed — or a read already found a file changed —
// the new snapshot gets a fresh entry that lists and reads the skill
// anew; otherwise it keeps the pinned manifest, digests and documents.
// Earlier snapshots keep serving what they pinned.
func (r *Registry) Refresh(ctx context.Context) (*Snapshot, error) {
	r.refresh.Lock()
	defer r.refresh.Unlock()
	return r.refreshLocked(ctx)
}

// Renew returns a snapshot made after stale (a snapshot of r, or a View of
// one) for a caller whose read of stale failed with ErrStale: the current
// snapshot when a refresh has installed one since, else that of a
// refresh made now. Callers that find stale content at once share one
// refresh instead of each making their own.
func (r *Registry) Renew(ctx context.Context, stale *Snapshot) (*Snapshot, error) {
	// A refresh that starts after this call did looks at the files as
	// they are after the read that failed: its snapshot will do.
	asked := r.refreshes.Load()
	r.refresh.Lock()
	defer r.refresh.Unlock()
	if cur := r.snap.Load(); cur != nil && r.refreshes.Load() > asked && (stale == nil || cur.prev != stale.prev) {
		return cur, nil
	}
	return r.refreshLocked(ctx)
}

// refreshLocked is Refresh with r.refresh held.
func (r *Registry) refreshLocked(ctx context.Context) (*Snapshot, error) {
	r.refreshes.Add(1)
	old := r.snap.Load()
	var all []*entry
	var diags []skill.Diagnostic
	same := old != nil // nothing changed so far
	var prevBySource []map[string]*source.Found
	var prevEntries map[*source.Found]*entry
	if old != nil {
		prevBySource, prevEntries = old.prev.maps()
	}
	for i, src := range r.sources {
		var prev map[string]*source.Found
		if old != nil {
			prev = prevBySource[i]
		}
		res, err := source.Discover(ctx, src, source.Options{Limits: r.opts.Limits, Workers: r.opts.Workers, Previous: prev, Seed: r.seed, ListFolders: r.opts.ListFiles})
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			// One unreadable root (deleted, unmounted) must not hide the
			// skills of the others: it contributes nothing and says why.
			diags = append(diags, skill.Diagnostic{File: src.DisplayPath("."), Severity: skill.Error,
				Message: fmt.Sprintf("skill root skipped: %v", err)})
			same = false
			continue
		}
		diags = append(diags, res.Diagnostics...)
		same = same && res.Reused == len(res.Skills) && len(res.Skills) == len(prev)
		entries := make([]*entry, len(res.Skills))
		var fresh []int // of the skills discovered anew
		for j, f := range res.Skills {
			if e := prevEntries[f]; e != nil {
				// Its folder's listing, if discovery took one, is of an
				// earlier discovery: list the folder itself.
				e.folder.Store(nil)
				entries[j] = e
				continue
			}
			fresh = append(fresh, j)
		}
		// Entries are made on the worker pool: ten thousand of them cost
		// a few milliseconds each discovery would otherwise wait for.
		r.each(len(fresh), func(k int) {
			f := res.Skills[fresh[k]]
			e := newEntry(r, i, src, f)
			if f.Folder != nil {
				e.folder.Store(f.Folder)
			}
			entries[fresh[k]] = e
		})
		all = append(all, entries...)
	}
	if r.renewChanged(all) {
		same = false
	}
	// When every skill was reused and discovery reported the same
	// problems, the current snapshot is still exact: keep it rather than
	// rebuild its indexes.
	if same && slices.Equal(diags, old.found) {
		return old, nil
	}
	s := build(r, all, diags)
	r.snap.Store(s)
	return s, nil
}

// renewChanged replaces, in all, every reused entry whose pinned content
// may be out of date (entry.changed) by a fresh entry that lists and
// reads the skill anew, keeping only its body (which discovery vouched
// for). Entries are checked on the discovery worker pool. It reports
// whether it replaced any.
func (r *Registry) renewChanged(all []*entry) bool {
	var pinned []int
	for i, e := range all {
		if e.content.Load() != nil {
			pinned = append(pinned, i)
		}
	}
	if len(pinned) == 0 {
		return false
	}
	changed := make([]bool, len(pinned))
	r.each(len(pinned), func(j int) { changed[j] = all[pinned[j]].changed() })
	renewed := false
	for j, i := range pinned {
		if !changed[j] {
			continue
		}
		old := all[i]
		e := newEntry(r, old.srcIndex, old.src, old.found)
		if b := old.body.Load(); b != nil {
			e.body.Store(b)
		}
		all[i], renewed = e, true
	}
	return renewed
}

// workers is the size of the worker pool (Options.Workers).
func (r *Registry) workers() int {
	if r.opts.Workers > 0 {
		return r.opts.Workers
	}
	return 2 * runtime.GOMAXPROCS(0)
}

// each calls fn for 0..n-1 on the worker pool and returns when every call
// has returned.
func (r *Registry) each(n int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(r.workers(), n) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(i)
			}
		})
	}
	wg.Wait()
}

// build ranks the entries: per name, the first in (rank, source order,
// folder) order wins and the rest are shadowed by it.
func build(r *Registry, all []*entry, diags []skill.Diagnostic) *Snapshot {
	s := &Snapshot{reg: r, memo: &sync.Map{}, index: make(map[string]*entry, len(all)), found: diags, diags: slices.Clip(diags),
		prev: &refreshIndex{sources: len(r.sources), every: all}, entries: make([]*entry, 0, len(all))}
	for _, e := range all {
		if w, ok := s.index[e.sum.Name]; ok {
			s.shadowed = append(s.shadowed, Shadowed{Skill: e.sum, By: w.sum})
			s.diags = append(s.diags, skill.Diagnostic{File: e.found.File, Severity: skill.Warning, Field: skill.FieldName,
				Message: fmt.Sprintf("skill %q is shadowed by the one in %s (source %q wins on rank); rename one of them to use both", e.sum.Name, w.found.File, w.sum.Source)})
			continue
		}
		s.index[e.sum.Name] = e
		s.entries = append(s.entries, e)
	}
	// Folders are found in name order, and a skill's name is most often
	// its folder's: the entries are then sorted already.
	byName := func(a, b *entry) int { return strings.Compare(a.sum.Name, b.sum.Name) }
	if !slices.IsSortedFunc(s.entries, byName) {
		slices.SortFunc(s.entries, byName)
	}
	s.all = s.entries
	return s
}

// StaleRetries is how many renewed snapshots Retry tries after a read
// found a skill's files changed on disk.
const StaleRetries = 3

// Retry runs fn on snap and, while fn's error wraps ErrStale (a skill's
// files changed on disk since the snapshot was taken, as when they are
// being saved), again on the snapshot renew returns for the stale one,
// up to StaleRetries times. It returns fn's last result; a nil renew, or
// one that fails, ends the retries there. renew is typically
// Registry.Renew, with the caller's filters applied to its result.
func Retry[T any](ctx context.Context, snap *Snapshot, renew func(ctx context.Context, stale *Snapshot) (*Snapshot, error), fn func(*Snapshot) (T, error)) (T, error) {
	v, err := fn(snap)
	for range StaleRetries {
		if !errors.Is(err, ErrStale) || renew == nil {
			break
		}
		fresh, rerr := renew(ctx, snap)
		if rerr != nil || fresh == nil {
			break
		}
		snap = fresh
		v, err = fn(snap)
	}
	return v, err
}
