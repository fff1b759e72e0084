package skill

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// The Agent Skills reference validator reads front matter as strict YAML
// (the strictyaml library): no flow collections, anchors, aliases or tags;
// tabs only inside quoted values, block scalars and comments; every scalar
// is text; duplicate keys are errors. YAML itself caps an implicit key at
// 1024 characters, which go.yaml.in/yaml/v3 does not enforce. The checks
// below find what such a reader rejects in a document the YAML library
// accepted: Validate reports the first as an error, Parse warns about each
// and reads the document anyway.

// maxSimpleKey is YAML's limit on an implicit key: at most this many
// characters from the key's start to its ':'.
const maxSimpleKey = 1024

// violation is one construct strict YAML rejects.
type violation struct {
	kind      violationKind
	line, col int    // 1-based, in the text that was checked
	what      string // the construct, as written
	rule      string // what strict YAML says about it
	fix       string // how to write it instead
}

// late reports whether v is found when the document is turned into
// values (a duplicate key, a bad merge), which a strict reader reports
// only after every problem of the syntax, wherever that is.
func (v violation) late() bool { return v.kind != syntaxViolation }

// violationKind tells the constructs strict YAML rejects apart.
type violationKind int

const (
	syntaxViolation violationKind = iota // flow style, anchors, aliases, tags, tabs, long keys
	badMerge
	badIndent
	nestedDuplicate
	topDuplicate // a key repeated in the top-level mapping
)

// strictMessage words v as an error of Validate.
func (v violation) strictMessage(base int) string {
	return fmt.Sprintf("Invalid YAML in frontmatter: %s: %s: the reference validator reads strict YAML, which %s; %s", v.where(base), v.what, v.rule, v.fix)
}

// lenientMessage words v as a warning of Parse.
func (v violation) lenientMessage() string {
	return fmt.Sprintf("%s: read anyway, but skillkit validate and the Agent Skills reference validator reject it (their strict YAML %s); %s", v.what, v.rule, v.fix)
}

// where names the position, with the column for a tab (the one thing a
// reader cannot see on the line).
func (v violation) where(base int) string {
	if v.what == "tab character" {
		return fmt.Sprintf("line %d, column %d", base+v.line-1, v.col)
	}
	return fmt.Sprintf("line %d", base+v.line-1)
}

// strictViolations returns what strict YAML rejects in src, whose parsed
// document root is root, in the order a strict reader meets it: problems
// of the syntax in document order, then duplicate keys and bad merges.
func strictViolations(src string, root *yaml.Node) []violation {
	c := &strictChecker{src: src, lines: splitLines(src)}
	c.starts0 = make([]int, len(c.lines))
	for i, off := 1, 0; i < len(c.lines); i++ {
		off += len(c.lines[i-1]) + 1
		c.starts0[i] = off
	}
	if root != nil {
		c.walk(root, "", 0, 0, false)
		c.late(root)
	}
	c.tabs()
	slices.SortStableFunc(c.out, func(a, b violation) int {
		switch {
		case a.late() != b.late():
			if a.late() {
				return 1
			}
			return -1
		case a.line != b.line:
			return a.line - b.line
		}
		return a.col - b.col
	})
	return c.out
}

type strictChecker struct {
	src   string
	lines []string // src split at "\n", without the line ends
	// starts0 holds the byte offset of each line (index 0 is line 1);
	// runeStarts, for the non-ASCII lines offset has converted, the byte
	// offset of each character.
	starts0    []int
	runeStarts map[int][]int
	ascii      []bool // per line, once asked
	out        []violation
	// quoted are the byte ranges [start, end) of quoted scalars, in
	// document order (so sorted, and disjoint); blocks the block
	// scalars, in document order.
	quoted [][2]int
	blocks []blockScalar
	// starts are the positions of every node, to find where a block
	// scalar ends.
	starts [][2]int
}

