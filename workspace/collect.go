package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/gabriel-vasile/mimetype"
	"github.com/skillkit/skillkit/internal/tracing"
)

// Defaults used when a CollectLimits field is zero.
const (
	DefaultMaxFiles           = 64
	DefaultMaxFileInlineBytes = 16 << 10
	DefaultMaxInlineBytes     = 64 << 10
	DefaultMaxDepth           = 32
	DefaultMaxEntries         = 100_000
)

// sniffLen is how much of a file MIME detection reads (mimetype's default).
const sniffLen = 3072

// CollectLimits bounds a Collect call. Zero fields (or a nil *CollectLimits)
// mean the defaults; negative values are errors.
type CollectLimits struct {
	// MaxFiles is the most files returned; more matches set
	// Collection.Truncated. Default DefaultMaxFiles.
	MaxFiles int
	// MaxFileInlineBytes is the most content inlined for one file; a longer
	// text file gets a prefix and Truncated. Default DefaultMaxFileInlineBytes.
	MaxFileInlineBytes int64
	// MaxInlineBytes is the most content inlined over all files. Default
	// DefaultMaxInlineBytes.
	MaxInlineBytes int64
	// MaxDepth is the deepest folder, in path elements below the
	// workspace, that is looked into; deeper ones are skipped (and listed
	// in Collection.Skipped). A command can nest folders as deep as its
	// inodes allow, and every listing resolves the folder's path again, so
	// without it a walk costs the square of the depth. Default
	// DefaultMaxDepth.
	MaxDepth int
	// MaxEntries bounds the folder entries looked at over all globs; past
	// it the walk stops, Collection.Truncated is set and the stop is
	// listed in Skipped. Default DefaultMaxEntries.
	MaxEntries int
}

// OutputFile is one collected file.
type OutputFile struct {
	// Path is relative to the workspace directory, with slashes; it is the
	// reference to files whose content is not inline.
	Path string `json:"path"`
	// Size is the file's size in bytes.
	Size int64 `json:"size"`
	// MIME is detected from the content, e.g. "text/plain; charset=utf-8".
	MIME string `json:"mime"`
	// Content is the file's text, for UTF-8 text files within the inline
	// limits; empty otherwise.
	Content string `json:"content,omitempty"`
	// Truncated reports a text file whose content is cut short (possibly to
	// nothing) by an inline limit.
	Truncated bool `json:"truncated,omitempty"`
}

// Collection is the result of Collect.
type Collection struct {
	// Files are the collected files; never null.
	Files []OutputFile `json:"files"`
	// Truncated reports that more files matched than CollectLimits.MaxFiles.
	Truncated bool `json:"truncated,omitempty"`
	// InlineBytes is the total inlined content.
	InlineBytes int64 `json:"inline_bytes"`
	// Skipped lists matches not collected: links leading out of the
	// workspace or nowhere, and special files.
	Skipped []Skipped `json:"skipped,omitempty"`
}

// errEnough stops glob walking once one file past the limit is found.
var errEnough = errors.New("enough files")

// Collect returns the regular files matching any of globs, in glob order and
// then lexical order, without duplicates. Globs use doublestar syntax ("**"
// crosses directories) and are relative to the workspace directory, e.g.
// "out/**/*.png"; globs CheckGlob refuses (absolute, "..", in any brace
// alternative too) are rejected.
// Symbolic links are followed only while they stay inside the workspace, and
// "**" does not descend through links to directories.
func (w *Workspace) Collect(ctx context.Context, globs []string, lim *CollectLimits) (col *Collection, err error) {
	ctx, span := w.start(ctx, spanCollect, attrGlobs.Int(len(globs)))
	defer func() {
		if col != nil {
			var size int64
			for _, f := range col.Files {
				size += f.Size
			}
			span.SetAttributes(tracing.Files.Int(len(col.Files)), tracing.Bytes.Int64(size), attrInlineBytes.Int64(col.InlineBytes),
				attrTruncated.Bool(col.Truncated), tracing.Skipped.Int(len(col.Skipped)))
		}
		tracing.End(span, err)
	}()
	return w.collect(ctx, globs, lim)
}

