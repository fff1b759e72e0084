package cli

import (
	"slices"
	"testing"
)

func TestDecodeKey(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want key
		n    int
	}{
		{"empty", "", key{}, 0},
		{"letter", "ab", key{keyRune, 'a'}, 1},
		{"two-byte rune", "é!", key{keyRune, 'é'}, 2},
		{"rune cut short", "\xc3", key{}, 0},
		{"invalid byte", "\xff", key{}, 1},
		{"bidi override", "\u202e", key{}, 3},
		{"enter CR", "\r", key{kind: keyEnter}, 1},
		{"enter LF", "\n", key{kind: keyEnter}, 1},
		{"backspace DEL", "\x7f", key{kind: keyBackspace}, 1},
		{"backspace ^H", "\x08", key{kind: keyBackspace}, 1},
		{"tab", "\t", key{kind: keyTab}, 1},
		{"ctrl-c", "\x03", key{kind: keyInterrupt}, 1},
		{"ctrl-d", "\x04", key{kind: keyEOF}, 1},
		{"ctrl-u", "\x15", key{kind: keyKill}, 1},
		{"ctrl-a", "\x01", key{kind: keyHome}, 1},
		{"ctrl-e", "\x05", key{kind: keyEnd}, 1},
		{"other control", "\x07x", key{}, 1},
		{"left", "\x1b[Dx", key{kind: keyLeft}, 3},
		{"right", "\x1b[C", key{kind: keyRight}, 3},
		{"home SS3", "\x1bOH", key{kind: keyHome}, 3},
		{"end tilde", "\x1b[4~", key{kind: keyEnd}, 4},
		{"up ignored", "\x1b[A", key{}, 3},
		{"delete ignored", "\x1b[3~", key{}, 4},
		{"modified arrow ignored", "\x1b[1;5C", key{}, 6},
		{"CSI cut short", "\x1b[1;", key{}, 0},
		{"SS3 cut short", "\x1bO", key{}, 0},
		{"lone ESC", "\x1b", key{}, 1},
		{"ESC then a letter", "\x1bx", key{}, 1},
		{"malformed CSI", "\x1b[1\x03", key{}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, n := decodeKey([]byte(tc.in))
			if k != tc.want || n != tc.n {
				t.Errorf("decodeKey(%q) = %+v, %d; want %+v, %d", tc.in, k, n, tc.want, tc.n)
			}
		})
	}
}

// state builds an edit state from text, the cursor at the | (or at the
// end without one).
func state(text string) editState {
	r := []rune(text)
	if i := slices.Index(r, '|'); i >= 0 {
		return editState{buf: slices.Delete(r, i, i+1), cursor: i}
	}
	return editState{buf: r, cursor: len(r)}
}

// shown writes s back as state reads it.
func shown(s editState) string {
	if s.cursor == len(s.buf) {
		return string(s.buf)
	}
	return string(s.buf[:s.cursor]) + "|" + string(s.buf[s.cursor:])
}

func TestEditLine(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     string
		k      key
		want   string
		action editAction
	}{
		{"type at the end", "ab", key{keyRune, 'c'}, "abc", actRedraw},
		{"type in the middle", "a|c", key{keyRune, 'b'}, "ab|c", actRedraw},
		{"type a wide rune", "", key{keyRune, '日'}, "日", actRedraw},
		{"backspace", "abc", key{kind: keyBackspace}, "ab", actRedraw},
		{"backspace in the middle", "ab|c", key{kind: keyBackspace}, "a|c", actRedraw},
		{"backspace at the start", "|abc", key{kind: keyBackspace}, "|abc", actNone},
		{"backspace on empty", "", key{kind: keyBackspace}, "", actNone},
		{"ctrl-u", "ab|cd", key{kind: keyKill}, "|cd", actRedraw},
		{"ctrl-u at the start", "|ab", key{kind: keyKill}, "|ab", actNone},
		{"left", "ab", key{kind: keyLeft}, "a|b", actRedraw},
		{"left at the start", "|ab", key{kind: keyLeft}, "|ab", actNone},
		{"right", "a|b", key{kind: keyRight}, "ab", actRedraw},
		{"right at the end", "ab", key{kind: keyRight}, "ab", actNone},
		{"home", "ab", key{kind: keyHome}, "|ab", actRedraw},
		{"end", "|ab", key{kind: keyEnd}, "ab", actRedraw},
		{"enter", "hi", key{kind: keyEnter}, "hi", actSubmit},
		{"enter on empty", "", key{kind: keyEnter}, "", actSubmit},
		{"tab", "/gr", key{kind: keyTab}, "/gr", actComplete},
		{"ctrl-c on empty", "", key{kind: keyInterrupt}, "", actQuit},
		{"ctrl-c with text", "half|done", key{kind: keyInterrupt}, "", actCancel},
		{"ctrl-d on empty", "", key{kind: keyEOF}, "", actEOF},
		{"ctrl-d with text", "ab", key{kind: keyEOF}, "ab", actNone},
		{"ignored key", "ab", key{}, "ab", actNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := state(tc.in)
			before := shown(in)
			got, action := editLine(in, tc.k)
			if shown(got) != tc.want || action != tc.action {
				t.Errorf("editLine(%q, %+v) = %q, %v; want %q, %v", tc.in, tc.k, shown(got), action, tc.want, tc.action)
			}
			if shown(in) != before {
				t.Errorf("editLine changed its input to %q", shown(in))
			}
		})
	}
}

func TestCompleteWord(t *testing.T) {
	commands := chatCommands()
	// What chat completes: the skills the user may invoke, so a skill
	// with user-invocable: false is not among them.
	skills := []string{"greet", "release-notes", "review-api", "review-css"}
	for _, tc := range []struct {
		name    string
		in      string
		want    string
		matches []string
	}{
		{"unique skill", "/gr", "/greet ", nil},
		{"unique skill after text", "please /rel", "please /release-notes ", nil},
		{"unique before more text", "/gr| Ada", "/greet| Ada", nil},
		{"unique command", "/ex", "/exit ", nil},
		{"whole name gets its space", "/greet", "/greet ", nil},
		{"ambiguous extends to the common prefix", "/rev", "/review-", []string{"review-api", "review-css"}},
		{"ambiguous with nothing to add lists", "/review-", "/review-", []string{"review-api", "review-css"}},
		{"commands and skills", "/", "/", []string{"exit", "greet", "help", "release-notes", "review-api", "review-css", "skills"}},
		{"commands only at the start", "see /", "see /", []string{"greet", "release-notes", "review-api", "review-css"}},
		{"command after text is no match", "see /ex", "see /ex", nil},
		{"none", "/zz", "/zz", nil},
		{"not a slash word", "gre", "gre", nil},
		{"a path", "/usr/lo", "/usr/lo", nil},
		{"cursor inside a word", "/g|r", "/g|r", nil},
		{"model-only skill is not offered", "/model", "/model", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, matches := completeWord(state(tc.in), commands, skills)
			if shown(got) != tc.want || !slices.Equal(matches, tc.matches) {
				t.Errorf("completeWord(%q) = %q, %q; want %q, %q", tc.in, shown(got), matches, tc.want, tc.matches)
			}
		})
	}
}
