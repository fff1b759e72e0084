package registry

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/source"
)

// ErrNotFound is returned for a skill name that the snapshot (or the view
// of it a filter leaves) does not hold, and for a file that is not in a
// skill's manifest.
var ErrNotFound = errors.New("not found")

// ErrStale is returned when what a snapshot reads no longer matches what
// it listed or pinned: a skill's SKILL.md changed after discovery, a
// linked skill folder now leads elsewhere, or a listed file was removed,
// replaced, resized or rewritten after the snapshot listed or first read
// it. Registry.Refresh picks up the new content; the error names the file.
var ErrStale = errors.New("changed on disk; refresh the registry")

// ErrTooLarge is returned when a file is larger than the read cap.
var ErrTooLarge = errors.New("file too large")

// Filter decides, per request, whether a skill is visible. Filters see the
// request's context, so they can read tenant, user or role from it.
type Filter func(ctx context.Context, s skill.Summary) bool

// Shadowed is a skill that lost a same-name conflict.
type Shadowed struct {
	// Skill is the skill left out of the snapshot.
	Skill skill.Summary
	// By is the same-name skill that won (first in rank, source order
	// and folder order) and is listed instead.
	By skill.Summary
}

// Snapshot is an immutable view of the registry's skills. Listing and
// lookups touch no files. Content is read lazily and then pinned: a
// skill's body, its manifest (listed once), each file's SHA-256 (on its
// first full read) and each document's text (on its first DocText) never
// change for the life of the snapshot, and a later read whose bytes
// disagree with them fails with ErrStale instead of returning other
// content.
type Snapshot struct {
	reg      *Registry
	entries  []*entry // visible winners, sorted by name
	all      []*entry // every winner, sorted by name
	index    map[string]*entry
	shadowed []Shadowed
	diags    []skill.Diagnostic // found, then the shadowing warnings
	found    []skill.Diagnostic // what discovery reported

	// prev indexes every entry for the next Refresh, which reuses what
	// did not change.
	prev *refreshIndex

	// memo holds values derived from this view of the skills (a built
	// catalog, say); a View gets its own, since its skills differ.
	memo *sync.Map
}

// Memo returns the value cached under key for this snapshot (or view),
// building it with build on first use. Derived data — a rendered catalog,
// an index — then costs its build once per snapshot instead of once per
// request. Errors are not cached. key must be comparable; use an
// unexported type to avoid collisions between packages.
func (s *Snapshot) Memo(key any, build func() (any, error)) (any, error) {
	if v, ok := s.memo.Load(key); ok {
		return v, nil
	}
	v, err := build()
	if err != nil {
		return nil, err
	}
	actual, _ := s.memo.LoadOrStore(key, v)
	return actual, nil
}

// refreshIndex is what a Refresh needs of the snapshot it follows: what
// discovery found, per source by folder (to skip unchanged SKILL.md
// files), and the entry made of each (to keep its pinned content). Its
// maps are built by the first Refresh that asks: a registry read once
// and never refreshed, as by a one-shot command, does not pay for them.
type refreshIndex struct {
	once     sync.Once
	sources  int
	every    []*entry // winners and shadowed, in discovery order
	bySource []map[string]*source.Found
	byFound  map[*source.Found]*entry
}

// maps returns the index's maps, building them on first use.
func (x *refreshIndex) maps() ([]map[string]*source.Found, map[*source.Found]*entry) {
	x.once.Do(func() {
		counts := make([]int, x.sources)
		for _, e := range x.every {
			counts[e.srcIndex]++
		}
		x.bySource = make([]map[string]*source.Found, x.sources)
		for i := range x.bySource {
			x.bySource[i] = make(map[string]*source.Found, counts[i])
		}
		x.byFound = make(map[*source.Found]*entry, len(x.every))
		for _, e := range x.every {
			x.bySource[e.srcIndex][e.found.Dir] = e.found
			x.byFound[e.found] = e
		}
	})
	return x.bySource, x.byFound
}

