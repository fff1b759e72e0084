package catalog

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// DefaultDescriptionMaxLength is the cap applied to catalog descriptions when
// Options.DescriptionMaxLength is zero (upstream catalogDescriptionMaxLength).
const DefaultDescriptionMaxLength = 500

// MinDescriptionMaxLength is the smallest valid cap: it leaves room for the
// "..." that marks a cut.
const MinDescriptionMaxLength = 3

// ellipsis marks a description that was cut to its cap.
const ellipsis = "..."

// ErrInvalidMaxLength reports a description cap below MinDescriptionMaxLength.
var ErrInvalidMaxLength = errors.New("catalog: description max length must be an integer of at least 3")

// NormalizeDescription collapses every run of whitespace to one space and
// trims both ends. Whitespace is the JavaScript \s set (the upstream catalog
// is defined by it), which differs from unicode.IsSpace: U+FEFF counts,
// U+0085 does not.
func NormalizeDescription(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	pendingSpace := false
	for i := 0; i < len(s); {
		r, n := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRuneInString(s[i:])
		}
		if isJSSpace(r) {
			pendingSpace = b.Len() > 0
			i += n
			continue
		}
		if pendingSpace {
			b.WriteByte(' ')
			pendingSpace = false
		}
		b.WriteString(s[i : i+n])
		i += n
	}
	return b.String()
}

// CapDescription shortens s to at most max UTF-16 code units (the unit the
// upstream catalog counts in). A longer s keeps its first max-3 units and
// gets "..." appended. A cut never splits a surrogate pair: when unit max-3
// would be the first half of one, the whole character is dropped and the
// result is one unit shorter than max. A max below MinDescriptionMaxLength
// returns an error wrapping ErrInvalidMaxLength.
func CapDescription(s string, max int) (string, error) {
	if max < MinDescriptionMaxLength {
		return "", fmt.Errorf("%w: got %d; set the description cap to 3 or more", ErrInvalidMaxLength, max)
	}
	return capUnits(s, max), nil
}

// EscapeText escapes &, < and > so that text placed inside catalog or
// result markup cannot open or close a tag. Quotes are left as they are.
func EscapeText(s string) string {
	if !strings.ContainsAny(s, "&<>") {
		return s
	}
	return textEscaper.Replace(s)
}

// EscapeAttr escapes &, " and < for a double-quoted attribute value (the
// name attribute of <skill_content>).
func EscapeAttr(s string) string {
	if !strings.ContainsAny(s, "&\"<") {
		return s
	}
	return attrEscaper.Replace(s)
}

// Description runs the whole catalog pipeline on s: normalize, cap to max
// UTF-16 code units, then escape. Capping comes before escaping, so an
// entity is never cut in half and escaping never pushes a description over
// its cap in the model's eyes. A max below MinDescriptionMaxLength is an
// error wrapping ErrInvalidMaxLength.
func Description(s string, max int) (string, error) {
	if max < MinDescriptionMaxLength {
		return "", fmt.Errorf("%w: got %d; set the description cap to 3 or more", ErrInvalidMaxLength, max)
	}
	return EscapeText(capUnits(NormalizeDescription(s), max)), nil
}

// UTF16Len returns the length of s in UTF-16 code units, the unit of every
// description cap. Invalid UTF-8 bytes count as one unit each (they decode
// to U+FFFD).
func UTF16Len(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n += utf16Units(r)
		i += size
	}
	return n
}

var (
	textEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	attrEscaper = strings.NewReplacer("&", "&amp;", "\"", "&quot;", "<", "&lt;")
)

// capUnits is CapDescription without the argument check.
func capUnits(s string, max int) string {
	// Fast path: every UTF-8 byte is at least one byte per code unit, so a
	// string no longer than max bytes is within the cap.
	if len(s) <= max {
		return s
	}
	if UTF16Len(s) <= max {
		return s
	}
	keep := max - len(ellipsis)
	units, end := 0, 0
	for i := 0; i < len(s); {
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		u := utf16Units(r)
		if units+u > keep {
			break
		}
		units += u
		i += size
		end = i
	}
	return s[:end] + ellipsis
}

// utf16Units is the number of UTF-16 code units that encode r.
func utf16Units(r rune) int {
	if r >= 0x10000 && r <= utf8.MaxRune {
		return 2
	}
	return 1
}

// isJSSpace reports whether r is in the JavaScript \s class: WhiteSpace
// plus LineTerminator in ECMAScript terms.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ',
		0x00A0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}
