package registry

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/source"
)

// ErrNotFound is returned for a skill name that the snapshot (or the view
// of it a filter leaves) does not hold, and for a file that is not in a
// skill's manifest.
var ErrNotFound = errors.New("not found")

// ErrStale is returned when a skill's SKILL.md changed on disk after the
// snapshot was taken, when a linked skill folder now leads elsewhere, and
// when a file changed between its listing and its read twice in a row;
// Registry.Refresh picks up the new content.
var ErrStale = errors.New("changed on disk; refresh the registry")

// ErrTooLarge is returned when a file is larger than the read cap.
var ErrTooLarge = errors.New("file too large")

// Filter decides, per request, whether a skill is visible. Filters see the
// request's context, so they can read tenant, user or role from it.
type Filter func(ctx context.Context, s skill.Summary) bool

// Shadowed is a skill that lost a same-name conflict.
type Shadowed struct {
	Skill skill.Summary
	By    skill.Summary
}

// Snapshot is an immutable view of the registry's skills. Listing and
// lookups touch no files; content methods read files once and cache what
// they read.
type Snapshot struct {
	reg      *Registry
	entries  []*entry // visible winners, sorted by name
	all      []*entry // every winner, sorted by name
	index    map[string]*entry
	shadowed []Shadowed
	diags    []skill.Diagnostic // found, then the shadowing warnings
	found    []skill.Diagnostic // what discovery reported

	bySource []map[string]*source.Found
	byFound  map[*source.Found]*entry

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

	body     atomic.Pointer[string]
	manifest struct {
		mu    sync.Mutex
		done  bool
		m     *skill.Manifest
		diags []skill.Diagnostic
		err   error
		// stamps are the modification times of the folders the listing
		// read; a change in any means files were added or removed.
		stamps []dirStamp
	}
	docMu sync.Mutex
	docs  map[string]docCache
}

