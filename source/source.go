// Package source says where skills come from and finds them there.
//
// A Source is any io/fs file system — a host directory (Dir), an
// embed.FS, or one skill folder — plus a label and a rank. Discover walks a
// source to a bounded depth and returns every SKILL.md it finds, parsed
// leniently; a skill folder is never searched for further skills.
// SkillFS gives the file system of one skill that was found.
//
// A host directory is read without following symbolic links (see Dir), so
// that a file swapped for a link while it is being read — a link to
// /etc/shadow, say — yields an error rather than the file it points to,
// and a FIFO swapped in cannot block a read.
package source

import (
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// DefaultMaxDepth is how many folder levels below a root discovery
// searches for skills by default.
const DefaultMaxDepth = 4

// Source is one root of skills.
type Source struct {
	// Label names the source in listings and diagnostics ("project",
	// "user", "bundled", a path, ...).
	Label string
	// FS is the file system the skills are read from.
	FS fs.FS
	// Path is the root as a host path, when it has one; skills then report
	// absolute host folders. Empty for embedded or remote sources.
	Path string
	// Rank orders sources: when two skills share a name, the one from the
	// lower rank wins and the other is reported as shadowed.
	Rank int
	// MaxDepth bounds the folder levels searched below the root. 0 means
	// DefaultMaxDepth; negative is an error.
	MaxDepth int
}

// Dir returns a source for a host directory. The path is made absolute so
// skills report stable folders; it must exist and be a directory.
//
// Its file system opens every path beneath the directory without
// following symbolic links at any element — openat2 with
// RESOLVE_NO_SYMLINKS on the directory's link-free path, or one
// O_NOFOLLOW openat per element relative to the directory where the
// kernel lacks openat2 (discovery reads relative to a descriptor of the
// directory with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS) — and with
// O_NONBLOCK; Open checks with fstat on the descriptor it opened that it
// got a regular file or a folder, and its files' Stat is that fstat; Stat
// and Lstat follow no link either. Links in the directory's own path are
// followed, as are, through SkillFS only, linked skill folders (the links
// discovery follows). Links inside a skill are resolved by whoever lists
// the skill (skill.Resolve) and the resolved path is then opened. On
// systems without openat the file system is os.DirFS.
func Dir(path, label string, rank int) (Source, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Source{}, fmt.Errorf("skill root %q: %w", path, err)
	}
	info, err := os.Stat(abs)
	if err != nil {
		return Source{}, fmt.Errorf("skill root %q: %w (give an existing directory)", path, err)
	}
	if !info.IsDir() {
		return Source{}, fmt.Errorf("skill root %q is not a directory; give the folder that holds skills (or a skill folder)", path)
	}
	if label == "" {
		label = abs
	}
	return Source{Label: label, FS: dirFS(abs), Path: abs, Rank: rank}, nil
}

// FS returns a source for any file system, such as an embed.FS. Use
// fs.Sub first when the skills sit below a prefix.
func FS(fsys fs.FS, label string, rank int) Source {
	return Source{Label: label, FS: fsys, Rank: rank}
}

// HostPath returns the host path of dir (a slash path in the source's
// file system), or "" when the source has no host path.
func (s Source) HostPath(dir string) string {
	if s.Path == "" {
		return ""
	}
	if dir == "." || dir == "" {
		return s.Path
	}
	return filepath.Join(s.Path, filepath.FromSlash(dir))
}

// DisplayPath names dir for people: the host path when there is one, else
// the label joined with dir.
func (s Source) DisplayPath(dir string) string {
	if p := s.HostPath(dir); p != "" {
		return p
	}
	if dir == "." || dir == "" {
		return s.Label
	}
	return strings.TrimSuffix(s.Label, "/") + "/" + dir
}

// DefaultRoots returns the roots searched when the operator names none, in
// rank order (best first): each entry of $SKILLKIT_PATH (colon-separated,
// see SplitList; when it is unset, $SKILLS_ROOT, one root, the name seed
// 003 gives it), the project's .agents/skills (in the nearest ancestor of
// cwd holding .git, else in cwd), and ~/.agents/skills. Roots that do not
// exist are left out; an entry of $SKILLKIT_PATH that is not a folder is
// also left out and named in the returned warnings, since it was
// configured on purpose. getenv and home are parameters so callers and
// tests control them. An entry that is an http(s) URL (IsURL) is left out
// with a warning: DefaultRootsURL opens those.
func DefaultRoots(cwd string, getenv func(string) string, home string) ([]Source, []string, error) {
	return DefaultRootsURL(cwd, getenv, home, nil)
}

// OpenURLFunc opens a configured root that is an http(s) URL (an archive
// of skills, see package source/archive) as a source with the given label
// and rank.
type OpenURLFunc func(url, label string, rank int) (Source, error)