// blockScalar is the content of a literal or folded scalar: the lines
// after its header up to the next node.
type blockScalar struct {
	first, end int // 1-based line range [first, end)
	// indent is the content's indentation: given by the header (an
	// indentation indicator), or else found by closeBlocks.
	indent int
	// min is the least indentation content may have: one more than the
	// collection holding the scalar.
	min int
}

func (c *strictChecker) add(n *yaml.Node, what, rule, fix string) {
	c.out = append(c.out, violation{line: n.Line, col: n.Column, what: what, rule: rule, fix: fix})
}

// walk checks n, the value of key (the innermost mapping key above it)
// in a collection indented by indent, and records the extents of quoted
// and block scalars for the tab check. inFlow marks a node inside a flow
// collection, which is reported once, as a whole.
func (c *strictChecker) walk(n *yaml.Node, key string, indent, depth int, inFlow bool) {
	if depth > maxStrictDepth {
		return // the YAML library bounds nesting; this only bounds recursion
	}
	c.starts = append(c.starts, [2]int{n.Line, n.Column})
	if n.Anchor != "" {
		c.add(n, "anchor &"+n.Anchor, "has no anchors or aliases", "write the value out in full wherever it is used")
	}
	if n.Style&yaml.TaggedStyle != 0 {
		c.add(n, "tag "+n.Tag, "has no tags (every value is text)", "remove the tag, or quote the value")
	}
	switch n.Kind {
	case yaml.AliasNode:
		c.add(n, "alias *"+n.Value, "has no anchors or aliases", "write the value out in full here instead")
		return
	case yaml.ScalarNode:
		switch {
		case n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0:
			if start, ok := c.offset(n.Line, n.Column); ok {
				c.quoted = append(c.quoted, [2]int{start, quotedEnd(c.src, start)})
			}
		case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
			c.blocks = append(c.blocks, c.blockScalar(n, indent))
		}
		return
	case yaml.MappingNode:
		flow := n.Style&yaml.FlowStyle != 0
		if flow && !inFlow {
			c.add(n, "flow mapping "+c.flowText(n), "has no flow style", blockMappingFix(key, n))
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if !flow && !inFlow {
				c.simpleKey(k)
			}
			c.walk(k, key, k.Column-1, depth+1, flow || inFlow)
			c.walk(n.Content[i+1], k.Value, k.Column-1, depth+1, flow || inFlow)
		}
		return
	case yaml.SequenceNode:
		flow := n.Style&yaml.FlowStyle != 0
		if flow && !inFlow {
			c.add(n, "flow sequence "+c.flowText(n), "has no flow style", blockSequenceFix(key, n))
		}
		inFlow = inFlow || flow
	}
	for _, k := range n.Content {
		c.walk(k, key, n.Column-1, depth+1, inFlow)
	}
}

// blockScalar records the block scalar n, held by a collection indented
// by indent: its content starts on the line after its header, and an
// indentation indicator in the header (|2, >-1) fixes its indentation.
func (c *strictChecker) blockScalar(n *yaml.Node, indent int) blockScalar {
	b := blockScalar{first: n.Line + 1, min: indent + 1}
	if start, ok := c.offset(n.Line, n.Column); ok {
		for _, ch := range []byte(c.src[start+1 : min(start+3, len(c.src))]) {
			if ch >= '1' && ch <= '9' {
				b.indent = indent + int(ch-'0')
				break
			}
			if ch != '+' && ch != '-' {
				break
			}
		}
	}
	return b
}

// maxStrictDepth bounds the recursion of the checks.
const maxStrictDepth = 10000

