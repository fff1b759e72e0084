package cli

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The line editor of `skillkit chat` on a terminal, as pure functions so
// that it is tested without one: decodeKey turns the bytes a raw-mode
// terminal sends into keys, editLine applies a key to the line, and
// completeWord completes a /name. The terminal side (raw mode, reading,
// drawing) is in chat_term_unix.go.

// keyKind is what a key asks of the line editor.
type keyKind int

const (
	// keyIgnore changes nothing: a control character, an escape
	// sequence or a character the editor does not take.
	keyIgnore keyKind = iota
	// keyRune inserts key.r at the cursor.
	keyRune
	keyEnter
	keyBackspace
	keyTab
	// keyInterrupt is Ctrl-C.
	keyInterrupt
	// keyEOF is Ctrl-D.
	keyEOF
	// keyKill is Ctrl-U: delete what is before the cursor.
	keyKill
	keyLeft
	keyRight
	// keyHome and keyEnd also come as Ctrl-A and Ctrl-E.
	keyHome
	keyEnd
)

// key is one key press.
type key struct {
	kind keyKind
	r    rune
}

// decodeKey reads the key at the start of b and returns it with the
// number of bytes it took. n is 0 when b holds only the start of a key (a
// UTF-8 sequence or an escape sequence cut short), which the next bytes
// complete. A lone ESC is taken as a key of its own, since terminals send
// each escape sequence in one write.
func decodeKey(b []byte) (k key, n int) {
	if len(b) == 0 {
		return key{}, 0
	}
	switch c := b[0]; c {
	case '\r', '\n':
		return key{kind: keyEnter}, 1
	case 0x7f, 0x08: // DEL, which terminals send for Backspace, and ^H
		return key{kind: keyBackspace}, 1
	case '\t':
		return key{kind: keyTab}, 1
	case 0x03:
		return key{kind: keyInterrupt}, 1
	case 0x04:
		return key{kind: keyEOF}, 1
	case 0x15:
		return key{kind: keyKill}, 1
	case 0x01:
		return key{kind: keyHome}, 1
	case 0x05:
		return key{kind: keyEnd}, 1
	case 0x1b:
		return decodeEscape(b)
	}
	if b[0] < 0x20 {
		return key{}, 1
	}
	if !utf8.FullRune(b) {
		return key{}, 0
	}
	r, size := utf8.DecodeRune(b)
	if r == utf8.RuneError && size == 1 || !unicode.IsPrint(r) {
		// Invalid bytes and format characters (bidi overrides, zero
		// widths) would make the line differ from what it shows.
		return key{}, size
	}
	return key{kind: keyRune, r: r}, size
}

// decodeEscape reads the escape sequence at the start of b (b[0] is ESC):
// CSI (ESC [ parameters final) and SS3 (ESC O final), of which the arrows,
// Home and End mean something; any other is ignored whole.
func decodeEscape(b []byte) (key, int) {
	if len(b) == 1 {
		return key{}, 1
	}
	switch b[1] {
	case 'O':
		if len(b) < 3 {
			return key{}, 0
		}
		return key{kind: finalKey(b[2], "")}, 3
	case '[':
		for i := 2; i < len(b); i++ {
			if c := b[i]; c >= 0x40 && c <= 0x7e {
				return key{kind: finalKey(c, string(b[2:i]))}, i + 1
			} else if c < 0x20 || c > 0x7e {
				return key{}, i // malformed: drop what came before c
			}
		}
		return key{}, 0
	}
	return key{}, 1
}

// finalKey is the key of an escape sequence ending in final with the
// parameters params.
func finalKey(final byte, params string) keyKind {
	switch {
	case final == 'C' && params == "":
		return keyRight
	case final == 'D' && params == "":
		return keyLeft
	case final == 'H' && params == "", final == '~' && (params == "1" || params == "7"):
		return keyHome
	case final == 'F' && params == "", final == '~' && (params == "4" || params == "8"):
		return keyEnd
	}
	return keyIgnore
}

// editState is the line being edited: its characters and the cursor, an
// index into them (len(buf) is after the last).
type editState struct {
	buf    []rune
	cursor int
}

// String returns the line's text.
func (s editState) String() string { return string(s.buf) }

// editAction is what the editor does once a key is applied.
type editAction int