// collect is Collect, within its span.
func (w *Workspace) collect(ctx context.Context, globs []string, lim *CollectLimits) (*Collection, error) {
	l, err := lim.withDefaults()
	if err != nil {
		return nil, err
	}
	if len(globs) == 0 {
		return nil, fmt.Errorf("%w: no globs given; pass e.g. \"out/**\"", ErrInvalidGlob)
	}
	patterns := make([]string, len(globs))
	for i, g := range globs {
		if patterns[i], err = cleanGlob(g); err != nil {
			return nil, fmt.Errorf("globs[%d]: %w", i, err)
		}
	}
	root, err := w.openRoot()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	c := &collector{root: root, lim: l, out: &Collection{Files: []OutputFile{}}, seen: map[string]bool{}}
	fsys := &boundedFS{FS: root.FS(), c: c}
	for _, g := range patterns {
		err := doublestar.GlobWalk(fsys, g, func(p string, d fs.DirEntry) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return c.visit(p, d)
		}, doublestar.WithNoFollow())
		if errors.Is(err, errEnough) {
			break
		}
		if c.tooMany {
			c.out.Truncated = true
			c.skip(g, fmt.Sprintf("the walk stopped after %d folder entries (CollectLimits.MaxEntries); name the files more precisely", l.MaxEntries))
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("workspace %s: collect %q: %w", w.id, g, err)
		}
	}
	return c.out, nil
}

// Validate reports negative limits, naming the fields; nil and zero fields
// mean the defaults.
func (l *CollectLimits) Validate() error {
	_, err := l.withDefaults()
	return err
}

// withDefaults validates l and fills in defaults.
func (l *CollectLimits) withDefaults() (CollectLimits, error) {
	var v CollectLimits
	if l != nil {
		v = *l
	}
	check := func(field string, n int64) error {
		if n < 0 {
			return fmt.Errorf("%w: CollectLimits.%s is %d; use a positive value or 0 for the default", ErrInvalidOption, field, n)
		}
		return nil
	}
	if err := errors.Join(check("MaxFiles", int64(v.MaxFiles)), check("MaxFileInlineBytes", v.MaxFileInlineBytes), check("MaxInlineBytes", v.MaxInlineBytes),
		check("MaxDepth", int64(v.MaxDepth)), check("MaxEntries", int64(v.MaxEntries))); err != nil {
		return v, err
	}
	if v.MaxDepth == 0 {
		v.MaxDepth = DefaultMaxDepth
	}
	if v.MaxEntries == 0 {
		v.MaxEntries = DefaultMaxEntries
	}
	if v.MaxFiles == 0 {
		v.MaxFiles = DefaultMaxFiles
	}
	if v.MaxFileInlineBytes == 0 {
		v.MaxFileInlineBytes = DefaultMaxFileInlineBytes
	}
	if v.MaxInlineBytes == 0 {
		v.MaxInlineBytes = DefaultMaxInlineBytes
	}
	return v, nil
}

// Limits of CheckGlob. An output glob names a few files or patterns, so
// these are generous for real use and keep a hostile glob from costing
// much to check or walk.
const (
	// MaxGlobLen is the longest output glob accepted, in bytes.
	MaxGlobLen = 4096
	// MaxGlobAlternatives is the most patterns an output glob's brace
	// alternation may expand to ("{a,b}/{c,d}" is 4).
	MaxGlobAlternatives = 256
)

// CheckGlob reports whether g is an output glob Collect accepts: valid
// doublestar syntax, at most MaxGlobLen bytes, and every pattern its brace
// alternation expands to (at most MaxGlobAlternatives, nesting included)
// relative, without empty, "." or ".." elements (a leading "./" of g is
// allowed). An element that can match "." or ".." only (a character class
// such as "[.]", in any combination) is refused too; wildcards that match
// ordinary names as well ("*", ".?") are allowed, since they are matched
// against directory listings, which never hold "." or "..". So that every
// reader of the syntax agrees on where an element starts and ends, a
// backslash may escape only a glob metacharacter (* ? [ ] { } ,), and a
// character class may not be negated, contain '/', '\', '{' or '}', or
// hold a range that spans '/': doublestar lets a class match the
// separator. Callers check globs with it before running a command, so a
// bad glob never costs a command whose output is then lost. The error
// wraps ErrInvalidGlob and quotes g.
func CheckGlob(g string) error {
	_, err := cleanGlob(g)
	return err
}

