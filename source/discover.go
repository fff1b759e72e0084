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
	"syscall"
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
	Size int64
	// ModTime is the SKILL.md's modification time when it was read.
	ModTime time.Time
	// Hash is the SKILL.md content's hash under Options.Seed.
	Hash uint64
	// Folder is the skill folder's listing, taken as its SKILL.md was
	// read, when Options.ListFolders asked for it and the source is a
	// host folder (nil otherwise, and for a linked folder or SKILL.md). It
	// describes the folder at that discovery: a Found reused by a later
	// one keeps it unchanged.
	Folder *Folder

	// name is the SKILL.md path in the source's file system, kept so a
	// refresh can stat it without building the path again.
	name string
	// id is the identity of the SKILL.md that was read, where the file
	// system gives one: a refresh that finds another file re-reads it.
	id fileID
	// link marks a skill folder of a host source that is a symbolic link,
	// read through the link; dirID is the folder it led to, which every
	// later read through SkillFS must find again.
	link  bool
	dirID fileID
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
	// ListFolders lists each skill folder of a host source as its
	// SKILL.md is read (Found.Folder), for a caller that lists every
	// skill's files next: the folder is then read once, and SKILL.md
	// opened relative to the folder listed.
	ListFolders bool
}

// Folder is the listing of a skill folder that Discover took as it read
// the folder's SKILL.md (Options.ListFolders): the folder was opened once,
// beneath the root and without following links; Stat is the fstat of that
// descriptor, taken before it was listed, and Entries are its entries,
// sorted by name, each with the lstat taken relative to it — SKILL.md's
// is the fstat of the file that was read.
type Folder struct {
	// Stat is the fstat of the opened folder, taken before listing.
	Stat fs.FileInfo
	// Entries are the folder's entries, sorted by name.
	Entries []fs.DirEntry
	// Listed is when the listing began.
	Listed time.Time
}

// folderReader is a reader that can list a skill folder as it reads its
// SKILL.md (the host reader).
type folderReader interface {
	readFolder(dir string, max int64, maxEntries int, buf *[]byte) ([]byte, fileStat, *Folder, error)
}

