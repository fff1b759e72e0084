package catalog

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// DefaultDescriptionMaxLength is the cap applied to catalog descriptions when
// Options.DescriptionMaxLength is zero (the dsh skill tool's
// catalogDescriptionMaxLength).
const DefaultDescriptionMaxLength = 500

// MinDescriptionMaxLength is the smallest valid cap: it leaves room for the
// "..." that marks a cut.
const MinDescriptionMaxLength = 3

// ellipsis marks a description that was cut to its cap.
const ellipsis = "..."

// ErrInvalidMaxLength reports a description cap below MinDescriptionMaxLength.
var ErrInvalidMaxLength = errors.New("catalog: description max length must be an integer of at least 3")

// NormalizeDescription collapses every run of whitespace to one space and
// trims both ends. Whitespace is the JavaScript \s set (the dsh catalog is
// defined by it), which differs from unicode.IsSpace: U+FEFF counts,
// U+0085 does not.
func NormalizeDescription(s string) string {
	if alreadyNormal(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	word := -1 // start of the current run of non-space text, or -1
	for i := 0; i < len(s); {
		c, n, space := s[i], 1, false
		if c < utf8.RuneSelf {
			space = isASCIISpace(c)
		} else {
			var r rune
			r, n = utf8.DecodeRuneInString(s[i:])
			space = isJSSpace(r)
		}
		switch {
		case space && word >= 0:
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(s[word:i])
			word = -1
		case !space && word < 0:
			word = i
		}
		i += n
	}
	if word >= 0 {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s[word:])
	}
	return b.String()
}

// alreadyNormal reports, for the common ASCII case, that s has no
// whitespace but single inner spaces, so NormalizeDescription can return it
// without copying. It answers false for anything non-ASCII.
func alreadyNormal(s string) bool {
	if s == "" {
		return true
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	prevSpace := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || (c >= '\t' && c <= '\r') {
			return false
		}
		if c == ' ' {
			if prevSpace {
				return false
			}
			prevSpace = true
		} else {
			prevSpace = false
		}
	}
	return true
}

// CapDescription shortens s to at most max UTF-16 code units (the unit the
// dsh catalog counts in). A longer s keeps its first max-3 units and
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
// entity is never cut in half and the cap counts characters as the author
// wrote them, not entities. A max below MinDescriptionMaxLength is an error
// wrapping ErrInvalidMaxLength.
func Description(s string, max int) (string, error) {
	if max < MinDescriptionMaxLength {
		return "", fmt.Errorf("%w: got %d; set the description cap to 3 or more", ErrInvalidMaxLength, max)
	}
	return string(appendDescription(nil, s, max)), nil
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

// appendDescription appends Description(s, max) to dst in one pass:
// normalizing, counting UTF-16 units of the normalized text and escaping as
// it goes, and remembering where the last character that fits in max-3
// units ended, so a cut is a truncation plus "...". It stops reading as
// soon as the text is known to exceed max. max must be at least 3.
func appendDescription(dst []byte, s string, max int) []byte {
	start := len(dst)
	keep := max - len(ellipsis)
	units := 0
	cut := start // end of the output that fits in keep units
	pendingSpace := false
scan:
	for i := 0; i < len(s); {
		c, n, r := s[i], 1, rune(s[i])
		switch byteClass[c] {
		case classPlain:
			if pendingSpace {
				break
			}
			// A run of ASCII that needs no escaping, single spaces between
			// words included (they are already normal): one unit per
			// byte, copied at once.
			j := i + 1
			for j < len(s) {
				if byteClass[s[j]] == classPlain {
					j++
				} else if s[j] == ' ' && j+1 < len(s) && byteClass[s[j+1]] == classPlain {
					j += 2
				} else {
					break
				}
			}
			before, after := units, units+(j-i)
			if after > max {
				if before < keep {
					dst = append(dst, s[i:i+keep-before]...)
					cut = len(dst)
				}
				units = after
				break scan
			}
			dst = append(dst, s[i:j]...)
			switch {
			case after <= keep:
				cut = len(dst)
			case before < keep:
				cut = len(dst) - (after - keep)
			}
			units = after
			i = j
			continue
		case classSpace:
			pendingSpace = len(dst) > start
			i++
			continue
		case classHigh:
			r, n = utf8.DecodeRuneInString(s[i:])
			if isJSSpace(r) {
				pendingSpace = len(dst) > start
				i += n
				continue
			}
		}
		if pendingSpace {
			pendingSpace = false
			units++
			if units > max {
				break scan
			}
			dst = append(dst, ' ')
			if units <= keep {
				cut = len(dst)
			}
		}
		units += utf16Units(r)
		if units > max {
			break scan
		}
		switch c {
		case '&':
			dst = append(dst, "&amp;"...)
		case '<':
			dst = append(dst, "&lt;"...)
		case '>':
			dst = append(dst, "&gt;"...)
		default:
			dst = append(dst, s[i:i+n]...)
		}
		if units <= keep {
			cut = len(dst)
		}
		i += n
	}
	if units > max {
		dst = append(dst[:cut], ellipsis...)
	}
	return dst
}

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

// byteClass classifies every byte for appendDescription's scanner: a
// constant string is an immutable lookup table.
const byteClass = "" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x01\x01\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x01\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x02\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03" +
	"\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03" +
	"\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03" +
	"\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03"

// Byte classes in byteClass.
const (
	classPlain  = 0 // ASCII that is copied as it is
	classSpace  = 1 // ASCII whitespace of the JavaScript \s set
	classEscape = 2 // & < >
	classHigh   = 3 // the first or a later byte of a multi-byte character
)

// isASCIISpace reports whether c is ASCII whitespace in the JavaScript \s
// class: tab, line feed, vertical tab, form feed, carriage return, space.
func isASCIISpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }

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
