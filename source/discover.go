package source

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"path"
	"runtime"
	"sort"
	"sync"
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
	// Size, ModTime and Hash identify the SKILL.md content that was
	// parsed; Refresh compares Size and ModTime to skip unchanged files,
	// and Hash keys caches by content.
	Size    int64
	ModTime time.Time
	Hash    uint64
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
	d := &discoverer{ctx: ctx, src: src, lim: lim, prev: opts.Previous, seed: seed}
	// The root may itself be a skill folder.
	if f, ok, err := d.try("."); errors.Is(err, errSkipSkill) {
		return d.result(), nil
	} else if err != nil {
		return nil, err
	} else if ok {
		d.collect(f)
		return d.result(), nil
	}
	level := []string{"."}
	for l := 0; l < depth && len(level) > 0; l++ {
		var subdirs []string
		for _, dir := range level {
			kids, err := d.subdirs(dir)
			if err != nil {
				if dir == "." {
					return nil, fmt.Errorf("reading skill root %s: %w", src.DisplayPath("."), err)
				}
				d.diag(skill.Diagnostic{File: src.DisplayPath(dir), Severity: skill.Warning, Message: fmt.Sprintf("folder skipped: %v", err)})
				continue
			}
			subdirs = append(subdirs, kids...)
		}
		// Folders of this level are probed in parallel; those that are not
		// skills are searched at the next level.
		next := make([][]string, len(subdirs))
		var wg sync.WaitGroup
		jobs := make(chan int)
		for w := 0; w < min(workers, len(subdirs)); w++ {
			wg.Go(func() {
				for i := range jobs {
					f, ok, err := d.try(subdirs[i])
					if errors.Is(err, errSkipSkill) {
						continue
					}
					if err != nil {
						d.diag(skill.Diagnostic{File: src.DisplayPath(subdirs[i]), Severity: skill.Warning, Message: fmt.Sprintf("folder skipped: %v", err)})
						continue
					}
					if ok {
						d.collect(f)
					} else {
						next[i] = []string{subdirs[i]}
					}
				}
			})
		}
		for i := range subdirs {
			if ctx.Err() != nil {
				break
			}
			jobs <- i
		}
		close(jobs)
		wg.Wait()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		level = level[:0]
		for _, n := range next {
			level = append(level, n...)
		}
	}
	return d.result(), nil
}

type discoverer struct {
	ctx  context.Context
	src  Source
	lim  skill.Limits
	prev map[string]*Found
	seed maphash.Seed

	mu     sync.Mutex
	found  []*Found
	diags  []skill.Diagnostic
	reused int
}

func (d *discoverer) diag(x skill.Diagnostic) {
	d.mu.Lock()
	d.diags = append(d.diags, x)
	d.mu.Unlock()
}

func (d *discoverer) collect(f *Found) {
	d.mu.Lock()
	d.found = append(d.found, f)
	d.mu.Unlock()
}

func (d *discoverer) result() *Result {
	sort.Slice(d.found, func(i, j int) bool { return d.found[i].Dir < d.found[j].Dir })
	sort.SliceStable(d.diags, func(i, j int) bool { return d.diags[i].File < d.diags[j].File })
	return &Result{Skills: d.found, Diagnostics: d.diags, Reused: d.reused}
}

// subdirs lists the folders of dir that discovery may enter.
func (d *discoverer) subdirs(dir string) ([]string, error) {
	entries, err := fs.ReadDir(d.src.FS, dir)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		t := e.Type()
		if !t.IsDir() && t&fs.ModeSymlink == 0 {
			continue
		}
		if skill.IgnoredDir(e.Name()) {
			continue
		}
		out = append(out, path.Join(dir, e.Name()))
	}
	return out, nil
}

// try reads dir/SKILL.md. ok is false when dir holds no SKILL.md (or is
// not a folder); a SKILL.md that cannot be used is reported and counts as
// found, so its folder is not searched for other skills.
func (d *discoverer) try(dir string) (*Found, bool, error) {
	name := path.Join(dir, skill.FileName)
	display := d.src.DisplayPath(name)
	if prev := d.prev[dir]; prev != nil {
		if info, err := fs.Stat(d.src.FS, name); err == nil && info.Size() == prev.Size && info.ModTime().Equal(prev.ModTime) && !info.ModTime().IsZero() {
			d.mu.Lock()
			d.reused++
			d.mu.Unlock()
			return prev, true, nil
		}
	}
	f, err := d.src.FS.Open(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || isNotDir(err) {
			return nil, false, nil
		}
		return nil, false, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	if info.IsDir() {
		return nil, false, nil
	}
	if info.Size() > d.lim.MaxFileSize {
		d.diag(skill.Diagnostic{File: display, Severity: skill.Error, Message: fmt.Sprintf(
			"SKILL.md is %d bytes, over the %d-byte limit; skill skipped (move long material into reference files or raise the limit)", info.Size(), d.lim.MaxFileSize)})
		return nil, false, errSkipSkill
	}
	data := make([]byte, info.Size()+1)
	n, err := io.ReadFull(f, data)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, false, fmt.Errorf("reading %s: %w", display, err)
	}
	data = data[:n]
	doc, diags, err := skill.Parse(data, skill.ParseOptions{File: display, DirName: dirName(d.src, dir), MaxSize: d.lim.MaxFileSize})
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
		Dir: dir, File: display, Front: &doc.Frontmatter,
		Size: info.Size(), ModTime: info.ModTime(), Hash: maphash.Bytes(d.seed, data),
	}, true, nil
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
