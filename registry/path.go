package registry

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/skillkit/skillkit/skill"
)

// ErrInvalidPath is wrapped by the errors of CleanPath, and so of every
// method that takes a path inside a skill, for a path it refuses: empty,
// absolute, leading outside the skill folder, not valid UTF-8, or
// holding a NUL byte or a backslash.
var ErrInvalidPath = errors.New("invalid path")

// pathHint says what to pass instead of a refused path.
const pathHint = "pass a path relative to the skill folder, such as references/api.md"

// CleanPath is the one rule for a path inside a skill that ReadFile,
// DocText, Files and ResolveDocs apply. It strips any leading "./",
// cleans the rest with path.Clean ("references//a.md" and
// "references/../references/a.md" become "references/a.md") and returns
// the result; "." names the skill folder itself. It refuses, with an
// error wrapping ErrInvalidPath that says what to pass, an empty path, an
// absolute one, one that leads outside the skill folder ("..",
// "../other/SKILL.md", "a/../../b"), one that is not valid UTF-8, and one
// holding a NUL byte or a backslash. What it returns is a valid fs.FS
// name (fs.ValidPath).
func CleanPath(rel string) (string, error) {
	p, _, err := cleanPath(rel)
	return p, err
}

// cleanPath is CleanPath, also reporting whether a refused path would
// have led outside the skill folder (absolute or up through "..") rather
// than being malformed.
func cleanPath(rel string) (clean string, escapes bool, err error) {
	switch {
	case rel == "":
		return "", false, fmt.Errorf("%w: the path is empty; %s", ErrInvalidPath, pathHint)
	case strings.IndexByte(rel, 0) >= 0:
		return "", false, fmt.Errorf("%w %q: it holds a NUL byte; %s", ErrInvalidPath, rel, pathHint)
	case !utf8.ValidString(rel):
		return "", false, fmt.Errorf("%w %q: it is not valid UTF-8; %s", ErrInvalidPath, rel, pathHint)
	case strings.IndexByte(rel, '\\') >= 0:
		return "", false, fmt.Errorf("%w %q: it holds a backslash; separate folders with \"/\", as in references/api.md", ErrInvalidPath, rel)
	case path.IsAbs(rel):
		return "", true, fmt.Errorf("%w %q: it is absolute; %s", ErrInvalidPath, rel, pathHint)
	}
	// path.Clean strips every leading "./" too, and the slashes after it
	// (".//a" is "a"): the path is relative, checked above.
	c := path.Clean(rel)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", true, fmt.Errorf("%w %q: it leads outside the skill folder; %s", ErrInvalidPath, rel, pathHint)
	}
	return c, false, nil
}

// DocsError is the error of ResolveDocs for documents the skill does not
// have. It wraps ErrNotFound.
type DocsError struct {
	// Skill is the skill's name.
	Skill string
	// Unknown are the requested documents that are not documents of the
	// skill, as they were given, sorted and deduplicated.
	Unknown []string
	// Valid are the skill's documents, sorted.
	Valid []string
}

// Error lists the unknown documents and the valid ones.
func (e *DocsError) Error() string {
	quoted := make([]string, len(e.Unknown))
	for i, u := range e.Unknown {
		quoted[i] = strconv.Quote(u)
	}
	var b strings.Builder
	if len(e.Valid) == 0 {
		fmt.Fprintf(&b, "skill %q has no documents; unknown: %s", e.Skill, strings.Join(quoted, ", "))
	} else {
		fmt.Fprintf(&b, "unknown documents for skill %q: %s; valid documents: %s", e.Skill, strings.Join(quoted, ", "), strings.Join(e.Valid, ", "))
	}
	if slices.Contains(e.Unknown, skill.FileName) {
		b.WriteString(" (" + skill.FileName + " is the skill's instructions, always loaded, not a document)")
	}
	return b.String()
}

// Unwrap returns ErrNotFound.
func (e *DocsError) Unwrap() error { return ErrNotFound }

// ResolveDocs checks a request for documents of the named skill, the one
// resolver behind every tool and declaration that names documents. Each
// path is cleaned with CleanPath and must then be a document of the
// skill's manifest (skill.File.Doc; SKILL.md never is). It returns the
// cleaned paths sorted and deduplicated. Documents the skill does not
// have make a *DocsError (wrapping ErrNotFound) that lists them and the
// valid ones; a path CleanPath refuses makes an error naming it and
// wrapping ErrInvalidPath.
func (s *Snapshot) ResolveDocs(ctx context.Context, name string, docs []string) ([]string, error) {
	m, _, err := s.Manifest(ctx, name)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(docs))
	var unknown []string
	for _, d := range docs {
		p, err := CleanPath(d)
		if err != nil {
			return nil, fmt.Errorf("document of skill %q: %w", name, err)
		}
		if f, ok := m.Lookup(p); !ok || !f.Doc {
			unknown = append(unknown, d)
			continue
		}
		out = append(out, p)
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return nil, &DocsError{Skill: name, Unknown: slices.Compact(unknown), Valid: m.Docs()}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