// entry is one discovered skill and its lazily loaded content.
type entry struct {
	reg      *Registry
	srcIndex int
	src      source.Source
	found    *source.Found
	sum      skill.Summary
	// fsys is the skill folder (source.SkillFS): every read of the skill
	// goes through it, so host files are opened beneath the folder
	// without following links.
	fsys  fs.FS
	fsErr error

	body atomic.Pointer[string]
	// content is nil until the files are first listed (list).
	listMu  sync.Mutex
	content atomic.Pointer[content]
	// stale is set when a read found a listed file changed, so that
	// Refresh replaces the entry.
	stale atomic.Bool
	// folder is the skill folder's listing discovery took
	// (Options.ListFiles), until the first listing uses it or a Refresh
	// drops it.
	folder atomic.Pointer[source.Folder]
}

func newEntry(r *Registry, i int, src source.Source, f *source.Found) *entry {
	e := &entry{reg: r, srcIndex: i, src: src, found: f, sum: skill.Summary{
		Name: f.Front.Name, Description: f.Front.Description,
		ModelInvocable: !f.Front.DisableModelInvocation, UserInvocable: f.Front.UserInvocable,
		Source: src.Label, Rank: src.Rank, Dir: f.Dir, Path: src.HostPath(f.Dir),
	}}
	e.fsys, e.fsErr = src.SkillFS(f)
	return e
}

// stale marks an error that says the skill folder was replaced as ErrStale.
func stale(err error) error {
	if errors.Is(err, source.ErrReplaced) && !errors.Is(err, ErrStale) {
		return fmt.Errorf("%w: %w", ErrStale, err)
	}
	return err
}

// Len returns the number of visible skills.
func (s *Snapshot) Len() int { return len(s.entries) }

// Summaries returns the visible skills sorted by name (byte order). The
// slice is a fresh copy.
func (s *Snapshot) Summaries() []skill.Summary {
	out := make([]skill.Summary, len(s.entries))
	for i, e := range s.entries {
		out[i] = e.sum
	}
	return out
}

// Lookup returns the visible skill named name.
func (s *Snapshot) Lookup(name string) (skill.Summary, bool) {
	e := s.get(name)
	if e == nil {
		return skill.Summary{}, false
	}
	return e.sum, true
}

// Frontmatter returns the parsed header of the visible skill named name.
// The result is shared: do not modify it.
func (s *Snapshot) Frontmatter(name string) (*skill.Frontmatter, bool) {
	e := s.get(name)
	if e == nil {
		return nil, false
	}
	return e.found.Front, true
}

// SkillFile returns the display path of the skill's SKILL.md.
func (s *Snapshot) SkillFile(name string) (string, bool) {
	e := s.get(name)
	if e == nil {
		return "", false
	}
	return e.found.File, true
}

// FS returns the skill's folder as a file system (rooted at the skill):
// source.SkillFS, so that a host folder is read without following links.
func (s *Snapshot) FS(name string) (fs.FS, error) {
	e := s.get(name)
	if e == nil {
		return nil, notFound(name)
	}
	return e.fsys, e.fsErr
}

// Shadowed returns the skills that lost a same-name conflict.
func (s *Snapshot) Shadowed() []Shadowed { return append([]Shadowed(nil), s.shadowed...) }

// Diagnostics returns what discovery reported: skipped skills (errors),
// fixed-up ones (warnings) and shadowed ones.
func (s *Snapshot) Diagnostics() []skill.Diagnostic {
	return append([]skill.Diagnostic(nil), s.diags...)
}

