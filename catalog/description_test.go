package catalog

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestNormalizeDescription(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"only spaces", " \t\n ", ""},
		{"collapse and trim", "  a   b \t c  ", "a b c"},
		{"tab", "a\tb", "a b"},
		{"line feed", "a\nb", "a b"},
		{"vertical tab", "a\vb", "a b"},
		{"form feed", "a\fb", "a b"},
		{"carriage return", "a\r\nb", "a b"},
		{"no-break space", "a\u00a0b", "a b"},
		{"ogham space", "a\u1680b", "a b"},
		{"en quad", "a\u2000b", "a b"},
		{"hair space", "a\u200ab", "a b"},
		{"line separator", "a\u2028b", "a b"},
		{"paragraph separator", "a\u2029b", "a b"},
		{"narrow no-break space", "a\u202fb", "a b"},
		{"medium math space", "a\u205fb", "a b"},
		{"ideographic space", "a\u3000b", "a b"},
		{"BOM is JS whitespace", "\ufeffa\ufeffb\ufeff", "a b"},
		{"NEL is not JS whitespace", "a\u0085b", "a\u0085b"},
		{"zero width space is not whitespace", "a\u200bb", "a\u200bb"},
		{"mixed run", "a \u00a0\t\u3000\ufeff\n b", "a b"},
		{"CJK kept", "处理  中文\u3000文档", "处理 中文 文档"},
		{"invalid UTF-8 kept", "a \xff  b", "a \xff b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NormalizeDescription(tt.in); got != tt.want {
				t.Errorf("NormalizeDescription(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestCapDescription(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		max   int
		want  string
		units int
	}{
		{"shorter", "abc", 10, "abc", 3},
		{"exactly at cap", "abcdefghij", 10, "abcdefghij", 10},
		{"one past cap", "abcdefghijk", 10, "abcdefg...", 10},
		{"minimum cap", "abcd", 3, "...", 3},
		{"minimum cap fits", "abc", 3, "abc", 3},
		{"CJK counts one unit each", "一二三四五六七八九十", 10, "一二三四五六七八九十", 10},
		{"CJK one past", "一二三四五六七八九十百", 10, "一二三四五六七...", 10},
		{"accented precomposed", "ééééééééééé", 10, "ééééééé...", 10},
		{"combining marks count as units", "e\u0301e\u0301e\u0301e\u0301e\u0301e\u0301", 10, "e\u0301e\u0301e\u0301e...", 10},
		{"emoji at cap", "abcde😀xyz", 10, "abcde😀xyz", 10},
		{"emoji fits before cut", "abcde😀xyzw", 10, "abcde😀...", 10},
		{"cut at surrogate pair drops the pair", "abcdef😀xyz", 10, "abcdef...", 9},
		{"astral only", "😀😀😀😀😀😀", 10, "😀😀😀...", 9},
		{"astral exact", "😀😀😀😀😀", 10, "😀😀😀😀😀", 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CapDescription(tt.in, tt.max)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("CapDescription(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
			}
			if n := UTF16Len(got); n != tt.units {
				t.Errorf("UTF16Len(%q) = %d, want %d", got, n, tt.units)
			}
		})
	}
}

func TestCapDescriptionInvalidMax(t *testing.T) {
	for _, max := range []int{-1, 0, 1, 2} {
		if _, err := CapDescription("abc", max); !errors.Is(err, ErrInvalidMaxLength) {
			t.Errorf("CapDescription max %d: err = %v, want ErrInvalidMaxLength", max, err)
		}
		if _, err := Description("abc", max); !errors.Is(err, ErrInvalidMaxLength) {
			t.Errorf("Description max %d: err = %v, want ErrInvalidMaxLength", max, err)
		}
	}
}

func TestDescriptionPipeline(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		// The REFERENCE §1 anchor.
		{"anchor", strings.Repeat("Long   description ", 5), 50, "Long description Long description Long descript..."},
		// Capping happens before escaping: 10 units of raw text, then &amp;.
		{"cap before escape", "a&b<c>d&e\"", 10, "a&amp;b&lt;c&gt;d&amp;e\""},
		{"cut then escape", "<<<<<<<<<<<<", 10, "&lt;&lt;&lt;&lt;&lt;&lt;&lt;..."},
		{"quotes untouched", `say "hi" & 'bye'`, 500, `say "hi" &amp; 'bye'`},
		{"default cap", strings.Repeat("x", 501), DefaultDescriptionMaxLength, strings.Repeat("x", 497) + "..."},
		{"default cap exact", strings.Repeat("x", 500), DefaultDescriptionMaxLength, strings.Repeat("x", 500)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Description(tt.in, tt.max)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Description(%q, %d) =\n%q\nwant\n%q", tt.in, tt.max, got, tt.want)
			}
		})
	}
}

