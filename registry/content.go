package registry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/source"
)

// Digests returns a copy of the named skill's manifest with SHA256 (lower
// case hex) set for every file, the digests a server publishing the
// skill's files announces. They are computed once per snapshot, on the
// first call: a file whose digest an earlier read pinned is not read
// again, every other file is read once and its digest pinned, so later
// reads of it are checked against it. Concurrent callers share one
// computation; one cancelled by its caller's context is not kept, and a
// caller still waiting takes it over. A file that no longer matches its
// listing fails with an error wrapping ErrStale.
func (s *Snapshot) Digests(ctx context.Context, name string) (*skill.Manifest, error) {
	e, c, err := s.listed(ctx, name)
	if err != nil {
		return nil, err
	}
	m, err := c.digests.do(ctx, func() (*skill.Manifest, error) { return e.digest(ctx, c) })
	if err != nil {
		return nil, err
	}
	return &skill.Manifest{Files: slices.Clone(m.Files), Bytes: m.Bytes, Truncated: m.Truncated, Skipped: m.Skipped}, nil
}

// content is what an entry pins once its files are listed: the listing
// itself, each file's digest on its first full read, each document's
// text, and what Refresh compares to tell whether the files changed.
type content struct {
	m     *skill.Manifest
	diags []skill.Diagnostic
	err   error
	// stamps are the sizes and modification times of the listed files
	// and folders when they were listed. exact is false when they cannot
	// tell a later change apart (a listing error, an unreadable time, or
	// a time too close to the listing for the file system's clock), and
	// Refresh then always replaces the entry.
	stamps []stamp
	exact  bool

	mu   sync.Mutex
	sums map[string]string // by manifest path; nil until the first pin
	docs map[string]string // by manifest path; nil until the first pin

	digests flight
	tree    sync.Once
	files   *tree
}

// stamp records one listed file (size >= 0) or folder (size -1) by its
// path in the skill's file system.
type stamp struct {
	path string
	size int64
	mod  time.Time
}

// racyWindow is how close to the start of a listing a modification time
// may be before the stamp is not trusted: a file written in the same
// clock tick as its stamp (file systems keep times to a second or two at
// worst) could change again without its time moving.
const racyWindow = 2 * time.Second

// list returns the entry's pinned content, listing the skill's files on
// the first call. A listing cancelled by ctx is not kept.
func (e *entry) list(ctx context.Context) (*content, error) {
	if c := e.content.Load(); c != nil {
		return c, nil
	}
	e.listMu.Lock()
	defer e.listMu.Unlock()
	if c := e.content.Load(); c != nil {
		return c, nil
	}
	if e.fsErr != nil {
		return nil, e.fsErr
	}
	rec := &recordFS{fsys: e.fsys, top: e.folder.Swap(nil)}
	label := e.sum.Path // the host folder, as DisplayPath names it
	if label == "" {
		label = e.src.DisplayPath(e.found.Dir)
	}
	start := time.Now()
	if rec.top != nil {
		start = rec.top.Listed
	}
	m, diags, err := skill.ReadManifest(ctx, rec, ".",
		skill.ManifestOptions{Limits: e.reg.opts.Limits, Label: label, LimitNames: e.reg.opts.LimitNames, Listed: rec.listed})
	if err != nil && ctx.Err() != nil {
		return nil, err
	}
	c := &content{m: m, diags: diags, err: stale(err)}
	if err == nil {
		c.stamps, c.exact = rec.stamps(start.Add(-racyWindow))
	}
	e.content.Store(c)
	return c, nil
}

// listed returns the entry of the named skill and its listed content.
func (s *Snapshot) listed(ctx context.Context, name string) (*entry, *content, error) {
	e := s.get(name)
	if e == nil {
		return nil, nil, notFound(name)
	}
	c, err := e.manifest(ctx)
	return e, c, err
}

// manifest returns the listed manifest, or the listing's error.
func (e *entry) manifest(ctx context.Context) (*content, error) {
	c, err := e.list(ctx)
	if err != nil {
		return nil, err
	}
	return c, c.err
}

// changed reports whether the files of an entry whose content is pinned
// may differ from what it pinned: a read found a file changed, its stamps
// cannot tell, or a listed file's size or modification time, or a listed
// folder's modification time, is not what the listing saw. An entry
// nobody listed never changed.
func (e *entry) changed() bool {
	c := e.content.Load()
	if c == nil {
		return false
	}
	if e.stale.Load() || !c.exact {
		return true
	}
	for _, st := range c.stamps {
		info, err := fs.Stat(e.fsys, st.path)
		if err != nil || !info.ModTime().Equal(st.mod) || st.size >= 0 && info.Size() != st.size {
			return true
		}
	}
	return false
}