// View returns the snapshot as seen by one request: skills that any filter
// rejects are hidden from every method of the returned snapshot. With no
// filters it returns s.
func (s *Snapshot) View(ctx context.Context, filters ...Filter) *Snapshot {
	if len(filters) == 0 {
		return s
	}
	v := *s
	v.memo = &sync.Map{}
	v.entries = make([]*entry, 0, len(s.entries))
	v.index = make(map[string]*entry, len(s.entries))
outer:
	for _, e := range s.entries {
		for _, f := range filters {
			if f != nil && !f(ctx, e.sum) {
				continue outer
			}
		}
		v.entries = append(v.entries, e)
		v.index[e.sum.Name] = e
	}
	return &v
}

func (s *Snapshot) get(name string) *entry { return s.index[name] }

func notFound(name string) error {
	return fmt.Errorf("skill %q: %w", name, ErrNotFound)
}

// Body returns the Markdown instructions of the named skill. The first
// call reads SKILL.md; later calls return the cached text.
func (s *Snapshot) Body(ctx context.Context, name string) (string, error) {
	e := s.get(name)
	if e == nil {
		return "", notFound(name)
	}
	if b := e.body.Load(); b != nil {
		return *b, nil
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if e.fsErr != nil {
		return "", fmt.Errorf("reading %s: %w", e.found.File, e.fsErr)
	}
	lim, _ := e.reg.opts.Limits.WithDefaults()
	// A SKILL.md that is a link inside the skill (discovery allows it) is
	// resolved, then read by its link-free path.
	file, err := skill.Resolve(e.fsys, ".", skill.FileName)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", e.found.File, stale(err))
	}
	data, err := readCapped(e.fsys, file, lim.MaxFileSize)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", e.found.File, stale(err))
	}
	// The body must belong to the header this snapshot lists: a file
	// edited since discovery is refused until the registry is refreshed.
	if maphash.Bytes(e.reg.seed, data) != e.found.Hash {
		return "", fmt.Errorf("%s changed since the skills were discovered: %w", e.found.File, ErrStale)
	}
	// DirName is the skill's name: a SKILL.md without a name field loaded
	// under its folder's name (for a root skill, the source's folder).
	doc, _, err := skill.Parse(data, skill.ParseOptions{File: e.found.File, MaxSize: lim.MaxFileSize, DirName: e.sum.Name})
	if err != nil {
		return "", fmt.Errorf("%w (the file changed since discovery; refresh the registry)", err)
	}
	// Surrounding blank lines are layout, not instructions; trimming them
	// keeps the rendered <skill_instructions> block tight.
	body := strings.TrimSpace(doc.Body)
	e.body.CompareAndSwap(nil, &body)
	return *e.body.Load(), nil
}

// Manifest returns the files of the named skill, listed on the first
// call and never again for this snapshot (a refreshed snapshot lists a
// changed skill anew). SHA256 is not set; see Digests. The result is
// shared: do not modify it.
func (s *Snapshot) Manifest(ctx context.Context, name string) (*skill.Manifest, []skill.Diagnostic, error) {
	e := s.get(name)
	if e == nil {
		return nil, nil, notFound(name)
	}
	c, err := e.list(ctx)
	if err != nil {
		return nil, nil, err
	}
	return c.m, c.diags, c.err
}

// ListAll lists the files of every visible skill whose files this
// snapshot has not listed yet, on the registry's worker pool
// (Options.Workers), as Manifest would one by one: afterwards Manifest,
// Docs and the other methods that need a skill's files start without
// listing it. A skill whose listing fails keeps its error, which Manifest
// returns; ListAll fails only when ctx ends (listings it cut short are not
// kept).
func (s *Snapshot) ListAll(ctx context.Context) error {
	var todo []*entry
	for _, e := range s.entries {
		if e.content.Load() == nil {
			todo = append(todo, e)
		}
	}
	s.reg.each(len(todo), func(i int) {
		if ctx.Err() == nil {
			todo[i].list(ctx)
		}
	})
	return ctx.Err()
}

// Docs returns the document paths (relative to the skill folder, sorted)
// of the named skill.
func (s *Snapshot) Docs(ctx context.Context, name string) ([]string, error) {
	m, _, err := s.Manifest(ctx, name)
	if err != nil {
		return nil, err
	}
	return m.Docs(), nil
}