// late checks what a strict reader finds when it turns the document into
// values: duplicate keys, merge keys ("<<") whose value cannot be merged,
// and mappings held by one mapping that are indented differently. It
// checks mappings depth first, in document order.
func (c *strictChecker) late(n *yaml.Node) {
	var visit func(n *yaml.Node, depth int)
	visit = func(n *yaml.Node, depth int) {
		if depth > maxStrictDepth || n.Kind == yaml.AliasNode {
			return
		}
		if n.Kind == yaml.MappingNode {
			seen := map[string]int{}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if isMergeKey(k) && !mergeable(v) {
					c.out = append(c.out, violation{kind: badMerge, line: k.Line, col: k.Column, what: "merge key <<",
						rule: "merges only a mapping or a list of mappings", fix: `quote it ("<<") to use it as a field name`})
				}
				if k.Kind != yaml.ScalarNode {
					continue
				}
				if first, dup := seen[k.Value]; dup {
					kind := nestedDuplicate
					if depth == 0 {
						kind = topDuplicate
					}
					c.out = append(c.out, violation{kind: kind, line: k.Line, col: k.Column, what: fmt.Sprintf("key %q", k.Value),
						rule: "allows each key once", fix: fmt.Sprintf("keep one of the two (the other is at line %d)", first)})
					continue
				}
				seen[k.Value] = k.Line
			}
			var first *yaml.Node
			for i := 1; i < len(n.Content); i += 2 {
				v := n.Content[i]
				if v.Kind != yaml.MappingNode {
					continue
				}
				if first == nil {
					first = v
				} else if v.Column != first.Column {
					c.out = append(c.out, violation{kind: badIndent, line: v.Line, col: v.Column, what: fmt.Sprintf("mapping indented by %d", v.Column-1),
						rule: fmt.Sprintf("indents every mapping in one mapping alike (the one at line %d by %d)", first.Line, first.Column-1),
						fix:  fmt.Sprintf("indent its lines by %d spaces", first.Column-1)})
					break
				}
			}
		}
		for _, x := range n.Content {
			visit(x, depth+1)
		}
	}
	visit(n, 0)
}

// isMergeKey reports whether k is YAML's merge key: a plain "<<".
func isMergeKey(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Tag == "!!merge"
}

// mergeable reports whether v can be merged: a mapping, or a sequence of
// mappings.
func mergeable(v *yaml.Node) bool {
	v = deref(v)
	switch v.Kind {
	case yaml.MappingNode:
		return true
	case yaml.SequenceNode:
		for _, x := range v.Content {
			if deref(x).Kind != yaml.MappingNode {
				return false
			}
		}
		return true
	}
	return false
}

// simpleKey checks that an implicit key is at most maxSimpleKey
// characters long, counted from its start to its ':' as YAML counts.
func (c *strictChecker) simpleKey(k *yaml.Node) {
	if k.Line < 1 || k.Line > len(c.lines) {
		return
	}
	line := c.lines[k.Line-1]
	start, ok := c.offset(k.Line, k.Column)
	if !ok {
		return
	}
	start -= c.lineStart(k.Line)
	if start > len(line) || strings.HasPrefix(line[start:], "?") {
		return // an explicit key has no limit
	}
	rest := line[start:]
	end := len(rest)
	if rest != "" && (rest[0] == '"' || rest[0] == '\'') {
		q := quotedEnd(rest, 0)
		if q > len(rest) {
			return // a key over several lines is no implicit key
		}
		end = q + strings.IndexByte(rest[q:]+":", ':')
	} else if i := strings.Index(rest+" ", ": "); i >= 0 {
		end = i
	}
	if n := utf8.RuneCountInString(rest[:min(end, len(rest))]); n > maxSimpleKey {
		c.add(k, "key of more than 1024 characters", "allows at most 1024 characters in a key written without \"? \"", "shorten the key")
	}
}

