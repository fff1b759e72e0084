package skill

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path"
	"slices"
	"sort"
	"strings"
)

// Default limits for one skill's manifest.
const (
	DefaultMaxFiles = 512
	DefaultMaxBytes = 16 << 20
)

// maxLinkHops bounds symlink resolution, the way kernels bound it, so a
// loop of links ends in an error instead of spinning.
const maxLinkHops = 40

// Limits bounds what one skill may hold. The zero value means the
// defaults; negative values are errors.
type Limits struct {
	// MaxFileSize caps SKILL.md in bytes (default 1 MiB).
	MaxFileSize int64
	// MaxFiles caps the number of files in the manifest (default 512);
	// a skill with more has its manifest truncated (see ReadManifest).
	MaxFiles int
	// MaxBytes caps the summed size of the manifest's files (default 16
	// MiB); a skill holding more has its manifest truncated.
	MaxBytes int64
}

// WithDefaults returns l with zero fields set to their defaults, or an
// error naming the first negative field.
func (l Limits) WithDefaults() (Limits, error) {
	switch {
	case l.MaxFileSize < 0:
		return l, fmt.Errorf("skill: Limits.MaxFileSize is %d; use 0 for the default or a positive byte count", l.MaxFileSize)
	case l.MaxFiles < 0:
		return l, fmt.Errorf("skill: Limits.MaxFiles is %d; use 0 for the default or a positive count", l.MaxFiles)
	case l.MaxBytes < 0:
		return l, fmt.Errorf("skill: Limits.MaxBytes is %d; use 0 for the default or a positive byte count", l.MaxBytes)
	}
	if l.MaxFileSize == 0 {
		l.MaxFileSize = DefaultMaxFileSize
	}
	if l.MaxFiles == 0 {
		l.MaxFiles = DefaultMaxFiles
	}
	if l.MaxBytes == 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	return l, nil
}

// File is one entry of a skill's manifest.
type File struct {
	// Path is slash-separated and relative to the skill folder.
	Path string `json:"path"`
	// Target is the file's resolved, link-free path in the file system
	// the manifest was read from, when it was reached through a symlink
	// (the file's own or a folder's); empty otherwise. Open this path,
	// not Path, to read the file without following links.
	Target string `json:"-"`
	// Size is the file's size in bytes.
	Size int64 `json:"size"`
	// SHA256 is the hex digest of the content, set only when the manifest
	// was read with hashing.
	SHA256 string `json:"sha256,omitempty"`
	// Doc is true for text documents other than SKILL.md (see IsDoc).
	Doc bool `json:"doc,omitempty"`
}

// Manifest lists every file that belongs to a skill, sorted by path.
type Manifest struct {
	// Files are the files of the skill, sorted by path.
	Files []File
	// Bytes is the summed Size of Files.
	Bytes int64
	// Truncated is set when the skill folder holds more than the limits
	// allow; Files then holds only the files met first (see ReadManifest).
	Truncated *Truncation
	// Skipped lists the entries of the folder the listing left out, each
	// with the warning ReadManifest reported for it: links that lead out
	// of the skill, nowhere or in a cycle, files that are not regular, and
	// folders holding a skill of their own. Files past a limit are not
	// listed here (Truncated counts them).
	Skipped []Skipped
}

// Skipped is an entry of a skill folder left out of its manifest.
type Skipped struct {
	// Path is the entry's path in the skill folder, slash-separated.
	Path string
	// Reason is the warning reported for it.
	Reason string
}

// Truncation says which limit cut a manifest short, and what the walk
// saw of the folder.
//
// Why a skill over a limit stays usable, truncated, rather than being
// left out: its instructions (SKILL.md, listed first) and the files that
// fit are there, and every reader gets the same files — listed, read,
// served and staged — while the rest of the folder does not belong to
// the skill, so nothing reads or copies more than the limits allow.
// Leaving the skill out could not be the same everywhere: discovery,
// which decides what the catalog offers, reads no folder but SKILL.md
// (so that a catalog of ten thousand skills costs less than `cat` of
// their SKILL.md files), and the files are listed only when first
// needed; a skill could then be offered and later refused. The warning
// names the limit, how much the folder holds and the setting to raise.
type Truncation struct {
	// Limit is the Limits field that was reached: "MaxFiles" (also when
	// the walk met more entries than it examines, 4 per allowed file plus
	// 64) or "MaxBytes".
	Limit string
	// Max is that limit's value: a file count or a byte count.
	Max int64
	// Files and Bytes count the regular files the walk met, those left
	// out included, and their summed size.
	Files int
	// Bytes is the summed size of those files, in bytes.
	Bytes int64
	// Partial is set when the walk stopped at its bound on examined
	// entries before it saw the whole folder: Files and Bytes are then
	// lower bounds.
	Partial bool
}