// ReadFile returns one file of the named skill by its path relative to the
// skill folder, cleaned with CleanPath. The path must be in the skill's
// manifest, so it can never leave the skill folder (a path CleanPath
// refuses wraps both ErrInvalidPath and ErrNotFound); files over the read
// cap (Options.MaxReadBytes) fail with ErrTooLarge — Files serves them.
//
// The file is opened by the link-free path the listing resolved, beneath
// the skill folder (for a host folder, without following any link and
// with O_NONBLOCK), and must still be the regular file of the listed
// size, checked on the opened file before it is read. Its SHA-256 is
// pinned on the first read; a file that no longer has its listed size or
// its pinned digest fails with an error wrapping ErrStale.
func (s *Snapshot) ReadFile(ctx context.Context, name, rel string) ([]byte, error) {
	e := s.get(name)
	if e == nil {
		return nil, notFound(name)
	}
	p, err := CleanPath(rel)
	if err != nil {
		return nil, fmt.Errorf("file %q is not part of skill %q (%w): %w", rel, name, err, ErrNotFound)
	}
	c, err := e.manifest(ctx)
	if err != nil {
		return nil, err
	}
	f, ok := c.m.Lookup(p)
	if !ok {
		return nil, fmt.Errorf("file %q is not part of skill %q: %w", rel, name, ErrNotFound)
	}
	return e.readListed(c, f)
}

// readListed reads the listed file f whole, within the read cap.
func (e *entry) readListed(c *content, f skill.File) ([]byte, error) {
	if max := e.reg.opts.MaxReadBytes; f.Size > max {
		return nil, fmt.Errorf("file %q of skill %q is %d bytes, over the %d-byte read limit: %w", f.Path, e.sum.Name, f.Size, max, ErrTooLarge)
	}
	r, err := e.openListed(c, f)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	// One byte of room past the listed size, so the read that finds the
	// end needs no larger buffer.
	return readAll(r, make([]byte, 0, f.Size+1))
}

// openPath is the link-free path of a manifest file in the skill's file
// system.
func openPath(f skill.File) string {
	if f.Target != "" {
		return f.Target
	}
	return f.Path
}

// DocText returns the text of one document of the named skill (a path
// cleaned with CleanPath). The first call reads the file, as ReadFile
// does, and pins its text: later calls on this snapshot return that text
// without touching the file, even after it was edited.
func (s *Snapshot) DocText(ctx context.Context, name, doc string) (string, error) {
	e := s.get(name)
	if e == nil {
		return "", notFound(name)
	}
	p, err := CleanPath(doc)
	if err != nil {
		return "", fmt.Errorf("%q is not a document of skill %q (%w): %w", doc, name, err, ErrNotFound)
	}
	c, err := e.manifest(ctx)
	if err != nil {
		return "", err
	}
	if text, ok := c.pinned(&c.docs, p); ok {
		return text, nil
	}
	f, ok := c.m.Lookup(p)
	if !ok || !f.Doc {
		return "", fmt.Errorf("%q is not a document of skill %q: %w", doc, name, ErrNotFound)
	}
	data, err := e.readListed(c, f)
	if err != nil {
		return "", err
	}
	if !utf8.Valid(data) {
		return "", fmt.Errorf("document %s of skill %q is not valid UTF-8; read it with ReadFile", p, name)
	}
	return c.pin(&c.docs, p, string(data)), nil
}

// readCapped reads a whole regular file that must not exceed max bytes.
func readCapped(fsys fs.FS, name string, max int64) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%v)", name, info.Mode().Type())
	}
	data := make([]byte, 0, min(max+1, info.Size()+1))
	data, err = readAll(io.LimitReader(f, max+1), data)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s is over the %d-byte limit: %w", name, max, ErrTooLarge)
	}
	return data, nil
}

// readAll reads r to its end into b.
func readAll(r io.Reader, b []byte) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}