// cleanGlob validates an output glob (see CheckGlob) and returns it without
// a leading "./".
func cleanGlob(g string) (string, error) {
	orig := g
	bad := func(why string) error {
		return fmt.Errorf("%w: %q %s; use a pattern relative to the workspace such as \"out/**\"", ErrInvalidGlob, orig, why)
	}
	for strings.HasPrefix(g, "./") {
		g = g[2:]
	}
	switch {
	case g == "":
		return "", bad("is empty")
	case len(orig) > MaxGlobLen:
		return "", fmt.Errorf("%w: a glob of %d bytes (%q...) is longer than %d; use a shorter pattern such as \"out/**\"", ErrInvalidGlob, len(orig), orig[:32], MaxGlobLen)
	case strings.HasPrefix(g, "/") || strings.HasPrefix(g, `\`) || len(g) > 1 && g[1] == ':':
		return "", bad("is absolute")
	case strings.ContainsRune(g, 0):
		return "", bad("contains a NUL byte")
	case !doublestar.ValidatePattern(g):
		return "", bad("is not a valid pattern")
	}
	alts, why := expandGlob(g)
	if why != "" {
		return "", bad(why)
	}
	for _, a := range alts {
		in := ""
		if len(alts) > 1 || a != g {
			in = fmt.Sprintf(" in the alternative %q", a)
		}
		if strings.HasPrefix(a, "/") || len(a) > 1 && a[1] == ':' {
			return "", bad("is absolute" + in)
		}
		for _, e := range strings.Split(a, "/") {
			switch {
			case e == "..":
				return "", bad("contains '..'" + in)
			case e == "." || e == "":
				return "", bad("contains an empty or '.' element" + in)
			case strings.Contains(e, "***"):
				return "", bad(fmt.Sprintf("has the element %q with three stars in a row; use * or **%s", e, in))
			case onlyDots(e):
				return "", bad(fmt.Sprintf("has the element %q, which can only match '.' or '..'%s", e, in))
			}
		}
	}
	return g, nil
}

// expandGlob returns the brace-free patterns g (valid doublestar syntax)
// stands for, or why it is refused: an escape of a character that is not a
// metacharacter, a character class that could match '/' or that other
// parsers could read differently, or too many alternatives.
func expandGlob(g string) ([]string, string) {
	p := globParser{s: g}
	alts, why := p.seq(0)
	if why == "" && p.i < len(g) {
		why = "has an unmatched '}'" // ValidatePattern refuses it first
	}
	return alts, why
}

// globParser expands brace alternation the way doublestar reads it.
type globParser struct {
	s string
	i int
}

// seq expands the text from p.i up to the ',' or '}' ending it at this
// nesting depth (or the end) and leaves p.i there.
func (p *globParser) seq(depth int) ([]string, string) {
	out := []string{""}
	appendAll := func(text string) {
		for j := range out {
			out[j] += text
		}
	}
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '\\':
			if p.i+1 >= len(p.s) || !strings.ContainsRune(`*?[]{},`, rune(p.s[p.i+1])) {
				return nil, "has a backslash that does not escape one of * ? [ ] { } ,; write other characters without it"
			}
			appendAll(p.s[p.i : p.i+2])
			p.i += 2
		case c == '[':
			end, why := classEnd(p.s, p.i)
			if why != "" {
				return nil, why
			}
			appendAll(p.s[p.i:end])
			p.i = end
		case c == '{':
			p.i++
			var alts []string
			for {
				sub, why := p.seq(depth + 1)
				if why != "" {
					return nil, why
				}
				alts = append(alts, sub...)
				if len(alts) > MaxGlobAlternatives {
					return nil, fmt.Sprintf("expands to more than %d alternatives", MaxGlobAlternatives)
				}
				if p.i >= len(p.s) {
					return nil, "has an unclosed '{'" // ValidatePattern refuses it first
				}
				p.i++
				if p.s[p.i-1] == '}' {
					break
				}
			}
			if len(out)*len(alts) > MaxGlobAlternatives {
				return nil, fmt.Sprintf("expands to more than %d alternatives", MaxGlobAlternatives)
			}
			next := make([]string, 0, len(out)*len(alts))
			for _, o := range out {
				for _, a := range alts {
					next = append(next, o+a)
				}
			}
			out = next
		case (c == ',' || c == '}') && depth > 0:
			return out, ""
		default:
			appendAll(p.s[p.i : p.i+1])
			p.i++
		}
	}
	return out, ""
}

// classEnd returns the index just past the character class starting at
// s[i] == '[', or why it is refused.
func classEnd(s string, i int) (int, string) {
	j := i + 1
	if j < len(s) && (s[j] == '!' || s[j] == '^') {
		return 0, "has a negated character class, which can match '/'; list the characters to match instead"
	}
	last := rune(-1)
	for j < len(s) && s[j] != ']' {
		r, n := utf8.DecodeRuneInString(s[j:])
		switch r {
		case '/', '\\', '{', '}':
			return 0, fmt.Sprintf("has %q in a character class; use it outside the class", r)
		}
		j += n
		if r == '-' && last >= 0 && j < len(s) && s[j] != ']' {
			hi, n := utf8.DecodeRuneInString(s[j:])
			if hi == '/' || hi == '\\' || hi == '{' || hi == '}' {
				return 0, fmt.Sprintf("has %q in a character class; use it outside the class", hi)
			}
			if last <= '/' && '/' <= hi {
				return 0, fmt.Sprintf("has the range %q-%q in a character class, which includes '/'", last, hi)
			}
			j += n
			last = -1
			continue
		}
		last = r
	}
	if j >= len(s) {
		return 0, "has an unclosed '['" // ValidatePattern refuses it first
	}
	return j + 1, ""
}

// onlyDots reports whether the brace-free element e can match "." or ".."
// and no ordinary name of one or two characters (see dotTwins): a literal
// dot spelt as a class, in any combination. An element that matches an
// ordinary name too ("*", ".*", ".?") is a wildcard, and doublestar
// matches wildcards against directory listings only.
func onlyDots(e string) bool {
	// doublestar reads an element at the end of a pattern slightly
	// differently from one followed by more ("..***" matches ".." only in
	// "..***/x"), so both positions are tried.
	m := func(name string) bool { return match(e, name) || match(e+"/x", name+"/x") }
	return (m(".") || m("..")) && !slices.ContainsFunc(dotTwins(), m)
}

// match is doublestar.Match for an already validated pattern.
func match(pattern, name string) bool {
	ok, _ := doublestar.Match(pattern, name)
	return ok
}

// dotTwinRunes are the characters dotTwins builds names from.
const dotTwinRunes = ".aA0_-"

// dotTwins returns the ordinary names onlyDots tries: every string of one
// or two characters from dotTwinRunes other than "." and "..".
func dotTwins() []string {
	var names []string
	for _, a := range dotTwinRunes {
		if a != '.' {
			names = append(names, string(a))
		}
		for _, b := range dotTwinRunes {
			if a != '.' || b != '.' {
				names = append(names, string(a)+string(b))
			}
		}
	}
	return names
}

// collector accumulates one Collect call.
type collector struct {
	root    *os.Root
	lim     CollectLimits
	out     *Collection
	seen    map[string]bool
	entries int
	tooMany bool            // MaxEntries reached: nothing more is listed
	deep    map[string]bool // folders skipped for depth, reported once
}

// boundedFS is the workspace as Collect walks it: folders deeper than
// MaxDepth list as empty, and listing more than MaxEntries entries in all
// stops the walk.
type boundedFS struct {
	fs.FS
	c *collector
}

// ReadDir implements fs.ReadDirFS.
func (b *boundedFS) ReadDir(name string) ([]fs.DirEntry, error) {
	c := b.c
	if name != "." && strings.Count(name, "/")+1 > c.lim.MaxDepth {
		if c.deep == nil {
			c.deep = map[string]bool{}
		}
		if parent := path.Dir(name); !c.deep[parent] {
			c.deep[parent] = true
			c.skip(name, fmt.Sprintf("deeper than %d folders (CollectLimits.MaxDepth); not looked into", c.lim.MaxDepth))
		}
		return nil, nil
	}
	if c.tooMany {
		return nil, nil
	}
	entries, err := fs.ReadDir(b.FS, name)
	c.entries += len(entries)
	if c.entries > c.lim.MaxEntries {
		c.tooMany = true
		return nil, nil
	}
	return entries, err
}

// visit handles one glob match.
func (c *collector) visit(p string, d fs.DirEntry) error {
	if d.IsDir() || c.seen[p] {
		return nil
	}
	c.seen[p] = true
	t := d.Type()
	if t&fs.ModeSymlink != 0 {
		info, err := c.root.Stat(p) // fails for links leaving the workspace
		switch {
		case err != nil:
			c.skip(p, "symbolic link leaves the workspace or leads nowhere")
			return nil
		case info.IsDir():
			return nil // an alias of a directory matched under its own path
		case !info.Mode().IsRegular():
			c.skip(p, "not a regular file")
			return nil
		}
	} else if !t.IsRegular() {
		c.skip(p, "not a regular file")
		return nil
	}
	if len(c.out.Files) == c.lim.MaxFiles {
		c.out.Truncated = true
		return errEnough
	}
	f, err := c.read(p)
	if err != nil {
		c.skip(p, "unreadable: "+err.Error())
		return nil
	}
	c.out.Files = append(c.out.Files, f)
	c.out.InlineBytes += int64(len(f.Content))
	return nil
}

func (c *collector) skip(p, why string) {
	c.out.Skipped = append(c.out.Skipped, Skipped{Path: p, Reason: why})
}

// read opens p through the root, sniffs its type and inlines what the limits
// allow.
func (c *collector) read(p string) (OutputFile, error) {
	fh, err := c.root.Open(p)
	if err != nil {
		return OutputFile{}, err
	}
	defer fh.Close()
	info, err := fh.Stat()
	if err != nil {
		return OutputFile{}, err
	}
	if !info.Mode().IsRegular() {
		return OutputFile{}, errors.New("not a regular file")
	}
	allow := min(c.lim.MaxFileInlineBytes, c.lim.MaxInlineBytes-c.out.InlineBytes)
	// One extra byte tells "exactly at the limit" from "longer"; up to
	// utf8.UTFMax-1 more let a rune cut by the limit be recognized as valid.
	want := max(int64(sniffLen), allow+utf8.UTFMax)
	buf := make([]byte, min(want, info.Size()+1))
	n, err := io.ReadFull(fh, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return OutputFile{}, err
	}
	buf = buf[:n]
	out := OutputFile{Path: path.Clean(p), Size: info.Size(), MIME: mimetype.Detect(buf[:min(len(buf), sniffLen)]).String()}
	complete := int64(n) < want // the whole file is in buf
	if !isText(buf, complete) {
		return out, nil
	}
	if int64(len(buf)) <= allow && complete {
		out.Content = string(buf)
		return out, nil
	}
	cut := buf[:min(int64(len(buf)), allow)]
	for len(cut) > 0 && !utf8.Valid(cut) { // drop a rune split by the limit
		cut = cut[:len(cut)-1]
	}
	out.Content = string(cut)
	out.Truncated = true
	return out, nil
}

// isText reports whether b looks like UTF-8 text: no NUL bytes and valid
// UTF-8, allowing a rune cut off at the end when b is only a prefix.
func isText(b []byte, complete bool) bool {
	if bytes.IndexByte(b, 0) >= 0 {
		return false
	}
	if utf8.Valid(b) {
		return true
	}
	if complete {
		return false
	}
	for i := 1; i < utf8.UTFMax && i <= len(b); i++ {
		if utf8.Valid(b[:len(b)-i]) {
			return true
		}
	}
	return false
}