// tabs checks every tab of the text: strict YAML allows one only inside a
// quoted scalar, on a content line of a block scalar (one indented at
// least as far as the scalar's content) and inside a comment.
func (c *strictChecker) tabs() {
	if strings.IndexByte(c.src, '\t') < 0 {
		return
	}
	c.closeBlocks()
	for ln, line := range c.lines {
		lineNo := ln + 1
		if strings.IndexByte(line, '\t') < 0 {
			continue
		}
		if indent, ok := c.blockIndent(lineNo); ok && indent > 0 && len(line)-len(strings.TrimLeft(line, " ")) >= indent {
			continue
		}
		base := c.lineStart(lineNo)
	scan:
		for i := 0; i < len(line); i++ {
			if c.inQuoted(base + i) {
				continue
			}
			switch line[i] {
			case '#':
				if i == 0 || line[i-1] == ' ' {
					break scan // a comment runs to the end of the line
				}
			case '\t':
				c.out = append(c.out, violation{line: lineNo, col: utf8.RuneCountInString(line[:i]) + 1, what: "tab character",
					rule: "allows tabs only inside quoted values, block scalars (| or >) and comments", fix: "use spaces, or quote the value"})
				return // one is enough: the others are the same mistake
			}
		}
	}
}

// closeBlocks works out each block scalar's indentation and where its
// content ends: at the first line holding more than spaces that is
// indented less than the content (a comment, say), or at the next node.
func (c *strictChecker) closeBlocks() {
	slices.SortFunc(c.starts, func(a, b [2]int) int {
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return a[1] - b[1]
	})
	for i := range c.blocks {
		b := &c.blocks[i]
		next := len(c.lines) + 1
		if j := sort.Search(len(c.starts), func(j int) bool { return c.starts[j][0] >= b.first }); j < len(c.starts) {
			next = c.starts[j][0]
		}
		if b.indent == 0 {
			// No indicator: the indentation is the most leading spaces
			// of the lines up to and including the first holding more
			// than spaces (a tab is no indentation), and at least b.min.
			b.indent = b.min
			for l := b.first; l < next; l++ {
				line := c.lines[l-1]
				t := strings.TrimLeft(line, " ")
				b.indent = max(b.indent, len(line)-len(t))
				if t != "" {
					break
				}
			}
		}
		b.end = b.first
		for b.end < next {
			line := c.lines[b.end-1]
			if t := strings.TrimLeft(line, " "); t != "" && len(line)-len(t) < b.indent {
				break
			}
			b.end++
		}
	}
}

// blockIndent returns, for a content line of a block scalar, the
// indentation of that scalar's content.
func (c *strictChecker) blockIndent(line int) (int, bool) {
	// Blocks are in document order and their content ranges disjoint.
	i := sort.Search(len(c.blocks), func(i int) bool { return c.blocks[i].end > line })
	if i < len(c.blocks) && line >= c.blocks[i].first {
		return c.blocks[i].indent, true
	}
	return 0, false
}

// inQuoted reports whether the byte at off lies inside a quoted scalar.
func (c *strictChecker) inQuoted(off int) bool {
	i := sort.Search(len(c.quoted), func(i int) bool { return c.quoted[i][1] > off })
	return i < len(c.quoted) && off > c.quoted[i][0]
}

// maxShown bounds how much of a flow collection a message quotes.
const maxShown = 64

// flowText returns a flow collection as written (on its first line,
// shortened).
func (c *strictChecker) flowText(n *yaml.Node) string {
	start, ok := c.offset(n.Line, n.Column)
	if !ok {
		return ""
	}
	if i := strings.IndexAny(c.src[start:], "[{"); i >= 0 {
		start += i // past an anchor or a tag
	}
	end := flowEnd(c.src[:min(len(c.src), start+maxShown)], start)
	s := c.src[start:end]
	if i := strings.IndexByte(s, '\n'); i >= 0 || len(s) > 60 {
		if i < 0 || i > 57 {
			i = 57
		}
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s = s[:i] + "..."
	}
	return s
}