// LimitNames names, in the warning about a truncated manifest, the
// setting that raises each limit: a command line puts its flags here
// (say "--max-files"), a library the option field. An empty name means
// the Limits field itself ("Limits.MaxFiles").
type LimitNames struct {
	// MaxFiles names the setting of Limits.MaxFiles.
	MaxFiles string
	// MaxBytes names the setting of Limits.MaxBytes.
	MaxBytes string
}

// message is the warning about a truncated manifest of the skill whose
// files were listed (n of them, bytes in all).
func (t *Truncation) message(n int, bytes int64, names LimitNames) string {
	kept := fmt.Sprintf("only the first %d files (%d bytes; SKILL.md first, then folder by folder in name order) are listed, read and staged", n, bytes)
	if t.Limit == "MaxBytes" {
		name := orDefault(names.MaxBytes, "Limits.MaxBytes")
		if t.Partial {
			return fmt.Sprintf("skill holds more than %d bytes (the walk stopped after %d entries), more than the %d bytes a skill may hold: %s; raise the bytes-per-skill limit (%s) to more than %d, or remove large files",
				t.Bytes, maxEntries(int(t.Max)), t.Max, kept, name, t.Bytes)
		}
		return fmt.Sprintf("skill holds %d bytes in %d files, more than the %d bytes a skill may hold: %s; raise the bytes-per-skill limit (%s) to %d or more, or remove large files",
			t.Bytes, t.Files, t.Max, kept, name, t.Bytes)
	}
	name := orDefault(names.MaxFiles, "Limits.MaxFiles")
	if t.Partial {
		return fmt.Sprintf("skill has more than %d entries (files, folders and links, counted along every path a link opens; %d files among them), more than the walk examines for the %d files a skill may hold: %s; raise the files-per-skill limit (%s; the walk examines 4 entries per file plus 64), or remove files",
			maxEntries(int(t.Max)), t.Files, t.Max, kept, name)
	}
	return fmt.Sprintf("skill has %d files, more than the %d a skill may hold: %s; raise the files-per-skill limit (%s) to %d or more, or remove files",
		t.Files, t.Max, kept, name, t.Files)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Docs returns the paths of the manifest's documents, sorted.
func (m *Manifest) Docs() []string {
	var out []string
	for _, f := range m.Files {
		if f.Doc {
			out = append(out, f.Path)
		}
	}
	return out
}

// Lookup returns the manifest entry for rel.
func (m *Manifest) Lookup(rel string) (File, bool) {
	i := sort.Search(len(m.Files), func(i int) bool { return m.Files[i].Path >= rel })
	if i < len(m.Files) && m.Files[i].Path == rel {
		return m.Files[i], true
	}
	return File{}, false
}

// ignoredDirs never belong to a skill: version control, dependency trees
// and interpreter caches.
var ignoredDirs = map[string]bool{
	".git": true, "node_modules": true, "__pycache__": true, ".venv": true,
	".hg": true, ".svn": true,
}

// IgnoredDir reports whether a directory with this name is left out of
// every skill manifest (and of discovery).
func IgnoredDir(name string) bool { return ignoredDirs[name] }

// docExts are the extensions of text documents a model may select.
var docExts = map[string]bool{
	".md": true, ".markdown": true, ".mdx": true, ".txt": true, ".text": true,
	".rst": true, ".adoc": true, ".asciidoc": true, ".org": true,
}

// IsDoc reports whether rel (relative to the skill folder) is a document:
// a text file by extension, other than the top-level SKILL.md.
func IsDoc(rel string) bool {
	if rel == FileName {
		return false
	}
	return docExts[strings.ToLower(path.Ext(rel))]
}

// ManifestOptions adjusts ReadManifest. The zero value is ready to use.
type ManifestOptions struct {
	// Limits bounds the files and bytes listed; zero fields take their
	// defaults (see Limits.WithDefaults).
	Limits Limits
	// Hash computes each file's SHA-256 (reads every byte).
	Hash bool
	// Label names the skill folder in diagnostics and errors (for example
	// its host path). Default: dir.
	Label string
	// LimitNames names the settings the warning about a truncated
	// manifest tells the user to raise.
	LimitNames LimitNames
	// Listed, when set, is called for each file the manifest lists, with
	// its link-free path in fsys and the stat the listing took of it (to
	// tell later, by size and modification time, whether it changed).
	Listed func(fsPath string, info fs.FileInfo)
}

// ReadManifest lists the files of the skill whose folder is dir inside
// fsys. It leaves out ignored directories (IgnoredDir) and nested folders
// that hold their own SKILL.md (those are other skills). Symlinks are
// followed only while their target stays inside the skill folder; others
// are reported as warnings and skipped, and cycles are detected.
//
// A skill over Limits.MaxFiles or Limits.MaxBytes, or whose walk meets
// more entries than it examines (4 per allowed file plus 64, folders and
// links included, counted along every path a link opens), is not an
// error: the manifest holds the files met first — SKILL.md first, then
// folder by folder in name order — up to the limit, Manifest.Truncated
// says which limit and how much the folder holds, and one warning says
// so, naming the setting to raise (ManifestOptions.LimitNames). A
// SKILL.md over Limits.MaxFileSize is an error wrapping ErrLimit.
//
// Each link is resolved once (Resolve) and a file reached through links
// records its resolved path as File.Target; files are then opened by
// their link-free path, so a file system that follows no links (the one
// source.Dir makes) opens exactly what was listed. With Hash, each
// opened file must still be a regular file of the listed size, checked
// before it is read (CheckListed), or ReadManifest fails with an error
// wrapping ErrChanged that names the file. A file system that follows
// links and blocks on FIFOs in Open (os.DirFS) can still be raced by
// whoever writes the folder.
func ReadManifest(ctx context.Context, fsys fs.FS, dir string, opts ManifestOptions) (*Manifest, []Diagnostic, error) {
	lim, err := opts.Limits.WithDefaults()
	if err != nil {
		return nil, nil, err
	}
	label := opts.Label
	if label == "" {
		label = dir
	}
	w := &walker{ctx: ctx, fsys: fsys, root: path.Clean(dir), lim: lim, hash: opts.Hash, label: label, listed: opts.Listed}
	if err := w.walk(w.root, ""); err != nil && err != errStopWalk {
		return nil, w.diags, err
	}
	slices.SortFunc(w.files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	m := &Manifest{Files: w.files, Bytes: w.bytes, Truncated: w.trunc, Skipped: w.skipped}
	if t := w.trunc; t != nil {
		t.Files, t.Bytes = w.seen, w.seenBytes
		w.diags = append(w.diags, Diagnostic{File: label, Severity: Warning, Message: t.message(len(m.Files), m.Bytes, opts.LimitNames)})
	}
	return m, w.diags, nil
}

// errStopWalk ends a walk that reached its bound on examined entries.
var errStopWalk = errors.New("walk stopped")

type walker struct {
	ctx    context.Context
	fsys   fs.FS
	root   string
	lim    Limits
	hash   bool
	label  string
	listed func(string, fs.FileInfo)
	files  []File
	bytes  int64
	diags  []Diagnostic
	// active holds the resolved folders on the current walk path; a link
	// into one of them is a cycle. A folder reached again by another path
	// (a link to a sibling) is listed again under that path: not a cycle.
	// It is as long as the walk is deep.
	active []string
	// entries counts directory entries examined, along every path a link
	// opens, so links that fan out cannot make the walk explode.
	entries int
	// trunc is set once a limit is reached: later files are only counted,
	// in seen and seenBytes (every regular file met).
	trunc     *Truncation
	seen      int
	seenBytes int64
	skipped   []Skipped
}

// warn reports the entry rel left out of the manifest, and why.
func (w *walker) warn(rel, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	w.diags = append(w.diags, Diagnostic{File: path.Join(w.label, rel), Severity: Warning, Message: msg})
	w.skipped = append(w.skipped, Skipped{Path: rel, Reason: msg})
}

// walk lists the directory fsDir (a resolved path in fsys) whose path
// inside the skill is rel.
func (w *walker) walk(fsDir, rel string) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	w.active = append(w.active, fsDir)
	defer func() { w.active = w.active[:len(w.active)-1] }()
	entries, err := fs.ReadDir(w.fsys, fsDir)
	if err != nil {
		return fmt.Errorf("reading skill folder %s: %w", path.Join(w.label, rel), err)
	}
	if rel != "" && slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.Name() == FileName }) {
		// A nested skill is a skill of its own: not part of this one, and
		// not discovered either (discovery does not search inside skill
		// folders), so say so. Its listing tells, without another stat.
		w.warn(rel, "folder holds its own SKILL.md: it is a separate skill, left out of this one and not discovered inside it; move it beside this skill to use it")
		return nil
	}
	if rel == "" {
		// SKILL.md first, so that a manifest cut at a limit keeps it.
		if i := slices.IndexFunc(entries, func(e fs.DirEntry) bool { return e.Name() == FileName }); i > 0 {
			entries = slices.Concat(entries[i:i+1], entries[:i], entries[i+1:])
		}
	}
	for _, e := range entries {
		w.entries++
		if w.entries > w.maxEntries() {
			if w.trunc == nil {
				w.trunc = &Truncation{Limit: "MaxFiles", Max: int64(w.lim.MaxFiles)}
			}
			w.trunc.Partial = true
			return errStopWalk
		}
		name := e.Name()
		fsPath := joinName(fsDir, name)
		relPath := joinName(rel, name)
		typ := e.Type()
		var info fs.FileInfo
		if typ&fs.ModeSymlink != 0 {
			// The link is resolved once, here; its file is later opened
			// by the resolved, link-free path, so a file system that
			// follows no links (source.Dir) reads exactly what was listed.
			resolved, err := Resolve(w.fsys, w.root, fsPath)
			if err != nil {
				w.warn(relPath, "symlink skipped: %v", err)
				continue
			}
			if info, err = fs.Stat(w.fsys, resolved); err != nil {
				w.warn(relPath, "symlink skipped: target %v", err)
				continue
			}
			fsPath, typ = resolved, info.Mode().Type()
		}
		switch {
		case typ.IsDir():
			if IgnoredDir(name) {
				continue
			}
			if slices.Contains(w.active, fsPath) || isAncestor(fsPath, fsDir) {
				w.warn(relPath, "symlink cycle: %s leads back to a folder already listed; skipped", relPath)
				continue
			}
			if err := w.walk(fsPath, relPath); err != nil {
				return err
			}
		case typ.IsRegular():
			if info == nil {
				if info, err = e.Info(); err != nil {
					return fmt.Errorf("reading %s: %w", path.Join(w.label, relPath), err)
				}
			}
			if !info.Mode().IsRegular() { // replaced since it was listed
				w.warn(relPath, "not a regular file (%v); skipped", info.Mode().Type())
				continue
			}
			if err := w.add(fsPath, relPath, info); err != nil {
				return err
			}
		default:
			w.warn(relPath, "not a regular file (%v); skipped", typ)
		}
	}
	return nil
}