func TestEscape(t *testing.T) {
	tests := []struct {
		in, text, attr string
	}{
		{"plain", "plain", "plain"},
		{`a&b`, `a&amp;b`, `a&amp;b`},
		{`<tag attr="v">`, `&lt;tag attr="v"&gt;`, `&lt;tag attr=&quot;v&quot;>`},
		{`&amp;`, `&amp;amp;`, `&amp;amp;`},
		{`'`, `'`, `'`},
	}
	for _, tt := range tests {
		if got := EscapeText(tt.in); got != tt.text {
			t.Errorf("EscapeText(%q) = %q, want %q", tt.in, got, tt.text)
		}
		if got := EscapeAttr(tt.in); got != tt.attr {
			t.Errorf("EscapeAttr(%q) = %q, want %q", tt.in, got, tt.attr)
		}
	}
}

func TestUTF16Len(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"abc", 3},
		{"é", 1},
		{"中文", 2},
		{"😀", 2},
		{"a😀b", 4},
		{"\xff", 1},
		{"\xed\xa0\x80", 3}, // an encoded surrogate is invalid UTF-8: three bytes, three U+FFFD
	}
	for _, tt := range tests {
		if got := UTF16Len(tt.in); got != tt.want {
			t.Errorf("UTF16Len(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func FuzzDescription(f *testing.F) {
	f.Add(strings.Repeat("Long   description ", 5), 50)
	f.Add("abcdef😀xyz", 10)
	f.Add("a\u0085b\ufeff c <&> \"'", 3)
	f.Add("处理中文\u3000文档", 4)
	f.Add("\xf0\x9f\x98", 5)
	f.Fuzz(func(t *testing.T, s string, max int) {
		norm := NormalizeDescription(s)
		if again := NormalizeDescription(norm); again != norm {
			t.Fatalf("normalize not idempotent: %q -> %q -> %q", s, norm, again)
		}
		if first, _ := utf8.DecodeRuneInString(norm); norm != "" && isJSSpace(first) {
			t.Fatalf("normalize left whitespace at the start: %q", norm)
		}
		if last, _ := utf8.DecodeLastRuneInString(norm); norm != "" && isJSSpace(last) {
			t.Fatalf("normalize left whitespace at the end: %q", norm)
		}
		if strings.Contains(norm, "  ") {
			t.Fatalf("normalize left a double space: %q", norm)
		}
		capped, err := CapDescription(norm, max)
		if max < MinDescriptionMaxLength {
			if !errors.Is(err, ErrInvalidMaxLength) {
				t.Fatalf("max %d: err = %v, want ErrInvalidMaxLength", max, err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		n := UTF16Len(capped)
		if n > max {
			t.Fatalf("capped %q to %d units, over max %d", capped, n, max)
		}
		if UTF16Len(norm) <= max {
			if capped != norm {
				t.Fatalf("%q within max %d was changed to %q", norm, max, capped)
			}
		} else {
			if !strings.HasSuffix(capped, "...") || n < max-1 {
				t.Fatalf("cut of %q at %d gave %q (%d units)", norm, max, capped, n)
			}
			if !strings.HasPrefix(norm, strings.TrimSuffix(capped, "...")) {
				t.Fatalf("cut %q is not a prefix of %q", capped, norm)
			}
		}
		escaped := EscapeText(capped)
		if strings.ContainsAny(escaped, "<>") {
			t.Fatalf("raw < or > after escape: %q", escaped)
		}
		rest := escaped
		for i := strings.IndexByte(rest, '&'); i >= 0; i = strings.IndexByte(rest, '&') {
			rest = rest[i:]
			if !strings.HasPrefix(rest, "&amp;") && !strings.HasPrefix(rest, "&lt;") && !strings.HasPrefix(rest, "&gt;") {
				t.Fatalf("raw & after escape: %q", escaped)
			}
			rest = rest[1:]
		}
		full, err := Description(s, max)
		if err != nil || full != escaped {
			t.Fatalf("Description(%q, %d) = %q, %v; want %q", s, max, full, err, escaped)
		}
		attr := EscapeAttr(s)
		if strings.ContainsAny(attr, "\"<") {
			t.Fatalf("raw \" or < after attribute escape: %q", attr)
		}
	})
}