// offset converts a 1-based line and column (in characters) to a byte
// offset into the text.
func (c *strictChecker) offset(line, col int) (int, bool) {
	if line < 1 || line > len(c.lines) || col < 1 {
		return 0, false
	}
	s := c.lines[line-1]
	if c.asciiLine(line) {
		if col-1 > len(s) {
			return 0, false
		}
		return c.lineStart(line) + col - 1, true
	}
	runes := c.runeStarts[line]
	if runes == nil {
		// Built once per line, so that the nodes of a long line do not
		// each walk it.
		for i := range s {
			runes = append(runes, i)
		}
		runes = append(runes, len(s))
		if c.runeStarts == nil {
			c.runeStarts = map[int][]int{}
		}
		c.runeStarts[line] = runes
	}
	if col-1 >= len(runes) {
		return 0, false
	}
	return c.lineStart(line) + runes[col-1], true
}

// asciiLine reports whether a 1-based line holds only ASCII.
func (c *strictChecker) asciiLine(line int) bool {
	if c.ascii == nil {
		c.ascii = make([]bool, len(c.lines))
		for i, l := range c.lines {
			c.ascii[i] = isASCII(l)
		}
	}
	return c.ascii[line-1]
}

// isASCII reports whether s holds only ASCII.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// lineStart returns the byte offset of a 1-based line.
func (c *strictChecker) lineStart(line int) int { return c.starts0[line-1] }

// splitLines splits text at "\n".
func splitLines(s string) []string { return strings.Split(s, "\n") }

// quotedEnd returns the offset just past the quoted scalar that starts
// at start (its opening quote), or len(s)+1 when it is not closed.
func quotedEnd(s string, start int) int {
	q := s[start]
	for i := start + 1; i < len(s); i++ {
		switch {
		case q == '"' && s[i] == '\\':
			i++
		case s[i] == q:
			if q == '\'' && i+1 < len(s) && s[i+1] == '\'' {
				i++
				continue
			}
			return i + 1
		}
	}
	return len(s) + 1
}

// flowEnd returns the offset just past the flow collection that starts
// at start, skipping quoted scalars; len(s) when it is not closed.
func flowEnd(s string, start int) int {
	depth := 0
	for i := start; i < len(s); i++ {
		switch s[i] {
		case '"', '\'':
			i = quotedEnd(s, i) - 1
		case '[', '{':
			depth++
		case ']', '}':
			if depth--; depth == 0 {
				return i + 1
			}
		}
	}
	return len(s)
}

// blockMappingFix says how to write a flow mapping in block style,
// spelling the lines out when its entries are plain scalars.
func blockMappingFix(key string, n *yaml.Node) string {
	var lines []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || v.Kind != yaml.ScalarNode || len(lines) == 3 {
			lines = nil
			break
		}
		lines = append(lines, fmt.Sprintf("%q", "  "+k.Value+": "+v.Value))
	}
	if key == "" || len(lines) == 0 {
		return "write it in block style, one \"key: value\" per indented line, or quote it to keep it as text"
	}
	return fmt.Sprintf("write it in block style, one entry per indented line: %q followed by %s (or quote it to keep it as text)", key+":", strings.Join(lines, ", "))
}

// blockSequenceFix says how to write a flow sequence in block style; for
// allowed-tools, as the space-separated string the specification defines.
func blockSequenceFix(key string, n *yaml.Node) string {
	var items []string
	for _, v := range n.Content {
		if v.Kind != yaml.ScalarNode {
			items = nil
			break
		}
		items = append(items, v.Value)
	}
	if key == FieldAllowedTools && len(items) > 0 {
		return fmt.Sprintf("write allowed-tools as the space-separated string the Agent Skills spec defines: %q", "allowed-tools: "+strings.Join(items, " "))
	}
	if key == "" || len(items) == 0 || len(items) > 3 {
		return "write it in block style, one \"- item\" per indented line, or quote it to keep it as text"
	}
	quoted := make([]string, len(items))
	for i, it := range items {
		quoted[i] = fmt.Sprintf("%q", "  - "+it)
	}
	return fmt.Sprintf("write it in block style, one item per indented line: %q followed by %s (or quote it to keep it as text)", key+":", strings.Join(quoted, ", "))
}