// maxEntries is the bound on examined entries (Limits.MaxEntries).
func (w *walker) maxEntries() int { return w.lim.MaxEntries() }

// MaxEntries is the bound on the directory entries ReadManifest examines
// for these limits — files, folders and links, counted along every path
// a link opens: generous next to MaxFiles (4 per file plus 64, at most
// math.MaxInt) but finite, so links that fan out cannot make the walk
// explode. Zero fields count as their defaults.
func (l Limits) MaxEntries() int {
	files := l.MaxFiles
	if files <= 0 {
		files = DefaultMaxFiles
	}
	return maxEntries(files)
}

// maxEntries is the bound on examined entries for a limit of maxFiles
// files.
func maxEntries(maxFiles int) int {
	if maxFiles > (math.MaxInt-64)/4 {
		return math.MaxInt
	}
	return 4*maxFiles + 64
}

// add lists the regular file at fsPath (link-free), of the stat info, as
// rel.
func (w *walker) add(fsPath, rel string, info fs.FileInfo) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	size := info.Size()
	if rel == FileName && size > w.lim.MaxFileSize {
		return fmt.Errorf("%s is %d bytes, over the %d-byte SKILL.md limit; move material into reference files: %w", path.Join(w.label, rel), size, w.lim.MaxFileSize, ErrLimit)
	}
	w.seen++
	w.seenBytes += size
	switch {
	case w.trunc != nil:
		return nil // only counted
	case len(w.files) >= w.lim.MaxFiles:
		w.trunc = &Truncation{Limit: "MaxFiles", Max: int64(w.lim.MaxFiles)}
		return nil
	case w.bytes+size > w.lim.MaxBytes:
		w.trunc = &Truncation{Limit: "MaxBytes", Max: w.lim.MaxBytes}
		return nil
	}
	f := File{Path: rel, Size: size, Doc: IsDoc(rel)}
	if fsPath != joinName(w.root, rel) {
		f.Target = fsPath
	}
	w.bytes += f.Size
	if w.hash {
		sum, err := hashListed(w.fsys, fsPath, size)
		if err != nil {
			return fmt.Errorf("hashing %s: %w", path.Join(w.label, rel), err)
		}
		f.SHA256 = sum
	}
	w.files = append(w.files, f)
	if w.listed != nil {
		w.listed(fsPath, info)
	}
	return nil
}

