package workspace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/skillkit/skillkit/internal/tracing"
)

// racyWindow is how recent a file's mtime may be for its cached hash to be
// distrusted: a file rewritten with the same size within the filesystem's
// timestamp granularity of being hashed would otherwise look unchanged.
// Two seconds covers the coarsest common granularity (FAT).
const racyWindow = 2 * time.Second

// maxLinkHops bounds symbolic-link resolution in a skill source, as the
// kernel's limit does for paths.
const maxLinkHops = 40

// StageResult describes one Stage call.
type StageResult struct {
	// Name is the skill name; Dir its staged copy (skills/<name>).
	Name string
	// Dir is the host path of the staged copy, skills/<name> in the
	// workspace.
	Dir string
	// Digest identifies the staged content: "sha256:" and the hex digest of
	// every copied path, its type, executable bit and content (or link
	// target).
	Digest string
	// Copied is false when the source was unchanged and the staged copy
	// was kept (with its .venv and the skill's other caches); files in it
	// that commands had changed, added or removed were then put back as
	// staged, and are listed in Restored.
	Copied bool
	// Restored lists the paths in the staged copy (relative to it) that
	// Stage found changed, added, removed or replaced — by a command, say
	// — and put back as the source has them: changed and missing files
	// and folders restored, added ones removed.
	Restored []string
	// Files and Bytes count the regular files of the skill and their size.
	Files int
	// Bytes is the summed size of the skill's regular files, in bytes.
	Bytes int64
	// Skipped lists source entries that were not copied and why: symbolic
	// links leading out of the skill, special files, and top-level names
	// reserved for the workspace links.
	Skipped []Skipped
}

// Skipped names a path left out of a copy or collection and the reason.
type Skipped struct {
	// Path is the path of the entry left out.
	Path string `json:"path"`
	// Reason says why it was left out.
	Reason string `json:"reason"`
}

// Stage copies the skill in src (the skill's folder: the file system of
// registry.Snapshot.FS or of source.Dir, or fs.Sub of an embed.FS) into
// skills/<name>.
//
// Each source file is opened once, and the opened file must be the one
// the walk listed — a regular file of the listed size, and the same file
// where the file system says (device and inode) — checked on the opened
// file before a byte is read; otherwise Stage fails with an error wrapping
// ErrSourceChanged that names the file. A file system that opens without
// following links and with O_NONBLOCK (source.Dir's) makes staging
// race-free: a file swapped for a link to a host file, or for a FIFO,
// is refused. os.DirFS follows links and can block on a FIFO in Open;
// with it, only a swap of the file itself is caught.
//
// An unchanged skill is neither copied nor re-read: each file's hash is cached
// by path, size and mtime (sources without mtimes, such as embed.FS, are
// re-hashed but still not copied; so is a file whose mtime was within two
// seconds of the previous hash, since a same-size rewrite could keep its
// mtime). A changed skill is copied into a temporary
// directory and swapped into place atomically, so skills/<name> is always a
// complete copy. Replacing a copy drops everything commands wrote into it,
// including .venv: dependencies installed for the old version may not fit
// the new one.
//
// An unchanged skill keeps its copy, and the copy is checked against what
// was staged before every use, so that a command cannot leave a poisoned
// copy for later runs: every entry is examined without following links
// (descriptor-relative, O_NOFOLLOW, O_NONBLOCK), each file's type, mode,
// size, inode, modification and change time are compared with what Stage
// recorded when it wrote or last checked the file — a change time cannot
// be set back by a command — and a file whose change time is not older
// than that check (it could have changed within the same timestamp tick)
// is hashed. Whatever differs is put back from the source: changed files
// rewritten, missing files and folders created, added ones removed,
// folder modes and the workspace links repaired (see
// StageResult.Restored). Names that are never copied (.git, node_modules,
// __pycache__, .venv, at any depth) are left as commands made them, so a
// skill's virtual environment and caches survive. Only unix systems check
// the copy.
//
// .git, node_modules, __pycache__ and .venv in the source are not copied.
// Symbolic links that resolve inside the skill are recreated as relative
// links; links that leave it, dangle or loop are skipped and reported.
// Top-level source entries named out, work or inputs are skipped and reported:
// those names are the links to the workspace directories.
//
// Stage calls for one workspace are serialized within a process. When other
// processes may use the workspace, hold Lock while staging, as for commands.
func (w *Workspace) Stage(ctx context.Context, name string, src fs.FS) (res *StageResult, err error) {
	ctx, span := w.start(ctx, spanStageSkill, tracing.SkillName.String(name))
	defer func() {
		if res != nil {
			outcome := "reused"
			if res.Copied {
				outcome = "copied"
			}
			span.SetAttributes(tracing.Files.Int(res.Files), tracing.Bytes.Int64(res.Bytes), attrOutcome.String(outcome),
				attrRestored.Int(len(res.Restored)), tracing.Skipped.Int(len(res.Skipped)))
		}
		tracing.End(span, err)
	}()
	return w.stage(ctx, name, src)
}

