package source

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io/fs"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillkit/skillkit/skill"
)

// Found is one skill Discover found.
type Found struct {
	// Dir is the skill folder, a slash path in the source's file system.
	Dir string
	// File names the SKILL.md for people (host path when there is one).
	File string
	// Front is the parsed header. The body is not kept: it is read again
	// on demand so that a catalog of many skills stays small.
	Front *skill.Frontmatter
	// Diagnostics are the warnings parsing reported for this SKILL.md;
	// Discover reports them again whenever it reuses the Found, so a
	// refresh does not lose them.
	Diagnostics []skill.Diagnostic
	// Size, ModTime and Hash identify the SKILL.md content that was
	// parsed; Refresh compares Size and ModTime to skip unchanged files,
	// and Hash keys caches by content.
	Size    int64
	ModTime time.Time
	Hash    uint64

	// name is the SKILL.md path in the source's file system, kept so a
	// refresh can stat it without building the path again.
	name string
}

// Options adjusts Discover. The zero value is ready to use.
type Options struct {
	// Limits bounds each skill (SKILL.md size is checked here).
	Limits skill.Limits
	// Workers is the number of folders read in parallel; 0 means twice
	// GOMAXPROCS.
	Workers int
	// Previous maps a skill folder (Found.Dir) to what an earlier
	// discovery of the same source found there. A SKILL.md whose size and
	// modification time are unchanged is not read again.
	Previous map[string]*Found
	// Seed keys content hashes; callers that compare hashes across
	// discoveries pass the same seed. The zero value picks a random one.
	Seed maphash.Seed
}

// Result is what Discover found in one source.
type Result struct {
	// Skills are sorted by Dir.
	Skills      []*Found
	Diagnostics []skill.Diagnostic
	// Reused counts skills taken unchanged from Options.Previous.
	Reused int
}

// Discover finds the skills in src: the root itself when it holds a
// SKILL.md, otherwise every folder down to src.MaxDepth levels that holds
// one. A skill folder is not searched further, and ignored folders
// (skill.IgnoredDir) are never entered. Skills that cannot be understood
// are skipped with an error diagnostic; problems that do not stop a skill
// from loading are warnings.
func Discover(ctx context.Context, src Source, opts Options) (*Result, error) {
	if src.FS == nil {
		return nil, fmt.Errorf("source %q has no file system", src.Label)
	}
	depth := src.MaxDepth
	if depth < 0 {
		return nil, fmt.Errorf("source %q: MaxDepth is %d; use 0 for the default (%d) or a positive depth", src.Label, depth, DefaultMaxDepth)
	}
	if depth == 0 {
		depth = DefaultMaxDepth
	}
	lim, err := opts.Limits.WithDefaults()
	if err != nil {
		return nil, err
	}
	workers := opts.Workers
	if workers < 0 {
		return nil, fmt.Errorf("source %q: Workers is %d; use 0 for the default or a positive count", src.Label, workers)
	}
	if workers == 0 {
		workers = 2 * runtime.GOMAXPROCS(0)
	}
	seed := opts.Seed
	if seed == (maphash.Seed{}) {
		seed = maphash.MakeSeed()
	}
	rd := newHostReader(src)
	if rd == nil {
		rd = fsReader{src.FS}
	}
	defer rd.close()
	d := &discoverer{ctx: ctx, src: src, lim: lim, prev: opts.Previous, seed: seed, rd: rd, workers: workers}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// The root may itself be a skill folder.
	var buf []byte
	if f, ok, err := d.try(".", &buf); errors.Is(err, errSkipSkill) {
		return d.result(), nil
	} else if err != nil {
		return nil, err
	} else if ok {
		d.found = append(d.found, f)
		return d.result(), nil
	}
	level, err := d.subdirs(".")
	if err != nil {
		return nil, fmt.Errorf("reading skill root %s: %w (give a readable folder)", src.DisplayPath("."), err)
	}
	// Each level's folders are probed in parallel; a folder that is not a
	// skill is listed by the same worker, and its folders form the next
	// level. Folders at the last level are probed but not listed.
	for l := 1; len(level) > 0; l++ {
		found := make([]*Found, len(level))
		kids := make([][]folder, len(level))
		d.each(len(level), func(i int, buf *[]byte) {
			dir := level[i].path
			f, ok, err := d.try(dir, buf)
			switch {
			case errors.Is(err, errSkipSkill):
				return
			case err != nil:
				d.diag(skill.Diagnostic{File: src.DisplayPath(dir), Severity: skill.Warning, Message: fmt.Sprintf("folder skipped: %v", err)})
				return
			case ok:
				found[i] = f
				return
			case l >= depth:
				return
			case level[i].link:
				// A linked folder is followed only to a skill: searching
				// through links could leave the root or loop forever.
				if info, err := fs.Stat(src.FS, dir); err != nil {
					d.diag(skill.Diagnostic{File: src.DisplayPath(dir), Severity: skill.Warning, Message: fmt.Sprintf("broken symlink skipped: %v", unwrapPath(err))})
				} else if info.IsDir() {
					d.diag(skill.Diagnostic{File: src.DisplayPath(dir), Severity: skill.Warning, Message: "symlinked folder holds no SKILL.md; not searched (link skill folders themselves)"})
				}
				return
			}
			sub, err := d.subdirs(dir)
			if err != nil && !isNotDir(err) { // a symlink to a file is no folder
				d.diag(skill.Diagnostic{File: src.DisplayPath(dir), Severity: skill.Warning, Message: fmt.Sprintf("folder skipped: %v", err)})
			}
			kids[i] = sub
		})
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for _, f := range found {
			if f != nil {
				d.found = append(d.found, f)
			}
		}
		level = nil
		for _, k := range kids {
			level = append(level, k...)
		}
	}
	return d.result(), nil
}

