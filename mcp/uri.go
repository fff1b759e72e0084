package mcp

import (
	"errors"
	"fmt"
	"strings"

	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/skill"
)

// uriScheme starts every URI of a served skill file or folder.
const uriScheme = "skill://"

// errBadURI is wrapped by every error of parseURI.
var errBadURI = errors.New("not a skill:// URI this server serves")

// skillURI is a parsed skill://<name>/<path> URI. Skill names are unique in
// skillkit, so the skill path of the extension is the name alone.
type skillURI struct {
	// Name is the skill's name (the first and last segment of the skill
	// path).
	Name string
	// Path is a file or folder of the skill, relative to its folder, in
	// the form registry.CleanPath returns; "" is the skill's folder itself
	// (skill://name, written without a trailing slash).
	Path string
}

// String formats u canonically: the name as it is (skill names need no
// escaping) and each path segment with the bytes outside RFC 3986's pchar
// set percent-encoded in upper-case hex.
func (u skillURI) String() string {
	if u.Path == "" {
		return uriScheme + u.Name
	}
	var b strings.Builder
	b.Grow(len(uriScheme) + len(u.Name) + 1 + len(u.Path))
	b.WriteString(uriScheme)
	b.WriteString(u.Name)
	b.WriteByte('/')
	for i := 0; i < len(u.Path); i++ {
		c := u.Path[i]
		if c == '/' || pchar(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(upperHex[c>>4])
		b.WriteByte(upperHex[c&15])
	}
	return b.String()
}

const upperHex = "0123456789ABCDEF"

// pchar reports whether c may stand for itself in a path segment (RFC 3986
// pchar without pct-encoded: unreserved, sub-delims, ':' and '@').
func pchar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '-', '.', '_', '~', '!', '$', '&', '\'', '(', ')', '*', '+', ',', ';', '=', ':', '@':
		return true
	}
	return false
}

// fileURI is the URI of one file (or folder) of the named skill.
func fileURI(name, rel string) string { return skillURI{Name: name, Path: rel}.String() }

// skillMDURI is the URI of the named skill's SKILL.md.
func skillMDURI(name string) string { return fileURI(name, skill.FileName) }

// parseURI parses a skill:// URI in its canonical spelling only — the one
// String writes. Anything else is an error: another scheme or letter case,
// a skill path that is not one valid skill name (an empty authority, as in
// skill:///etc/passwd, included), empty, "." or ".." segments, a trailing
// slash, a query or fragment, a backslash or NUL, percent-encoding of a
// byte that needs none (%2E, %2F, %41) or in lower-case hex, and a path that
// does not decode to valid UTF-8. Refusing the other spellings instead of
// cleaning them means one file has one URI, so a client's cache, a host's
// approval and the manifest all agree on it.
func parseURI(raw string) (skillURI, error) {
	bad := func(format string, args ...any) (skillURI, error) {
		return skillURI{}, fmt.Errorf("%w: %q: %s", errBadURI, raw, fmt.Sprintf(format, args...))
	}
	rest, ok := strings.CutPrefix(raw, uriScheme)
	if !ok {
		return bad("a skill URI starts with %q", uriScheme)
	}
	name, p, hasPath := strings.Cut(rest, "/")
	if name == "" {
		return bad("no skill name after %q", uriScheme)
	}
	if !skill.ValidName(name) {
		return bad("%q is not a skill name (lower-case letters, digits and single hyphens)", name)
	}
	u := skillURI{Name: name}
	if hasPath {
		if p == "" {
			return bad("a folder's URI has no trailing slash; use %q", uriScheme+name)
		}
		var b strings.Builder
		for i, seg := range strings.Split(p, "/") {
			dec, err := unescapeSegment(seg)
			if err != nil {
				return bad("%v", err)
			}
			switch dec {
			case "":
				return bad("empty path segment")
			case ".", "..":
				return bad("path segment %q; give the file's own path inside the skill", dec)
			}
			if strings.ContainsAny(dec, "/\\\x00") {
				return bad("path segment %q holds a slash, a backslash or a NUL byte", dec)
			}
			if i > 0 {
				b.WriteByte('/')
			}
			b.WriteString(dec)
		}
		u.Path = b.String()
		clean, err := registry.CleanPath(u.Path)
		if err != nil {
			return bad("%v", err)
		}
		if clean != u.Path {
			return bad("not a clean path inside the skill; use %q", fileURI(name, clean))
		}
	}
	if canon := u.String(); canon != raw {
		return bad("not the canonical spelling; use %q", canon)
	}
	return u, nil
}

// unescapeSegment decodes the %XX escapes of one path segment.
func unescapeSegment(seg string) (string, error) {
	if !strings.Contains(seg, "%") {
		return seg, nil
	}
	b := make([]byte, 0, len(seg))
	for i := 0; i < len(seg); i++ {
		if seg[i] != '%' {
			b = append(b, seg[i])
			continue
		}
		if i+2 >= len(seg) {
			return "", fmt.Errorf("truncated escape %q", seg[i:])
		}
		hi, ok1 := unhex(seg[i+1])
		lo, ok2 := unhex(seg[i+2])
		if !ok1 || !ok2 {
			return "", fmt.Errorf("invalid escape %q", seg[i:i+3])
		}
		b = append(b, hi<<4|lo)
		i += 2
	}
	return string(b), nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