// stage is Stage, within its span.
func (w *Workspace) stage(ctx context.Context, name string, src fs.FS) (*StageResult, error) {
	if err := validName("skill name", name, maxSkillLen); err != nil {
		return nil, err
	}
	if src == nil {
		return nil, fmt.Errorf("workspace %s: stage %s: source fs.FS is nil", w.id, name)
	}
	w.st.stageMu.Lock()
	defer w.st.stageMu.Unlock()

	sc, err := w.scan(ctx, name, src)
	if err != nil {
		return nil, err
	}
	root, err := w.openRoot()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	meta, err := w.m.openMeta()
	if err != nil {
		return nil, err
	}
	defer meta.Close()
	dst := skillsName + "/" + name
	res := &StageResult{Name: name, Dir: filepath.Join(w.SkillsDir(), name),
		Files: sc.files, Bytes: sc.bytes, Skipped: sc.skipped}

	prev := w.loadManifest(meta, name)
	if info, err := root.Lstat(dst); prev != nil && err == nil && info.IsDir() {
		rehashed, err := sc.hashMissing(ctx, src, prev)
		if err != nil {
			return nil, w.stageErr(name, err)
		}
		if d := sc.digest(); d == prev.Digest {
			chk, err := w.checkCopy(ctx, root, name, src, sc, prev.Copy, false)
			if err == nil {
				if rehashed || chk.changed {
					m := sc.manifest(d)
					m.Copy = chk.next
					w.saveManifest(meta, name, m)
				}
				res.Digest = d
				res.Restored = chk.restored
				return res, nil
			}
			if errors.Is(err, ErrSourceChanged) || ctx.Err() != nil {
				return nil, w.stageErr(name, err)
			}
			// A copy that cannot be checked or put back is replaced whole.
		}
	}

	if err := w.copyIn(ctx, root, name, src, sc); err != nil {
		return nil, err
	}
	res.Digest = sc.digest()
	res.Copied = true
	m := sc.manifest(res.Digest)
	// Record what was written, so that the next Stage can tell whether a
	// command changed it; without a record it is rewritten next time.
	if chk, err := w.checkCopy(ctx, root, name, src, sc, nil, true); err == nil {
		m.Copy = chk.next
	}
	w.saveManifest(meta, name, m)
	return res, nil
}

// ErrSourceChanged is wrapped by Stage's errors when a source file opened
// for staging is not the file the walk of the source listed (another
// type, size or file), or yields another content than was hashed: the
// skill changed, or is being swapped, while it was staged. Stage again.
var ErrSourceChanged = errors.New("workspace: skill source changed while it was staged")

// stageErr wraps an error of staging skill name, leaving limit and
// context errors as they are.
func (w *Workspace) stageErr(name string, err error) error {
	if errors.Is(err, ErrLimit) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("workspace %s: stage %s: %w", w.id, name, err)
}

// node is one source entry to copy.
type node struct {
	path   string
	kind   byte // 'd' directory, 'f' regular file, 'l' symbolic link
	size   int64
	mtime  int64 // Unix nanoseconds; 0 when the source has none
	exec   bool
	target string // 'l': link target relative to the link's directory
	sum    string // 'f': hex SHA-256 of the content
	racy   bool   // 'f': sum must not be trusted next time (see racyWindow)
	id     fileID // 'f': the listed file, where the file system says
}