type discoverer struct {
	ctx     context.Context
	src     Source
	lim     skill.Limits
	prev    map[string]*Found
	seed    maphash.Seed
	rd      reader
	workers int

	found  []*Found // appended only between parallel phases
	reused atomic.Int64
	mu     sync.Mutex // guards diags
	diags  []skill.Diagnostic
}

// each calls fn for 0..n-1 on up to d.workers goroutines, each with its
// own scratch buffer, and stops handing out work when ctx is done.
func (d *discoverer) each(n int, fn func(i int, buf *[]byte)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(d.workers, n) {
		wg.Go(func() {
			var buf []byte
			for {
				i := int(next.Add(1) - 1)
				if i >= n || d.ctx.Err() != nil {
					return
				}
				fn(i, &buf)
			}
		})
	}
	wg.Wait()
}

func (d *discoverer) diag(x skill.Diagnostic) {
	d.mu.Lock()
	d.diags = append(d.diags, x)
	d.mu.Unlock()
}

func (d *discoverer) result() *Result {
	slices.SortFunc(d.found, func(a, b *Found) int { return strings.Compare(a.Dir, b.Dir) })
	slices.SortStableFunc(d.diags, func(a, b skill.Diagnostic) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return a.Line - b.Line
	})
	return &Result{Skills: d.found, Diagnostics: d.diags, Reused: int(d.reused.Load())}
}

// folder is a directory discovery may probe; link marks one reached
// through a symlink, which is followed only to a skill.
type folder struct {
	path string
	link bool
}

// subdirs lists the folders of dir that discovery may enter.
func (d *discoverer) subdirs(dir string) ([]folder, error) {
	entries, err := d.rd.readDir(dir)
	if err != nil {
		return nil, err
	}
	out := make([]folder, 0, len(entries))
	for _, e := range entries {
		t := e.Type()
		if !t.IsDir() && t&fs.ModeSymlink == 0 {
			continue
		}
		if skill.IgnoredDir(e.Name()) {
			continue
		}
		out = append(out, folder{path: path.Join(dir, e.Name()), link: t&fs.ModeSymlink != 0})
	}
	return out, nil
}

