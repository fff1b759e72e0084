package mcpsource

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/skillkit/skillkit/skill"
)

// Scheme is the URI scheme of the files a skills server serves:
// skill://<skill-path>/<file-path>.
const Scheme = "skill://"

// maxSegment bounds one segment of a skill URI, as file systems bound a
// name.
const maxSegment = 255

// parseSkillURI splits the URI of a skill's SKILL.md,
// skill://<skill-path>/SKILL.md, into the segments of its skill path
// (at least one; the last names the skill). It is deliberately strict:
// a segment that could mean something else to a file system or a URI
// parser ("", ".", "..", a backslash, a control character, '%', '?',
// '#') is refused rather than interpreted.
func parseSkillURI(uri string) ([]string, error) {
	rest, ok := strings.CutPrefix(uri, Scheme)
	if !ok {
		return nil, fmt.Errorf("URI %q does not start with %s", clip(uri), Scheme)
	}
	p, ok := strings.CutSuffix(rest, "/"+skill.FileName)
	if !ok || p == "" {
		return nil, fmt.Errorf("URI %q does not name a %s (skill://<skill-path>/%s)", clip(uri), skill.FileName, skill.FileName)
	}
	segs := strings.Split(p, "/")
	for _, s := range segs {
		if err := checkSegment(s); err != nil {
			return nil, fmt.Errorf("URI %q: %w", clip(uri), err)
		}
	}
	return segs, nil
}

// resourcePath returns the path, relative to the skill folder, of the
// resource uri of the skill whose path is skillPath (segments joined by
// "/"). The resource must lie below the skill path.
func resourcePath(skillPath, uri string) (string, error) {
	rel, ok := strings.CutPrefix(uri, Scheme+skillPath+"/")
	if !ok || rel == "" {
		return "", fmt.Errorf("resource URI %q is not below the skill's %s%s/", clip(uri), Scheme, skillPath)
	}
	for _, s := range strings.Split(rel, "/") {
		if err := checkSegment(s); err != nil {
			return "", fmt.Errorf("resource URI %q: %w", clip(uri), err)
		}
	}
	return rel, nil
}

var errEmptySegment = errors.New("empty path segment")

// checkSegment checks one segment of a skill URI.
func checkSegment(s string) error {
	switch {
	case s == "":
		return errEmptySegment
	case s == "." || s == "..":
		return fmt.Errorf("path segment %q is not allowed", s)
	case len(s) > maxSegment:
		return fmt.Errorf("path segment of %d bytes, over %d", len(s), maxSegment)
	case !utf8.ValidString(s):
		return errors.New("path segment is not valid UTF-8")
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == '\\' || r == '%' || r == '?' || r == '#' {
			return fmt.Errorf("path segment %q holds %q, which skillkit does not accept in a skill URI", s, r)
		}
	}
	return nil
}

// clip shortens an untrusted string for an error message.
func clip(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