// recordFS is the skill's file system as the listing sees it, recording
// each folder's modification time before the folder is read (the stat of
// the descriptor that is then listed) and, through listed, each listed
// file's stat as the listing took it.
type recordFS struct {
	fsys fs.FS
	seen []stamp // folders (size -1) and files, in the order met
	// top, when set, is the listing of the skill folder discovery took,
	// served for the first ReadDir(".") instead of reading the folder.
	top *source.Folder
}

func (r *recordFS) Open(name string) (fs.File, error) { return r.fsys.Open(name) }

func (r *recordFS) Stat(name string) (fs.FileInfo, error) { return fs.Stat(r.fsys, name) }

func (r *recordFS) Lstat(name string) (fs.FileInfo, error) { return fs.Lstat(r.fsys, name) }

func (r *recordFS) ReadLink(name string) (string, error) { return fs.ReadLink(r.fsys, name) }

// ReadDir opens the folder once, takes its stamp from the opened folder's
// own Stat (for a host folder, the fstat of the descriptor) and lists that
// same open folder, sorted by name as fs.ReadDir sorts: one open where a
// stat and a listing would open the path twice, and no folder swapped in
// between them.
func (r *recordFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if top := r.top; top != nil && name == "." {
		r.top = nil
		r.seen = append(r.seen, stamp{path: name, size: -1, mod: top.Stat.ModTime()})
		return top.Entries, nil
	}
	info, entries, err := readDirStat(r.fsys, name)
	if err != nil {
		return nil, err
	}
	r.seen = append(r.seen, stamp{path: name, size: -1, mod: info.ModTime()})
	return entries, nil
}

// listed records the stat of a file the manifest lists (at its link-free
// path p), as skill.ManifestOptions.Listed reports it. SKILL.md itself is
// left to discovery, which compares it on every Refresh already.
func (r *recordFS) listed(p string, info fs.FileInfo) {
	if p == skill.FileName {
		return
	}
	r.seen = append(r.seen, stamp{path: p, size: info.Size(), mod: info.ModTime()})
}

// dirStatFS is a file system that lists a folder and stats it through
// one open descriptor (the host file systems of package source).
type dirStatFS interface {
	ReadDirStat(name string) (fs.FileInfo, []fs.DirEntry, error)
}