// DefaultRootsURL is DefaultRoots with openURL opening the entries that
// are URLs. An entry openURL cannot open is left out with a warning
// holding its error, as a missing folder is. Nil openURL leaves every URL
// entry out with a warning.
func DefaultRootsURL(cwd string, getenv func(string) string, home string, openURL OpenURLFunc) ([]Source, []string, error) {
	var out []Source
	var warnings []string
	add := func(path, label string) error {
		configured := strings.HasPrefix(label, "SKILLKIT_PATH:") || strings.HasPrefix(label, "SKILLS_ROOT:")
		if configured && IsURL(path) {
			name := RedactURL(path)
			if openURL == nil {
				warnings = append(warnings, fmt.Sprintf("%s entry %q is a URL, which this program does not fetch; skipped", envName(label), name))
				return nil
			}
			src, err := openURL(path, name, len(out))
			if err != nil {
				warnings = append(warnings, fmt.Sprintf("%s entry %q skipped: %v", envName(label), name, err))
				return nil
			}
			out = append(out, src)
			return nil
		}
		info, err := os.Stat(path)
		if err != nil || !info.IsDir() {
			if configured {
				warnings = append(warnings, fmt.Sprintf("%s entry %q is not a folder; skipped", envName(label), path))
			}
			return nil
		}
		src, err := Dir(path, label, len(out))
		if err != nil {
			return err
		}
		out = append(out, src)
		return nil
	}
	if v := getenv("SKILLKIT_PATH"); v != "" {
		for _, p := range SplitList(v) {
			if err := add(p, "SKILLKIT_PATH:"+p); err != nil {
				return nil, nil, err
			}
		}
	} else if v := getenv("SKILLS_ROOT"); v != "" {
		if err := add(v, "SKILLS_ROOT:"+v); err != nil {
			return nil, nil, err
		}
	}
	if err := add(filepath.Join(ProjectRoot(cwd), ".agents", "skills"), "project"); err != nil {
		return nil, nil, err
	}
	if home != "" {
		if err := add(filepath.Join(home, ".agents", "skills"), "user"); err != nil {
			return nil, nil, err
		}
	}
	return out, warnings, nil
}

// envName is the variable a configured root's label names.
func envName(label string) string {
	name, _, _ := strings.Cut(label, ":")
	return name
}

// IsURL reports whether a root (a ROOT argument or an entry of
// $SKILLKIT_PATH) is an http:// or https:// URL rather than a host path.
func IsURL(root string) bool {
	scheme, rest, ok := strings.Cut(root, "://")
	if !ok || rest == "" {
		return false
	}
	return strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https")
}

// SplitList splits a $SKILLKIT_PATH value into its entries at the list
// separator (filepath.ListSeparator, ':' on Unix) and drops empty ones,
// keeping http(s) URLs whole: the colons of "https://", of a port and of
// credentials in a URL do not separate entries. A URL's authority extends
// over the following pieces until one holds a '/' (its path); a piece that
// starts with '/', '.' or '~' is never joined to it, so
// "https://host:8080:/srv/skills" is a URL without a path and a folder.
func SplitList(v string) []string {
	parts := filepath.SplitList(v)
	var out []string
	for i := 0; i < len(parts); i++ {
		p := parts[i]
		if filepath.ListSeparator == ':' && (strings.EqualFold(p, "http") || strings.EqualFold(p, "https")) &&
			i+1 < len(parts) && strings.HasPrefix(parts[i+1], "//") {
			i++
			rest := parts[i][2:] // after the "//"
			// No '/' after the "//" yet: the next piece is a port or a
			// password, unless it looks like a path of its own.
			for !strings.Contains(rest, "/") && i+1 < len(parts) &&
				parts[i+1] != "" && !strings.ContainsAny(parts[i+1][:1], "/.~") {
				i++
				rest += ":" + parts[i]
			}
			p += "://" + rest
		}
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// RedactURL returns a URL as it may be shown: without user information
// (user names and passwords are credentials as often as not) and with the
// value of every query parameter replaced by "REDACTED" (signed URLs carry
// tokens there); the fragment is kept. Text that does not parse as a URL
// is returned as "(unparsable URL)".
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User = nil
	if u.RawQuery != "" {
		q := u.Query()
		keys := make([]string, 0, len(q))
		for k := range q {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var b strings.Builder
		for i, k := range keys {
			if i > 0 {
				b.WriteByte('&')
			}
			b.WriteString(url.QueryEscape(k) + "=REDACTED")
		}
		u.RawQuery = b.String()
	}
	return u.String()
}

// ProjectRoot returns the nearest ancestor of cwd (cwd included) that
// holds a .git entry, or cwd itself when there is none.
func ProjectRoot(cwd string) string {
	dir := cwd
	for {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return cwd
		}
		dir = parent
	}
}