// scanned is the result of walking a skill source.
type scanned struct {
	nodes   []node
	skipped []Skipped
	files   int
	bytes   int64
}

// manifest records a staged copy: its digest, each source file's cache
// key, and what each file and folder of the copy was when Stage wrote or
// last checked it.
type manifest struct {
	Digest  string              `json:"digest"`
	Entries map[string]entry    `json:"entries"`
	Copy    map[string]copyStat `json:"copy,omitempty"`
}

// copyStat is the stat of one regular file or folder of a staged copy
// (path "." for the copy's own folder).
type copyStat struct {
	Dev   uint64 `json:"dev"`
	Ino   uint64 `json:"ino"`
	Mode  uint32 `json:"mode"` // an fs.FileMode
	Size  int64  `json:"size"`
	MTime int64  `json:"mtime"` // Unix nanoseconds
	CTime int64  `json:"ctime"`
	// Verified is the change time of a file created on the copy's file
	// system just after this file's content was last written or hashed;
	// 0 if none could be made. An unchanged stat proves an unchanged file
	// only when CTime is earlier than Verified: a write within the same
	// timestamp tick as the last check could keep the change time.
	Verified int64 `json:"verified,omitempty"`
}

// fileID identifies a file on its device.
type fileID struct{ dev, ino uint64 }

type entry struct {
	Size  int64  `json:"size"`
	MTime int64  `json:"mtime"`
	Sum   string `json:"sum"`
	Racy  bool   `json:"racy,omitempty"`
}

// skipSource reports names never copied from a source, at any depth: version
// control, dependency caches and virtual environments, which are either
// rebuilt in the workspace or not the skill's content.
func skipSource(name string) bool {
	switch name {
	case ".git", "node_modules", "__pycache__", ".venv":
		return true
	}
	return false
}

// workspaceLink returns the target of the link that each skill copy gets at
// top-level name, or "" when name is not reserved.
func workspaceLink(name string) string {
	switch name {
	case outName:
		return "../../" + outName
	case workName:
		return "../../" + workName
	case "inputs":
		return "../../" + inputsRel
	}
	return ""
}

// scan walks src, applies the skip rules and limits, and resolves links.
func (w *Workspace) scan(ctx context.Context, name string, src fs.FS) (*scanned, error) {
	sc := &scanned{}
	err := fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		if skipSource(d.Name()) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.Contains(p, "/") && workspaceLink(p) != "" {
			sc.skipped = append(sc.skipped, Skipped{p, "name reserved for the link to the workspace's " + strings.TrimPrefix(workspaceLink(p), "../../") + " directory"})
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		switch t := d.Type(); {
		case t.IsDir():
			sc.nodes = append(sc.nodes, node{path: p, kind: 'd'})
		case t&fs.ModeSymlink != 0:
			target, err := resolveLink(src, p)
			if err != nil {
				sc.skipped = append(sc.skipped, Skipped{p, err.Error()})
				return nil
			}
			sc.nodes = append(sc.nodes, node{path: p, kind: 'l', target: relSlash(path.Dir(p), target)})
		case t.IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			sc.files++
			sc.bytes += info.Size()
			if sc.files > w.m.maxSkillFiles {
				return fmt.Errorf("%w: skill %q has more than %d files (Options.MaxSkillFiles)", ErrLimit, name, w.m.maxSkillFiles)
			}
			if sc.bytes > w.m.maxSkillBytes {
				return fmt.Errorf("%w: skill %q is larger than %d bytes (Options.MaxSkillBytes)", ErrLimit, name, w.m.maxSkillBytes)
			}
			n := node{path: p, kind: 'f', size: info.Size(), exec: info.Mode()&0o111 != 0, id: idOf(info)}
			if mt := info.ModTime(); !mt.IsZero() {
				n.mtime = mt.UnixNano()
			}
			sc.nodes = append(sc.nodes, n)
		default:
			sc.skipped = append(sc.skipped, Skipped{p, "not a regular file, directory or symbolic link"})
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrLimit) {
			return nil, err
		}
		return nil, fmt.Errorf("workspace %s: stage %s: read source: %w", w.id, name, err)
	}
	return sc, nil
}

