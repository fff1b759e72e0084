package termtext

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"plain text, tabs\tand\nnewlines", "plain text, tabs\tand\nnewlines"},
		{"ünïcödé ✓ 😀 \u200b", "ünïcödé ✓ 😀 \u200b"},
		{"\x1b]0;pwned\x07", `\x1b]0;pwned\x07`},
		{"\x1b[2J\x1b[31mred", `\x1b[2J\x1b[31mred`},
		{"a\rb\bc\x00d\x7fe", `a\x0db\x08c\x00d\x7fe`},
		{"\u009b31m", `\u009b31m`},
		{"\u0080\u0085\u009f\u00a0", `\u0080\u0085\u009f` + "\u00a0"},
		{"abc\u202etxt.exe", `abc\u202etxt.exe`},
		{"\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069", `\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069`},
		{"\u2029\u2065\u206a", "\u2029\u2065\u206a"},
		{"bad \x9b byte \xff\xfe", `bad \x9b byte \xff\xfe`},
		{"cut \xe2\x80", `cut \xe2\x80`},
		{"\xe2\x41", `\xe2A`},
	}
	for _, tt := range tests {
		if got := Escape(tt.in); got != tt.want {
			t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestWriterSplits writes a text in two pieces at every split point: the
// result is always Escape of the whole, so a sequence cut between writes
// is neither escaped as broken nor let through.
func TestWriterSplits(t *testing.T) {
	text := "a\u202eb\u009bc😀d\x1be\xe2\x80\xff\u2066"
	want := Escape(text)
	for i := 0; i <= len(text); i++ {
		var buf bytes.Buffer
		w := NewWriter(&buf)
		for _, part := range []string{text[:i], text[i:]} {
			if n, err := w.Write([]byte(part)); err != nil || n != len(part) {
				t.Fatalf("split %d: Write = %d, %v", i, n, err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if buf.String() != want {
			t.Errorf("split %d: %q, want %q", i, buf.String(), want)
		}
	}
}

// FuzzEscape checks what must hold for any text and any way of writing
// it: no Unsafe rune and no invalid UTF-8 reaches the output, text without
// them is unchanged, and Writer agrees with Escape.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "plain\n", "\x1b[31m", "\u202e", "\u0085", "\xe2\x80", "😀", "\xff"} {
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, s string, chunk uint8) {
		got := Escape(s)
		if !utf8.ValidString(got) {
			t.Fatalf("Escape(%q) = %q, not UTF-8", s, got)
		}
		for _, r := range got {
			if Unsafe(r) {
				t.Fatalf("Escape(%q) = %q keeps %U", s, got, r)
			}
		}
		if utf8.ValidString(s) && !strings.ContainsFunc(s, Unsafe) && got != s {
			t.Fatalf("Escape(%q) = %q changed safe text", s, got)
		}
		var buf bytes.Buffer
		w := NewWriter(&buf)
		n := int(chunk%7) + 1
		for b := []byte(s); len(b) > 0; {
			k := min(n, len(b))
			w.Write(b[:k])
			b = b[k:]
		}
		w.Flush()
		if buf.String() != got {
			t.Fatalf("Writer in chunks of %d: %q, Escape: %q", n, buf.String(), got)
		}
	})
}
