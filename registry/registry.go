// Package registry merges ordered skill sources into one set of skills and
// hands out immutable snapshots of it.
//
// Listing and catalog rendering work on a Snapshot and touch no files.
// Bodies, manifests and documents load lazily on first use and are cached;
// Refresh re-reads only the SKILL.md files that changed. When two sources
// hold a skill of the same name, the one from the lower rank wins and the
// other is reported as shadowed, never silently dropped. Per-request
// visibility filters hide a skill from every view of a snapshot at once.
//
// Every read of a skill goes through its source's SkillFS: for a host
// folder, files are opened beneath the skill folder without following
// symbolic links, and a file read must still be the regular file of the
// size its listing recorded, so a file swapped for a link or a FIFO is
// refused instead of read.
package registry

import (
	"context"
	"fmt"
	"hash/maphash"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/source"
)

// Options adjusts a Registry. A nil *Options means the defaults.
type Options struct {
	// Limits bounds each skill (SKILL.md size, files, bytes).
	Limits skill.Limits
	// Workers is the number of folders read in parallel during discovery;
	// 0 means twice GOMAXPROCS.
	Workers int
	// MaxReadBytes caps what ReadFile and DocText return for one file;
	// 0 means DefaultMaxReadBytes.
	MaxReadBytes int64
}

// DefaultMaxReadBytes is the default cap on one file read through a
// snapshot (ReadFile, DocText).
const DefaultMaxReadBytes = 256 << 10

// Registry is a set of skill sources and the current snapshot of the
// skills they hold. It is safe for concurrent use.
type Registry struct {
	sources []source.Source
	opts    Options
	seed    maphash.Seed

	refresh sync.Mutex // serializes discoveries
	snap    atomic.Pointer[Snapshot]
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
// again, and its skill keeps its cached body, manifest and documents.
func (r *Registry) Refresh(ctx context.Context) (*Snapshot, error) {
	r.refresh.Lock()
	defer r.refresh.Unlock()
	old := r.snap.Load()
	var all []*entry
	var diags []skill.Diagnostic
	same := old != nil // nothing changed so far
	for i, src := range r.sources {
		var prev map[string]*source.Found
		var prevEntries map[*source.Found]*entry
		if old != nil {
			prev = old.bySource[i]
			prevEntries = old.byFound
		}
		res, err := source.Discover(ctx, src, source.Options{Limits: r.opts.Limits, Workers: r.opts.Workers, Previous: prev, Seed: r.seed})
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
		for _, f := range res.Skills {
			if e := prevEntries[f]; e != nil {
				all = append(all, e)
				continue
			}
			all = append(all, newEntry(r, i, src, f))
		}
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

// build ranks the entries: per name, the first in (rank, source order,
// folder) order wins and the rest are shadowed by it.
func build(r *Registry, all []*entry, diags []skill.Diagnostic) *Snapshot {
	s := &Snapshot{reg: r, memo: &sync.Map{}, index: make(map[string]*entry, len(all)), found: diags, diags: slices.Clip(diags),
		bySource: make([]map[string]*source.Found, len(r.sources)), byFound: make(map[*source.Found]*entry, len(all))}
	for i := range s.bySource {
		s.bySource[i] = map[string]*source.Found{}
	}
	for _, e := range all {
		s.bySource[e.srcIndex][e.found.Dir] = e.found
		s.byFound[e.found] = e
		if w, ok := s.index[e.sum.Name]; ok {
			s.shadowed = append(s.shadowed, Shadowed{Skill: e.sum, By: w.sum})
			s.diags = append(s.diags, skill.Diagnostic{File: e.found.File, Severity: skill.Warning, Field: skill.FieldName,
				Message: fmt.Sprintf("skill %q is shadowed by the one in %s (source %q wins on rank); rename one of them to use both", e.sum.Name, w.found.File, w.sum.Source)})
			continue
		}
		s.index[e.sum.Name] = e
		s.entries = append(s.entries, e)
	}
	sort.Slice(s.entries, func(i, j int) bool { return s.entries[i].sum.Name < s.entries[j].sum.Name })
	s.all = s.entries
	return s
}