// hashMissing fills each file's sum from prev when its size and mtime match
// a trusted entry, and hashes the others. It reports whether any file was
// hashed.
func (sc *scanned) hashMissing(ctx context.Context, src fs.FS, prev *manifest) (bool, error) {
	hashed := false
	var h hash.Hash
	for i := range sc.nodes {
		n := &sc.nodes[i]
		if n.kind != 'f' {
			continue
		}
		if e, ok := prev.Entries[n.path]; ok && !e.Racy && n.mtime != 0 && e.MTime == n.mtime && e.Size == n.size {
			n.sum = e.Sum
			continue
		}
		if err := ctx.Err(); err != nil {
			return hashed, err
		}
		if h == nil {
			h = sha256.New()
		}
		h.Reset()
		start := time.Now()
		f, err := openListed(src, n)
		if err != nil {
			return hashed, err
		}
		c, err := io.Copy(h, io.LimitReader(f, n.size+1))
		f.Close()
		if err != nil {
			return hashed, fmt.Errorf("read %s: %w", n.path, err)
		}
		if c != n.size {
			return hashed, fmt.Errorf("%w: %s was listed with %d bytes and %d were read", ErrSourceChanged, n.path, n.size, c)
		}
		n.sum = hex.EncodeToString(h.Sum(nil))
		n.racy = isRacy(n.mtime, start)
		hashed = true
	}
	return hashed, nil
}

// openListed opens the source file of n and checks, on the opened file's
// own Stat, that it is the file the walk listed: a regular file of the
// listed size and, where both stats say, the same device and inode. A
// listed file that is gone is a changed source too.
func openListed(src fs.FS, n *node) (fs.File, error) {
	f, err := src.Open(n.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s was listed and is gone; stage again", ErrSourceChanged, n.path)
	}
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	why := ""
	switch id := idOf(info); {
	case !info.Mode().IsRegular():
		why = fmt.Sprintf("is not a regular file any more (%v)", info.Mode().Type())
	case info.Size() != n.size:
		why = fmt.Sprintf("was listed with %d bytes and has %d", n.size, info.Size())
	case id != (fileID{}) && n.id != (fileID{}) && id != n.id:
		why = "is another file than the one listed"
	}
	if why != "" {
		f.Close()
		return nil, fmt.Errorf("%w: %s %s; stage again", ErrSourceChanged, n.path, why)
	}
	return f, nil
}

// isRacy reports whether a hash taken at start of a file with mtime may miss
// a later same-size rewrite that keeps the mtime.
func isRacy(mtime int64, start time.Time) bool {
	return mtime == 0 || mtime >= start.Add(-racyWindow).UnixNano()
}

