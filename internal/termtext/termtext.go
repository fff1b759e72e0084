// Package termtext makes untrusted text safe to show on a terminal. Skill
// names, descriptions, paths and the output of commands come from skills
// and models; printed raw, an escape sequence in them can retitle the
// window, rewrite what is on screen, hide text or (with bidi overrides)
// show it in another order. Escape and Writer replace every character
// that starts such a sequence with a visible escape, and IsTerminal tells
// when to use them: output that is not a terminal stays byte-exact.
//
//	out := io.Writer(os.Stdout)
//	if termtext.IsTerminal(os.Stdout.Fd()) {
//		w := termtext.NewWriter(os.Stdout)
//		defer w.Flush()
//		out = w
//	}
//	fmt.Fprintln(out, name) // "\x1b]0;pwned\x07" prints as \x1b]0;pwned\x07
package termtext

import (
	"fmt"
	"io"
	"unicode/utf8"
)

// Unsafe reports whether r is escaped: the C0 controls other than tab and
// newline (ESC among them), DEL, the C1 controls U+0080–U+009F, and the
// bidirectional embeddings, overrides and isolates U+202A–U+202E and
// U+2066–U+2069.
func Unsafe(r rune) bool {
	switch {
	case r == '\t' || r == '\n':
		return false
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// Escape returns s with every Unsafe rune written as Go writes it in a
// quoted string (\x1b for ASCII, \u009b and \u202e above it) and every
// byte that is not part of valid UTF-8 as \xNN (a lone 0x9b is CSI to a
// terminal in 8-bit mode). Other text, tabs and newlines included, is
// unchanged.
func Escape(s string) string {
	out, _ := appendEscaped(nil, []byte(s), true)
	return string(out)
}

// Writer escapes what is written through it as Escape does, so it can
// stand in for a terminal's io.Writer. A UTF-8 sequence split across
// writes is held until its end arrives; Flush writes what is held. A
// Writer is not safe for concurrent use.
type Writer struct {
	w       io.Writer
	pending []byte // an incomplete UTF-8 sequence at the end of the last write
}

// NewWriter returns a Writer writing escaped text to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write escapes p and writes it to the underlying writer. It reports
// len(p) when everything was written (or held as the start of a UTF-8
// sequence), else 0 and the error.
func (w *Writer) Write(p []byte) (int, error) {
	in := p
	if len(w.pending) > 0 {
		in = append(w.pending, p...)
		w.pending = nil
	}
	out, done := appendEscaped(make([]byte, 0, len(in)+16), in, false)
	if done < len(in) {
		w.pending = append([]byte(nil), in[done:]...)
	}
	if len(out) > 0 {
		if _, err := w.w.Write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Flush writes a held incomplete UTF-8 sequence, escaped byte by byte.
func (w *Writer) Flush() error {
	if len(w.pending) == 0 {
		return nil
	}
	out, _ := appendEscaped(nil, w.pending, true)
	w.pending = nil
	_, err := w.w.Write(out)
	return err
}

// appendEscaped appends the escaped form of b to dst and returns how much
// of b it handled: all of it when final, else all but an incomplete UTF-8
// sequence at the end, which the next write may complete.
func appendEscaped(dst, b []byte, final bool) ([]byte, int) {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			if !final && !utf8.FullRune(b[i:]) {
				return dst, i
			}
			dst = fmt.Appendf(dst, `\x%02x`, b[i])
		case r < utf8.RuneSelf && Unsafe(r):
			dst = fmt.Appendf(dst, `\x%02x`, r)
		case Unsafe(r):
			dst = fmt.Appendf(dst, `\u%04x`, r)
		default:
			dst = append(dst, b[i:i+n]...)
		}
		i += n
	}
	return dst, len(b)
}