// joinName joins a clean slash path in fsys ("." for the top) and a
// name, or a path below it, without cleaning again.
func joinName(dir, name string) string {
	if dir == "." || dir == "" {
		return name
	}
	return dir + "/" + name
}

// HashFile returns the hex SHA-256 of one file in fsys.
func HashFile(fsys fs.FS, name string) (string, error) {
	sum, _, err := hashFile(fsys, name, -1)
	return sum, err
}

// ErrChanged is wrapped by the errors of reads that found a file other
// than the one listed: not a regular file any more, or another size.
// Size and digest must describe the same bytes (hosts verify both), so
// the skill must be listed again.
var ErrChanged = errors.New("changed since it was listed; list the skill again")

// hashListed hashes the file at name, which was listed as a regular file
// of size bytes; it fails with ErrChanged when the file opened is not
// that (checked with the opened file's own Stat, before reading) or
// yields another number of bytes.
func hashListed(fsys fs.FS, name string, size int64) (string, error) {
	sum, n, err := hashFile(fsys, name, size)
	if err != nil {
		return "", err
	}
	if n != size {
		return "", fmt.Errorf("%d bytes listed, %d read: %w", size, n, ErrChanged)
	}
	return sum, nil
}

// hashFile returns the hex SHA-256 of one file and the number of bytes
// it hashed. With size >= 0 the file must be a regular file of that size
// by its Stat, and at most size+1 bytes are read.
func hashFile(fsys fs.FS, name string, size int64) (string, int64, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	var r io.Reader = f
	if size >= 0 {
		if err := CheckListed(f, size); err != nil {
			return "", 0, err
		}
		r = io.LimitReader(f, size+1)
	}
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil {
		return "", n, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// CheckListed checks, with f's own Stat (for a host file, the fstat of
// the descriptor that was opened), that f is a regular file of the size
// it was listed with. A mismatch is an error wrapping ErrChanged; the
// caller names the file.
func CheckListed(f fs.File, size int64) error {
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("not a regular file any more (%v): %w", info.Mode().Type(), ErrChanged)
	}
	if info.Size() != size {
		return fmt.Errorf("%d bytes listed, %d now: %w", size, info.Size(), ErrChanged)
	}
	return nil
}

// isAncestor reports whether dir is p or a parent of p.
func isAncestor(dir, p string) bool {
	return dir == p || dir == "." || strings.HasPrefix(p, dir+"/")
}

// ErrEscape is wrapped by errors for paths or symlinks that lead outside
// the folder they must stay in.
var ErrEscape = errors.New("path leads outside its root")

// Resolve resolves every symlink in p (a path in fsys under root)
// component by component and returns the resolved path. It fails with
// ErrEscape when any step leaves root (including absolute link targets),
// and when links nest deeper than 40 hops (a cycle).
func Resolve(fsys fs.FS, root, p string) (string, error) {
	root, p = path.Clean(root), path.Clean(p)
	var rel string
	switch {
	case root == ".":
		rel = p
	case p == root:
		rel = ""
	case strings.HasPrefix(p, root+"/"):
		rel = p[len(root)+1:]
	default:
		return "", fmt.Errorf("%s is not inside %s: %w", p, root, ErrEscape)
	}
	if rel == ".." || strings.HasPrefix(rel, "../") || path.IsAbs(rel) {
		return "", fmt.Errorf("%s is not inside %s: %w", p, root, ErrEscape)
	}
	pending := strings.Split(rel, "/")
	cur := root
	hops := 0
	for len(pending) > 0 {
		comp := pending[0]
		pending = pending[1:]
		switch comp {
		case "", ".":
			continue
		case "..":
			if cur == root {
				return "", fmt.Errorf("%s points outside the skill folder: %w", strings.TrimPrefix(p, root+"/"), ErrEscape)
			}
			cur = path.Dir(cur)
			continue
		}
		next := path.Join(cur, comp)
		info, err := fs.Lstat(fsys, next)
		if err != nil {
			return "", fmt.Errorf("%s: broken link: %w", strings.TrimPrefix(p, root+"/"), err)
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		hops++
		if hops > maxLinkHops {
			return "", fmt.Errorf("%s: too many levels of symbolic links (a cycle)", strings.TrimPrefix(p, root+"/"))
		}
		target, err := fs.ReadLink(fsys, next)
		if err != nil {
			return "", fmt.Errorf("%s: %w", strings.TrimPrefix(p, root+"/"), err)
		}
		if path.IsAbs(target) || strings.HasPrefix(target, "/") {
			return "", fmt.Errorf("%s points to the absolute path %s, outside the skill folder: %w", strings.TrimPrefix(p, root+"/"), target, ErrEscape)
		}
		pending = append(strings.Split(target, "/"), pending...)
	}
	return cur, nil
}