type docCache struct {
	size int64
	mod  int64
	text string
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
	data, _, err := readCapped(e.fsys, file, lim.MaxFileSize, -1)
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

// Manifest returns the files of the named skill, listed on first use.
func (s *Snapshot) Manifest(ctx context.Context, name string) (*skill.Manifest, []skill.Diagnostic, error) {
	e := s.get(name)
	if e == nil {
		return nil, nil, notFound(name)
	}
	mc := &e.manifest
	mc.mu.Lock()
	defer mc.mu.Unlock()
	if !mc.done || !e.stampsCurrent(mc.stamps) {
		if e.fsErr != nil {
			return nil, nil, e.fsErr
		}
		m, diags, err := skill.ReadManifest(ctx, e.fsys, ".",
			skill.ManifestOptions{Limits: e.reg.opts.Limits, Label: e.src.DisplayPath(e.found.Dir)})
		if err != nil && ctx.Err() != nil {
			return nil, nil, err // a cancelled listing is not cached
		}
		mc.m, mc.diags, mc.err, mc.done = m, diags, stale(err), true
		mc.stamps = e.stampDirs(m)
	}
	return mc.m, mc.diags, mc.err
}

// relist drops the cached listing if it is still m, so that the next
// Manifest lists the skill again.
func (e *entry) relist(m *skill.Manifest) {
	mc := &e.manifest
	mc.mu.Lock()
	if mc.m == m {
		mc.done = false
	}
	mc.mu.Unlock()
}

// dirStamp records one folder's modification time.
type dirStamp struct {
	dir string
	mod time.Time
}

// stampDirs records the skill folder and every folder holding a file of
// the manifest, so a later call notices added or removed files without
// walking the skill again.
func (e *entry) stampDirs(m *skill.Manifest) []dirStamp {
	dirs := []string{"."}
	if m != nil {
		for _, f := range m.Files {
			if d := path.Dir(openPath(f)); !slices.Contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
	}
	out := make([]dirStamp, 0, len(dirs))
	for _, d := range dirs {
		info, err := fs.Stat(e.fsys, d)
		if err != nil {
			return nil // cannot tell: the next call lists again
		}
		out = append(out, dirStamp{dir: d, mod: info.ModTime()})
	}
	return out
}

// stampsCurrent reports whether no stamped folder changed. Sources
// without modification times (embedded files) never change.
func (e *entry) stampsCurrent(stamps []dirStamp) bool {
	if stamps == nil {
		return false
	}
	for _, st := range stamps {
		info, err := fs.Stat(e.fsys, st.dir)
		if err != nil || !info.ModTime().Equal(st.mod) {
			return false
		}
	}
	return true
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
// skill folder. The path must be in the skill's manifest, so it can never
// leave the skill folder; files over the read cap fail with ErrTooLarge.
//
// The file is opened by the link-free path the listing resolved, beneath
// the skill folder (for a host folder, without following any link and
// with O_NONBLOCK), and must still be the regular file of the listed
// size, checked on the opened file before it is read. A file that
// changed since it was listed makes ReadFile list the skill again and
// retry once; a second mismatch is an error wrapping ErrStale.
func (s *Snapshot) ReadFile(ctx context.Context, name, rel string) ([]byte, error) {
	data, _, err := s.readFile(ctx, name, rel)
	return data, err
}

// readFile is ReadFile, also returning the opened file's Stat.
func (s *Snapshot) readFile(ctx context.Context, name, rel string) ([]byte, fs.FileInfo, error) {
	e := s.get(name)
	if e == nil {
		return nil, nil, notFound(name)
	}
	clean := path.Clean(strings.TrimPrefix(rel, "./"))
	for try := 0; ; try++ {
		m, _, err := s.Manifest(ctx, name)
		if err != nil {
			return nil, nil, err
		}
		f, ok := m.Lookup(clean)
		if !ok || !fs.ValidPath(clean) {
			return nil, nil, fmt.Errorf("file %q is not part of skill %q: %w", rel, name, ErrNotFound)
		}
		if f.Size > e.reg.opts.MaxReadBytes {
			return nil, nil, fmt.Errorf("file %q of skill %q is %d bytes, over the %d-byte read limit: %w", clean, name, f.Size, e.reg.opts.MaxReadBytes, ErrTooLarge)
		}
		data, info, err := readCapped(e.fsys, openPath(f), e.reg.opts.MaxReadBytes, f.Size)
		if err == nil {
			return data, info, nil
		}
		if !errors.Is(err, ErrTooLarge) && ctx.Err() == nil {
			// Edited, removed or replaced (by a link, say) since the
			// listing: list the skill again and retry, once.
			e.relist(m)
			if try == 0 {
				continue
			}
			if errors.Is(err, skill.ErrChanged) {
				err = fmt.Errorf("%w: %w", ErrStale, err)
			}
		}
		return nil, nil, fmt.Errorf("reading %s of skill %q: %w", clean, name, stale(err))
	}
}

// openPath is the link-free path of a manifest file in the skill's file
// system.
func openPath(f skill.File) string {
	if f.Target != "" {
		return f.Target
	}
	return f.Path
}

// DocText returns the text of one document of the named skill. The text
// is cached and served again while the file's size and modification time
// are unchanged.
func (s *Snapshot) DocText(ctx context.Context, name, doc string) (string, error) {
	e := s.get(name)
	if e == nil {
		return "", notFound(name)
	}
	m, _, err := s.Manifest(ctx, name)
	if err != nil {
		return "", err
	}
	f, ok := m.Lookup(doc)
	if !ok || !f.Doc {
		return "", fmt.Errorf("%q is not a document of skill %q: %w", doc, name, ErrNotFound)
	}
	// The stat only says whether the cached text is still current; the
	// text itself is read by ReadFile, and cached under that read's own
	// stat.
	if info, err := fs.Stat(e.fsys, openPath(f)); err == nil {
		e.docMu.Lock()
		c, ok := e.docs[doc]
		e.docMu.Unlock()
		if ok && c.size == info.Size() && c.mod == info.ModTime().UnixNano() {
			return c.text, nil
		}
	}
	data, info, err := s.readFile(ctx, name, doc)
	if err != nil {
		return "", err
	}
	if !utf8.Valid(data) {
		return "", fmt.Errorf("document %s of skill %q is not valid UTF-8", doc, name)
	}
	key := docCache{size: info.Size(), mod: info.ModTime().UnixNano(), text: string(data)}
	e.docMu.Lock()
	if e.docs == nil {
		e.docs = map[string]docCache{}
	}
	e.docs[doc] = key
	e.docMu.Unlock()
	return key.text, nil
}

// readCapped reads a whole file that must not exceed max bytes. With
// listed >= 0 the file opened must be a regular file of that size by its
// own Stat (skill.CheckListed), checked before it is read, and must yield
// exactly that many bytes. It returns the opened file's Stat.
func readCapped(fsys fs.FS, name string, max, listed int64) ([]byte, fs.FileInfo, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if listed >= 0 {
		if err := skill.CheckListed(f, listed); err != nil {
			return nil, nil, err
		}
	} else if !info.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s is not a regular file (%v)", name, info.Mode().Type())
	}
	size := max + 1
	if listed >= 0 {
		size = min(size, listed+1)
	}
	data := make([]byte, 0, min(size, info.Size()+1))
	data, err = readAll(io.LimitReader(f, size), data)
	if err != nil {
		return nil, nil, err
	}
	if int64(len(data)) > max {
		return nil, nil, fmt.Errorf("%s is over the %d-byte limit: %w", name, max, ErrTooLarge)
	}
	if listed >= 0 && int64(len(data)) != listed {
		return nil, nil, fmt.Errorf("%d bytes listed, %d read: %w", listed, len(data), skill.ErrChanged)
	}
	return data, info, nil
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