// digest hashes the scanned tree. Paths are quoted so that no name can
// imitate a record boundary.
func (sc *scanned) digest() string {
	h := sha256.New()
	for _, n := range sc.nodes {
		switch n.kind {
		case 'd':
			fmt.Fprintf(h, "d %s\n", strconv.Quote(n.path))
		case 'l':
			fmt.Fprintf(h, "l %s %s\n", strconv.Quote(n.path), strconv.Quote(n.target))
		case 'f':
			fmt.Fprintf(h, "f %s %t %s\n", strconv.Quote(n.path), n.exec, n.sum)
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

func (sc *scanned) manifest(digest string) *manifest {
	m := &manifest{Digest: digest, Entries: make(map[string]entry, sc.files)}
	for _, n := range sc.nodes {
		if n.kind == 'f' {
			m.Entries[n.path] = entry{Size: n.size, MTime: n.mtime, Sum: n.sum, Racy: n.racy}
		}
	}
	return m
}

// copyIn copies the scanned tree into a temporary directory inside the
// workspace, hashing as it copies, adds the workspace links and swaps the
// result into skills/<name>.
func (w *Workspace) copyIn(ctx context.Context, root *os.Root, name string, src fs.FS, sc *scanned) (err error) {
	fail := func(err error) error {
		if errors.Is(err, ErrLimit) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return fmt.Errorf("workspace %s: stage %s: %w", w.id, name, err)
	}
	tmp := skillsName + "/" + stagePrefix + name + "-" + randomHex(6)
	if err := root.Mkdir(tmp, 0o755); err != nil {
		return fail(err)
	}
	defer func() {
		if err != nil {
			_ = root.RemoveAll(tmp)
		}
	}()
	tr, err := root.OpenRoot(tmp)
	if err != nil {
		return fail(err)
	}
	defer tr.Close()
	// One os.Root per directory: creating a file then costs one openat
	// instead of one per path element.
	dirs := map[string]*os.Root{".": tr}
	defer func() {
		for d, r := range dirs {
			if d != "." {
				r.Close()
			}
		}
	}()
	h := sha256.New()
	budget := w.m.maxSkillBytes
	buf := make([]byte, 64<<10)
	for i := range sc.nodes {
		n := &sc.nodes[i]
		if err := ctx.Err(); err != nil {
			return err
		}
		parent, ok := dirs[path.Dir(n.path)]
		if !ok { // WalkDir lists a directory before its entries
			return fail(fmt.Errorf("internal: directory of %s not created", n.path))
		}
		base := path.Base(n.path)
		switch n.kind {
		case 'd':
			if err = parent.Mkdir(base, 0o755); err == nil {
				dirs[n.path], err = parent.OpenRoot(base)
			}
		case 'l':
			err = parent.Symlink(n.target, base)
		case 'f':
			h.Reset()
			start := time.Now()
			var size int64
			size, err = stageFile(src, n, parent, base, budget, h, buf)
			if errors.Is(err, ErrLimit) {
				return fmt.Errorf("%w: skill %q grew past %d bytes while being copied (Options.MaxSkillBytes)", ErrLimit, name, w.m.maxSkillBytes)
			}
			budget -= size
			n.sum = hex.EncodeToString(h.Sum(nil))
			n.racy = isRacy(n.mtime, start)
		}
		if err != nil {
			return fail(err)
		}
	}
	for _, l := range []string{outName, workName, "inputs"} {
		if err := tr.Symlink(workspaceLink(l), l); err != nil {
			return fail(err)
		}
	}
	if err := replaceDir(root, tmp, skillsName+"/"+name); err != nil {
		return fail(err)
	}
	return nil
}

func fileMode(exec bool) os.FileMode {
	if exec {
		return 0o755
	}
	return 0o644
}

// stageFile copies the source file of n to a new file dstPath under dst,
// writing the content to h as well: exactly the listed n.size bytes of the
// listed file (openListed), or an error wrapping ErrSourceChanged. It
// fails with ErrLimit past budget bytes.
func stageFile(src fs.FS, n *node, dst *os.Root, dstPath string, budget int64, h io.Writer, buf []byte) (int64, error) {
	if n.size > budget {
		return 0, ErrLimit
	}
	in, err := openListed(src, n)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	out, err := dst.OpenFile(dstPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode(n.exec))
	if err != nil {
		return 0, err
	}
	c, err := io.CopyBuffer(io.MultiWriter(out, h), io.LimitReader(in, n.size+1), buf)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
		return c, fmt.Errorf("copy %s: %w", n.path, err)
	case c != n.size:
		return c, fmt.Errorf("%w: %s was listed with %d bytes and %d were read; stage again", ErrSourceChanged, n.path, n.size, c)
	}
	return c, nil
}

// copyFile copies srcPath from src to a new file dstPath under dst, writing
// the content to h as well. It fails with ErrLimit past budget bytes.
func copyFile(src fs.FS, srcPath string, dst *os.Root, dstPath string, mode os.FileMode, budget int64, h io.Writer, buf []byte) (int64, error) {
	in, err := src.Open(srcPath)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	out, err := dst.OpenFile(dstPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return 0, err
	}
	n, err := io.CopyBuffer(io.MultiWriter(out, h), io.LimitReader(in, budget+1), buf)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, fmt.Errorf("copy %s: %w", srcPath, err)
	}
	if n > budget {
		return n, ErrLimit
	}
	return n, nil
}

// replaceDir moves the complete directory tmp to dst, replacing any previous
// dst in one step where the system allows it.
func replaceDir(root *os.Root, tmp, dst string) error {
	if _, err := root.Lstat(dst); errors.Is(err, fs.ErrNotExist) {
		return root.Rename(tmp, dst)
	}
	err := exchange(root, tmp, dst)
	if errors.Is(err, errNoExchange) {
		// Two renames: dst is briefly absent, never half-written.
		old := skillsName + "/" + oldPrefix + randomHex(6)
		if err := root.Rename(dst, old); err != nil {
			return err
		}
		if err := root.Rename(tmp, dst); err != nil {
			return err
		}
		return root.RemoveAll(old)
	}
	if err != nil {
		return err
	}
	return root.RemoveAll(tmp) // tmp now holds the old copy
}

// errNoExchange reports that atomic exchange is unavailable here.
var errNoExchange = errors.New("atomic rename exchange not supported")

// loadManifest returns the cached manifest of skill name, from memory or
// from the workspace's record in the metadata root meta, or nil.
func (w *Workspace) loadManifest(meta *os.Root, name string) *manifest {
	if m, ok := w.st.manifests[name]; ok {
		return m
	}
	data, err := meta.ReadFile(metaPath(w.id, stagedName, name+".json"))
	if err != nil {
		return nil
	}
	m := new(manifest)
	if json.Unmarshal(data, m) != nil || m.Digest == "" {
		return nil // unreadable: restage
	}
	w.st.manifests[name] = m
	return m
}

// saveManifest caches m in memory and, best effort, in the workspace's
// record so other processes and later Managers can reuse it; a missing file
// only costs a copy.
func (w *Workspace) saveManifest(meta *os.Root, name string, m *manifest) {
	w.st.manifests[name] = m
	data, err := json.Marshal(m)
	if err != nil {
		return
	}
	p := metaPath(w.id, stagedName, name+".json")
	tmp := p + ".tmp-" + randomHex(4)
	if meta.WriteFile(tmp, data, 0o600) != nil || meta.Rename(tmp, p) != nil {
		_ = meta.Remove(tmp)
	}
}

// resolveLink resolves the symbolic link at p inside fsys one element at a
// time, following further links, and returns the link-free target path
// relative to the root of fsys. It fails when the link is absolute, leaves
// the root, dangles or loops.
func resolveLink(fsys fs.FS, p string) (string, error) {
	rl, ok := fsys.(fs.ReadLinkFS)
	if !ok {
		return "", errors.New("symbolic link in a source that cannot read links")
	}
	cur := splitPath(path.Dir(p)) // link-free: WalkDir does not enter links
	target, err := rl.ReadLink(p)
	if err != nil {
		return "", err
	}
	var queue []string
	hops := 0
	push := func(t string) error {
		if strings.HasPrefix(t, "/") {
			return fmt.Errorf("symbolic link to absolute path %q leaves the skill", t)
		}
		queue = append(strings.Split(t, "/"), queue...)
		return nil
	}
	if err := push(target); err != nil {
		return "", err
	}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(cur) == 0 {
				return "", fmt.Errorf("symbolic link to %q leaves the skill", target)
			}
			cur = cur[:len(cur)-1]
			continue
		}
		next := path.Join(append(cur, c)...)
		info, err := rl.Lstat(next)
		if err != nil {
			return "", fmt.Errorf("symbolic link to %q leads nowhere", target)
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			if hops++; hops > maxLinkHops {
				return "", fmt.Errorf("symbolic link to %q loops", target)
			}
			t, err := rl.ReadLink(next)
			if err != nil {
				return "", err
			}
			if err := push(t); err != nil {
				return "", err
			}
			continue
		}
		if !info.IsDir() && len(queue) > 0 {
			return "", fmt.Errorf("symbolic link to %q leads nowhere", target)
		}
		cur = append(cur, c)
	}
	return path.Join(append([]string{"."}, cur...)...), nil
}

// relSlash returns the relative slash path from directory from to to; both
// are relative to the same root and free of links.
func relSlash(from, to string) string {
	f, t := splitPath(from), splitPath(to)
	i := 0
	for i < len(f) && i < len(t) && f[i] == t[i] {
		i++
	}
	parts := make([]string, 0, len(f)-i+len(t)-i)
	for range f[i:] {
		parts = append(parts, "..")
	}
	parts = append(parts, t[i:]...)
	if len(parts) == 0 {
		return "."
	}
	return strings.Join(parts, "/")
}