// Result is what Discover found in one source.
type Result struct {
	// Skills are sorted by Dir.
	Skills []*Found
	// Diagnostics are the warnings and errors of the discovery, those of
	// the skills found included, sorted by file and line.
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
	host := src.host()
	if host != nil {
		// Each discovery resolves the links in the root's own path again,
		// for every file system of the source.
		host.refreshRoot()
	}
	rd := newHostReader(src)
	if rd == nil {
		rd = fsReader{src.FS}
	}
	defer rd.close()
	d := &discoverer{ctx: ctx, src: src, lim: lim, prev: opts.Previous, seed: seed, rd: rd, host: host, workers: workers, listFolders: opts.ListFolders}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// The root may itself be a skill folder.
	var buf []byte
	if f, ok, err := d.try(".", false, &buf); errors.Is(err, errSkipSkill) {
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
	var frontier []folder // folders at the depth limit that hold no skill
	for l := 1; len(level) > 0; l++ {
		found := make([]*Found, len(level))
		kids := make([][]folder, len(level))
		last := make([]bool, len(level))
		d.each(len(level), func(i int, buf *[]byte) {
			dir := level[i].path
			f, ok, err := d.try(dir, level[i].link, buf)
			switch {
			case errors.Is(err, errSkipSkill):
				return
			case err != nil:
				d.diag(skill.Diagnostic{File: src.DisplayPath(dir), Severity: skill.Warning, Message: fmt.Sprintf("folder skipped: %v", err)})
				return
			case ok:
				found[i] = f
				return
			case level[i].link:
				// A linked folder is followed only to a skill: searching
				// through links could leave the root or loop forever.
				d.linkNotSearched(dir)
				return
			case l >= depth:
				last[i] = true
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
		for i, f := range found {
			if f != nil {
				d.found = append(d.found, f)
			}
			if last[i] {
				frontier = append(frontier, level[i])
			}
		}
		level = nil
		for _, k := range kids {
			level = append(level, k...)
		}
	}
	if !d.passedOver(frontier, depth) && len(d.found) == 0 && !d.reported(skill.Error) {
		d.diag(skill.Diagnostic{File: src.DisplayPath("."), Severity: skill.Warning, Message: fmt.Sprintf(
			"no skills found: no folder down to %s holds a %s (a skill is a folder with a %s file)", levels(depth), skill.FileName, skill.FileName)})
	}
	return d.result(), nil
}

// Bounds of the search below the depth limit, which only counts skills
// for the warning that says they were passed over.
const (
	deeperLevels  = 8
	deeperFolders = 4096
)

// passedOver counts the skill folders below the depth limit, under the
// folders of the last level searched, and warns once on the root when
// there are any (reporting whether it did): a skill that is silently too
// deep looks like a bug.
// The count is bounded (deeperLevels more levels, deeperFolders folders);
// links are not followed.
func (d *discoverer) passedOver(frontier []folder, depth int) bool {
	count, deepest, examined, bounded := 0, 0, 0, false
	level := frontier
	for l := depth + 1; len(level) > 0; l++ {
		var next []folder
		for _, f := range level {
			sub, err := d.subdirs(f.path)
			if err != nil {
				continue
			}
			for _, s := range sub {
				if s.link {
					continue
				}
				if examined++; examined > deeperFolders || l > depth+deeperLevels {
					bounded = true
					break
				}
				if _, err := d.rd.stat(skillFile(s.path)); err == nil {
					count, deepest = count+1, l
					continue
				}
				next = append(next, s)
			}
			if bounded {
				break
			}
		}
		if bounded || d.ctx.Err() != nil {
			break
		}
		level = next
	}
	switch {
	case count == 0 && !bounded:
		return false
	case count == 0:
		d.diag(skill.Diagnostic{File: d.src.DisplayPath("."), Severity: skill.Warning, Message: fmt.Sprintf(
			"no skills found down to %s; below that the folders were searched only until %d folders or %d more levels, without finding a skill; search deeper (skillkit: --depth N) or give a deeper folder as a root",
			levels(depth), deeperFolders, deeperLevels)})
		return true
	}
	what := fmt.Sprintf("%d skill folders lie", count)
	switch {
	case bounded && count == 1:
		what = "at least 1 skill folder lies"
	case bounded:
		what = fmt.Sprintf("at least %d skill folders lie", count)
	case count == 1:
		what = "1 skill folder lies"
	}
	d.diag(skill.Diagnostic{File: d.src.DisplayPath("."), Severity: skill.Warning, Message: fmt.Sprintf(
		"%s below the search depth of %s, not read (the deepest %d levels down); search %d levels deep to read them (skillkit: --depth %d), or give their folder as a root",
		what, levels(depth), deepest, deepest, deepest)})
	return true
}

// levels words a depth.
func levels(n int) string {
	if n == 1 {
		return "1 level"
	}
	return fmt.Sprintf("%d levels", n)
}

// reported reports whether a diagnostic of severity sev was recorded.
func (d *discoverer) reported(sev skill.Severity) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, x := range d.diags {
		if x.Severity == sev {
			return true
		}
	}
	return false
}

// linkNotSearched says why the symbolic link dir, which holds no
// SKILL.md, is not searched: it leads nowhere, it loops, it leads back to
// a folder being searched, or it is a folder (discovery follows links
// only to skill folders).
func (d *discoverer) linkNotSearched(dir string) {
	file := d.src.DisplayPath(dir)
	isDir, err := d.linkedFolder(dir)
	var back string
	if err == nil && isDir {
		back = d.loopsBack(dir)
	}
	switch {
	case errors.Is(err, syscall.ELOOP):
		d.diag(skill.Diagnostic{File: file, Severity: skill.Warning, Message: "symlink loop: the link never reaches a folder (too many levels of symbolic links); skipped (fix or remove the link)"})
	case err != nil:
		d.diag(skill.Diagnostic{File: file, Severity: skill.Warning, Message: fmt.Sprintf("broken symlink skipped: %v", unwrapPath(err))})
	case !isDir:
	case back != "":
		d.diag(skill.Diagnostic{File: file, Severity: skill.Warning, Message: fmt.Sprintf(
			"symlink loop: the link leads back to %s, which is being searched already; not searched again", back)})
	default:
		d.diag(skill.Diagnostic{File: file, Severity: skill.Warning, Message: "symlinked folder holds no SKILL.md; not searched (link skill folders themselves)"})
	}
}

// loopsBack returns the display path of the folder above the link dir
// (the root included) that the link leads to, or "".
func (d *discoverer) loopsBack(dir string) string {
	if d.host == nil {
		return ""
	}
	id, err := d.host.identify(dir)
	if err != nil {
		return ""
	}
	for anc := path.Dir(dir); ; anc = path.Dir(anc) {
		if st, err := d.rd.stat(anc); err == nil && st.id == id && id != (fileID{}) {
			return d.src.DisplayPath(anc)
		}
		if anc == "." {
			return ""
		}
	}
}

type discoverer struct {
	ctx     context.Context
	src     Source
	lim     skill.Limits
	prev    map[string]*Found
	seed    maphash.Seed
	rd      reader
	host    *hostFS // the source's host file system, if it has one
	workers int
	// listFolders is Options.ListFolders.
	listFolders bool

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
		out = append(out, folder{path: joinRel(dir, e.Name()), link: t&fs.ModeSymlink != 0})
	}
	return out, nil
}

// try reads dir/SKILL.md; link marks a folder that is a symbolic link.
// ok is false when dir holds no SKILL.md (or is not a folder). A
// SKILL.md that cannot be used is reported as an error diagnostic and try
// returns errSkipSkill: it still marks a skill folder, so the folder is
// not searched for other skills.
func (d *discoverer) try(dir string, link bool, buf *[]byte) (*Found, bool, error) {
	prev := d.prev[dir]
	var name string
	if prev != nil && prev.name != "" {
		name = prev.name
	} else {
		name = skillFile(dir)
	}
	if prev != nil {
		if st, err := d.rd.stat(name); err == nil && st.size == prev.Size && st.mod.Equal(prev.ModTime) && !st.mod.IsZero() && st.id == prev.id && d.sameFolder(prev) {
			d.reused.Add(1)
			for _, x := range prev.Diagnostics {
				d.diag(x)
			}
			return prev, true, nil
		}
	}
	display := d.src.DisplayPath(name)
	// A linked folder of a host source is entered through its link once,
	// and read beneath the folder reached, which later reads must find
	// again; everything else is read beneath the source root.
	rd, fsys, root, file := d.rd, d.src.FS, dir, name
	var dirID fileID
	hostLink := link && d.host != nil
	if hostLink {
		id, err := d.host.identify(dir)
		if err != nil {
			return nil, false, nil // broken, or not a folder: the caller says
		}
		sfs := d.host.linked(dir, id)
		rd, fsys, root, file, dirID = fsReader{sfs}, sfs, ".", skill.FileName, id
	}
	var (
		data   []byte
		st     fileStat
		err    error
		folder *Folder
	)
	if fr, ok := rd.(folderReader); ok && d.listFolders {
		data, st, folder, err = fr.readFolder(dir, d.lim.MaxFileSize, d.lim.MaxEntries(), buf)
	} else {
		data, st, err = rd.read(file, d.lim.MaxFileSize, buf)
	}
	if errors.Is(err, errSymlink) {
		// A linked SKILL.md is read only when its target stays inside the
		// skill folder: skill content must not come from elsewhere. The
		// link is resolved once and the file it leads to opened without
		// following links, so a link swapped in meanwhile is refused.
		resolved, rerr := skill.Resolve(fsys, root, file)
		if rerr != nil {
			d.diag(skill.Diagnostic{File: display, Severity: skill.Error, Message: fmt.Sprintf(
				"SKILL.md is a symlink that cannot be followed: %v; skill skipped (put the file itself in the skill folder)", rerr)})
			return nil, false, errSkipSkill
		}
		data, st, err = rd.read(resolved, d.lim.MaxFileSize, buf)
	}
	var big errTooLarge
	switch {
	case errors.Is(err, errNoFile):
		d.lowerCaseFile(rd, file, name)
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
		Size: st.size, ModTime: st.mod, Hash: hash, name: name, id: st.id,
		link: hostLink, dirID: dirID, Folder: folder,
	}, true, nil
}

// lowerCaseFile warns when the folder that lacks file (its SKILL.md, at
// name in the source) holds a lower-case skill.md instead: the reference
// validator accepts that spelling, so the author believes it a skill.
func (d *discoverer) lowerCaseFile(rd reader, file, name string) {
	lower := strings.TrimSuffix(file, skill.FileName) + skill.LowerFileName
	if _, err := rd.stat(lower); err != nil {
		return
	}
	d.diag(skill.Diagnostic{File: d.src.DisplayPath(strings.TrimSuffix(name, skill.FileName) + skill.LowerFileName), Line: 1, Severity: skill.Warning, Message: fmt.Sprintf(
		"discovery reads only %s, so this folder is not a skill; rename %s to %s", skill.FileName, skill.LowerFileName, skill.FileName)})
}

// sameFolder reports whether the folder of prev is still the one it was
// read from: always, unless it is a linked folder of a host source, whose
// link may now lead elsewhere.
func (d *discoverer) sameFolder(prev *Found) bool {
	if !prev.link {
		return true
	}
	if d.host == nil {
		return false
	}
	id, err := d.host.identify(prev.Dir)
	return err == nil && id == prev.dirID
}

// linkedFolder reports whether the symbolic link dir leads to a folder;
// an error means it leads nowhere.
func (d *discoverer) linkedFolder(dir string) (bool, error) {
	if d.host == nil {
		info, err := fs.Stat(d.src.FS, dir)
		if err != nil {
			return false, err
		}
		return info.IsDir(), nil
	}
	_, err := d.host.identify(dir)
	if isNotDir(err) {
		return false, nil
	}
	return err == nil, err
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