// readDirStat lists the folder name of fsys, sorted by name, and returns
// the stat of the open folder it listed, taken before the listing.
func readDirStat(fsys fs.FS, name string) (fs.FileInfo, []fs.DirEntry, error) {
	if d, ok := fsys.(dirStatFS); ok {
		return d.ReadDirStat(name)
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	dir, ok := f.(fs.ReadDirFile)
	if !ok || !info.IsDir() {
		return nil, nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a folder")}
	}
	entries, err := dir.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return info, entries, err
}

// stamps returns the recorded stamps and whether they are exact: every
// time known and older than racy.
func (r *recordFS) stamps(racy time.Time) ([]stamp, bool) {
	out := slices.Clip(r.seen)
	for _, st := range out {
		if !st.mod.Before(racy) {
			return out, false
		}
	}
	return out, true
}

// pin stores v under k in *m (c.sums or c.docs) unless a value is there
// already, and returns the value kept: one that differs from v means an
// earlier read pinned other bytes.
func (c *content) pin(m *map[string]string, k, v string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := (*m)[k]; ok {
		return old
	}
	if *m == nil {
		*m = map[string]string{}
	}
	(*m)[k] = v
	return v
}

// pinned returns the value pinned under k in *m (c.sums or c.docs).
func (c *content) pinned(m *map[string]string, k string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := (*m)[k]
	return v, ok
}

// digest computes the manifest with every file's digest, reading the
// files whose digest is not pinned yet.
func (e *entry) digest(ctx context.Context, c *content) (*skill.Manifest, error) {
	out := &skill.Manifest{Files: slices.Clone(c.m.Files), Bytes: c.m.Bytes, Truncated: c.m.Truncated, Skipped: c.m.Skipped}
	for i := range out.Files {
		f := &out.Files[i]
		if sum, ok := c.pinned(&c.sums, f.Path); ok {
			f.SHA256 = sum
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r, err := e.openListed(c, *f)
		if err != nil {
			return nil, err
		}
		_, err = io.Copy(io.Discard, r)
		r.Close()
		if err != nil {
			return nil, err
		}
		f.SHA256, _ = c.pinned(&c.sums, f.Path)
	}
	return out, nil
}

// flight computes a manifest once: concurrent callers share one
// computation, a successful one is kept, and one whose caller's context
// ended is taken over by the next caller.
type flight struct {
	mu   sync.Mutex
	done *skill.Manifest
	run  *flightRun
}

type flightRun struct {
	finished  chan struct{}
	m         *skill.Manifest
	err       error
	abandoned bool // its caller's context ended
}

func (f *flight) do(ctx context.Context, compute func() (*skill.Manifest, error)) (*skill.Manifest, error) {
	for {
		f.mu.Lock()
		if f.done != nil {
			f.mu.Unlock()
			return f.done, nil
		}
		if r := f.run; r != nil {
			f.mu.Unlock()
			select {
			case <-r.finished:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if r.abandoned {
				continue
			}
			return r.m, r.err
		}
		r := &flightRun{finished: make(chan struct{})}
		f.run = r
		f.mu.Unlock()
		r.m, r.err = compute()
		f.mu.Lock()
		f.run = nil
		if r.err == nil {
			f.done = r.m
		}
		r.abandoned = r.err != nil && ctx.Err() != nil
		f.mu.Unlock()
		close(r.finished)
		return r.m, r.err
	}
}

// openListed opens the listed file f by its link-free path beneath the
// skill folder and checks, on the opened file, that it is the regular
// file of the listed size. Reading it checks the bytes against the
// listing and the pinned digest (see listedFile).
func (e *entry) openListed(c *content, f skill.File) (*listedFile, error) {
	file, err := e.fsys.Open(openPath(f))
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return nil, fmt.Errorf("reading %s of skill %q: %w", f.Path, e.sum.Name, err)
		}
		// Removed, or replaced by a link, a folder or a FIFO, since
		// the listing.
		return nil, e.staleFile(f.Path, err)
	}
	if err := skill.CheckListed(file, f.Size); err != nil {
		file.Close()
		return nil, e.staleFile(f.Path, err)
	}
	return &listedFile{f: file, file: f, e: e, c: c, h: sha256.New()}, nil
}

// staleFile is the error for the listed file at p found other than the
// snapshot listed or read it (err says how). It wraps ErrStale, and the
// entry is replaced on the next Refresh.
func (e *entry) staleFile(p string, err error) error {
	e.stale.Store(true)
	return fmt.Errorf("%s of skill %q changed since this snapshot listed it (%w): %w", p, e.sum.Name, err, ErrStale)
}

// listedFile reads one listed file: at most its listed size, hashing as
// it goes. When the listed size is reached it checks that the file ends
// there and that its digest is the one pinned (pinning it on the first
// full read); a mismatch is an error wrapping ErrStale in place of the
// last bytes and of io.EOF.
type listedFile struct {
	f    fs.File
	file skill.File
	e    *entry
	c    *content
	h    hash.Hash
	n    int64
	err  error // sticky: io.EOF once checked, or the failure
}

func (r *listedFile) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	p = p[:min(int64(len(p)), r.file.Size-r.n)]
	var n int
	var err error
	if len(p) > 0 {
		n, err = r.f.Read(p)
		r.h.Write(p[:n])
		r.n += int64(n)
	}
	switch {
	case err != nil && err != io.EOF:
		r.err = err
		return n, err
	case r.n < r.file.Size && err == io.EOF:
		r.err = r.e.staleFile(r.file.Path, fmt.Errorf("%d bytes listed, %d read: %w", r.file.Size, r.n, skill.ErrChanged))
		return 0, r.err
	case r.n < r.file.Size:
		return n, nil
	}
	if r.err = r.check(err == io.EOF); r.err != io.EOF {
		return 0, r.err
	}
	return n, nil
}

// check finishes a read that reached the listed size: the file must end
// there (eof says it was seen to) and have the pinned digest. It returns
// io.EOF when it does.
func (r *listedFile) check(eof bool) error {
	for try := 0; !eof; try++ {
		var one [1]byte
		n, err := r.f.Read(one[:])
		switch {
		case n > 0:
			return r.e.staleFile(r.file.Path, fmt.Errorf("more than the %d bytes listed: %w", r.file.Size, skill.ErrChanged))
		case err == io.EOF:
			eof = true
		case err != nil:
			return err
		case try >= 100:
			return io.ErrNoProgress
		}
	}
	sum := hex.EncodeToString(r.h.Sum(nil))
	if pinned := r.c.pin(&r.c.sums, r.file.Path, sum); pinned != sum {
		return r.e.staleFile(r.file.Path, fmt.Errorf("its sha256 was %s when first read, now %s", pinned, sum))
	}
	return io.EOF
}

func (r *listedFile) Close() error { return r.f.Close() }