// try reads dir/SKILL.md. ok is false when dir holds no SKILL.md (or is
// not a folder). A SKILL.md that cannot be used is reported as an error
// diagnostic and try returns errSkipSkill: it still marks a skill folder,
// so the folder is not searched for other skills.
func (d *discoverer) try(dir string, buf *[]byte) (*Found, bool, error) {
	prev := d.prev[dir]
	var name string
	if prev != nil && prev.name != "" {
		name = prev.name
	} else {
		name = skillFile(dir)
	}
	if prev != nil {
		if st, err := d.rd.stat(name); err == nil && st.size == prev.Size && st.mod.Equal(prev.ModTime) && !st.mod.IsZero() {
			d.reused.Add(1)
			for _, x := range prev.Diagnostics {
				d.diag(x)
			}
			return prev, true, nil
		}
	}
	display := d.src.DisplayPath(name)
	data, st, err := d.rd.read(name, d.lim.MaxFileSize, buf)
	if errors.Is(err, errSymlink) {
		// A linked SKILL.md is read only when its target stays inside the
		// skill folder: skill content must not come from elsewhere.
		resolved, rerr := skill.Resolve(d.src.FS, dir, name)
		if rerr != nil {
			d.diag(skill.Diagnostic{File: display, Severity: skill.Error, Message: fmt.Sprintf(
				"SKILL.md is a symlink that cannot be followed: %v; skill skipped (put the file itself in the skill folder)", rerr)})
			return nil, false, errSkipSkill
		}
		data, st, err = d.rd.read(resolved, d.lim.MaxFileSize, buf)
	}
	var big errTooLarge
	switch {
	case errors.Is(err, errNoFile):
		return nil, false, nil
	case errors.As(err, &big):
		d.diag(skill.Diagnostic{File: display, Severity: skill.Error, Message: fmt.Sprintf(
			"SKILL.md is %d bytes, over the %d-byte limit; skill skipped (move long material into reference files or raise the limit)", big.size, d.lim.MaxFileSize)})
		return nil, false, errSkipSkill
	case err != nil:
		d.diag(skill.Diagnostic{File: display, Severity: skill.Error, Message: fmt.Sprintf(
			"cannot read SKILL.md: %v; skill skipped (fix the file's permissions or type)", unwrapPath(err))})
		return nil, false, errSkipSkill
	}
	hash := maphash.Bytes(d.seed, data)
	doc, diags, err := skill.Parse(headerOnly(data), skill.ParseOptions{File: display, DirName: dirName(d.src, dir), MaxSize: d.lim.MaxFileSize})
	for _, x := range diags {
		d.diag(x)
	}
	if err != nil {
		var le *skill.LoadError
		if errors.As(err, &le) {
			d.diag(le.Diagnostic())
			return nil, false, errSkipSkill
		}
		return nil, false, err
	}
	return &Found{
		Dir: dir, File: display, Front: &doc.Frontmatter, Diagnostics: diags,
		Size: st.size, ModTime: st.mod, Hash: hash, name: name,
	}, true, nil
}

// unwrapPath drops the path of a *fs.PathError: diagnostics name the file
// already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}

// skillFile returns the path of dir's SKILL.md (dir is clean).
func skillFile(dir string) string {
	if dir == "." {
		return skill.FileName
	}
	return dir + "/" + skill.FileName
}

// errSkipSkill marks a SKILL.md that was reported and skipped; its folder
// is not searched further.
var errSkipSkill = errors.New("skill skipped")

// dirName is the name of the skill folder, for the name/folder check.
func dirName(src Source, dir string) string {
	if dir == "." {
		if src.Path != "" {
			return path.Base(filepathToSlash(src.Path))
		}
		return ""
	}
	return path.Base(dir)
}