const (
	// actNone: nothing changed.
	actNone editAction = iota
	// actRedraw: the line changed; draw it again.
	actRedraw
	// actSubmit: Enter; the line is done.
	actSubmit
	// actEOF: Ctrl-D on an empty line; the input ends.
	actEOF
	// actQuit: Ctrl-C on an empty line; leave.
	actQuit
	// actCancel: Ctrl-C on a line with text; it is dropped and a new
	// one starts.
	actCancel
	// actComplete: Tab; complete the word before the cursor
	// (completeWord).
	actComplete
)

// editLine applies k to s and says what to do next. It never changes s's
// slice: the line it returns is new where it differs.
func editLine(s editState, k key) (editState, editAction) {
	switch k.kind {
	case keyRune:
		return editState{buf: slices.Insert(slices.Clone(s.buf), s.cursor, k.r), cursor: s.cursor + 1}, actRedraw
	case keyBackspace:
		if s.cursor == 0 {
			return s, actNone
		}
		return editState{buf: slices.Delete(slices.Clone(s.buf), s.cursor-1, s.cursor), cursor: s.cursor - 1}, actRedraw
	case keyKill:
		if s.cursor == 0 {
			return s, actNone
		}
		return editState{buf: slices.Clone(s.buf[s.cursor:])}, actRedraw
	case keyLeft, keyRight, keyHome, keyEnd:
		c := s.cursor
		switch k.kind {
		case keyLeft:
			c = max(c-1, 0)
		case keyRight:
			c = min(c+1, len(s.buf))
		case keyHome:
			c = 0
		case keyEnd:
			c = len(s.buf)
		}
		if c == s.cursor {
			return s, actNone
		}
		return editState{buf: s.buf, cursor: c}, actRedraw
	case keyEnter:
		return s, actSubmit
	case keyTab:
		return s, actComplete
	case keyInterrupt:
		if len(s.buf) == 0 {
			return s, actQuit
		}
		return editState{}, actCancel
	case keyEOF:
		if len(s.buf) == 0 {
			return s, actEOF
		}
	}
	return s, actNone
}

// completeWord completes the /word that ends at the cursor: at the start
// of the line over commands and skills, after white space over skills
// only (a skill is invoked anywhere in a message, a command only as the
// whole line). A single match is written out with a space after it;
// several are returned, to be listed, and the word is extended to their
// longest common prefix. Without a /word ending at the cursor or a match,
// s is returned as it is, with no matches.
func completeWord(s editState, commands, skills []string) (editState, []string) {
	if s.cursor < len(s.buf) && !unicode.IsSpace(s.buf[s.cursor]) {
		return s, nil
	}
	start := s.cursor
	for start > 0 && !unicode.IsSpace(s.buf[start-1]) {
		start--
	}
	word := string(s.buf[start:s.cursor])
	if !strings.HasPrefix(word, "/") {
		return s, nil
	}
	names := skills
	if start == 0 {
		names = append(slices.Clone(commands), skills...)
	}
	var matches []string
	for _, n := range names {
		if strings.HasPrefix(n, word[1:]) && !slices.Contains(matches, n) {
			matches = append(matches, n)
		}
	}
	slices.Sort(matches)
	var done string
	switch len(matches) {
	case 0:
		return s, nil
	case 1:
		done = matches[0]
		if s.cursor == len(s.buf) {
			done += " "
		}
	default:
		done = sharedPrefix(matches)
	}
	insert := []rune(strings.TrimPrefix(done, word[1:]))
	if len(insert) == 0 {
		return s, listed(matches)
	}
	out := editState{buf: slices.Insert(slices.Clone(s.buf), s.cursor, insert...), cursor: s.cursor + len(insert)}
	return out, listed(matches)
}

// listed is the matches to list: none for a single one, written out.
func listed(matches []string) []string {
	if len(matches) < 2 {
		return nil
	}
	return matches
}

// sharedPrefix is the longest common prefix of names (at least one), cut
// at a character boundary.
func sharedPrefix(names []string) string {
	p := names[0]
	for _, n := range names[1:] {
		for !strings.HasPrefix(n, p) {
			_, size := utf8.DecodeLastRuneInString(p)
			p = p[:len(p)-size]
		}
	}
	return p
}
